"""Where the patches and the release hashes are, and which torch versions have one.

They are package data, ``torch_export_names/tools/torch_patch/data/``, in every install mode
(patches/make_patches.py writes them there).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import re
from pathlib import Path

from . import diff

__all__ = [
    "NoPatch",
    "ReleasePatch",
    "available",
    "data_dir",
    "installed_site",
    "load",
    "release_of",
    "sha256",
    "torch_version_at",
]

_PACKAGED = Path(__file__).parent / "data"


class NoPatch(LookupError):
    """There is no patch for the requested torch version."""


def data_dir() -> Path:
    """The directory holding ``torch-<version>.patch`` and ``.sha256`` files."""
    if any(_PACKAGED.glob("torch-*.patch")):
        return _PACKAGED
    raise FileNotFoundError(f"no torch-*.patch files in {_PACKAGED}: the package lacks its data")


def sha256(data: bytes) -> str:
    """The hex digest the ``.sha256`` files list (``sha256sum``'s)."""
    return hashlib.sha256(data).hexdigest()


def release_of(version: str) -> str:
    """``"2.14.1+cu130"`` -> ``"2.14.1"``: the release whose python files a build ships."""
    return version.split("+", 1)[0]


def available() -> list[str]:
    """Torch releases with a patch, oldest first."""
    versions = [p.name[len("torch-") : -len(".patch")] for p in data_dir().glob("torch-*.patch")]
    return sorted(versions, key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v)))


@dataclasses.dataclass(frozen=True)
class ReleasePatch:
    version: str
    path: Path
    text: str
    files: tuple[diff.FileDiff, ...]
    # sha256 of each torch file the patch changes, as the release ships it.
    pristine: dict[str, str]

    @property
    def torch_files(self) -> tuple[diff.FileDiff, ...]:
        """The changes to torch itself (paths under ``torch/``)."""
        return tuple(f for f in self.files if f.path.startswith("torch/"))

    @property
    def test_files(self) -> dict[str, str]:
        """New test files the patch adds (``test/...``), path -> content."""
        return {
            f.path: diff.apply_file(None, f) for f in self.files if f.path.startswith("test/") and f.is_new
        }

    def torch_diff_text(self) -> str:
        """The part of the patch that changes ``torch/``, as it appears in the file."""
        return "".join(f.text for f in self.torch_files)


@functools.lru_cache(maxsize=None)
def load(version: str) -> ReleasePatch:
    """The patch for ``version`` (a local suffix such as ``+cpu`` is ignored)."""
    release = release_of(version)
    directory = data_dir()
    path = directory / f"torch-{release}.patch"
    if not path.is_file():
        raise NoPatch(
            f"no patch for torch {version} (patches exist for "
            f"{', '.join(available())}; see patches/README.md)"
        )
    text = path.read_text(encoding="utf-8")
    files = tuple(diff.parse(text))
    hashes_path = directory / f"torch-{release}.sha256"
    pristine = {}
    for line in hashes_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sha, rel = line.split(None, 1)
            pristine[rel.strip()] = sha
    changed = {f.path for f in files if f.path.startswith("torch/")}
    if changed != set(pristine):
        raise ValueError(f"{hashes_path} lists {sorted(pristine)} but {path.name} changes {sorted(changed)}")
    return ReleasePatch(release, path, text, files, pristine)


def installed_site() -> Path:
    """The site-packages directory of the torch this interpreter would import (not imported).

    Raises FileNotFoundError when there is none."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("torch is not installed for this interpreter")
    return Path(spec.origin).resolve().parent.parent


def torch_version_at(site: Path) -> str:
    """The ``__version__`` in ``site/torch/version.py``, read without importing torch."""
    version_py = site / "torch" / "version.py"
    try:
        text = version_py.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{version_py} does not exist: {site} is not a directory holding a torch package"
        ) from None
    match = re.search(r"^__version__\s*(?::\s*str\s*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if match is None:
        raise ValueError(f"{version_py} has no __version__ = '...' line")
    return match.group(1)
