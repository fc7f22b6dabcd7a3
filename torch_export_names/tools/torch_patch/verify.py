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
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch_export_names

from . import diff, overlay, status, store
from .store import installed_site

__all__ = ["Check", "Report", "Run", "VerifyError", "verify"]

# The directory holding the torch_export_names package the child must import.
_PACKAGE_PARENT = Path(torch_export_names.__file__).resolve().parent.parent


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

    def format(self) -> str:
        base = {(c.kind, c.name): c for c in self.baseline.checks} if self.baseline else {}

        def cell(check: Check | None) -> str:
            if check is None:
                return ""
            shown = check.detail and (check.ok is not True or check.kind == "guard")
            return check.status + (f" ({_short(check.detail)})" if shown else "")

        rows = [("check", "with patch", "without patch" if self.baseline else "")]
        for c in self.patched.checks:
            rows.append((f"{c.kind} {c.name}", cell(c), cell(base.get((c.kind, c.name)))))
        width = max(len(r[0]) for r in rows)
        width2 = max(len(r[1]) for r in rows)
        lines = [
            f"torch {self.torch_version} at {self.site}",
            f"patch {self.patch}",
            (
                "the torch there is stock: the patched run used a throw-away overlay"
                if self.installed == status.STOCK
                else "the torch there already carries the patch: the patched run used it, "
                "the run without the patch an overlay with the patch undone"
            ),
            f"patched torch imported from {self.patched.torch['fx_graph_file']} "
            f"(records assigned node names: {self.patched.torch['records_assigned_names']}, "
            f"Graph._keep_parameter_names: {self.patched.torch.get('keeps_parameter_names')}, "
            f"hook installed: {self.patched.torch['hook_installed']}, "
            f"code-generator guard: {self.patched.torch.get('codegen_guard_installed')})",
            "",
        ]
        lines += [f"{a:<{width}}  {b:<{width2}}  {c}".rstrip() for a, b, c in rows]
        n = sum(c.ok is True for c in self.patched.checks)
        summary = f"with the patch: {n} of {len(self.patched.checks)} checks pass"
        if self.baseline:
            shown = [c for c in self.baseline.checks if c.kind in ("case", "test")]
            failing = sum(c.ok is False for c in shown)
            summary += f"; without it: {failing} of {len(shown)} cases and tests fail"
            guards = [c for c in self.baseline.checks if c.kind == "guard"]
            summary += f", {sum(c.ok is True for c in guards)} of {len(guards)} guards pass"
        lines += [
            "",
            summary,
            "verdict: " + ("PASS" if self.ok else "FAIL\n  " + "\n  ".join(self.problems)),
        ]
        return "\n".join(lines)


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
            ("Graph._keep_parameter_names", "keeps_parameter_names"),
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
