"""Whether the running torch leaves node names unrecorded, decided by trying."""

from __future__ import annotations

import functools

import torch

from .passes import find_unrecorded_names

__all__ = ["is_affected"]


class _ProbeModel(torch.nn.Module):
    """An input called ``mul`` makes torch.export rename the model's own mul to ``mul_1``."""

    def forward(self, mul: torch.Tensor) -> torch.Tensor:
        return mul * 2


@functools.lru_cache(maxsize=None)
def is_affected() -> bool:
    """Whether ``torch.export.export`` leaves names unrecorded on this torch.

    Exports a two-node model once per process (the answer is cached) and asks
    ``find_unrecorded_names``. Not decided by version number.
    """
    ep = torch.export.export(_ProbeModel(), (torch.ones(2),))
    return bool(find_unrecorded_names(ep))
