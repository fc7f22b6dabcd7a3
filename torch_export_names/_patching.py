"""One way to put an attribute of ours on a class of torch's or ExecuTorch's, and take it off.

Used by the export hook (``ExportedProgram.__init__``, and ``_copies``' ``Graph.node_copy`` and
``ExportPass.placeholder``), the code-generator guard (``torch.fx.Graph._python_code``), the
audit (``torch.fx.Graph`` methods) and the ExecuTorch adapter (``QnnPartitioner`` methods).
``PatchSet`` is how the hook and the adapter keep theirs in place while anybody asks:
``install()`` or an ``installed()`` block.

- ``install()`` replaces the class's own attribute (``owner.__dict__[name]``, possibly absent)
  by the object ``make(patch)`` returns (``patch.original`` is the attribute it replaces);
  ``uninstall()`` puts the very same original object back (or deletes the attribute if there
  was none), so uninstalling leaves torch as it was, identity included.
- Every object we put on a class carries one marker attribute, ``MARKER``, pointing at its
  ``Patch``; ``original_of`` follows it.
- Someone else may wrap the attribute after us (another tool, a test's monkeypatch). Putting
  our original back would then drop their wrapper, so ``uninstall()`` leaves ours in place under
  theirs, switched off (``installs`` is False: a wrapper must then only call through), and
  warns once. When their wrapper is later taken off and ours is on top again, the next
  ``install()`` or ``uninstall()`` of the same attribute takes our switched-off object out.

As OpenTelemetry's ``BaseInstrumentor`` and ``wrapt``'s unwrap do, but with the wrapped
object kept on the patch rather than only on the wrapper.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Callable, Iterator

__all__ = ["MARKER", "Patch", "PatchSet", "original_of", "wrapping"]

MARKER = "__torch_export_names_patch__"

_ABSENT = object()  # the class had no attribute of that name
_lock = threading.RLock()


def _patch_of(obj: Any) -> Patch | None:
    patch = getattr(obj, MARKER, None) if obj is not _ABSENT else None
    return patch if isinstance(patch, Patch) else None


def original_of(obj: Any) -> Any:
    """What the object of ours ``obj`` replaced, or None if ``obj`` is not one of ours."""
    patch = _patch_of(obj)
    return None if patch is None else patch.original


class Patch:
    """Our replacement for ``owner.<name>``, installed and uninstalled as a unit.

    ``make(patch)`` builds the replacement; ``patch.original`` is the class's own attribute, or
    ``None`` if it had none (then look the attribute up on the bases if you need to call it).
    A wrapper that must go inert once uninstalled is made by ``wrapping``.
    """

    def __init__(self, owner: type, name: str, make: Callable[[Patch], Any]) -> None:
        self.owner = owner
        self.name = name
        self._make = make
        self.original: Any = None
        self._had_original = False
        self.replacement: Any = None  # in place while not None

    def __repr__(self) -> str:
        state = "installed" if self.installed else "uninstalled"
        return f"<Patch {self.owner.__qualname__}.{self.name} ({state})>"

    @property
    def installed(self) -> bool:
        return self.replacement is not None

    def installs(self, obj: Any) -> bool:
        """Whether ``obj`` is this patch's replacement and the patch is installed."""
        return self.replacement is not None and obj is self.replacement

    def _current(self) -> Any:
        current = self.owner.__dict__.get(self.name, _ABSENT)
        # Take out objects of ours left switched off under a wrapper that is gone now.
        while (patch := _patch_of(current)) is not None and not patch.installed:
            restored = patch.original if patch._had_original else _ABSENT
            self._set(restored)
            current = restored
        return current

    def _set(self, value: Any) -> None:
        if value is _ABSENT:
            if self.name in self.owner.__dict__:
                delattr(self.owner, self.name)
        else:
            setattr(self.owner, self.name, value)

    def install(self) -> None:
        """Put the replacement in place. Idempotent."""
        with _lock:
            if self.installed:
                return
            current = self._current()
            self.original = None if current is _ABSENT else current
            self._had_original = current is not _ABSENT
            replacement = self._make(self)
            setattr(replacement, MARKER, self)
            self._set(replacement)
            self.replacement = replacement

    def uninstall(self) -> bool:
        """Put the original object back. Idempotent.

        Returns False, leaving ours in place but switched off and warning once, when another
        object has replaced ours since ``install()``.
        """
        with _lock:
            if not self.installed:
                return True
            replacement, self.replacement = self.replacement, None
            if self.owner.__dict__.get(self.name, _ABSENT) is replacement:
                self._current()  # ours is switched off now: this puts the original back
                return True
        from ._warnings import warn_once

        where = f"{self.owner.__module__}.{self.owner.__qualname__}.{self.name}"
        warn_once(
            f"overwrapped:{where}",
            f"torch_export_names: {where} was replaced again after torch_export_names patched it; "
            "ours stays beneath the newer one, switched off (it only calls through).",
        )
        return False


