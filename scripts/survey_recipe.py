"""Which edits of patches/make_patches.py's recipe match one installed torch (issue 13 survey).

    python scripts/survey_recipe.py SITE_PACKAGES [--show]

make_patches.py stops at the first edit that does not match; this checks
every edit on its own against the pristine files and prints, per edit, the
file, the first line of its old text, and how often it occurs (expected in
brackets). Edits are checked on the pristine text, not after earlier edits.
With --show, each failing edit is followed by the window of the release's
file that resembles its old text most (difflib), as a unified diff. Writes
nothing.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "patches"))
import make_patches  # noqa: E402


def closest(text: str, old: str) -> str:
    """The unified diff between ``old`` and the most similar window of ``text``."""
    want = old.splitlines()
    lines = text.splitlines()
    anchors = {w.strip() for w in want if len(w.strip()) > 12}
    best, best_at = -1.0, 0
    for i in range(max(1, len(lines) - len(want) + 1)):
        # only windows sharing a line with the old text, or everything if none do
        window = lines[i : i + len(want)]
        if anchors and not any(w.strip() in anchors for w in window):
            continue
        r = difflib.SequenceMatcher(None, "\n".join(want), "\n".join(window)).ratio()
        if r > best:
            best, best_at = r, i
    if best < 0:
        return "      (no line of the old text occurs in this file)\n"
    window = lines[best_at : best_at + len(want)]
    diff = difflib.unified_diff(want, window, "recipe", f"release (line {best_at + 1})", lineterm="")
    return "".join(f"      {d}\n" for d in diff)


def main(site: str, show: bool = False) -> int:
    bad = 0
    for i, (path, old, _new, expected) in enumerate(make_patches.EDITS):
        file = Path(site) / path
        if not file.exists():
            found = "file missing"
            ok = False
        else:
            n = make_patches._count(file.read_text(), old)
            found, ok = str(n), n == expected
        bad += not ok
        first = old.strip().splitlines()[0]
        print(f"{'ok  ' if ok else 'FAIL'} #{i:<2} {path}: {first!r} found {found} [{expected}]")
        if show and not ok and file.exists():
            print(closest(file.read_text(), old), end="")
    print(f"{len(make_patches.EDITS) - bad}/{len(make_patches.EDITS)} edits match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--show" in sys.argv[2:]))
