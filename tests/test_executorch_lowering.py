"""Lowering to QNN HTP with ConstantAwareQnnPartitioner, against FakeQnnManager or the real SDK.

ExecuTorch's own partitioning, node visitors and ``QnnBackend.preprocess``
run; only the SDK-backed QNN manager is replaced by
``tests/fakes/fake_qnn_manager.py`` (which, like HTP, refuses a graph that
reads no runtime input). With ``QNN_SDK_ROOT`` set the same tests run against
the real SDK instead.
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from helpers import import_or_skip, is_pinned, lint_all

import_or_skip(
    "executorch.backends.qualcomm._passes",  # ExecuTorch 0.7: its Qualcomm passes do not import
    "needs ExecuTorch with a Qualcomm backend whose passes import",
)
# ExecuTorch 0.5 (beside torch 2.6.0): its _passes, a namespace package, imports; this does not
import_or_skip(
    "executorch.backends.qualcomm._passes.qnn_pass_manager",
    "needs ExecuTorch with a Qualcomm backend that imports",
)

from executorch.backends.qualcomm._passes.qnn_pass_manager import get_qnn_pass_manager_cls  # noqa: E402
from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner  # noqa: E402
from executorch.backends.qualcomm.serialization.qc_schema_serialize import flatbuffer_to_option  # noqa: E402
from executorch.backends.qualcomm.utils.qnn_manager_lifecycle import QnnManagerContext  # noqa: E402
from executorch.backends.qualcomm.utils.utils import (  # noqa: E402
    qnn_edge_config,
    to_edge_transform_and_lower_to_qnn,
)
from executorch.exir import to_edge_transform_and_lower  # noqa: E402

import torch_export_names.executorch as ten_et  # noqa: E402
from torch_export_names.executorch import ConstantAwareQnnPartitioner  # noqa: E402

from executorch_helpers import (  # noqa: E402
    SDK_ROOT,
    FakeQnnManager,
    delegated_nodes,
    gpu_specs,
    htp_specs,
    lowered_modules,
    op_name,
    qnn_manager,  # noqa: F401 - the fixture below
    top_level_nodes,
)

# Every test runs against FakeQnnManager, or against the real SDK with QNN_SDK_ROOT set.
pytestmark = pytest.mark.usefixtures("qnn_manager")

FORCE_ADD_ON_CPU = {"skip_node_op_set": {"aten.add.Tensor"}}
HTP_REFUSES = "Failed to generate Qnn context binary"


class ConstantBranch(torch.nn.Module):
    """``x * 3 + linear(table * 2 - 1, w)``: a constant-only branch next to a runtime one."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.register_buffer("table", torch.randn(4, 16, generator=gen))
        self.w = torch.nn.Parameter(torch.randn(16, 16, generator=gen))

    def constant(self):
        return F.linear(self.table * 2 - 1, self.w)

    def forward(self, x):
        return x * 3 + self.constant()


class OwnConstantPartition(ConstantBranch):
    """``x * 3 * (linear(table * 2 - 1, w) + 1)``; with the add forced onto the CPU the
    constant branch is its own partition (merging it with ``x * 3`` would make a cycle
    through the add)."""

    def forward(self, x):
        return x * 3 * (self.constant() + 1)


class TwoConstantPartitions(ConstantBranch):
    """``x * 3 * (((linear(table * 2 - 1, w) + 1) * 2 - 1) + 1)`` with the adds on the CPU:
    the second constant partition reads only the first one's output, through a CPU add."""

    def forward(self, x):
        second = (self.constant() + 1) * 2 - 1
        return x * 3 * (second + 1)


class KVCache(torch.nn.Module):
    """A cache buffer the program rewrites each call (``cache = linear(cache, w)``).

    The update reads only the cache and a weight, and with the add forced onto the CPU it
    is its own partition: only the cache being run-time state keeps it delegated.
    """

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.register_buffer("cache", torch.randn(4, 16, generator=gen))
        self.w = torch.nn.Parameter(torch.randn(16, 16, generator=gen) / 4)

    def forward(self, x):
        new = F.linear(self.cache, self.w)
        self.cache.copy_(new)
        # ExecuTorch 1.5.1 cannot lower a delegate whose mutated-buffer output is also
        # read on the CPU, so the CPU add reads new * 2, not new.
        return x * 3 * (new * 2 + 1)


class KVCacheThroughSplit(KVCache):
    """The same update, written row block by row block through ``split`` views of the cache."""

    def forward(self, x):
        new = F.linear(self.cache, self.w)
        for block, value in zip(self.cache.split(2), new.split(2)):
            block.copy_(value.detach())  # a cache holds values, not autograd history
        return x * 3 * (new * 2 + 1)


class KVCacheReadOnTheCpu(KVCache):
    """The cache update's result, which is also the buffer's mutation output, read by the CPU add."""

    def forward(self, x):
        new = F.linear(self.cache, self.w)
        self.cache.copy_(new)
        return x * 3 * (new + 1)


