"""``torch-export-names doctor``: a report on this torch to paste into a bug."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import warnings
from typing import Any, Iterator

import torch

from .. import hook
from .._detect import is_affected
from .._fx_namespace import PrivateStateMissing
from .cases import CASES, executorch_missing, run_case
from .torch_patch.install import applied as patch_applied

__all__ = ["collect", "format_report", "main"]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@contextlib.contextmanager
def _captured() -> Iterator[dict[str, Any]]:
    """Keep what the cases print and warn out of the terminal: into the report.

    A case that fails on stock torch makes torch.fx print the generated code's
    traceback, ExecuTorch logs through handlers made at its import, and the
    reproductions trigger this package's own rename warnings. The output is
    taken at the file descriptors (1 and 2), so handlers bound to the streams
    at import time are captured too; it lands in ``captured["output"]``, the
    warnings' messages in ``captured["warnings"]``.
    """
    captured: dict[str, Any] = {"output": "", "warnings": []}
    with tempfile.TemporaryFile(mode="w+b") as sink, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        saved = [os.dup(1), os.dup(2)]
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            captured["output"] = sink.read().decode("utf-8", "replace")
            captured["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]


def collect() -> dict[str, Any]:
    """Run every case once without and once with ``repair``; return the report.

    Everything is measured on torch as installed: the hook, if this process
    has it, is suspended for the report's own exports. What the cases print or
    warn is kept in the report (``captured_output``, ``warnings``), not shown.
    """
    with _captured() as captured:
        report = _collect()
    output = captured["output"]
    report["captured_output"] = output
    report["warnings"] = list(dict.fromkeys(captured["warnings"]))
    return report


def _collect() -> dict[str, Any]:
    no_et = executorch_missing()
    cases = []
    with hook.suspended():
        for case in CASES:
            entry: dict[str, Any] = {"name": case.name, "summary": case.summary}
            if case.needs_executorch and no_et:
                entry["skipped"] = no_et
            else:
                for key, repaired in (("without_repair", False), ("with_repair", True)):
                    o = run_case(case, repaired=repaired)
                    entry[key] = {"ok": o.ok, "stage": o.stage, "error": o.error}
            cases.append(entry)
    ran = [c for c in cases if "skipped" not in c]
    try:
        affected, affected_error = is_affected(), None
    except PrivateStateMissing as e:  # this torch lacks what the answer is read from
        affected, affected_error = None, str(e)
    status = hook.status()
    patch = patch_applied()
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "executorch": _version("executorch"),
        "torch_export_names": _version("torch-export-names"),
        "affected": affected,
        "affected_error": affected_error,
        "torch_patched": None if patch is None else patch.get("patch", "?"),
        "patch_available": _patch_available(),
        "hook": {"installed": hook.is_installed(), "sources": list(status.sources)},
        "cases": cases,
        "passed": sum(c["with_repair"]["ok"] for c in ran),
        "failed": sum(not c["with_repair"]["ok"] for c in ran),
        "skipped": len(cases) - len(ran),
        "ok": all(c["with_repair"]["ok"] for c in ran),
    }


def _patch_available() -> bool:
    """Whether a torch patch ships for this torch release."""
    from .torch_patch import store

    try:
        return store.release_of(torch.__version__) in store.available()
    except FileNotFoundError:
        return False


def next_step(report: dict[str, Any]) -> str:
    """What to do now, for the situation the report describes."""
    hook_state = report["hook"]
    if report["affected"] is None:
        return (
            "next: this torch lacks the torch.fx state the package reads and writes, so the "
            "hook and repair leave programs as torch builds them. Please file a bug with this "
            "report (torch-export-names doctor --json)."
        )
    if not report["ok"]:
        return (
            "next: a case fails even with the repair. Please file a bug with this report "
            "(torch-export-names doctor --json)."
        )
    if report["torch_patched"] and not report["affected"]:
        return (
            f"next: nothing to do; torch is patched ({report['torch_patched']}) and records "
            "names itself. `pip uninstall torch-export-names` does not revert that patch: run "
            "`torch-export-names patch revert` first if you want stock torch back."
        )
    if not report["affected"]:
        return "next: nothing to do; this torch records every name it assigns (the hook is not needed)."
    if hook_state["installed"]:
        return (
            f"next: nothing to do in this process; the hook is installed (via "
            f"{', '.join(hook_state['sources'])}) and repairs every export."
        )
    ways = (
        "call torch_export_names.install() before exporting (or repair(ep) after each export); "
        "run your script as `torch-export-names run script.py`; set TORCH_EXPORT_NAMES=1 in "
        "its environment"
    )
    if report.get("patch_available"):
        return (
            f"next: repair your exports, by any one of: {ways}; or fix torch itself with "
            "`torch-export-names patch apply`."
        )
    return f"next: repair your exports, by any one of: {ways} (no torch patch ships for this release)."


def _installed_via(sources: list[str]) -> str:
    return f"installed (via {', '.join(sources)})"


def _cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return "-"
    if result["ok"]:
        return "passes"
    return f"fails ({result['stage']}): {result['error']}"


def format_report(report: dict[str, Any]) -> str:
    lines = [
        "torch-export-names doctor",
        f"python {report['python']}, torch {report['torch']}, "
        f"executorch {report['executorch'] or 'not installed'}, "
        f"torch-export-names {report['torch_export_names'] or 'not installed'}",
        "this torch leaves node names unrecorded or illegal: "
        + {True: "yes (affected)", False: "no", None: f"cannot tell ({report['affected_error']})"}[
            report["affected"]
        ]
        + (f"; patched by `patch apply` ({report['torch_patched']})" if report["torch_patched"] else ""),
        "export hook in this process: "
        + (_installed_via(report["hook"]["sources"]) if report["hook"]["installed"] else "off")
        + "; the cases below measure torch without it",
        "",
    ]
    for c in report["cases"]:
        lines.append(f"{c['name']}: {c['summary']}")
        if "skipped" in c:
            lines.append(f"  skipped: {c['skipped']}")
            continue
        lines.append(f"  without repair: {_cell(c['without_repair'])}")
        lines.append(f"  with repair:    {_cell(c['with_repair'])}")
    counts = f"{report['passed']} passed, {report['failed']} failed, {report['skipped']} skipped"
    verdict = "all cases that ran pass with repair" if report["ok"] else "SOME CASES FAIL WITH REPAIR"
    lines += ["", f"with repair: {counts}; {verdict}"]
    output_lines = len(report.get("captured_output", "").splitlines())
    if output_lines or report.get("warnings"):
        lines.append(
            f"kept out of this report: {output_lines} lines of output and {len(report['warnings'])} "
            "warnings from torch and backends while the cases ran (doctor --json has them)"
        )
    lines.append(next_step(report))
    return "\n".join(lines)


def main(*, json_output: bool = False) -> int:
    report = collect()  # what the cases print (ExecuTorch's Qualcomm backend: "[QNN] ...") is in the report
    if json_output:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1
