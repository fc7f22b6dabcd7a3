"""A throw-away view of an installed torch in which only some files are real copies.

``build(site, files, root)`` makes ``root/torch`` mirror ``site/torch``: every
entry is a symlink to the installed one, except the directories on the way to
``files``, which are real directories (their other entries again symlinks),
and ``files`` themselves, which are real copies the caller may then rewrite.
Put ``root`` first on ``PYTHONPATH`` and ``import torch`` loads the installed
torch with those files replaced; nothing under ``site`` is ever written.

Byte code: in a real directory the ``__pycache__`` entry is a real directory
of symlinks to the installed ``.pyc`` files, minus those of the copied
modules, so untouched modules load their cached byte code and the copies
are compiled afresh. Run the interpreter with ``PYTHONDONTWRITEBYTECODE=1``
so it never writes a ``.pyc`` through a symlinked directory into the
installed torch.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Iterable

__all__ = ["build"]


def build(site: Path, files: Iterable[str], root: Path) -> Path:
    """Mirror ``site/torch`` under ``root``; ``files`` (``torch/...`` paths) become copies.

    Returns ``root``. ``root`` must be empty or absent.
    """
    site = Path(site).resolve()
    root = Path(root)
    copies = {PurePosixPath(f) for f in files}
    for f in copies:
        if f.parts[0] != "torch" or ".." in f.parts:
            raise ValueError(f"{f}: expected a path under torch/")
        if not (site / f).is_file():
            raise FileNotFoundError(f"{site / f} does not exist")
    real_dirs = {PurePosixPath("torch")} | {p for f in copies for p in f.parents if p.parts}
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    stale_pyc = {(f.parent, f.stem) for f in copies}

    def mirror(rel: PurePosixPath) -> None:
        (root / rel).mkdir()
        for entry in sorted(os.listdir(site / rel)):
            child = rel / entry
            if child in copies:
                shutil.copy2(site / child, root / child)
            elif child in real_dirs:
                mirror(child)
            elif entry == "__pycache__" and (site / child).is_dir():
                (root / child).mkdir()
                for pyc in sorted(os.listdir(site / child)):
                    if (rel, pyc.split(".", 1)[0]) not in stale_pyc:
                        os.symlink(site / child / pyc, root / child / pyc)
            else:
                os.symlink(site / child, root / child)

    mirror(PurePosixPath("torch"))
    return root