class ConstantRmsNormPartition(torch.nn.Module):
    """``x * 3 * (rms_norm(table) + 1)``, the constant branch its own partition as above."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 16))
        self.w = torch.nn.Parameter(torch.rand(16))

    def forward(self, x):
        return x * 3 * (F.rms_norm(self.table, [16], self.w, eps=1e-6) + 1)


X = (torch.randn(4, 16),)


def lower(model, partitioner_cls, specs=None, args=X, **partitioner_kwargs):
    """What ``to_edge_transform_and_lower_to_qnn`` does, with a partitioner of our choice."""
    specs = specs if specs is not None else htp_specs()
    backend = flatbuffer_to_option(specs[0].value).backend_options.backend_type
    ep = torch.export.export(model, args, strict=True)
    pass_manager = get_qnn_pass_manager_cls(backend)()
    ep = pass_manager.transform_for_export_pipeline(ep)
    transform_passes = pass_manager.get_to_edge_transform_passes(ep, compiler_specs=specs)
    with QnnManagerContext({"forward": specs}):
        edge = to_edge_transform_and_lower(
            ep,
            transform_passes=transform_passes,
            partitioner=[partitioner_cls(specs, **partitioner_kwargs)],
            compile_config=qnn_edge_config(),
        )
    program = edge.exported_program()
    lint_all(program)
    return program


def names(nodes) -> Counter:
    return Counter(op_name(n) for n in nodes)


def reads_input(node, name="x") -> bool:
    return any(a.op == "placeholder" and a.name == name for a in node.all_input_nodes)


LINEAR = "aten.linear.default"


def test_constant_branch_in_a_runtime_partition_is_decomposed_and_delegated():
    program = lower(ConstantBranch(), ConstantAwareQnnPartitioner)
    assert len(lowered_modules(program)) == 1
    assert not top_level_nodes(program)
    delegated = names(delegated_nodes(program))
    assert LINEAR not in delegated
    assert delegated["aten.mm.default"] == 1 and delegated["aten.permute_copy.default"] == 1


def test_own_constant_partition_fails_with_plain_qnn_partitioner():
    with pytest.raises(AssertionError, match=HTP_REFUSES):
        lower(OwnConstantPartition(), QnnPartitioner, **FORCE_ADD_ON_CPU)
    if SDK_ROOT is None:
        assert any(m.refused for m in FakeQnnManager.instances)


def test_own_constant_partition_stays_on_cpu_decomposed():
    program = lower(OwnConstantPartition(), ConstantAwareQnnPartitioner, **FORCE_ADD_ON_CPU)
    cpu, delegated = top_level_nodes(program), delegated_nodes(program)
    cpu_ops = names(cpu)
    # the whole chain table * 2 - 1, the decomposed linear and the forced add
    assert cpu_ops["aten.mul.Tensor"] == 1 and reads_input(
        next(n for n in cpu if op_name(n) == "aten.mul.Tensor"), "b_table"
    )
    assert cpu_ops["aten.sub.Tensor"] == 1
    assert cpu_ops["aten.mm.default"] == 1 and cpu_ops["aten.permute_copy.default"] == 1
    assert cpu_ops["aten.add.Tensor"] == 1
    assert LINEAR not in cpu_ops
    # ... and what reads x is delegated, in one delegate
    assert len(lowered_modules(program)) == 1
    assert any(op_name(n) == "aten.mul.Tensor" and reads_input(n) for n in delegated)
    assert "aten.sub.Tensor" not in names(delegated)


def test_partition_fed_only_by_a_dropped_partition_is_dropped_too():
    program = lower(TwoConstantPartitions(), ConstantAwareQnnPartitioner, **FORCE_ADD_ON_CPU)
    cpu_ops = names(top_level_nodes(program))
    assert (cpu_ops["aten.sub.Tensor"], cpu_ops["aten.add.Tensor"], cpu_ops["aten.mm.default"]) == (2, 2, 1)
    assert len(lowered_modules(program)) == 1
    assert names(delegated_nodes(program))["aten.mul.Tensor"] == 2  # x * 3 and the product


def test_kv_cache_update_stays_delegated():
    program = lower(KVCache(), ConstantAwareQnnPartitioner, **FORCE_ADD_ON_CPU)
    delegated = delegated_nodes(program)
    (update,) = [n for n in delegated if op_name(n) == LINEAR]  # kept whole, on HTP
    assert reads_input(update, "b_cache")
    assert not {LINEAR, "aten.mm.default"} & set(names(top_level_nodes(program)))
    assert len(lowered_modules(program)) == 2  # the cache update and x * 3 * (...)


def test_kv_cache_updated_through_split_views_stays_delegated_and_whole():
    """The cache is written through split views: still run-time state, so its linear is kept whole.

    Not with the add forced onto the CPU as above: then the scatter that writes the cache back
    stays on the CPU and the update's partition reads the cache as a static tensor, which HTP
    refuses with QnnPartitioner too (an ExecuTorch limitation, see the README). ExecuTorch
    hands the partitioner the functionalized program, where the write is a mutation output;
    following the views of the in-place program is guarded by
    test_executorch_partitioner.py::test_buffer_written_through_a_multi_output_view_is_runtime.
    """
    program = lower(KVCacheThroughSplit(), ConstantAwareQnnPartitioner)
    delegated = delegated_nodes(program)
    (update,) = [n for n in delegated if op_name(n) == LINEAR]  # kept whole, on HTP
    assert reads_input(update, "b_cache")
    assert not {LINEAR, "aten.mm.default"} & set(names(top_level_nodes(program)))


# ExecuTorch 1.5.1 limitations the README lists under Known issues, reproduced with either partitioner.
known_issue_of_executorch_1_5_1 = pytest.mark.skipif(
    not is_pinned("executorch"), reason="a known issue of ExecuTorch 1.5.1 (constraints.txt), not this one"
)
BOTH_PARTITIONERS = pytest.mark.parametrize(
    "partitioner", [QnnPartitioner, ConstantAwareQnnPartitioner], ids=["QnnPartitioner", "adapter"]
)


@known_issue_of_executorch_1_5_1
@BOTH_PARTITIONERS
def test_kv_cache_written_back_through_split_views_on_the_cpu_is_refused_by_htp(partitioner):
    """With the add, and so the write-back scatter, on the CPU, the update's partition reads the
    cache as a static tensor: HTP refuses it, whichever partitioner."""
    with pytest.raises(AssertionError, match=HTP_REFUSES):
        lower(KVCacheThroughSplit(), partitioner, **FORCE_ADD_ON_CPU)


@known_issue_of_executorch_1_5_1
@BOTH_PARTITIONERS
def test_mutated_buffer_output_read_by_a_cpu_op_does_not_lower(partitioner):
    with pytest.raises(Exception, match="Tried to erase Node getitem_1 but it still had 1 users"):
        lower(KVCacheReadOnTheCpu(), partitioner, **FORCE_ADD_ON_CPU)


def test_kept_whole_op_left_on_cpu_is_still_reported():
    """RecomposeRmsNorm rebuilds the decomposed constant-only rms_norm, which then stays on the
    CPU: the post-lowering check must say so (plain filter on the lowered program)."""
    with pytest.raises(RuntimeError, match="rms_norm.* was not decomposed or delegated"):
        lower(ConstantRmsNormPartition(), ConstantAwareQnnPartitioner, **FORCE_ADD_ON_CPU)


def test_install_gives_to_edge_transform_and_lower_to_qnn_the_rule():
    with pytest.raises(AssertionError, match=HTP_REFUSES):
        to_edge_transform_and_lower_to_qnn(OwnConstantPartition(), X, htp_specs(), **FORCE_ADD_ON_CPU)
    try:
        with ten_et.installed():
            edge = to_edge_transform_and_lower_to_qnn(
                OwnConstantPartition(), X, htp_specs(), **FORCE_ADD_ON_CPU
            )
    finally:
        assert not ten_et.is_installed()
    program = edge.exported_program()
    assert "aten.sub.Tensor" in names(top_level_nodes(program))
    assert LINEAR not in names(top_level_nodes(program))


def test_gpu_delegates_like_qnn_partitioner():
    plain = lower(OwnConstantPartition(), QnnPartitioner, gpu_specs(), **FORCE_ADD_ON_CPU)
    adapter = lower(OwnConstantPartition(), ConstantAwareQnnPartitioner, gpu_specs(), **FORCE_ADD_ON_CPU)
    assert names(delegated_nodes(adapter)) == names(delegated_nodes(plain))
    assert names(top_level_nodes(adapter)) == names(top_level_nodes(plain))
    assert LINEAR in names(delegated_nodes(adapter))  # the constant partition is delegated on GPU


class QuantModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(F.hardswish(self.fc1(x))) + x


def _quantized(model, args):
    from executorch.backends.qualcomm.quantizer.quantizer import QnnQuantizer
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(torch.export.export(model, args, strict=True).module(), QnnQuantizer())
    prepared(*args)
    return convert_pt2e(prepared)


def test_quantized_model_delegates_the_same_ops():
    converted = _quantized(QuantModel(), X)
    specs = htp_specs(fp16=False)
    plain = lower(converted, QnnPartitioner, specs)
    adapter = lower(converted, ConstantAwareQnnPartitioner, specs)
    delegated = names(delegated_nodes(adapter))
    assert delegated == names(delegated_nodes(plain))
    assert names(top_level_nodes(adapter)) == names(top_level_nodes(plain))
    assert delegated[LINEAR] == 2 and delegated["aten.hardswish.default"] == 1
    assert any("dequantize" in op for op in delegated)  # weights' dequantize, constant-only, kept
