"""The verification harness: does the patch for the installed torch fix the bug on its own?

``verify()`` builds a throw-away overlay of the installed torch (``overlay``),
writes the patched files into it, and runs ``_child`` in a subprocess that
imports torch from the overlay, with the hook not installed. Then, unless
``baseline=False``, it runs the same checks against the unpatched installed
torch. Both runs take the package's own code-generator guard off, so that
torch's code generator is what runs. It passes when every check passes with
the patch, every reproduction case and every carried test fails without it
(so each of them shows something the patch changes: the shadowing tests check
that every argument keeps its name and ``module()`` computes eager's numbers),
and every guard (a program torch handles without the patch: ``nn.Sequential``
with dynamic shapes, an argument called ``input``, code generated where no
parameter collides) passes without it too and shows the caller the same thing
in both runs (so the patch changes nothing it should not). The installed torch is
only read; its patched files are hashed before and after to prove it.

On a torch that already carries the patch (``patch apply``, or patched by
hand: ``status`` tells), the roles swap: the patched run imports that torch
itself, and the run without the patch uses an overlay in which the patch is
undone. A torch modified in any other way is refused.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import torch_export_names

from . import diff, overlay, status, store
from .store import installed_site

__all__ = ["Check", "Report", "Run", "VerifyError", "verify"]

# The directory holding the torch_export_names package the child must import.
_PACKAGE_PARENT = Path(torch_export_names.__file__).resolve().parent.parent


WIDTH = 100  # columns of ``Report.format``


class VerifyError(RuntimeError):
    """The harness could not run a meaningful check (not: a check failed)."""


@dataclasses.dataclass(frozen=True)
class Check:
    kind: str  # "case", "entry", "guard", "detect" or "test"
    name: str
    ok: bool | None  # None: skipped
    detail: str = ""

    @property
    def status(self) -> str:
        return {True: "pass", False: "fail", None: "skip"}[self.ok]


@dataclasses.dataclass(frozen=True)
class Run:
    label: str  # "patched" or "unpatched"
    torch: dict
    checks: tuple[Check, ...]


@dataclasses.dataclass(frozen=True)
class Report:
    torch_version: str
    site: str
    patch: str
    patched: Run
    baseline: Run | None
    installed: str = status.STOCK  # the torch under ``site``: status.STOCK or status.PATCHED

    @property
    def problems(self) -> list[str]:
        """Why the verdict is not a pass; empty when it is."""
        out = [
            f"with the patch, {c.kind} {c.name} fails: {c.detail}"
            for c in self.patched.checks
            if c.ok is False
        ]
        if self.baseline is not None:
            out += [
                f"without the patch, {c.kind} {c.name} passes too: it does not show the bug"
                for c in self.baseline.checks
                if c.kind in ("case", "test") and c.ok is True
            ]
            patched = {(c.kind, c.name): c for c in self.patched.checks}
            for c in self.baseline.checks:
                if c.kind != "guard":
                    continue
                if c.ok is False:
                    out.append(f"without the patch, guard {c.name} fails too: {c.detail}")
                mine = patched.get((c.kind, c.name))
                if c.ok and mine is not None and mine.ok and c.detail != mine.detail:
                    out.append(
                        f"guard {c.name} differs from torch without the patch: "
                        f"{mine.detail!r} instead of {c.detail!r}"
                    )
        return out

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {
            "torch_version": self.torch_version,
            "site": self.site,
            "patch": self.patch,
            "applies": True,
            "installed": self.installed,
            "ok": self.ok,
            "problems": self.problems,
            "runs": {
                run.label: {"torch": run.torch, "checks": [dataclasses.asdict(c) for c in run.checks]}
                for run in (self.patched, self.baseline)
                if run is not None
            },
        }

    def format(self, width: int = WIDTH) -> str:
        """The report for a terminal: no line longer than ``width`` (but for a path or a word
        longer than that); every check, grouped by kind, then a summary that accounts for
        every check run without the patch."""
        wrap = functools.partial(textwrap.wrap, width=width, break_long_words=False, break_on_hyphens=False)
        torch = self.patched.torch
        head = [
            f"torch {self.torch_version} at {self.site}",
            f"patch {self.patch}",
            (
                "the torch there is stock: the patched run used a throw-away overlay"
                if self.installed == status.STOCK
                else "the torch there already carries the patch: the patched run used it, "
                "the run without the patch an overlay with the patch undone"
            ),
            f"patched torch imported from {torch['fx_graph_file']} "
            f"(records assigned node names: {torch['records_assigned_names']}, "
            f"keeps parameters apart from globals: {torch.get('keeps_parameter_names')}, "
            f"hook installed: {torch['hook_installed']}, "
            f"code-generator guard: {torch.get('codegen_guard_installed')})",
        ]
        lines = [line for text in head for line in wrap(text, subsequent_indent="  ")]
        lines += ["", *self._table(width, wrap), "", *self._summary(wrap)]
        lines.append("verdict: " + ("PASS" if self.ok else "FAIL"))
        for problem in self.problems:
            lines += wrap(problem, initial_indent="  ", subsequent_indent="    ")
        return "\n".join(lines)

    def _table(self, width: int, wrap) -> list[str]:
        """One section per kind of check; a row per check: its name, then pass/fail/skip with
        the patch and without it; under it, what the checks said where that matters."""
        base = {(c.kind, c.name): c for c in self.baseline.checks} if self.baseline else {}
        sections: dict[str, list[Check]] = {}
        for c in self.patched.checks:
            sections.setdefault(c.kind, []).append(c)
        rows = [(4 if cls else 2) + len(name) for cls, name in map(_row_name, self.patched.checks)]
        column = min(max(rows, default=0), width - len("  pass  without"))
        lines = [f"{'check':<{column}}  with  without"]
        for kind, checks in sections.items():
            lines.append(_SECTIONS.get(kind, kind))
            group = None
            for c in checks:
                cls, name = _row_name(c)
                indent = "    " if cls else "  "
                if cls and cls != group:
                    lines.append(f"  {cls}")
                group = cls
                b = base.get((c.kind, c.name))
                cells = f"{c.status}  {b.status if b else '':<7}".rstrip()
                if len(indent) + len(name) <= column:
                    lines.append(f"{indent + name:<{column}}  {cells}")
                else:  # a name too long for the column: the outcomes on a line of their own
                    lines += [indent + name, f"{'':<{column}}  {cells}"]
                lines += [
                    line
                    for text in _details(c, b)
                    for line in wrap(text, initial_indent="      ", subsequent_indent="        ")
                ]
        return lines

    def _summary(self, wrap) -> list[str]:
        """Every check of both runs counted: with the patch, and without it by kind, with the
        entry points that pass without the patch named, and why that is expected."""
        n = sum(c.ok is True for c in self.patched.checks)
        lines = [
            f"with the patch: {n} of {len(self.patched.checks)} checks pass" + _skipped(self.patched.checks)
        ]
        if self.baseline is None:
            return lines + ["without it: not run (--no-baseline)"]
        checks = self.baseline.checks
        lines.append(f"without it, {len(checks)} checks:")

        def count(kinds: tuple[str, ...], what: str, expect: bool, why: str) -> None:
            group = [c for c in checks if c.kind in kinds]
            if not group:
                return
            ran = [c for c in group if c.ok is not None]
            as_expected = sum(c.ok is expect for c in ran)
            verb = "pass" if expect else "fail"
            text = f"{what}: {as_expected} of {len(ran)} {verb} ({why})" + _skipped(group)
            unexpected = [c.name for c in ran if c.ok is not expect]
            if unexpected:
                text += f"; {'fail' if expect else 'pass'}: {', '.join(unexpected)}"
            lines.extend(wrap(text, initial_indent="  ", subsequent_indent="    "))

        count(("case", "test"), "cases and carried tests", False, "each shows the bug")
        count(("detect",), "detection", False, "is_affected() finds this torch affected")
        count(("guard",), "guards", True, "programs torch handles without the patch, shown the same")
        entries = [c for c in checks if c.kind == "entry"]
        if entries:
            ran = [c for c in entries if c.ok is not None]
            failing = [c for c in ran if c.ok is False]
            text = (
                f"entry points: {len(failing)} of {len(ran)} fail (unrecorded names in what they "
                "return)" + _skipped(entries)
            )
            expected = [c.name for c in ran if c.ok and c.name in BUILT_ANEW]
            if expected:
                text += (
                    f"; {len(expected)} pass, as expected: {_and(expected)} build their graphs "
                    "anew, recording every name they give"
                )
            other = [c.name for c in ran if c.ok and c.name not in BUILT_ANEW]
            if other:
                text += f"; {len(other)} pass, not known to build their graphs anew: {_and(other)}"
            lines.extend(wrap(text, initial_indent="  ", subsequent_indent="    "))
        counted = ("case", "test", "detect", "guard", "entry")
        others = [c for c in checks if c.kind not in counted]
        if others:  # a kind this summary does not know: counted all the same
            passed = sum(c.ok is True for c in others)
            lines.extend(wrap(f"other checks: {passed} of {len(others)} pass", initial_indent="  "))
        return lines


# Headings of the table's sections, by kind of check.
_SECTIONS = {
    "case": "cases: the reproductions (each fails without the patch)",
    "entry": "entry points: no unrecorded name in what each returns",
    "guard": "guards: programs torch handles without the patch (pass in both runs, the same)",
    "detect": "detection: the package's is_affected()",
    "test": "tests the patch carries (each fails without the patch)",
}

# Entry points whose result has no unrecorded name on stock torch too: they build their graphs
# anew (load from the serialized program, module() its top-level graph, unflatten a graph per
# submodule), and building a graph node by node records every name.
BUILT_ANEW = ("torch.export.load", "ExportedProgram.module()", "torch.export.unflatten")


def _row_name(check: Check) -> tuple[str, str]:
    """(test class, test) for a carried test ``Class.test_x``, listed under its class;
    ("", name) for any other check."""
    cls, dot, method = check.name.partition(".")
    if dot and cls[:1].isupper() and method.startswith("test"):
        return cls, method
    return "", check.name


def _details(mine: Check, base: Check | None) -> list[str]:
    """What the two runs of one check said, where that matters: anything not a pass, and a
    guard's outcome (what a caller sees), once if both runs saw the same."""

    def shown(c: Check | None) -> bool:
        return c is not None and bool(c.detail) and (c.ok is not True or c.kind == "guard")

    if shown(mine) and shown(base) and base is not None and mine.detail == base.detail:
        return [f"both: {mine.detail}"]
    out = [f"with: {mine.detail}"] if shown(mine) else []
    if shown(base) and base is not None:
        out.append(f"without: {base.detail}")
    return out


