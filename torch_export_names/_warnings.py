"""The package's warning category and its warn-once helper."""

from __future__ import annotations

import threading
import warnings

__all__ = ["TorchExportNamesWarning", "warn_once"]


class TorchExportNamesWarning(UserWarning):
    """torch-export-names could not do its work and left the program as it was."""


_warned: set[str] = set()
_lock = threading.Lock()


def warn_once(key: str, message: str, stacklevel: int = 3) -> None:
    """Warn with ``message`` the first time ``key`` is seen in this process."""
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, TorchExportNamesWarning, stacklevel=stacklevel)
