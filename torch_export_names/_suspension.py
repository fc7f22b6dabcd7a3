"""Whether the package's patches are bypassed in this thread (``hook.suspended()``).

One counter for every patch the package puts on torch (the export hook, the copy and re-trace
patches, the code-generator guard), so that measuring stock torch (``is_affected``, ``doctor``,
the probe of fx's code generator) bypasses all of them in one thread and none in another.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

__all__ = ["is_suspended", "resumed", "suspended"]

_local = threading.local()  # .depth: int


def is_suspended() -> bool:
    """Whether a ``suspended()`` block is open in this thread."""
    return bool(getattr(_local, "depth", 0))


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Exports made in this thread inside the block are not repaired, graphs are copied as
    torch copies them, and fx generates code without the guard: every patch of the package is
    bypassed in this thread (``hook.suspended``, ``codegen_guard.suspended``).

    For measuring stock torch (``is_affected``, ``doctor``) whatever the hook's state; other
    threads are not affected, and the patches stay in place.
    """
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


@contextlib.contextmanager
def resumed() -> Iterator[None]:
    """The patches in place again in this thread inside the block, whatever blocks are open
    around it (``doctor`` measures a repaired program as a user runs it)."""
    depth = getattr(_local, "depth", 0)
    _local.depth = 0
    try:
        yield
    finally:
        _local.depth = depth
