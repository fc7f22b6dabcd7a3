#!/usr/bin/env python3
"""Write the sparse rebuild of PyTorch's test files that make_stack.py takes as TESTS.

    python patches/upstream/sparse_tests.py OUT

PyTorch's repository cannot be cloned here, so the stack's test hunks are generated against a
rebuild: each test file the stack touches holds, at its line number, every stock line that a
hunk of the current 000*.patch or a goldens/*.diff shows as context or as removed, and blank
lines elsewhere. Run it after adding or changing a goldens/*.diff (its stock lines join the
rebuild), then make_stack.py OUT. Two sources that put different text on one line stop it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = [
    "test/export/test_export.py",
    "test/test_fx.py",
    "test/export/test_passes.py",
    "test/functorch/test_control_flow.py",
]
HUNK = re.compile(r"(?m)^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@.*\n((?:[ +\-\\].*\n|\n)*)")


def file_diffs(text: str) -> dict[str, list[tuple[int, list[str]]]]:
    out = {}
    for chunk in re.split(r"(?m)^diff --git ", text)[1:]:
        path = chunk.split()[0][2:]
        out[path] = [(int(m.group(1)), m.group(3).splitlines(True)) for m in HUNK.finditer(chunk)]
    return out


def main(out: Path) -> None:
    stock: dict[str, dict[int, str]] = {f: {} for f in FILES}
    # cur[f][i]: what line i of the file is after the commits so far: a stock line number,
    # or ("lit", text) for a line a commit added.
    cur: dict[str, list] = {f: list(range(1, 200000)) for f in FILES}

    def note(f: str, ref, text: str) -> None:
        if isinstance(ref, int):
            if stock[f].get(ref, text) != text:
                raise SystemExit(f"{f}:{ref}: two sources disagree on this stock line")
            stock[f][ref] = text
        elif ref[1] != text:
            raise SystemExit(f"{f}: a hunk's context is not what an earlier commit added")

    for patch in sorted(HERE.glob("000*.patch")):
        for f, hunks in file_diffs(patch.read_text()).items():
            if f not in FILES:
                continue
            for start, lines in sorted(hunks, key=lambda h: -h[0]):
                i, new = start - 1, []
                for line in lines:
                    tag, text = (" ", "\n") if line == "\n" else (line[0], line[1:])
                    if tag in " -":
                        note(f, cur[f][i], text)
                        if tag == " ":
                            new.append(cur[f][i])
                        i += 1
                    elif tag == "+":
                        new.append(("lit", text))
                cur[f][start - 1 : i] = new
    for golden in sorted((HERE / "goldens").glob("*.diff")):
        text = golden.read_text()
        f = text.split("\n")[0].split()[1].removeprefix("a/")
        for start, lines in file_diffs("diff --git a/x b/x\n" + text)["x"]:
            i = start
            for line in lines:
                if line[0] in " -":
                    note(f, i, line[1:])
                    i += 1
    for f in FILES:
        n = max(stock[f])
        (out / f).parent.mkdir(parents=True, exist_ok=True)
        (out / f).write_text("".join(stock[f].get(k, "\n") for k in range(1, n + 1)))
        blob = subprocess.run(["git", "hash-object", str(out / f)], capture_output=True, text=True)
        print(f, n, "lines, blob", blob.stdout[:7])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
