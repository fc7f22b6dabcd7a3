"""The small models more than one test file exports (``from models import CollidingInputs``).

Each is named after what it does to torch.export's names. A model one file uses stays in that
file; consumer_models.py builds the consumer tests' models (scripts/exposure.py shares it).
"""

import torch


class MulInput(torch.nn.Module):
    """Input ``mul``: export renames the model's own ``mul`` to ``mul_1`` without recording it."""

    def forward(self, mul):
        return mul * 2


class CollidingInputs(torch.nn.Module):
    """Inputs ``mul`` and ``cat`` make torch.export rename the model's ops to mul_1, cat_1."""

    def forward(self, mul, cat):
        return torch.cat([mul * 2, cat])


class CondMulInput(torch.nn.Module):
    """torch names the branch's ops mul_1, mul_2 after the operand ``mul``, unrecorded."""

    def forward(self, x, mul):
        return torch.cond(x.sum() > 0, lambda a, b: a * b * 2, lambda a, b: a - b, (x, mul))


class CondT1Input(torch.nn.Module):
    """A program with nested graphs (cond branches) whose ops are named ``t``, ``t_1``, ..."""

    def forward(self, t_1):
        return torch.cond(t_1.sum() > 0, lambda x: x.t() @ x.t().t(), lambda x: x - 1, (t_1,))
