"""Shared helpers for the ExecuTorch (Qualcomm) tests: compile specs and the QNN manager.

Import what you need from here; fixtures imported into a test module are found
by pytest (``from executorch_helpers import qnn_manager``).
"""

from __future__ import annotations

import os

import pytest
import torch

from helpers import import_or_skip

import_or_skip("executorch.backends.qualcomm", "needs ExecuTorch with its Qualcomm backend")


def _missing_qualcomm_api() -> str | None:
    """What of ExecuTorch 1.5's Qualcomm API, which these tests target, this ExecuTorch lacks."""
    import importlib
    import importlib.metadata

    for module, name in [
        ("executorch.backends.qualcomm.utils.utils", "generate_lpai_compiler_spec"),
        ("executorch.backends.qualcomm.utils.qnn_manager_lifecycle", "QnnManagerContext"),
        ("executorch.backends.qualcomm._passes.backends.lpai", "QnnLpaiPassManager"),
        ("executorch.backends.qualcomm._passes.backends.htp", "QnnHtpPassManager"),
        ("executorch.backends.qualcomm.serialization.qc_schema", "QnnExecuTorchBackendType"),
    ]:
        try:
            if hasattr(importlib.import_module(module), name):
                continue
        except Exception:  # noqa: BLE001, S110 - ImportError, or a backend's own error on import
            pass
        return (
            f"ExecuTorch {importlib.metadata.version('executorch')} has no {module}.{name}: "
            "the Qualcomm tests target ExecuTorch 1.5's API"
        )
    return None


if _missing_qualcomm_api():
    pytest.skip(_missing_qualcomm_api(), allow_module_level=True)

from executorch.backends.qualcomm.serialization.qc_schema import QcomChipset  # noqa: E402
from executorch.backends.qualcomm.utils.utils import (  # noqa: E402
    generate_gpu_compiler_spec,
    generate_htp_compiler_spec,
    generate_lpai_compiler_spec,
    generate_qnn_executorch_compiler_spec,
)
from executorch.exir.lowered_backend_module import LoweredBackendModule  # noqa: E402

from fakes.fake_qnn_manager import FakeQnnManager, install_fake_qnn_manager  # noqa: E402

SDK_ROOT = os.environ.get("QNN_SDK_ROOT")


def htp_specs(*, fp16: bool = True):
    """Compile specs for HTP on SM8650 (fp16, or quantized with ``fp16=False``)."""
    return generate_qnn_executorch_compiler_spec(
        soc_model=QcomChipset.SM8650, backend_options=generate_htp_compiler_spec(use_fp16=fp16)
    )


def gpu_specs():
    return generate_qnn_executorch_compiler_spec(
        soc_model=QcomChipset.SM8650, backend_options=generate_gpu_compiler_spec()
    )


def lpai_specs():
    # generate_qnn_executorch_compiler_spec checks the SDK version for LPAI, so the
    # options are built directly: only the partitioner reads them.
    from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchOptions
    from executorch.backends.qualcomm.serialization.qc_schema_serialize import option_to_flatbuffer
    from executorch.backends.qualcomm.utils.constants import QCOM_QNN_COMPILE_SPEC
    from executorch.backends.qualcomm.utils.utils import _soc_info_table
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    options = QnnExecuTorchOptions(_soc_info_table[QcomChipset.SM8650], generate_lpai_compiler_spec())
    return [CompileSpec(QCOM_QNN_COMPILE_SPEC, option_to_flatbuffer(options))]


@pytest.fixture(params=["fake", "qnn-sdk"])
def qnn_manager(request, monkeypatch):
    """The QNN manager lowering runs against: ``FakeQnnManager``, or the real SDK.

    ``fake`` runs when ``QNN_SDK_ROOT`` is not set (CI); ``qnn-sdk`` runs the
    same test against the SDK at ``QNN_SDK_ROOT``. Yields the fake class, or
    None for the real SDK.
    """
    if request.param == "fake":
        if SDK_ROOT is not None:
            pytest.skip("QNN_SDK_ROOT is set: these tests run against the real QNN SDK instead")
        yield install_fake_qnn_manager(monkeypatch)
    else:
        if SDK_ROOT is None:
            pytest.skip("QNN_SDK_ROOT is not set: needs the Qualcomm QNN SDK")
        yield None


def lowered_modules(edge_program) -> list[LoweredBackendModule]:
    gm = edge_program.graph_module
    return [m for _, m in gm.named_modules() if isinstance(m, LoweredBackendModule)]


def delegated_nodes(edge_program) -> list[torch.fx.Node]:
    """The call_function nodes inside every delegate of ``edge_program``."""
    return [
        n
        for lowered in lowered_modules(edge_program)
        for n in lowered.original_module.graph.nodes
        if n.op == "call_function"
    ]


def top_level_nodes(edge_program) -> list[torch.fx.Node]:
    """The call_function nodes left on the CPU (the delegate calls and getitems excluded)."""
    return [
        n
        for n in edge_program.graph.nodes
        if n.op == "call_function"
        and n.target is not torch.ops.higher_order.executorch_call_delegate
        and getattr(n.target, "__name__", "") != "getitem"
    ]


def op_name(node: torch.fx.Node) -> str:
    """``aten.linear.default`` for both the ATen and the edge form of a node's op."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return str(node.target)
    overload = schema.overload_name or "default"
    return f"{schema.name.replace('::', '.')}.{overload}"


__all__ = [
    "FakeQnnManager",
    "delegated_nodes",
    "gpu_specs",
    "htp_specs",
    "lowered_modules",
    "lpai_specs",
    "op_name",
    "qnn_manager",
    "top_level_nodes",
]
