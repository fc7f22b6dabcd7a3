"""Write docs/reports/compatibility.md from what scripts/matrix.sh recorded.

    python scripts/matrix_report.py RESULTS OUT MINUTES VERSION...

MATRIX_NOTE, if set, is printed under the header (e.g. which rows were re-run, and why).

Every figure comes from the files a row left in RESULTS/<version>: pytest's summary line
and junit report, the patch harness's JSON, env.json (versions, ``is_affected()``), and the
commits they ran at: ``commit`` (the suite's) and, where the harness was run again later with
the package installed from another commit, ``verify-commit`` (else the suite's).
Exits 1 if any row failed (install, a test, or the patch harness).
"""

from __future__ import annotations

import collections
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# What every run shows and the table does not say (written under it).
NOTES = [
    "## Notes",
    "",
    "- ExecuTorch: each row installs the ExecuTorch release that pins its torch. None installs beside",
    "  2.4.1, 2.5.1 or 2.7.1 (0.3.0, 0.4.0 and 0.6.0 pin 2.4.0, 2.5.0 and 2.7.0 exactly), so those",
    "  rows run without it. Older ExecuTorch releases lack the Qualcomm API the HTP adapter extends",
    "  (`torch_export_names.executorch` supports ExecuTorch 1.5.x and raises an `ImportError` naming",
    "  that on others); 0.5.0 and 0.7.0 ship the Qualcomm backend without its compiled Python module, and",
    "  1.0.1 - 1.3.1's tries to download the QNN SDK when imported (no network here): the Qualcomm cases",
    "  and tests skip, naming the error. The consumers those releases have (exir passes, SDPA",
    "  decomposition, Cadence, ...) run; those they lack skip, named.",
    "- Torch bugs the suite works around, all present without this package: 2.4-2.7 trace a",
    "  `while_loop` over `(y, y)` with one input read twice (with a negative random input such a",
    "  program never ends, so the test uses a positive one); 2.8 refuses it (aliasing); 2.4-2.6",
    "  `while_loop` programs can differ from eager; 2.5.1 cannot run an autocast region after a",
    "  `no_grad` region (`forward() missing 1 required positional argument`), which the property test",
    "  rejects as stock torch does. On 2.6 `scan`'s arguments are laid out differently: its subgraph",
    "  placeholders keep torch's names (one warning); names are still recorded and legal.",
    "- Also present without this package, where the suite compares with stock torch running the same",
    "  program with plain input names: 2.5.1's export verifier refuses `builtins.round` on a symbolic",
    "  size (the round test the patch carries skips there); exporting a program's `ep.module()` again",
    "  fails on 2.5 with an autocast region (`Unsupported`) and on 2.7 with `scan` or `map`",
    "  (`UncapturedHigherOrderOpError`, an `AssertionError` in dynamo).",
    "- CI (`.ci/run`) runs the whole suite on torch 2.13.0 with ExecuTorch 1.5.1, and its fast tier (the",
    "  tests not marked slow) on the oldest supported release, torch 2.4.1, installed first with the",
    "  package beside it.",
    "",
]


def read_text(path: Path) -> str:
    """A file a row left, stripped; "" where there is none."""
    return path.read_text().strip() if path.exists() else ""


def _json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _tests(res: Path) -> tuple[str, bool, list[str], collections.Counter]:
    """(cell, ok, failing test ids, skip reasons) from pytest's log and junit report."""
    log = read_text(res / "pytest.log")
    summary = next((ln for ln in reversed(log.splitlines()) if re.search(r" in [\d.]+s", ln)), "")
    if not summary:
        return "suite did not run", False, [], collections.Counter()
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|xfailed|errors?)\b", summary)}
    bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    failing, skips = [], collections.Counter()
    try:
        for case in ET.parse(res / "junit.xml").getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failing.append(f"{case.get('classname')}::{case.get('name')}")
            skipped = case.find("skipped")
            if skipped is not None and skipped.get("type") != "pytest.xfail":
                reason = re.sub(r"^(?:Skipped: )?", "", skipped.get("message", ""))
                reason = re.sub(r"torch \d+\.\d+\.\d+(\+\w+)?", "torch", reason)  # one reason, all rows
                skips[reason[:160]] += 1
    except (OSError, ET.ParseError):
        pass
    seconds = read_text(res / "test-seconds")
    cell = (
        f"{counts.get('passed', 0)} passed, {bad} failed, {counts.get('skipped', 0)} skipped"
        + (f", {counts['xfailed']} xfailed" if counts.get("xfailed") else "")
        + (f" ({int(seconds) // 60} min)" if seconds else "")
    )
    return cell, bad == 0, failing, skips


def patch_cell(res: Path, details: dict, v: str) -> tuple[str, bool]:
    """The patch harness's report of one row as a table cell, and whether it passed; each check
    goes into ``details`` by (kind, name) and (release, patch or stock)."""
    report = _json(res / "verify.json")
    if report is None:
        err = read_text(res / "verify.log").splitlines()
        return "harness did not run: " + (err[-1] if err else "no output"), False
    runs = report["runs"]
    p = runs["patched"]["checks"]
    b = runs.get("unpatched", {}).get("checks", [])
    for run, checks in (("patch", p), ("stock", b)):
        for c in checks:
            details.setdefault((c["kind"], c["name"]), {})[(v, run)] = c
    passed = sum(c["ok"] is True for c in p)
    skipped = sum(c["ok"] is None for c in p)
    # Cases and tests must fail on stock torch; entry points and guards (the program must run
    # on stock as with the patch) are not counted here.
    fail_stock = sum(c["ok"] is False for c in b if c["kind"] in ("case", "test"))
    of_stock = sum(c["ok"] is not None for c in b if c["kind"] in ("case", "test"))
    cell = (
        ("yes" if report["ok"] else "NO")
        + f": {passed}/{len(p) - skipped} checks pass with it"
        + (f" ({skipped} skipped)" if skipped else "")
        + (f"; {fail_stock}/{of_stock} fail on stock torch" if b else "")
    )
    return cell, bool(report["ok"])


