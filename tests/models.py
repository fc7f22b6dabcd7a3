"""The small models more than one test file exports (``from models import CollidingInputs``).

Each is named after what it does to torch.export's names. A model one file uses stays in that
file; consumer_models.py builds the consumer tests' models (scripts/exposure.py shares it).
"""

import torch

# The three the reproduction cases and ``patch verify`` also export: defined once, with the cases.
from torch_export_names.tools.cases import CollidingInputs, CondMulInput, MulInput  # noqa: E402,F401


class CondT1Input(torch.nn.Module):
    """A program with nested graphs (cond branches) whose ops are named ``t``, ``t_1``, ..."""

    def forward(self, t_1):
        return torch.cond(t_1.sum() > 0, lambda x: x.t() @ x.t().t(), lambda x: x - 1, (t_1,))
