"""The verification harness: does the patch for the installed torch fix the bug on its own?

``verify()`` builds a throw-away overlay of the installed torch (``overlay``),
writes the patched files into it, and runs ``_child`` in a subprocess that
imports torch from the overlay, with the hook not installed. Then, unless
``baseline=False``, it runs the same checks against the unpatched installed
torch. It passes when every check passes with the patch, every reproduction
case and every carried test fails without it (so each of them shows
something the patch changes), and every guard (a program torch handles
without the patch: ``nn.Sequential`` with dynamic shapes, an argument called
``input``) passes without it too and shows the caller the same thing in both
runs (so the patch changes nothing it should not). The installed torch is
only read; its patched files are hashed before and after to prove it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import diff, overlay, store

__all__ = ["Check", "Report", "Run", "VerifyError", "installed_site", "verify"]

# The directory holding the torch_export_names package the child must import.
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


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
            f"patched torch imported from {self.patched.torch['fx_graph_file']} "
            f"(Node._assign_name: {self.patched.torch['has_assign_name']}, "
            f"hook installed: {self.patched.torch['hook_installed']})",
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


def installed_site() -> Path:
    """The site-packages directory of the torch this interpreter would import (not imported)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise VerifyError("torch is not installed for this interpreter")
    return Path(spec.origin).resolve().parent.parent


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
        "torch_export_names._torch_patch._child",
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


def verify(*, baseline: bool = True, keep: bool = False, timeout: float = 900) -> Report:
    """Run the harness for the installed torch; see the module docstring."""
    site = installed_site()
    version = store.torch_version_at(site)
    patch = store.load(version)  # NoPatch if this torch has none
    before = {}
    for f in patch.torch_files:
        before[f.path] = _sha256(site / f.path)
        if before[f.path] != patch.pristine[f.path]:
            raise VerifyError(
                f"{site / f.path} is not the torch {patch.version} release's file "
                f"(sha256 {before[f.path][:12]}..., release {patch.pristine[f.path][:12]}...); "
                "verify needs the installed torch unmodified (patched in place? run "
                "`torch-export-names patch revert`)"
            )
    workdir = Path(tempfile.mkdtemp(prefix="torch-export-names-verify-"))
    try:
        root = overlay.build(site, [f.path for f in patch.torch_files], workdir / "overlay")
        for f in patch.torch_files:
            (root / f.path).write_text(
                diff.apply_file((site / f.path).read_text(encoding="utf-8"), f), encoding="utf-8"
            )
        tests = []
        for rel, text in patch.test_files.items():
            path = workdir / "tests" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            tests.append(path)
        patched = _run_child("patched", [root, *_package_path()], root / "torch", tests, workdir, timeout)
        if not patched.torch["has_assign_name"]:
            raise VerifyError("torch imported from the overlay has no Node._assign_name")
        unpatched = (
            _run_child("unpatched", _package_path(), site / "torch", tests, workdir, timeout)
            if baseline
            else None
        )
    finally:
        if keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    after = {f.path: _sha256(site / f.path) for f in patch.torch_files}
    if after != before:
        changed = sorted(p for p in after if after[p] != before[p])
        raise VerifyError(f"the installed torch changed during verify: {changed}")
    return Report(version, str(site), str(patch.path), patched, unpatched)
