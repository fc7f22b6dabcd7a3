"""Run a function the moment a module has been imported (now, if it already has been).

For the patches the package puts on torch without importing torch itself: the export hook
under ``TORCH_EXPORT_NAMES`` (``torch.export.exported_program``) and the code-generator guard
(``torch.fx.graph``). Importing this module imports nothing of torch.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Callable

__all__ = ["after_import"]

_lock = threading.Lock()


class _RunAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of ``target`` to run ``callback`` after it."""

    def __init__(self, target: str, callback: Callable[[], None]) -> None:
        self.target = target
        self.callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.target:
            return None
        with _lock:
            if self not in sys.meta_path:
                return None
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        callback = self.callback

        def exec_then_call(module):
            exec_module(module)
            callback()

        spec.loader.exec_module = exec_then_call  # type: ignore[method-assign]
        return spec


def after_import(target: str, callback: Callable[[], None]) -> None:
    """Call ``callback()`` once ``target`` is imported: now if it is in ``sys.modules``, else
    right after its module has run (once, however often this is asked for the same pair)."""
    if target in sys.modules:
        callback()
        return
    with _lock:
        if not any(
            isinstance(f, _RunAfterImport) and f.target == target and f.callback == callback
            for f in sys.meta_path
        ):
            sys.meta_path.insert(0, _RunAfterImport(target, callback))
