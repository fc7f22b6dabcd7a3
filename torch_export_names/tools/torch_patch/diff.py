"""Parse a git-style unified diff and apply it exactly (no fuzz, no offsets).

Enough for the patches this package ships: ``diff --git`` sections with
``-p1`` paths, new files from ``/dev/null``, and the ``git format-patch``
envelope around them (mail header, message, diffstat, signature). Applying
is strict on purpose: callers check the files' sha256 first, so a hunk that
does not match exactly at its stated line is an error, never a guess.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["FileDiff", "Hunk", "PatchError", "apply_file", "parse", "reverse"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


class PatchError(ValueError):
    """A diff that cannot be parsed, or that does not apply exactly."""


@dataclasses.dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    # Each line keeps its ' ', '-' or '+' marker and its line ending.
    lines: tuple[str, ...]
    new_start: int
    new_len: int


@dataclasses.dataclass(frozen=True)
class FileDiff:
    path: str  # repository path, without the a/ b/ prefix
    is_new: bool
    hunks: tuple[Hunk, ...]
    text: str  # this file's section of the diff, verbatim


def _strip_prefix(path: str) -> str:
    path = path.strip()
    if path.startswith(("a/", "b/")):
        return path[2:]
    raise PatchError(f"expected an a/ or b/ path (-p1), got {path!r}")


def parse(text: str) -> list[FileDiff]:
    """Every file section of ``text``; the text around them is ignored."""
    lines = text.splitlines(keepends=True)
    files: list[FileDiff] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("diff --git "):
            i += 1
            continue
        start = i
        i += 1
        old_path = new_path = None
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            if line.startswith("diff --git "):
                break
            if line.startswith("--- "):
                old_path = line[4:].rstrip("\n")
            elif line.startswith("+++ "):
                new_path = line[4:].rstrip("\n")
            i += 1
        if new_path is None or old_path is None:
            raise PatchError(f"line {start + 1}: file section without ---/+++ lines")
        hunks = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if m is None:
                raise PatchError(f"line {i + 1}: bad hunk header {lines[i]!r}")
            old_start, old_len = int(m[1]), int(m[2] if m[2] is not None else 1)
            new_start, new_len = int(m[3]), int(m[4] if m[4] is not None else 1)
            i += 1
            body: list[str] = []
            old_seen = new_seen = 0
            while old_seen < old_len or new_seen < new_len:
                if i >= len(lines):
                    raise PatchError(f"hunk at line {start + 1} ends early")
                line = lines[i]
                marker = line[:1]
                if marker in (" ", "\n"):  # some tools drop the space of empty context lines
                    line = " " + line[1:] if marker == " " else " \n"
                    old_seen += 1
                    new_seen += 1
                elif marker == "-":
                    old_seen += 1
                elif marker == "+":
                    new_seen += 1
                elif line.startswith(_NO_NEWLINE):
                    body[-1] = body[-1].rstrip("\n")
                    i += 1
                    continue
                else:
                    raise PatchError(f"line {i + 1}: unexpected {line!r} inside a hunk")
                body.append(line)
                i += 1
            if i < len(lines) and lines[i].startswith(_NO_NEWLINE):
                body[-1] = body[-1].rstrip("\n")
                i += 1
            hunks.append(Hunk(old_start, old_len, tuple(body), new_start, new_len))
        is_new = old_path == "/dev/null"
        path = _strip_prefix(new_path)
        if not is_new and _strip_prefix(old_path) != path:
            raise PatchError(f"renames are not supported ({old_path} -> {new_path})")
        files.append(FileDiff(path, is_new, tuple(hunks), "".join(lines[start:i])))
    if not files:
        raise PatchError("no 'diff --git' section found")
    return files


def reverse(change: FileDiff) -> FileDiff:
    """The diff that undoes ``change``: ``apply_file(apply_file(t, c), reverse(c)) == t``.

    Not defined for a new file (undoing it would mean deleting the file).
    """
    if change.is_new:
        raise PatchError(f"{change.path}: the patch creates it; there is nothing to reverse it to")
    swap = {"-": "+", "+": "-", " ": " "}

    def undo(h: Hunk) -> Hunk:
        return Hunk(
            h.new_start, h.new_len, tuple(swap[ln[0]] + ln[1:] for ln in h.lines), h.old_start, h.old_len
        )

    return dataclasses.replace(change, hunks=tuple(map(undo, change.hunks)), text="")


def apply_file(old_text: str | None, change: FileDiff) -> str:
    """``old_text`` with ``change`` applied; ``old_text`` is None for a new file.

    Raises PatchError naming the file and line where the context differs.
    """
    if change.is_new != (old_text is None):
        raise PatchError(
            f"{change.path}: "
            + ("the patch creates it but it exists" if old_text is not None else "file missing")
        )
    old = [] if old_text is None else old_text.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    for hunk in change.hunks:
        # For an empty old range, old_start is the line after which to insert.
        pos = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        if pos < cursor:
            raise PatchError(f"{change.path}: overlapping hunks at line {hunk.old_start}")
        out.extend(old[cursor:pos])
        for line in hunk.lines:
            marker, content = line[0], line[1:]
            if marker == "+":
                out.append(content)
                continue
            if pos >= len(old) or old[pos] != content:
                found = old[pos].rstrip("\n") if pos < len(old) else "<end of file>"
                raise PatchError(
                    f"{change.path}:{pos + 1}: expected {content.rstrip(chr(10))!r}, found {found!r}"
                )
            if marker == " ":
                out.append(content)
            pos += 1
        cursor = pos
    out.extend(old[cursor:])
    return "".join(out)