def _skipped(checks) -> str:
    skipped = sum(c.ok is None for c in checks)
    return f", {skipped} skipped" if skipped else ""


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _package_path() -> list[Path]:
    """Where the child finds this torch_export_names: nothing extra when it is installed
    in a site directory (putting site-packages on PYTHONPATH would put it before the
    standard library), the source tree otherwise."""
    import site

    site_dirs = {Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]}
    return [] if _PACKAGE_PARENT in site_dirs else [_PACKAGE_PARENT]


def _child_env(pythonpath: list[Path]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_EXPORT_NAMES"}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # never write .pyc through the overlay's symlinks
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run_child(label, pythonpath, expect_under, tests, workdir, timeout) -> Run:
    out = workdir / f"{label}.json"
    cmd = [
        sys.executable,
        "-m",
        "torch_export_names.tools.torch_patch._child",
        "--out",
        str(out),
        "--expect-torch-under",
        str(expect_under),
        "--tests",
        *map(str, tests),
    ]
    proc = subprocess.run(
        cmd,
        cwd=workdir,
        env=_child_env(pythonpath),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if not out.is_file():
        raise VerifyError(
            f"the {label} subprocess wrote no result (exit {proc.returncode}):\n" + proc.stderr[-3000:]
        )
    data = json.loads(out.read_text())
    if data["problems"]:
        raise VerifyError(f"the {label} subprocess refused to run: " + "; ".join(data["problems"]))
    return Run(label, data["torch"], tuple(Check(**c) for c in data["checks"]))


def _pythonpath(site: Path) -> list[Path]:
    """PYTHONPATH entries that make the child import torch from ``site``: none for the
    interpreter's own site-packages (already on sys.path, after the standard library)."""
    try:
        own = installed_site()
    except FileNotFoundError:
        own = None
    return [] if own == site else [site]


def verify(
    *, site: Path | None = None, baseline: bool = True, keep: bool = False, timeout: float = 900
) -> Report:
    """Run the harness for the torch under ``site`` (default: the installed one); see the
    module docstring."""
    if site is None:
        try:
            site = installed_site()
        except FileNotFoundError as e:
            raise VerifyError(str(e)) from None
    site = Path(site).resolve()
    state = status.status(site)  # NoPatch if this torch has none
    patch = state.patch
    if state.state == status.MODIFIED:
        raise VerifyError(
            f"torch {patch.version} in {site} is neither the release nor the release with "
            f"{patch.path.name} ("
            + ", ".join(f"{rel}: {s}" for rel, s in state.files.items())
            + "); reinstall it (`pip install --force-reinstall --no-deps "
            f"torch=={patch.version}`)"
        )
    before = {f.path: store.sha256((site / f.path).read_bytes()) for f in patch.torch_files}
    workdir = Path(tempfile.mkdtemp(prefix="torch-export-names-verify-"))
    try:
        # One run on the torch as released, one with the patch: the installed torch is
        # one of the two, an overlay of it with the patch applied or undone the other.
        root = overlay.build(site, [f.path for f in patch.torch_files], workdir / "overlay")
        for f in patch.torch_files:
            text = (site / f.path).read_text(encoding="utf-8")
            other = diff.apply_file(text, f) if state.state == status.STOCK else status.original_text(text, f)
            assert other is not None  # status() found that the patch undoes
            (root / f.path).write_text(other, encoding="utf-8")
        tests = []
        for rel, text in patch.test_files.items():
            path = workdir / "tests" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            tests.append(path)
        installed = (_pythonpath(site), site / "torch")
        overlaid = ([root], root / "torch")
        with_patch, without = (overlaid, installed) if state.state == status.STOCK else (installed, overlaid)

        def run(label: str, where: tuple[list[Path], Path]) -> Run:
            return _run_child(label, [*where[0], *_package_path()], where[1], tests, workdir, timeout)

        patched = run("patched", with_patch)
        for attr, key in (
            ("recording of assigned node names", "records_assigned_names"),
            ("code generator that keeps parameters apart from globals", "keeps_parameter_names"),
        ):
            if not patched.torch.get(key):
                raise VerifyError(f"torch imported from {with_patch[1]} has no {attr}")
        unpatched = run("unpatched", without) if baseline else None
    finally:
        if keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    after = {f.path: store.sha256((site / f.path).read_bytes()) for f in patch.torch_files}
    if after != before:
        changed = sorted(p for p in after if after[p] != before[p])
        raise VerifyError(f"the torch in {site} changed during verify: {changed}")
    return Report(state.torch_version, str(site), str(patch.path), patched, unpatched, state.state)
