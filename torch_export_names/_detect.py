"""Whether the running torch leaves node names unrecorded or illegal, decided by trying."""

from __future__ import annotations

import functools

import torch

from .hook import suspended
from .passes import find_illegal_names, find_unrecorded_names

__all__ = ["is_affected"]


class _ProbeModel(torch.nn.Module):
    """An input called ``mul`` makes torch.export rename the model's own mul to
    ``mul_1``; one called ``inf`` is a name ``create_name`` refuses."""

    def forward(self, mul: torch.Tensor, inf: torch.Tensor) -> torch.Tensor:
        return mul * 2 + inf


@functools.lru_cache(maxsize=None)
def is_affected() -> bool:
    """Whether ``torch.export.export`` on this torch leaves names unrecorded or illegal.

    Exports a small model once per process (the answer is cached) and asks
    ``find_unrecorded_names`` and ``find_illegal_names``; stock torch is
    measured even while the hook is installed. Not decided by version number.

    Raises ``PrivateStateMissing`` when this torch lacks the torch.fx state
    the answer is read from: then the package cannot tell (nor repair).
    """
    with suspended():
        ep = torch.export.export(_ProbeModel(), (torch.ones(2), torch.ones(2)))
    return bool(find_unrecorded_names(ep, strict=True) or find_illegal_names(ep, strict=True))
