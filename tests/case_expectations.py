"""How each reproduction case of ``torch_export_names.tools.cases`` fails without ``repair``.

Test data, kept out of the package: ``doctor`` runs the cases and reports what happened; the
tests check that what happened is the failure each case reproduces.
"""

from __future__ import annotations

import re
from typing import NamedTuple

REDEFINED = r"Node redefined name"


class Expected(NamedTuple):
    error: str  # a pattern the error matches
    stage: str = "step"  # "step" (the step raises) or "check" (a wrong result)


EXPECTED: dict[str, Expected] = {
    "torch-create-node": Expected(REDEFINED + " mul_1!"),
    "torch-inf-input": Expected(r"differs from eager", "check"),
    "torch-device-input": Expected(r"does not run: TypeError", "check"),
    "qnn-sdpa": Expected(REDEFINED),
    "qnn-roll": Expected(REDEFINED + " cat_1!"),
    "qnn-triu": Expected(REDEFINED + " arange!"),
    # DecomposeWrapWithAutocast maps subgraph placeholders by name.
    "qnn-autocast": Expected(re.escape("KeyError: 'arg0_1'")),
}
