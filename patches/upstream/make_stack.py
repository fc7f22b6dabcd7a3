#!/usr/bin/env python3
"""Regenerate patches/upstream/000{1,2}-*.patch (the #202927 stack, PR A and PR B) and
patches/upstream/hops/0001-*.patch (PR C, HOP naming, a series of its own) against PyTorch v2.15.0.

    python patches/upstream/make_stack.py SITE TESTS [--repo DIR] [--check]

SITE: a directory holding the pristine ``torch/`` of torch 2.15.0 (the site-packages
of an environment with the wheel installed). TESTS: a directory holding PyTorch's own
test files at their repository paths (``test/export/test_export.py``,
``test/test_fx.py``, ...), as read from pytorch/pytorch (which stored version:
patches/upstream/CHECK.md).

It builds a scratch git repository (``--repo``, default a temporary directory) whose
first commit, "v2.15.0", holds the files the changes touch as SITE and TESTS have them,
applies the commits of ``stack_recipe.COMMITS`` one after the other (each edit must match
exactly once, or generation stops) and writes their ``git format-patch`` output next to this
script; then, on a branch from "v2.15.0", the same for ``stack_recipe.HOPS`` into ``hops/``.
Author and dates are fixed: the same inputs give the same bytes. ``--check`` also compares
the torch files of both series together with what ``patches/make_patches.py`` makes for
2.15.0 (the release patch): they must be equal.

The recipe (what each commit changes) is stack_recipe.py; this file is the machinery.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HOPS_DIR = HERE / "hops"
sys.path[:0] = [str(HERE), str(HERE.parent)]

import make_patches  # noqa: E402
import recipe  # noqa: E402
import stack_recipe  # noqa: E402


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    found = recipe.occurrences(text, old)
    if found != 1:
        raise SystemExit(f"{where}: {found} occurrence(s) (need exactly 1) of\n{old}")
    return recipe.replace(text, old, new)


def _release_edit(number: int, site: Path, texts: dict[str, str], repo: Path):
    """(path, old, new, count) of edit ``number`` of patches/recipe.py, in the alternative
    that fits torch 2.15.0 (its ``when`` holds and its text occurs ``count`` times)."""
    sources = recipe.Sources(site)
    for alt in recipe.EDITS[number].alts:
        if alt.when is not None and not alt.when(sources):
            continue
        text = texts.get(alt.path) or (repo / alt.path).read_text()
        if recipe.occurrences(text, alt.old) == alt.count:
            alt = alt.resolved(sources)
            return alt.path, alt.old, alt.new, alt.count
    raise SystemExit(f"edit #{number} of patches/recipe.py fits nothing here")


def _commit_series(site: Path, repo: Path, commits, label: str) -> None:
    for number, commit in enumerate(commits, 1):
        texts: dict[str, str] = {}
        for i, edit in enumerate(commit.edits):
            count = 1
            if isinstance(edit, int):  # an edit of the release patches' recipe
                path, old, new, count = _release_edit(edit, site, texts, repo)
            else:
                path, old, new = edit
            text = texts.get(path) or (repo / path).read_text()
            if count == 1:
                texts[path] = _replace_once(text, old, new, f"{label} commit {number}, edit {i} ({path})")
            else:  # an alternative that replaces each of ``count`` occurrences, checked above
                texts[path] = recipe.replace(text, old, new)
        for path, text in texts.items():
            (repo / path).write_text(text)
        make_patches.git(repo, "add", "-A")
        make_patches.git(repo, "commit", "-q", "-F", "-", stdin=commit.message)


def build(site: Path, tests: Path, repo: Path) -> None:
    paths = stack_recipe.touched_paths()
    make_patches.git(repo, "init", "-q", "-b", "main")
    for path in paths:
        src = (site if path.startswith("torch/") else tests) / path
        if not src.is_file():
            raise SystemExit(f"missing {src}")
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, repo / path)
    make_patches.git(repo, "add", "-A")
    make_patches.git(repo, "commit", "-q", "-m", "v2.15.0")
    make_patches.git(repo, "tag", "v2.15.0")
    _commit_series(site, repo, stack_recipe.COMMITS, "stack")
    for old in [*HERE.glob("000*.patch"), *HOPS_DIR.glob("000*.patch")]:
        old.unlink()
    n = str(len(stack_recipe.COMMITS))
    make_patches.git(repo, "format-patch", "-q", f"-{n}", "--no-signature", "--stat=80", "-o", str(HERE))
    make_patches.git(repo, "checkout", "-q", "-b", "hops", "v2.15.0")
    _commit_series(site, repo, stack_recipe.HOPS, "hops")
    HOPS_DIR.mkdir(exist_ok=True)
    n = str(len(stack_recipe.HOPS))
    make_patches.git(repo, "format-patch", "-q", f"-{n}", "--no-signature", "--stat=80", "-o", str(HOPS_DIR))
    # the top of both: the stack, then the HOP commit on it (their torch files are disjoint)
    make_patches.git(repo, "checkout", "-q", "main")
    make_patches.git(repo, "cherry-pick", "hops")


def check_release_patch(site: Path, repo: Path) -> bool:
    """The torch files of the stack and the HOP commit together are those of the release patch
    torch-2.15.0.patch."""
    texts, _ = make_patches.apply_recipe(recipe.Sources(site))
    ok = True
    for path, text in sorted(texts.items()):
        same = (repo / path).read_text() == text
        ok &= same
        print(f"{'same' if same else 'DIFFERENT'}: {path}")
    stack_only = sorted(p for p in stack_recipe.touched_paths() if p.startswith("torch/") and p not in texts)
    for path in stack_only:
        print(f"DIFFERENT: {path} (changed by the stack only)")
    return ok and not stack_only


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("site", type=Path)
    p.add_argument("tests", type=Path)
    p.add_argument("--repo", type=Path, help="build the scratch repository here (must not exist)")
    p.add_argument(
        "--check", action="store_true", help="compare the top of the stack with the release patch's files"
    )
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="torch-stack-") as tmp:
        repo = args.repo or Path(tmp)
        repo.mkdir(parents=True, exist_ok=args.repo is None)
        build(args.site, args.tests, repo)
        written = [*HERE.glob("000*.patch"), *HOPS_DIR.glob("000*.patch")]
        print("\n".join(sorted(str(p.relative_to(HERE)) for p in written)))
        if args.check and not check_release_patch(args.site, repo):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
