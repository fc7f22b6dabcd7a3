"""Which patch, if any, a torch carries: per file, ``stock``, ``patched`` or ``modified otherwise``.

A file is ``stock`` when its sha256 is the release's (``torch-<version>.sha256``),
``patched`` when undoing the patch's change to it gives the release's file back,
and ``modified otherwise`` in every other case (hand edits, another patch, a
different build). Nothing is imported or written: the files are only read, so it
works on a torch whose import is broken.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from . import diff, install, store

__all__ = ["MISSING", "MODIFIED", "PATCHED", "STOCK", "Status", "original_text", "status"]

STOCK = "stock"
PATCHED = "patched"
MODIFIED = "modified otherwise"
MISSING = "missing"


def original_text(text: str, change: diff.FileDiff) -> str | None:
    """The release's file, if ``text`` is it with ``change`` applied; None otherwise."""
    try:
        return diff.apply_file(text, diff.reverse(change))
    except diff.PatchError:
        return None


def _file_state(path: Path, change: diff.FileDiff, pristine: str) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return MISSING
    if store.sha256(data) == pristine:
        return STOCK
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return MODIFIED
    original = original_text(text, change)
    if original is not None and store.sha256(original.encode("utf-8")) == pristine:
        return PATCHED
    return MODIFIED


@dataclasses.dataclass(frozen=True)
class Status:
    site: Path
    torch_version: str
    patch: store.ReleasePatch
    files: dict[str, str]  # torch/... path -> STOCK | PATCHED | MODIFIED | MISSING
    backup: Path | None  # where ``patch apply`` keeps the originals, if it patched this torch

    @property
    def state(self) -> str:
        """STOCK or PATCHED when every file agrees, MODIFIED otherwise."""
        states = set(self.files.values())
        return states.pop() if len(states) == 1 and states <= {STOCK, PATCHED} else MODIFIED

    def to_json(self) -> dict:
        return {
            "torch_version": self.torch_version,
            "site": str(self.site),
            "patch": self.patch.path.name,
            "state": self.state,
            "files": self.files,
            "backup": None if self.backup is None else str(self.backup),
        }

    def format(self) -> str:
        width = max(map(len, self.files))
        lines = [f"torch {self.torch_version} at {self.site}", f"patch {self.patch.path.name}", ""]
        lines += [f"  {rel:<{width}}  {state}" for rel, state in self.files.items()]
        lines.append("")
        if self.state == STOCK:
            lines.append("stock: every file is the release's; the patch is not applied")
        elif self.state == PATCHED:
            lines.append("patched: every file is the release's with the patch applied")
        else:
            odd = sorted(rel for rel, s in self.files.items() if s not in (STOCK, PATCHED))
            mixed = not odd
            lines.append(
                "modified otherwise: "
                + (
                    "some files carry the patch and some do not"
                    if mixed
                    else f"{', '.join(odd)} {'is' if len(odd) == 1 else 'are'} neither the "
                    "release's file nor the patched one"
                )
            )
        if self.backup is not None:
            lines.append(f"`torch-export-names patch apply` keeps the originals in {self.backup}")
        return "\n".join(lines)


def status(site: Path) -> Status:
    """The state of the torch under ``site`` (the directory holding ``torch/``).

    Raises ``store.NoPatch`` when no patch is shipped for that torch.
    """
    site = Path(site)
    version = store.torch_version_at(site)
    patch = store.load(version)
    files = {f.path: _file_state(site / f.path, f, patch.pristine[f.path]) for f in patch.torch_files}
    backup = site / install.BACKUP_DIR
    return Status(site, version, patch, files, backup if backup.is_dir() else None)