def wrapping(body: Callable[..., Any], *, bypassed: Callable[[], bool] = lambda: False):
    """``make`` of a patch whose replacement runs ``body(original, *args, **kwargs)``.

    The one template for a wrapper that goes inert once uninstalled: while its patch is installed
    and ``bypassed()`` is False it runs ``body``; otherwise (uninstalled but wrapped over by someone
    else, or bypassed: ``_suspension``) it only calls through to the original.
    """

    def make(patch: Patch):
        original = patch.original

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            if patch.installs(wrapper) and not bypassed():
                return body(original, *args, **kwargs)
            return original(*args, **kwargs)

        return wrapper

    return make


class PatchSet:
    """Patches in place while anybody asks for them: ``request(source)`` until ``withdraw()``
    (``install()``/``uninstall()``), or a ``block()`` (``installed()``) in any thread.

    Blocks are counted across threads, so one thread's block closing never takes the patches
    from under another's; when the last request is withdrawn and the last block closes, every
    patch is uninstalled (the class's own objects are back). ``make()`` builds the patches when they
    are first wanted (it may import, and an import may request the set again in this thread:
    the lock is re-entrant and that inner request installs them); ``installed()`` and ``uninstalled()``
    run after each change, under the lock.
    """

    def __init__(
        self,
        make: Callable[[], list[Patch]],
        *,
        installed: Callable[[], None] = lambda: None,
        uninstalled: Callable[[], None] = lambda: None,
    ) -> None:
        self.lock = threading.RLock()
        self._make, self._on_installed, self._on_uninstalled = make, installed, uninstalled
        self._patches: list[Patch] = []  # guarded by lock, as the two below
        self._requests: list[str] = []  # who called request(), in order
        self._blocks = 0  # block()s open, all threads together

    def is_installed(self) -> bool:
        with self.lock:
            return bool(self._patches)

    def wanted_by(self) -> tuple[tuple[str, ...], int]:
        """The sources of the requests in place, and how many blocks are open."""
        with self.lock:
            return tuple(self._requests), self._blocks

    def request(self, source: str) -> None:
        """Keep the patches in place until ``withdraw()``, on behalf of ``source``."""
        with self.lock:
            added = source not in self._requests
            if added:
                self._requests.append(source)
            try:
                self._install()
            except BaseException:
                if added:
                    self._requests.remove(source)
                raise

    def add(self, patches: list[Patch]) -> None:
        """Install ``patches`` too if the set is installed (for a module imported after it was):
        they come off with the others. Patches of an attribute the set already patches are
        skipped; if the set is not installed, nothing happens (``make()`` provides them then)."""
        with self.lock:
            if not self._patches:
                return
            have = {(p.owner, p.name) for p in self._patches}
            for patch in patches:
                if (patch.owner, patch.name) not in have:
                    patch.install()
                    self._patches.append(patch)

    def withdraw(self) -> None:
        """Withdraw every request; the patches go unless a block is open."""
        with self.lock:
            self._requests.clear()
            self._uninstall_if_unwanted()

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        """Keep the patches in place for a block."""
        with self.lock:
            self._blocks += 1
            try:
                self._install()
            except BaseException:
                self._blocks -= 1
                raise
        try:
            yield
        finally:
            with self.lock:
                self._blocks -= 1
                self._uninstall_if_unwanted()

    def _install(self) -> None:
        if self._patches:
            return
        patches = self._make()
        if self._patches:  # make() imported something that requested the set: installed
            return
        for patch in patches:
            patch.install()
        self._patches.extend(patches)
        self._on_installed()

    def _uninstall_if_unwanted(self) -> None:
        # A patch someone wrapped again since stays beneath theirs, switched off (Patch.uninstall).
        if not self._patches or self._requests or self._blocks:
            return
        for patch in reversed(self._patches):
            patch.uninstall()
        self._patches.clear()
        self._on_uninstalled()
