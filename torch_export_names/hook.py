"""The export hook: ``repair`` every ExportedProgram torch hands out.

Every public producer of an ``ExportedProgram`` (``torch.export.export``
strict and non-strict, ``run_decompositions``, ``torch.export.load``,
``draft_export``, ``move_to_device_pass``, ...) ends by constructing one, so
the hook patches the one place where that work happens:
``ExportedProgram.__init__``. Code that did ``from torch.export import export``
before ``install()`` is therefore covered too, and ``uninstall()`` puts the
original function object back.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from typing import Iterator

__all__ = ["install", "installed", "is_installed", "uninstall"]

logger = logging.getLogger("torch_export_names")

_lock = threading.RLock()
_strict = False
_patched: dict[str, object] = {}  # attribute of ExportedProgram -> original


def _exported_program_class():
    # The module, not torch.export: install() may run while torch.export is
    # still being imported (TORCH_EXPORT_NAMES=1).
    from torch.export.exported_program import ExportedProgram

    return ExportedProgram


def _repair_or_leave(ep) -> None:
    """``repair`` ``ep``; on any failure put it back exactly as torch built it."""
    from . import _fx_namespace as ns
    from .passes import _graph_modules, repair

    graphs = _graph_modules(ep)
    try:
        snaps = [(mod, g, ns.snapshot(g)) for _, mod, g in graphs]
    except ns.PrivateStateMissing:
        snaps = None  # repair() below warns once and changes nothing
    try:
        report = repair(ep, strict=_strict)
    except Exception as e:
        if _strict:
            raise
        for mod, g, snap in snaps or ():
            ns.restore(g, snap)
            if mod is not None:
                mod.recompile()
        logger.warning(
            "torch_export_names: repair failed (%s: %s); the ExportedProgram is left "
            "as torch returned it",
            type(e).__name__,
            e,
        )
        return
    logger.debug(
        "torch_export_names: repaired an ExportedProgram of %d graph(s): recorded %d "
        "names, renamed %d subgraph placeholders",
        len(graphs),
        report.recorded,
        report.renamed,
    )


def _wrap_init(original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _repair_or_leave(self)

    __init__._torch_export_names_original = original
    return __init__


def install(*, strict: bool = False) -> None:
    """Repair every ExportedProgram constructed from now on. Idempotent, thread-safe.

    With ``strict=True`` a failing repair raises into the caller instead of
    being logged (and the program left as torch returned it).
    """
    global _strict
    with _lock:
        _strict = strict
        if _patched:
            return
        cls = _exported_program_class()
        original = cls.__dict__["__init__"]
        cls.__init__ = _wrap_init(original)
        _patched["__init__"] = original
        logger.debug("torch_export_names: hook installed on %s.__init__", cls.__qualname__)


def uninstall() -> None:
    """Put back the original objects (the very same objects). Harmless if not installed."""
    global _strict
    with _lock:
        if not _patched:
            return
        cls = _exported_program_class()
        for attr, original in _patched.items():
            setattr(cls, attr, original)
        _patched.clear()
        _strict = False
        logger.debug("torch_export_names: hook uninstalled")


def is_installed() -> bool:
    with _lock:
        return bool(_patched)


@contextlib.contextmanager
def installed(*, strict: bool = False) -> Iterator[None]:
    """Install the hook for a block; a block nested in an installed one leaves it installed."""
    global _strict
    with _lock:
        owner, outer_strict = not is_installed(), _strict
        install(strict=strict)
    try:
        yield
    finally:
        with _lock:
            if owner:
                uninstall()
            else:
                _strict = outer_strict
