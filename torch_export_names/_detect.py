"""Whether the running torch leaves node names unrecorded or illegal, decided by trying."""

from __future__ import annotations

import functools

import torch

from .hook import suspended
from .passes import find_illegal_names, find_unrecorded_names

__all__ = ["is_affected"]


class _ProbeModel(torch.nn.Module):
    """An input called ``mul`` makes torch.export rename the model's own mul to
    ``mul_1``; one called ``inf`` becomes a parameter of fx's generated code, which
    also writes the constant ``float("inf")`` as ``inf``."""

    def forward(self, mul: torch.Tensor, inf: torch.Tensor) -> torch.Tensor:
        return mul * 2 + inf * float("inf")


@functools.lru_cache(maxsize=None)
def is_affected() -> bool:
    """Whether ``torch.export.export`` on this torch leaves names unrecorded or illegal, or
    fx's code generator lets an argument shadow a global of its code.

    Exports a small model once per process (the answer is cached), asks
    ``find_unrecorded_names`` and ``find_illegal_names``, and compares ``ep.module()`` with
    eager; stock torch is measured even while the hook and the code-generator guard are in
    place. Not decided by version number.

    Raises ``PrivateStateMissing`` when this torch lacks the torch.fx state
    the answer is read from: then the package cannot tell (nor repair).
    """
    model, args = _ProbeModel(), (torch.ones(2), torch.tensor([1.0, -1.0]))
    with suspended():
        ep = torch.export.export(model, args)
        shadowed = not torch.equal(ep.module()(*args), model(*args))
    return bool(find_unrecorded_names(ep, strict=True) or find_illegal_names(ep, strict=True) or shadowed)
