"""The reproduction cases (torch_export_names/_cases.py, what ``doctor`` runs): fail without
repair, pass with it.

run_case checks, before the step, that the colliding names and the op the step
decomposes are really in the exported graph, and after it, that the op is gone,
that every graph lints and (where the step preserves numerics) that the result
matches eager.
"""

import re

import pytest
from case_expectations import EXPECTED

from torch_export_names.tools.cases import CASES, executorch_missing, run_case

from helpers import not_reproduced


def _params():
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.skip(reason=str(executorch_missing()))]
            if case.needs_executorch and executorch_missing()
            else [],
        )
        for case in CASES
    ]


@pytest.mark.parametrize("case", _params())
def test_fails_without_repair(case):
    outcome = run_case(case, repaired=False)
    if outcome.stage == "setup":
        pytest.fail(f"the collision is not set up: {outcome.error}")
    if outcome.ok:
        not_reproduced(
            "no longer produces this failure: it records the names it assigns or "
            "stopped producing the collision"
        )
    expected = EXPECTED[case.name]
    assert outcome.stage == expected.stage, outcome
    assert re.search(expected.error, outcome.error), outcome.error


@pytest.mark.parametrize("case", _params())
def test_passes_with_repair(case):
    outcome = run_case(case, repaired=True)
    assert outcome.ok, outcome
