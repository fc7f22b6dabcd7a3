"""The code-generator guard: no parameter of fx's generated code shadows a name its body uses.

Put on ``torch.fx.Graph._python_code`` (every code generator goes through it) when the package
is imported, through the package's one patching primitive (``PatchSet``): ``install()`` puts it
in place, ``uninstall()`` takes it off (torch's own function object is back), ``suspended()``
bypasses it in one thread (to measure stock torch). What it does to the code is
``_keep_parameters``' (that module says why it is exact): it reads the graph and never writes
to it, so code generation stays as thread-safe as torch's own. If anything there fails, torch's
own code is used and the guard warns once.

Importing this module imports nothing of torch; ``arm()`` installs the guard the moment
``torch.fx.graph`` is imported.
"""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

from . import _suspension
from ._after_import import after_import
from ._patching import MARKER, Patch, PatchSet, wrapping

if TYPE_CHECKING:
    import torch.fx

__all__ = ["arm", "install", "is_installed", "refresh", "suspended", "uninstall"]

# Graph -> whether its latest code came through the guard (``refresh`` recompiles the others).
_generated: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _warn_failed(e: Exception) -> None:
    from ._warnings import warn_once

    warn_once(
        "codegen-guard",
        "torch_export_names: the code-generator guard could not keep the parameters of fx's code "
        f"apart from its other names ({type(e).__name__}: {e}); the code is torch's own.",
    )


def _guarded(original, self, root_module, namespace, *args, **kwargs):
    """``Graph._python_code`` with the parameters kept apart (``_keep_parameters``); torch's own
    code while suspended or if that fails."""
    if _suspension.is_suspended():
        _generated[self] = False
        return original(self, root_module, namespace, *args, **kwargs)
    from ._keep_parameters import keep_parameters

    stock: list[Any] = []

    def generate():
        stock.append(original(self, root_module, namespace, *args, **kwargs))
        return stock[-1]

    def regenerate(nodes, codegen):
        return codegen._gen_python_code(nodes, root_module, namespace, *args, **kwargs)

    try:
        code = keep_parameters(self, namespace, generate, regenerate)
    except Exception as e:  # noqa: BLE001 - never worse than torch: its own code stands
        _warn_failed(e)
        if not stock:  # it failed before torch generated anything (it wrote nothing yet)
            stock.append(original(self, root_module, namespace, *args, **kwargs))
        code = stock[0]
    _generated[self] = True
    return code


def _make_patches() -> list[Patch]:
    graph_module: Any = sys.modules.get("torch.fx.graph")
    if graph_module is None:
        import torch.fx.graph as graph_module
    cls = graph_module.Graph
    # A guard of an earlier copy of this module (importlib.reload) comes off first.
    while isinstance(older := getattr(cls.__dict__.get("_python_code"), MARKER, None), Patch):
        if older.installed:
            older.uninstall()
        else:
            break
    return [Patch(cls, "_python_code", wrapping(_guarded))]


_guard = PatchSet(_make_patches)


def install() -> None:
    """Put the guard on ``torch.fx.Graph._python_code``. Idempotent, thread-safe."""
    _guard.request("torch_export_names")


def arm() -> None:
    """``install()`` once ``torch.fx.graph`` is imported (now, if it is): what importing the
    package does, without importing torch."""
    after_import("torch.fx.graph", install)


def uninstall() -> None:
    """Take the guard off: ``Graph._python_code`` is torch's function again. Idempotent."""
    _guard.withdraw()


def is_installed() -> bool:
    return _guard.is_installed()


def refresh(module: torch.fx.GraphModule) -> bool:
    """Recompile ``module`` if a parameter of its code could meet another name and its code did
    not come through the guard (generated before the package was imported, or while suspended).
    Returns whether it recompiled. ``repair`` calls it on every graph module of a program."""
    if not is_installed() or _suspension.is_suspended() or _generated.get(module.graph, False):
        return False
    from ._keep_parameters import suspect_parameters

    if not suspect_parameters(module.graph):
        return False
    module.recompile()
    return True


suspended = _suspension.suspended  # code generated in this thread inside the block is torch's own


def _adopt() -> None:
    """After ``importlib.reload`` of this module: a guard of the earlier copy is replaced by this
    one's (``install`` takes the older off), so there is one guard and this module owns it."""
    graph_module = sys.modules.get("torch.fx.graph")
    current = getattr(graph_module, "Graph", None)
    if isinstance(getattr(getattr(current, "__dict__", {}).get("_python_code"), MARKER, None), Patch):
        install()


_adopt()
