"""``torch-export-names doctor``: a report on this torch to paste into a bug."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from typing import Any

import torch

from .cases import CASES, executorch_available, run_case
from .detect import is_affected

__all__ = ["collect", "format_report", "main"]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def collect() -> dict[str, Any]:
    """Run every case once without and once with ``repair``; return the report."""
    have_et = executorch_available()
    cases = []
    for case in CASES:
        entry: dict[str, Any] = {"name": case.name, "summary": case.summary}
        if case.needs_executorch and not have_et:
            entry["skipped"] = "executorch is not installed"
        else:
            for key, repaired in (("without_repair", False), ("with_repair", True)):
                o = run_case(case, repaired=repaired)
                entry[key] = {"ok": o.ok, "stage": o.stage, "error": o.error}
        cases.append(entry)
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "executorch": _version("executorch"),
        "torch_export_names": _version("torch-export-names"),
        "affected": is_affected(),
        "cases": cases,
        "ok": all(c.get("with_repair", {"ok": True})["ok"] for c in cases),
    }


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
        "this torch leaves node names unrecorded: "
        + ("yes (affected)" if report["affected"] else "no"),
        "",
    ]
    for c in report["cases"]:
        lines.append(f"{c['name']}: {c['summary']}")
        if "skipped" in c:
            lines.append(f"  skipped: {c['skipped']}")
            continue
        lines.append(f"  without repair: {_cell(c['without_repair'])}")
        lines.append(f"  with repair:    {_cell(c['with_repair'])}")
    lines += ["", "all cases pass with repair" if report["ok"] else "SOME CASES FAIL WITH REPAIR"]
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, json_output: bool = False) -> int:
    report = collect()
    if json_output:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1
