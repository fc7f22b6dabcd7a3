"""The doctor report: what a user pastes into a bug."""

import json
import os
import re
import subprocess
import sys

import expecttest
import pytest

from torch_export_names.tools import doctor
from torch_export_names.tools.cases import executorch_missing

from helpers import not_reproduced


@pytest.fixture(scope="module")
def report():
    return doctor.collect()


def _without_versions(text: str) -> str:
    masked = "python X, torch X, executorch X, torch-export-names X"
    text = re.sub(r"^python .*$", masked, text, count=1, flags=re.M)
    return re.sub(
        r"^kept out of this report: \d+ lines of output and \d+ warnings",
        "kept out of this report: N lines of output and M warnings",
        text,
        count=1,
        flags=re.M,
    )


@pytest.mark.skipif(
    executorch_missing() is not None, reason="the golden report includes the ExecuTorch cases"
)
def test_doctor_prints_the_report_and_nothing_else(report):
    """The terminal shows the report alone: the stock failures' tracebacks, ExecuTorch's logging and
    the package's own rename warnings stay in the report (doctor --json), counted in one line."""
    if not report["affected"]:
        not_reproduced("records export names; the golden report is for affected versions")
    r = subprocess.run(
        [sys.executable, "-m", "torch_export_names", "doctor"], capture_output=True, text=True, timeout=300
    )
    assert r.stderr == ""
    expecttest.TestCase().assertExpectedInline(
        _without_versions(r.stdout),
        """\
torch-export-names doctor
python X, torch X, executorch X, torch-export-names X
this torch leaves node names unrecorded or illegal: yes (affected)
export hook in this process: off; the cases below measure torch without it

torch-create-node: input `mul`; a pass adds a node named after aten.mul
  without repair: fails (step): RuntimeError: Node redefined name mul_1!
  with repair:    passes
torch-inf-input: input `inf` shadows fx's global inf: ep.module() computes x*inf+x wrongly
  without repair: fails (check): differs from eager: AssertionError: Tensor-likes are not close!
  with repair:    passes
torch-device-input: input `device` shadows fx's global device: ep.module() fails
  without repair: fails (check): does not run: TypeError: 'Tensor' object is not callable
  with repair:    passes
qnn-sdpa: scaled_dot_product_attention(mul, k, v), QNN export pipeline
  without repair: fails (step): RuntimeError: Node redefined name mul!
  with repair:    passes
qnn-roll: torch.roll(torch.cat([x, cat]), 1, 0), QNN export pipeline
  without repair: fails (step): RuntimeError: Node redefined name cat_1!
  with repair:    passes
qnn-triu: torch.triu(x) + arange, QNN export pipeline
  without repair: fails (step): RuntimeError: Node redefined name arange!
  with repair:    passes
qnn-autocast: autocast region t_1.t() @ t_1.t().t(), QNN export pipeline
  without repair: fails (step): KeyError: 'arg0_1'
  with repair:    passes

with repair: 7 passed, 0 failed, 0 skipped; all cases that ran pass with repair
kept out of this report: N lines of output and M warnings from torch and backends while the cases ran (doctor --json has them)
next: repair your exports, by any one of: call torch_export_names.install() before exporting (or repair(ep) after each export); run your script as `torch-export-names run script.py`; set TORCH_EXPORT_NAMES=1 in its environment; or fix torch itself with `torch-export-names patch apply`.
""",
    )


def test_report_names_the_versions(report):
    import torch

    first = doctor.format_report(report).splitlines()[1]
    assert f"torch {torch.__version__}" in first


def test_skipped_cases_are_reported_as_skipped(report):
    skipped = {"name": "qnn-x", "summary": "s", "skipped": "executorch is not installed"}
    fake = dict(report, cases=[report["cases"][0], skipped], passed=1, failed=0, skipped=1, ok=True)
    text = doctor.format_report(fake)
    assert "qnn-x: s\n  skipped: executorch is not installed" in text
    assert "with repair: 1 passed, 0 failed, 1 skipped; all cases that ran pass with repair" in text


def test_skipped_cases_are_counted_as_skipped_not_passed(monkeypatch):
    monkeypatch.setattr(doctor, "executorch_missing", lambda: "executorch is not installed")
    report = doctor.collect()
    needs_et = sum(c.needs_executorch for c in doctor.CASES)
    assert report["skipped"] == needs_et > 0
    assert report["passed"] + report["failed"] == len(doctor.CASES) - needs_et


