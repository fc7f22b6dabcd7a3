"""The doctor report: what a user pastes into a bug."""

import json
import re
import subprocess
import sys

import expecttest
import pytest

from torch_export_names import doctor
from torch_export_names.cases import executorch_available


@pytest.fixture(scope="module")
def report():
    return doctor.collect()


def _without_versions(text: str) -> str:
    masked = "python X, torch X, executorch X, torch-export-names X"
    return re.sub(r"^python .*$", masked, text, count=1, flags=re.M)


@pytest.mark.skipif(not executorch_available(), reason="the golden report includes the ExecuTorch cases")
def test_report_on_an_affected_torch(report):
    if not report["affected"]:
        pytest.skip("this torch records export names; the golden report is for affected versions")
    expecttest.TestCase().assertExpectedInline(
        _without_versions(doctor.format_report(report)),
        """\
torch-export-names doctor
python X, torch X, executorch X, torch-export-names X
this torch leaves node names unrecorded: yes (affected)

torch-create-node: input `mul`; a pass adds a node named after aten.mul
  without repair: fails (step): RuntimeError: Node redefined name mul_1!
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

all cases pass with repair""",
    )


def test_report_names_the_versions(report):
    import torch

    first = doctor.format_report(report).splitlines()[1]
    assert f"torch {torch.__version__}" in first


def test_skipped_cases_are_reported_as_skipped(report):
    skipped = {"name": "qnn-x", "summary": "s", "skipped": "executorch is not installed"}
    fake = dict(report, cases=[skipped], ok=True)
    assert "qnn-x: s\n  skipped: executorch is not installed" in doctor.format_report(fake)


def test_failing_case_makes_the_report_fail(report):
    bad = {"ok": False, "stage": "step", "error": "RuntimeError: Node redefined name mul_1!"}
    case = dict(report["cases"][0], with_repair=bad)
    fake = dict(report, cases=[case], ok=False)
    text = doctor.format_report(fake)
    assert "with repair:    fails (step): RuntimeError: Node redefined name mul_1!" in text
    assert text.endswith("SOME CASES FAIL WITH REPAIR")


def test_cli_json_and_exit_status():
    r = subprocess.run(
        [sys.executable, "-m", "torch_export_names", "doctor", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    data = json.loads(r.stdout)
    assert r.returncode == (0 if data["ok"] else 1)
    assert {c["name"] for c in data["cases"]} >= {"torch-create-node"}
    assert data["torch"] and isinstance(data["affected"], bool)
