"""The package's warning category, its warn-once helper, and the error of a torch without the
private state the package relies on."""

from __future__ import annotations

import threading
import warnings

__all__ = ["PrivateStateMissing", "TorchExportNamesWarning", "warn_once"]


class PrivateStateMissing(RuntimeError):
    """The torch.fx private name-space state this package relies on is not there."""


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