def _with(report, **changes):
    return dict(report, **changes)


@pytest.mark.parametrize(
    "situation,expected",
    [
        (dict(affected=True, hook={"installed": False, "sources": []}), "call torch_export_names.install()"),
        (
            dict(affected=True, hook={"installed": False, "sources": []}, patch_available=True),
            "or fix torch itself with `torch-export-names patch apply`",
        ),
        (
            dict(affected=True, hook={"installed": False, "sources": []}, patch_available=False),
            "(no torch patch ships for this release)",
        ),
        (
            dict(affected=True, hook={"installed": True, "sources": ["TORCH_EXPORT_NAMES"]}),
            "the hook is installed (via TORCH_EXPORT_NAMES)",
        ),
        (
            dict(affected=False, torch_patched="torch-2.13.0.patch"),
            "`pip uninstall torch-export-names` does not revert that patch",
        ),
        (dict(affected=False, torch_patched=None), "this torch records every name it assigns"),
        (dict(ok=False), "Please file a bug with this report"),
    ],
)
def test_report_ends_with_the_next_step_for_the_situation(report, situation, expected):
    last = doctor.format_report(_with(report, **situation)).splitlines()[-1]
    assert last.startswith("next: ") and expected in last, last


def test_failing_case_makes_the_report_fail(report):
    bad = {"ok": False, "stage": "step", "error": "RuntimeError: Node redefined name mul_1!"}
    case = dict(report["cases"][0], with_repair=bad)
    fake = dict(
        report, cases=[case], passed=0, failed=1, skipped=0, ok=False, captured_output="", warnings=[]
    )
    text = doctor.format_report(fake)
    assert "with repair:    fails (step): RuntimeError: Node redefined name mul_1!" in text
    assert text.splitlines()[-2] == "with repair: 0 passed, 1 failed, 0 skipped; SOME CASES FAIL WITH REPAIR"


def _doctor_json(**env):
    import os

    r = subprocess.run(
        [sys.executable, "-m", "torch_export_names", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    return r, json.loads(r.stdout)


def test_doctor_under_the_env_var_still_measures_stock_torch():
    """The hook is on in the doctor's own process; the report must not be repaired by it."""
    import torch_export_names
    from torch_export_names.hook import suspended

    with suspended():
        if not torch_export_names.is_affected():
            not_reproduced("records export names; stock and hooked look the same")
    # python -m torch_export_names goes through the bootstrap as the .pth would.
    _, data = _doctor_json(TORCH_EXPORT_NAMES="1", PYTHONSTARTUP="")
    first = data["cases"][0]
    assert data["affected"] is True
    assert first["without_repair"]["ok"] is False, first
    assert first["with_repair"]["ok"] is True, first


def test_report_says_how_the_hook_got_there():
    from torch_export_names import install, uninstall

    install()
    try:
        report = doctor.collect()
    finally:
        uninstall()
    assert report["hook"] == {"installed": True, "sources": ["install()"]}
    assert "export hook in this process: installed (via install())" in doctor.format_report(report)


def test_cli_json_and_exit_status():
    r = subprocess.run(
        [sys.executable, "-m", "torch_export_names", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(r.stdout)
    assert r.returncode == (0 if data["ok"] else 1)
    assert {c["name"] for c in data["cases"]} >= {"torch-create-node"}
    assert data["torch"] and isinstance(data["affected"], bool)


def test_json_output_is_only_the_json_whatever_the_cases_print(report, monkeypatch, capfd):
    def noisy_collect():
        os.write(
            1, b"[QNN] Downloading libc++ (LLVM 14.0.0)...\n"
        )  # as ExecuTorch 1.3's Qualcomm backend does
        os.write(2, b"Traceback (most recent call last):\n")
        return dict(report)

    monkeypatch.setattr(doctor, "_collect", noisy_collect)
    doctor.main(json_output=True)
    out, err = capfd.readouterr()
    data = json.loads(out)
    assert data["cases"] == report["cases"]
    assert "[QNN] Downloading" in data["captured_output"] and "Traceback" in data["captured_output"]
    assert err == ""
