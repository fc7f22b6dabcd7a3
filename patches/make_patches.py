#!/usr/bin/env python3
"""Regenerate the release patches (torch-<version>.patch and .sha256, the package data in
torch_export_names/tools/torch_patch/data/) from pristine installed torch.

    python patches/make_patches.py [--check] 2.13.0=/path/to/site-packages [2.14.1=...] ...

For each version: applies the edits of recipe.py (``EDITS``) to the pristine
files of that torch (the site-packages of an environment holding it, or the
torch/*.py files unzipped from its wheel); each edit takes the first of its
alternatives that fits this release and matches exactly once, or is reported
not applicable when the release lacks its site, or stops generation. Prints
what each edit did (``--check``: only that). Then copies the files with an
applied edit into a scratch git repository at their torch repository paths
(torch/fx/graph.py, ...), commits them as they are, writes the edited files,
adds patches/test_export_node_names.py as test/export/test_export_node_names.py,
commits with the recipe's MESSAGE, and writes ``git format-patch`` output.
Author and dates are fixed, so the same inputs give byte-identical patches.
The .sha256 file lists the pristine files in ``sha256sum`` format, relative to
site-packages (``sha256sum -c`` works from there); ``torch-export-names patch
apply`` refuses files that do not match it.

A maintainer's tool, not part of the installed package: it needs the pristine
torch of each version (a virtual environment, or the unzipped wheel, per release).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The package ships the patches and hashes as its data (torch-export-names patch ...).
OUT = HERE.parent / "torch_export_names" / "tools" / "torch_patch" / "data"
TEST_SOURCE = HERE / "test_export_node_names.py"
TEST_PATH = "test/export/test_export_node_names.py"

if str(HERE) not in sys.path:  # the recipe sits beside this script
    sys.path.insert(0, str(HERE))
from recipe import EDITS, MESSAGE, MESSAGE_TAIL, Alt, Edit, Sources, occurrences, replace  # noqa: E402

# The author of the commits (and of upstream/make_stack.py's): not a bot, since PyTorch's CLA
# check rejects those. TORCH_PATCH_AUTHOR="Name <email>" replaces it (say, with the identity
# that signed the CLA); the commits then differ from the shipped ones in that line and their ids.
AUTHOR = ("Seed 5807f15f maintainers", "maintainers@users.noreply.a-seed-5807f15f.example")


def author() -> tuple[str, str]:
    value = os.environ.get("TORCH_PATCH_AUTHOR")
    if not value:
        return AUTHOR
    match = re.fullmatch(r"\s*([^<>]+?)\s*<([^<>\s]+@[^<>\s]+)>\s*", value)
    if match is None:
        raise SystemExit(f"TORCH_PATCH_AUTHOR={value!r}: expected 'Name <email>'")
    if "[bot]" in value:
        raise SystemExit(f"TORCH_PATCH_AUTHOR={value!r}: a bot identity fails PyTorch's CLA check")
    return match.group(1), match.group(2)


DATE = "2026-11-01T00:00:00+00:00"


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    """Run git in ``repo`` with a fixed author, dates and no user configuration, so that the
    same inputs give byte-identical commits and patches (upstream/make_stack.py uses it too)."""
    name, email = author()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_DATE": DATE,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


@dataclasses.dataclass(frozen=True)
class Outcome:
    number: int
    edit: Edit
    alt: Alt | None  # None: not applicable
    alt_number: int = 0

    def describe(self) -> str:
        head = f"#{self.number} {self.edit.site}"
        if self.alt is None:
            return f"{head}: not applicable: {self.edit.na[0]}"
        which = f"alternative {self.alt_number + 1} of {len(self.edit.alts)}"
        return f"{head}: applied in {self.alt.path} ({which})"


def apply_recipe(src: Sources) -> tuple[dict[str, str], list[Outcome]]:
    """The patched text of each file the recipe changes in this release, and what each edit did."""
    texts: dict[str, str] = {}
    outcomes = []
    for number, edit in enumerate(EDITS):
        tried = []
        for alt_number, alt in enumerate(edit.alts):
            if alt.when is not None and not alt.when(src):
                continue
            text = texts[alt.path] if alt.path in texts else src.text(alt.path)
            if text is None:
                tried.append(f"{alt.path}: no such file")
                continue
            found = occurrences(text, alt.old)
            if found != alt.count:
                tried.append(f"{alt.path}: {found} occurrence(s) of\n{alt.old}")
                continue
            alt = alt.resolved(src)
            texts[alt.path] = replace(text, alt.old, alt.new)
            outcomes.append(Outcome(number, edit, alt, alt_number))
            break
        else:
            if edit.na is not None and edit.na[1](src):
                outcomes.append(Outcome(number, edit, None))
                continue
            raise SystemExit(
                f"{src.site}: edit #{number} ({edit.site}) matches nothing and is not "
                "marked not applicable for this torch; this torch's source differs from "
                "what the recipe knows. Tried (each must occur exactly once):\n" + "\n".join(tried)
            )
    return texts, outcomes


def message(outcomes: list[Outcome]) -> str:
    """MESSAGE, with a paragraph on what this release lacks or has in another form."""
    notes = list(dict.fromkeys(o.alt.note for o in outcomes if o.alt is not None and o.alt.note))
    missing = [o for o in outcomes if o.alt is None]
    if not notes and not missing:
        return MESSAGE
    wrap = functools.partial(textwrap.fill, width=72)
    lines = [
        wrap("Backport: the code of this release differs from the one the description above was written for.")
    ]
    for note in notes:
        lines.append(wrap(note, initial_indent="- ", subsequent_indent="  "))
    for o in missing:
        lines.append(
            wrap(
                f"Not applicable, {o.edit.site}: {o.edit.na[0]}.", initial_indent="- ", subsequent_indent="  "
            )
        )
    paragraph = "\n".join(lines) + "\n\n"
    return MESSAGE.replace(MESSAGE_TAIL, paragraph + MESSAGE_TAIL)


def make(version: str, site: Path, *, write: bool = True) -> list[Outcome]:
    version_py = (site / "torch" / "version.py").read_text()
    installed = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", version_py).group(1)
    if installed.split("+")[0] != version:
        raise SystemExit(f"{site} holds torch {installed}, not {version}")
    src = Sources(site)
    texts, outcomes = apply_recipe(src)
    files = sorted(texts)
    applied = sum(o.alt is not None for o in outcomes)
    print(
        f"torch {version}: {applied} of {len(EDITS)} edits applied, "
        f"{len(EDITS) - applied} not applicable; {len(files)} torch files"
    )
    for o in outcomes:
        print("  " + o.describe())
    if not write:
        return outcomes
    with tempfile.TemporaryDirectory(prefix=f"torch-{version}-") as tmp:
        repo = Path(tmp)
        git(repo, "init", "-q", "-b", "main")
        for path in files:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(site / path, repo / path)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"torch {version} release files")
        for path in files:
            (repo / path).write_text(texts[path])
        (repo / TEST_PATH).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TEST_SOURCE, repo / TEST_PATH)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-F", "-", stdin=message(outcomes))
        patch = git(repo, "format-patch", "-1", "--stdout", "--no-signature", "--stat=80")
    (OUT / f"torch-{version}.patch").write_text(patch)
    lines = [f"{hashlib.sha256((site / p).read_bytes()).hexdigest()}  {p}\n" for p in files]
    (OUT / f"torch-{version}.sha256").write_text("".join(lines))
    print(f"{OUT / f'torch-{version}.patch'}: {len(files)} torch files + {TEST_PATH}")
    return outcomes


def main(argv: list[str]) -> int:
    write = True
    if argv and argv[0] == "--check":
        write, argv = False, argv[1:]
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for arg in argv:
        version, sep, site = arg.partition("=")
        if not sep:
            raise SystemExit(f"expected VERSION=SITE_PACKAGES, got {arg!r}")
        make(version, Path(site), write=write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