def main(argv: list[str]) -> int:
    results, out, minutes, versions = Path(argv[0]), Path(argv[1]), argv[2], argv[3:]
    rows, details, failing, skip_rows, failed = [], {}, [], {}, False
    for v in versions:
        res = results / v
        env = _json(res / "env.json") or {}
        et = read_text(res / "executorch") or "none: " + (read_text(res / "executorch-failed") or "?")
        commit = read_text(res / "commit") or "?"
        verify_commit = read_text(res / "verify-commit") or commit
        if (res / "install-failed").exists():
            rows.append(
                f"| {v} | `{commit}` | {et} | {read_text(res / 'install-failed')} "
                f"| not run | `{verify_commit}` | not run | ? |"
            )
            failed = True
            continue
        kept = env.get("torch", "?").split("+")[0] == v
        keep = f"yes (`{env.get('torch')}`)" if kept else f"**NO**: torch is now {env.get('torch', '?')}"
        failed |= not kept
        tests, ok, fails, skips = _tests(res)
        failed |= not ok
        failing += [f"{v}: `{t}`" for t in fails]
        skip_rows[v] = skips
        patch, patch_ok = patch_cell(res, details, v)
        failed |= not patch_ok
        affected = env.get("is_affected")
        hook = {True: "yes", False: "no"}.get(affected, f"cannot tell: {affected}")
        rows.append(f"| {v} | `{commit}` | {et} | {keep} | {tests} | `{verify_commit}` | {patch} | {hook} |")

    table = [
        "| torch | suite at | ExecuTorch in the run | `pip install .` keeps this torch | tests | "
        "patch verify at | patch applies and fixes | hook needed on stock torch |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
    ]
    mark = lambda c: "-" if c is None else {True: "pass", False: "fail", None: "skip"}[c["ok"]]  # noqa: E731
    lines = [
        "# Compatibility matrix",
        "",
        f"Generated on {datetime.date.today().isoformat()} by `scripts/matrix_report.py` from what",
        f"`scripts/matrix.sh` recorded ({minutes} minutes in all); do not edit by hand. Per torch release:",
        '`pip install torch==V` in a new virtual environment, then `pip install ".[test]"` (the package',
        "beside it, as a user installs it: it must keep that torch), the ExecuTorch release that pins",
        "that torch where one installs on Python 3.11, the full suite (`python -m pytest tests --slow`,",
        'from the checkout at the "suite at" commit) and the patch harness (`torch-export-names patch',
        'verify`, with the package and its release patches as installed from the "patch verify at"',
        "commit).",
        "",
        "To regenerate it: `MATRIX_DIR=DIR MATRIX_JOBS=2 bash scripts/matrix.sh` (all twelve releases,",
        "or the ones named; writes this file), or from the results such a run left in DIR:",
        "`python3 scripts/matrix_report.py DIR/results docs/reports/compatibility.md MINUTES "
        + " ".join(versions)
        + "`.",
        *(["", os.environ["MATRIX_NOTE"]] if os.environ.get("MATRIX_NOTE") else []),
        "",
        *table,
        "",
        *(["Failing tests: " + "; ".join(failing) + ".", ""] if failing else ["No test failed.", ""]),
        '"hook needed": `torch_export_names.is_affected()` on the stock torch (it exports a',
        'two-input model and looks for unrecorded or illegal names). "patch applies and fixes":',
        "the harness applied `patches/torch-<version>.patch` to a throw-away overlay of the",
        "installed torch (after checking every file's sha256 against the release) and ran, with the",
        "hook not installed, the reproduction cases, the entry-point checks and the tests the patch",
        'carries (a check whose entry point or HOP the release lacks is skipped); "on stock',
        'torch" is the same run without the patch, where every case and test must fail.',
        "",
        *NOTES,
        "## Skipped tests, by reason",
        "",
        "| reason | " + " | ".join(versions) + " |",
        "| --- |" + " --- |" * len(versions),
    ]
    reasons = sorted(
        {r for s in skip_rows.values() for r in s},
        key=lambda r: (-sum(s.get(r, 0) for s in skip_rows.values()), r),
    )
    for r in reasons:
        lines.append(
            f"| {r.replace('|', '/')} | "
            + " | ".join(str(skip_rows.get(v, {}).get(r, "")) for v in versions)
            + " |"
        )
    lines += [
        "",
        "## Every patch check, with the patch and on stock torch",
        "",
        "| check | " + " | ".join(f"{v} patch | {v} stock" for v in versions) + " |",
        "| --- |" + " --- |" * (2 * len(versions)),
    ]
    for (kind, name), by in details.items():
        cells = " | ".join(f"{mark(by.get((v, 'patch')))} | {mark(by.get((v, 'stock')))}" for v in versions)
        lines.append(f"| {kind} `{name}` | {cells} |")
    lines.append("")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
