"""The export hook: ``repair`` every ExportedProgram torch hands out.

Every public producer of an ``ExportedProgram`` (``torch.export.export``
strict and non-strict, ``run_decompositions``, ``torch.export.load``,
``draft_export``, ``move_to_device_pass``, ...) ends by constructing one, so
the hook patches the one place where that work happens:
``ExportedProgram.__init__``. Code that did ``from torch.export import export``
before ``install()`` is therefore covered too.

The hook is a single wrapper, present while anybody asks for it: an explicit
``install()`` (also made by ``TORCH_EXPORT_NAMES=1`` and by
``torch-export-names run``) or any open ``installed()`` block in any thread.
When nobody does, ``ExportedProgram.__init__`` is the original function object
again.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from typing import Iterator, NamedTuple

from . import _suspension, codegen_guard
from ._after_import import after_import
from ._patching import Patch, PatchSet, wrapping

__all__ = ["HookStatus", "install", "installed", "is_installed", "status", "suspended", "uninstall"]

logger = logging.getLogger("torch_export_names")

_local = threading.local()  # .strict: bool | None, .in_hook: bool
_strict = False  # install(strict=...), guarded by _hook.lock


class HookStatus(NamedTuple):
    """Whether the hook is installed in this process, who asked for it, and whether the
    code-generator guard is (``codegen_guard``: armed by importing the package, installed again
    by ``install()``)."""

    installed: bool
    # "TORCH_EXPORT_NAMES", "torch-export-names run", "install()", "installed() block"
    sources: tuple[str, ...]
    codegen_guard: bool = False


def _exported_program_class():
    # The module, not torch.export: install() may run while torch.export is
    # still being imported (TORCH_EXPORT_NAMES=1).
    from torch.export.exported_program import ExportedProgram

    return ExportedProgram


def _effective_strict() -> bool:
    local = getattr(_local, "strict", None)
    return _strict if local is None else local


def _repair_or_leave(ep) -> None:
    """``repair`` ``ep`` and log it; a repair that fails has put the program back as torch built
    it (``repair`` is all or nothing), and is logged (raised under ``strict``)."""
    from ._signature import Unreadable
    from .passes import repair

    strict = _effective_strict()
    try:
        report = repair(ep, strict=strict)
    except Unreadable as e:  # this torch's ExportedProgram is not what the hook knows: untouched
        if strict:
            raise
        from ._warnings import warn_once

        warn_once(
            "hook-snapshot",
            f"torch_export_names: the export hook cannot read this torch's ExportedProgram ({e}); "
            "programs are left as torch returns them.",
        )
        return
    except Exception as e:
        if strict:
            raise
        logger.warning(
            "torch_export_names: repair failed (%s: %s); the ExportedProgram is left as torch returned it",
            type(e).__name__,
            e,
        )
        return
    logger.debug(
        "torch_export_names: repaired an ExportedProgram: recorded %d names, named %d subgraph "
        "placeholders after their operands, legalized %d placeholders",
        *report,
    )


def _quiet() -> bool:
    """Whether this thread is suspended or inside the hook's own work."""
    return _suspension.is_suspended() or bool(getattr(_local, "in_hook", False))


def _init(original, self, *args, **kwargs):
    """``ExportedProgram.__init__``: torch's constructor, then repair. Not while suspended
    (doctor, is_affected measure stock torch), not for a program built by the hook's own work
    (``_quiet``), not once uninstalled (``wrapping``)."""
    original(self, *args, **kwargs)
    _local.in_hook = True
    try:
        _repair_or_leave(self)
    finally:
        _local.in_hook = False


def _make_patches() -> list[Patch]:
    # The module import may run TORCH_EXPORT_NAMES's bootstrap, which calls install() again in
    # this thread: that inner call applies the set (PatchSet.request is re-entrant). So torch is
    # imported first, and only then what imports torch.fx at module level (_copies).
    cls = _exported_program_class()
    from ._copies import patches as copy_patches

    return [Patch(cls, "__init__", wrapping(_init, bypassed=_quiet)), *copy_patches()]


def _add_export_pass_patches(module: str) -> None:
    from ._copies import export_pass_patches

    _hook.add(export_pass_patches(module))


# One callback per module, made once, so that after_import registers each only once however
# often the hook is installed.
_EXPORT_PASS_ADDERS = {
    module: functools.partial(_add_export_pass_patches, module)
    for module in ("torch._export.pass_base", "executorch.exir.pass_base")
}


def _installed() -> None:
    codegen_guard.install()  # what the repaired programs' code needs (importing us did it too)
    # torch's ExportPass base, and ExecuTorch's own copy (its edge passes re-trace through it):
    # patched once imported (now, if they are).
    for module, add in _EXPORT_PASS_ADDERS.items():
        after_import(module, add)
    logger.debug("torch_export_names: hook installed on ExportedProgram.__init__")


# The code-generator guard stays when the hook goes: programs repaired so far keep needing it
# (codegen_guard.uninstall() takes it off).
_hook = PatchSet(
    _make_patches,
    installed=_installed,
    uninstalled=lambda: logger.debug("torch_export_names: hook uninstalled"),
)


def install(*, strict: bool = False) -> None:
    """Repair every ExportedProgram constructed from now on. Idempotent, thread-safe.

    With ``strict=True`` a failing repair raises into the caller instead of
    being logged (and the program left as torch returned it); the last
    ``install()`` sets this for exports outside ``installed(strict=...)``
    blocks. ``install()`` and ``installed()`` blocks share one wrapper: after
    ``install()`` the hook stays until ``uninstall()``, however blocks open and
    close.
    """
    _install_for("install()", strict=strict)


def _install_for(source: str, *, strict: bool = False) -> None:
    """``install()`` on behalf of ``source`` (``"install()"``, ``TORCH_EXPORT_NAMES``,
    ``"torch-export-names run"``), which ``status()`` reports."""
    global _strict
    with _hook.lock:
        _strict = strict
        _hook.request(source)


def uninstall() -> None:
    """Withdraw ``install()``. Idempotent, thread-safe.

    If no ``installed()`` block is open in any thread, the wrapper is removed
    and ``ExportedProgram.__init__`` is torch's original function object
    again. Otherwise the hook stays until the last open block closes (those
    blocks asked for it), and ``is_installed()`` stays True until then.
    """
    global _strict
    with _hook.lock:
        _strict = False
        _hook.withdraw()


def is_installed() -> bool:
    """Whether the wrapper is in place, whoever asked for it."""
    return _hook.is_installed()


def status() -> HookStatus:
    """Whether the hook is in place and who asked for it (for ``doctor``)."""
    with _hook.lock:
        requests, blocks = _hook.wanted_by()
        in_place = _hook.is_installed()
    sources = list(requests)
    if blocks:
        sources.append("installed() block" if blocks == 1 else f"{blocks} installed() blocks")
    return HookStatus(in_place, tuple(sources), codegen_guard.is_installed())


@contextlib.contextmanager
def installed(*, strict: bool = False) -> Iterator[None]:
    """Keep the hook in place for a block.

    Blocks are counted across threads: the hook stays while any block is open
    (or ``install()`` was called), so one thread's block closing never ends
    another's. ``strict`` applies to exports made in this thread inside the
    block; nested blocks restore the outer setting. ``uninstall()`` inside a
    block withdraws only ``install()``; the block keeps the hook until it closes.
    """
    with _hook.block():
        outer_strict = getattr(_local, "strict", None)
        _local.strict = strict
        try:
            yield
        finally:
            _local.strict = outer_strict


suspended = _suspension.suspended  # exports in this thread inside the block are torch's own
