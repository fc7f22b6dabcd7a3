"""Apply the patch for a torch to its installed files in place, and revert it.

For pinned images that want the fix without the hook. ``apply`` refuses
unless every file the patch changes is exactly the release's (sha256 from
``torch-<version>.sha256``), keeps the originals in a backup directory next
to ``torch/`` and records what it wrote; ``revert`` puts the originals back
after checking that the files are still what ``apply`` wrote. Only the
``torch/`` part of the patch is applied: its tests belong in a torch checkout
(``verify`` runs them). Neither imports torch.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import TextIO

from . import diff, store

__all__ = ["BACKUP_DIR", "Refused", "applied", "apply", "revert", "site_of"]

BACKUP_DIR = ".torch-export-names-backup"


class Refused(RuntimeError):
    """apply/revert will not touch the files; the message says why."""


def site_of(target: str | os.PathLike | None) -> Path:
    """``target``, or the site-packages directory of the torch this interpreter finds."""
    if target is not None:
        site = Path(target).resolve()
        if not (site / "torch").is_dir():
            raise Refused(f"{site} has no torch/ directory: give the directory that holds torch/")
        return site
    try:
        return store.installed_site()
    except FileNotFoundError as e:
        raise Refused(str(e)) from None


def _load(site: Path):
    version = store.torch_version_at(site)
    try:
        return version, store.load(version)
    except store.NoPatch as e:
        raise Refused(f"{e}; {site / 'torch'} was left as it is") from None


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically, keeping its mode, and drop its stale byte code."""
    tmp = path.with_name(path.name + ".torch-export-names.tmp")
    tmp.write_bytes(data)
    shutil.copymode(path, tmp)
    os.replace(tmp, path)
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(f"{path.stem}.*.pyc"):
            pyc.unlink()


def apply(target=None, *, dry_run: bool = False, out: TextIO = sys.stdout) -> int:
    """Patch the torch under ``target`` (default: the installed one). Returns 0 or raises Refused."""
    site = site_of(target)
    version, patch = _load(site)
    backup = site / BACKUP_DIR
    missing = [f.path for f in patch.torch_files if not (site / f.path).is_file()]
    if missing:
        raise Refused(f"refusing to patch torch {version} in {site}: missing {', '.join(missing)}")
    current = {f.path: (site / f.path).read_bytes() for f in patch.torch_files}
    # Applied in memory to release files only; None marks a file that is not the release's.
    patched = {
        f.path: diff.apply_file(current[f.path].decode("utf-8"), f)
        if store.sha256(current[f.path]) == patch.pristine[f.path]
        else None
        for f in patch.torch_files
    }
    if backup.exists():
        manifest = _manifest(backup)
        if all(store.sha256(current[p]) == h for p, h in manifest["patched"].items()):
            print(
                f"torch {version} in {site} is already patched (backup in {backup}); nothing to do", file=out
            )
            return 0
        raise Refused(
            f"{backup} exists from an earlier apply but the files no longer match what it "
            "wrote; run `revert` first, or reinstall torch and remove that directory"
        )
    differ = [p for p in current if patched[p] is None]
    if differ:
        raise Refused(
            f"refusing to patch torch {version} in {site}: these files are not the "
            f"torch {patch.version} release's (sha256 differs from torch-{patch.version}.sha256): "
            + ", ".join(differ)
            + ". Already patched by hand, or a modified torch? Reinstall it "
            f"(`pip install --force-reinstall --no-deps torch=={patch.version}`) and retry."
        )
    if dry_run:
        print(
            f"would patch {len(current)} files of torch {version} in {site} "
            f"(originals to {backup}); the diff:\n",
            file=out,
        )
        out.write(patch.torch_diff_text())
        return 0
    backup.mkdir()
    for rel, data in current.items():
        (backup / rel).parent.mkdir(parents=True, exist_ok=True)
        (backup / rel).write_bytes(data)
    new = {rel: text.encode("utf-8") for rel, text in patched.items() if text is not None}
    manifest = {
        "torch": version,
        "patch": patch.path.name,
        "pristine": {rel: patch.pristine[rel] for rel in current},
        "patched": {rel: store.sha256(data) for rel, data in new.items()},
    }
    (backup / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for rel, data in new.items():
        _write(site / rel, data)
    print(f"patched {len(new)} files of torch {version} in {site}; originals in {backup}", file=out)
    for rel in new:
        print(f"  {rel}", file=out)
    print(
        "note: `pip uninstall torch-export-names` does not revert torch. Run "
        "`torch-export-names patch revert` first, or reinstall torch "
        f"(`pip install --force-reinstall --no-deps torch=={version}`).",
        file=out,
    )
    return 0


def applied(site: Path | None = None) -> dict | None:
    """The manifest of the patch ``apply`` left on the torch at ``site`` (default:
    the one this interpreter imports), or None if it is not patched by ``apply``."""
    if site is None:
        try:
            site = store.installed_site()
        except FileNotFoundError:
            return None
    backup = Path(site) / BACKUP_DIR
    if not backup.is_dir():
        return None
    try:
        return _manifest(backup)
    except Refused:
        return {"torch": "?", "patch": "?", "damaged": True}


def _manifest(backup: Path) -> dict:
    try:
        return json.loads((backup / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        raise Refused(f"{backup} is not a backup this tool wrote ({e})") from None


def revert(target=None, *, dry_run: bool = False, out: TextIO = sys.stdout) -> int:
    """Put back the files ``apply`` replaced. Returns 0 or raises Refused."""
    site = site_of(target)
    backup = site / BACKUP_DIR
    if not backup.exists():
        raise Refused(f"nothing to revert: {backup} does not exist (was the patch applied with `apply`?)")
    manifest = _manifest(backup)
    current = {rel: (site / rel).read_bytes() for rel in manifest["patched"]}
    changed = [rel for rel, h in manifest["patched"].items() if store.sha256(current[rel]) != h]
    if changed:
        raise Refused(
            f"refusing to revert: these files changed since `apply` wrote them: {', '.join(changed)}. "
            f"The originals are still in {backup}."
        )
    originals = {rel: (backup / rel).read_bytes() for rel in manifest["patched"]}
    bad = [rel for rel, data in originals.items() if store.sha256(data) != manifest["pristine"][rel]]
    if bad:
        raise Refused(f"the backup in {backup} is damaged: {', '.join(bad)}")
    if dry_run:
        print(f"would restore {len(originals)} files of torch {manifest['torch']} in {site}:\n", file=out)
        for rel in originals:
            out.writelines(
                difflib.unified_diff(
                    current[rel].decode("utf-8").splitlines(keepends=True),
                    originals[rel].decode("utf-8").splitlines(keepends=True),
                    f"a/{rel}",
                    f"b/{rel}",
                )
            )
        return 0
    for rel, data in originals.items():
        _write(site / rel, data)
    shutil.rmtree(backup)
    print(f"restored {len(originals)} files of torch {manifest['torch']} in {site}", file=out)
    return 0
