"""End-to-end lowering pipelines, timed with the export hook on and off."""

from __future__ import annotations

import contextlib
import time
from typing import Callable

import torch

import torch_export_names
from benchmarks.models import export_llama


def to_edge_pipeline(model, example_inputs) -> None:
    """``export -> run_decompositions -> to_edge``."""
    from executorch.exir import to_edge

    to_edge(export_llama(model, example_inputs).run_decompositions())


def xnnpack_pipeline(model, example_inputs) -> None:
    """``export -> to_edge_transform_and_lower`` with the XNNPACK partitioner (real backend)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    to_edge_transform_and_lower(export_llama(model, example_inputs), partitioner=[XnnpackPartitioner()])


PIPELINES: dict[str, tuple[str, Callable]] = {
    "to_edge": ("export -> run_decompositions -> to_edge", to_edge_pipeline),
    "xnnpack": ("export -> to_edge_transform_and_lower (XNNPACK)", xnnpack_pipeline),
}


def qnn_export_pipeline(ep: torch.export.ExportedProgram):
    """ExecuTorch's Qualcomm export pipeline (``transform_for_export_pipeline``); needs no QNN SDK."""
    from executorch.backends.qualcomm._passes.qnn_pass_manager import QnnPassManager

    return QnnPassManager().transform_for_export_pipeline(ep)


class HookMeter:
    """Counts the hook's repairs and the time spent in them (``calls``, ``seconds``)."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0


@contextlib.contextmanager
def hook(on: bool):
    """The export hook installed (``on``) or not; yields a HookMeter.

    With the hook on, the meter wraps the function the installed
    ``ExportedProgram.__init__`` calls after torch's own ``__init__``
    (``torch_export_names.hook._repair_or_leave``: repair, log), so
    it measures the hook's whole cost inside a pipeline (two clock reads per
    program of overhead).
    """
    from torch_export_names import hook as hook_module

    meter = HookMeter()
    if not on:
        if torch_export_names.is_installed():
            raise RuntimeError("the export hook is installed already; cannot time 'hook off'")
        yield meter
        return
    original = hook_module._repair_or_leave

    def metered(ep):
        t0 = time.perf_counter()
        try:
            return original(ep)
        finally:
            meter.seconds += time.perf_counter() - t0
            meter.calls += 1

    hook_module._repair_or_leave = metered
    try:
        with torch_export_names.installed():
            yield meter
    finally:
        hook_module._repair_or_leave = original
