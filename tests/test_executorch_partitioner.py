"""ConstantAwareQnnPartitioner without lowering: the decomposition filter, the analysis, install().

None of this needs the QNN SDK or a stand-in for it: ``QnnPartitioner`` only
decodes its compile specs in ``__init__``, and ``ops_to_not_decompose`` runs
without a QNN manager.
"""

from __future__ import annotations

import importlib
import sys
import threading

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import import_or_skip  # noqa: I001

import_or_skip(
    "executorch.backends.qualcomm._passes",  # ExecuTorch 0.7: its Qualcomm passes do not import
    "needs ExecuTorch with a Qualcomm backend whose passes import",
)
# ExecuTorch 0.5 (beside torch 2.6.0): its _passes, a namespace package, imports; this does not
import_or_skip(
    "executorch.backends.qualcomm.partition.qnn_partitioner",
    "needs ExecuTorch with a Qualcomm backend that imports",
)

from executorch.backends.qualcomm._passes import RecomposeRmsNorm  # noqa: E402
from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner  # noqa: E402
from executorch.backends.qualcomm.partition.utils import filter_fn  # noqa: E402
from executorch.exir import to_edge  # noqa: E402
from executorch.exir.program._program import _sanity_check_graph_for_non_decomp_ops  # noqa: E402

import torch_export_names.executorch as ten_et  # noqa: E402
from torch_export_names.executorch import (  # noqa: E402
    ConstantAwareQnnPartitioner,
    constant_only_nodes,
    runtime_placeholders,
)
from torch_export_names.executorch.constant_only import _propagate  # noqa: E402
from torch_export_names.executorch.partitioner import _PLAIN  # noqa: E402

from executorch_helpers import gpu_specs, htp_specs, lpai_specs  # noqa: E402


class ConstantLinear(torch.nn.Module):
    """``x + linear(table, w)``: the linear reads only a buffer and a parameter."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 16))
        self.w = torch.nn.Parameter(torch.randn(16, 16))

    def forward(self, x):
        return x + F.linear(self.table, self.w)


class InputLinear(ConstantLinear):
    def forward(self, x):
        return F.linear(x, self.w)


class CacheLinear(ConstantLinear):
    """A linear on a buffer the program writes (a KV cache): run-time state, not a constant."""

    def forward(self, x):
        self.table[0].copy_(x[0])  # write one row, as a KV-cache update does
        return F.linear(self.table, self.w)


class GroupDequantLinear(torch.nn.Module):
    """``x + linear(table, dequantize_per_channel_group(w_q, ...))``, all weights frozen."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 64))
        self.register_buffer("w_q", torch.randint(-8, 8, (16, 64), dtype=torch.int8))
        self.register_buffer("scales", torch.rand(16, 2))
        self.register_buffer("zero_points", torch.zeros(16, 2, dtype=torch.int32))

    def forward(self, x):
        w = torch.ops.quantized_decomposed.dequantize_per_channel_group(
            self.w_q, self.scales, self.zero_points, -8, 7, torch.int8, 32, torch.float32
        )
        return x + F.linear(self.table, w)


class AffineDequantLinear(GroupDequantLinear):
    """The same with torchao's ``dequantize_affine`` (what the QNN quantizer emits for LPBQ)."""

    def __init__(self):
        super().__init__()
        self.zero_points = self.zero_points.to(torch.int8)

    def forward(self, x):
        w = torch.ops.torchao.dequantize_affine(
            self.w_q, [1, 32], self.scales, self.zero_points, torch.int8, -8, 7
        )
        return x + F.linear(self.table, w)


class ConstantRmsNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 16))
        self.w = torch.nn.Parameter(torch.rand(16))

    def forward(self, x):
        return x + F.rms_norm(self.table, [16], self.w, eps=1e-6)


X = (torch.randn(4, 16),)


def _export(model):
    return torch.export.export(model, X)


def _node(ep, target):
    (node,) = [n for n in ep.graph.nodes if n.target == target]
    return node


def _decomposes(partitioner, ep, target) -> bool:
    ops, check = partitioner.ops_to_not_decompose(ep)
    node = _node(ep, target)
    return not (node.target in ops and check(node))


# --- the filter on HTP ---------------------------------------------------------------


def test_constant_only_linear_is_decomposed():
    ep = _export(ConstantLinear())
    assert _decomposes(ConstantAwareQnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)
    assert not _decomposes(QnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)


def test_linear_on_an_input_stays_whole():
    ep = _export(InputLinear())
    assert not _decomposes(ConstantAwareQnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)


@pytest.mark.parametrize("functional", [False, True], ids=["in-place", "functionalized"])
def test_linear_on_a_mutable_buffer_stays_whole(functional):
    # ExecuTorch asks after run_decompositions({}) (the write is an output then);
    # torch.export's own program writes the buffer in place.
    ep = _export(CacheLinear())
    if functional:
        ep = ep.run_decompositions({})
    assert "b_table" in runtime_placeholders(ep)
    assert not _decomposes(ConstantAwareQnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)


# Multi-output views of a buffer: the write goes through getitem of their result.
MULTI_OUTPUT_VIEWS = {
    "unbind": lambda t: t.unbind(0),
    "split": lambda t: t.split(2),
    "chunk": lambda t: t.chunk(2),
    "split_with_sizes": lambda t: t.split_with_sizes([1, 3]),
    "unsafe_split": lambda t: t.unsafe_split(2),
}


class CacheWrittenThroughView(ConstantLinear):
    """A KV-cache update written into one output of a multi-output view of the buffer."""

    def __init__(self, view):
        super().__init__()
        self.view = MULTI_OUTPUT_VIEWS[view]

    def forward(self, x):
        first = self.view(self.table)[0]
        first.copy_(x[0] if first.dim() == 1 else x[: first.shape[0]])
        return F.linear(self.table, self.w)


@pytest.mark.parametrize("view", MULTI_OUTPUT_VIEWS)
def test_buffer_written_through_a_multi_output_view_is_runtime(view):
    ep = _export(CacheWrittenThroughView(view))
    op = f"aten.{view}"
    assert any(str(n.target).startswith(op) for n in ep.graph.nodes), f"export has no {op} to go through"
    assert "b_table" in runtime_placeholders(ep)
    assert not _decomposes(ConstantAwareQnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)


@pytest.mark.parametrize(
    "model, dequantize",
    [
        (GroupDequantLinear, torch.ops.quantized_decomposed.dequantize_per_channel_group.default),
        (AffineDequantLinear, torch.ops.torchao.dequantize_affine.default),
    ],
    ids=["dequantize_per_channel_group", "dequantize_affine"],
)
def test_constant_only_dequantize_stays_whole_and_the_op_after_it_is_constant_only(model, dequantize):
    ep = _export(model())
    ops, check = ConstantAwareQnnPartitioner(htp_specs()).ops_to_not_decompose(ep)
    dq, linear = _node(ep, dequantize), _node(ep, torch.ops.aten.linear.default)
    assert {dq, linear} <= constant_only_nodes(ep)
    assert check(dq)  # kept whole (asked for, where the skip table lists it)
    assert linear.target in ops and not check(linear)  # decomposed


def test_filter_keeps_qnn_own_exclusions():
    """filter_fn's own rule (no int stack/unbind) still applies on top."""

    class IntStack(torch.nn.Module):
        def forward(self, x):
            return torch.stack([x, x]).to(torch.int32)

    ep = torch.export.export(IntStack(), (torch.arange(4, dtype=torch.int32),))
    _, check = ConstantAwareQnnPartitioner(htp_specs()).ops_to_not_decompose(ep)
    assert not check(_node(ep, torch.ops.aten.stack.default))


def test_lowered_program_gets_the_plain_filter():
    """A constant-only rms_norm rebuilt by RecomposeRmsNorm after decomposition is reported."""
    partitioner = ConstantAwareQnnPartitioner(htp_specs())
    ep = _export(ConstantRmsNorm())
    assert _decomposes(partitioner, ep, torch.ops.aten.rms_norm.default)
    edge = to_edge(ep).exported_program()  # rms_norm decomposed
    RecomposeRmsNorm()(edge.graph_module)  # ... and rebuilt, reading only constants
    (rms_norm,) = [n for n in edge.graph.nodes if "rms_norm" in str(n.target)]
    ops, check = partitioner.ops_to_not_decompose(edge)
    assert check is filter_fn
    assert rms_norm in constant_only_nodes(edge)
    with pytest.raises(RuntimeError, match="was not decomposed or delegated"):
        _sanity_check_graph_for_non_decomp_ops(
            "forward", edge, ops, check, generate_error=True, partitioner_name="ConstantAwareQnnPartitioner"
        )


@pytest.mark.parametrize("specs", [gpu_specs, lpai_specs], ids=["gpu", "lpai"])
def test_gpu_and_lpai_get_qnn_partitioners_filter(specs):
    ep = _export(ConstantLinear())
    assert ConstantAwareQnnPartitioner(specs()).ops_to_not_decompose(ep) == QnnPartitioner(
        specs()
    ).ops_to_not_decompose(ep)


def test_same_constructor_as_qnn_partitioner():
    p = ConstantAwareQnnPartitioner(
        htp_specs(), skip_node_id_set={"add"}, skip_node_op_set={"aten.add.Tensor"}, skip_mutable_buffer=True
    )
    assert isinstance(p, QnnPartitioner)
    assert (p.skip_node_id_set, p.skip_node_op_set, p.skip_mutable_buffer) == (
        {"add"},
        {"aten.add.Tensor"},
        True,
    )


# --- the analysis ---------------------------------------------------------------


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 16))

    def forward(self, x):
        chain = self.table * 2 - 1
        return x * 3 + chain + torch.arange(16.0) + torch.full((16,), 2.0)


def test_constant_only_is_transitive_and_ops_without_inputs_are_constant():
    ep = _export(Mixed())
    constant = {n.name for n in constant_only_nodes(ep)}
    ops = {n.name: str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    reads_x = {"mul_1", "add", "add_1", "add_2"}  # x * 3 and the adds after it
    assert {"b_table", "mul", "sub", "arange", "full"} <= constant, ops
    assert not (reads_x | {"x"}) & constant, ops


@st.composite
def dags(draw):
    """A random DAG: placeholders (some run time), then ops reading earlier nodes."""
    n_inputs = draw(st.integers(1, 4))
    runtime = draw(st.sets(st.integers(0, n_inputs - 1)))
    n_ops = draw(st.integers(0, 8))
    reads = [draw(st.sets(st.integers(0, n_inputs + i - 1), max_size=3)) for i in range(n_ops)]
    return n_inputs, runtime, reads


@settings(max_examples=60, deadline=None)
@given(dags())
def test_constant_only_means_no_path_from_a_runtime_input(dag):
    n_inputs, runtime, reads = dag
    g = torch.fx.Graph()
    nodes = [g.placeholder(f"in{i}") for i in range(n_inputs)]
    for args in reads:
        nodes.append(g.call_function(torch.ops.aten.cat.default, ([nodes[a] for a in sorted(args)],)))
    reaches_runtime = [i in runtime for i in range(n_inputs)]
    for args in reads:
        reaches_runtime.append(any(reaches_runtime[a] for a in args))
    constant = _propagate(g, {f"in{i}" for i in runtime})
    assert [n in constant for n in nodes] == [not r for r in reaches_runtime]


# --- install / uninstall ---------------------------------------------------------------


@pytest.fixture
def restore_qnn_partitioner():
    yield
    ten_et.uninstall()
    assert QnnPartitioner.__dict__["ops_to_not_decompose"] is _PLAIN["ops_to_not_decompose"]


def test_install_gives_qnn_partitioner_the_rule_and_uninstall_takes_it_back(restore_qnn_partitioner):
    ep = _export(ConstantLinear())
    linear = torch.ops.aten.linear.default
    ten_et.install()
    ten_et.install()  # idempotent
    assert ten_et.is_installed()
    assert _decomposes(QnnPartitioner(htp_specs()), ep, linear)
    ten_et.uninstall()
    ten_et.uninstall()  # harmless
    assert not ten_et.is_installed()
    assert not _decomposes(QnnPartitioner(htp_specs()), ep, linear)
    for name, original in _PLAIN.items():
        assert QnnPartitioner.__dict__[name] is original


def test_adapter_is_unchanged_while_installed(restore_qnn_partitioner):
    ep = _export(ConstantLinear())
    with ten_et.installed():
        with ten_et.installed():
            assert _decomposes(ConstantAwareQnnPartitioner(htp_specs()), ep, torch.ops.aten.linear.default)
        assert ten_et.is_installed()  # the inner block left the outer one in charge
    assert not ten_et.is_installed()


def _is_plain() -> bool:
    return all(QnnPartitioner.__dict__[name] is original for name, original in _PLAIN.items())


def test_a_block_closing_in_one_thread_leaves_the_patch_for_another_threads_open_block(
    restore_qnn_partitioner,
):
    """The first block to open closes first, while the other thread's block is still open."""
    ep = _export(ConstantLinear())
    linear = torch.ops.aten.linear.default
    first_open, first_closed, second_open = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def first():
        try:
            with ten_et.installed():
                first_open.set()
                assert second_open.wait(30)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            seen["first thread's error"] = e
        first_closed.set()

    def second():
        try:
            assert first_open.wait(30)
            with ten_et.installed():
                second_open.set()
                assert first_closed.wait(30)
                seen["patched"] = ten_et.is_installed() and not _is_plain()
                seen["rule"] = _decomposes(QnnPartitioner(htp_specs()), ep, linear)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            seen["second thread's error"] = e

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert seen == {"patched": True, "rule": True}
    assert not ten_et.is_installed() and _is_plain()  # both closed, no install(): gone


def test_install_outlasts_blocks_and_uninstall_in_a_block_waits_for_it(restore_qnn_partitioner):
    ten_et.install()
    with ten_et.installed():
        pass
    assert ten_et.is_installed()  # install() asked for it: a block closing does not end it
    with ten_et.installed():
        ten_et.uninstall()
        assert ten_et.is_installed()  # the open block still asks for it
    assert not ten_et.is_installed() and _is_plain()


def test_import_without_executorch_names_what_is_missing(monkeypatch):
    for name in list(sys.modules):
        if name == "executorch" or name.startswith(("executorch.", "torch_export_names.executorch")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "executorch", None)  # import executorch -> ImportError
    with pytest.raises(ImportError, match=r"torch_export_names\.executorch needs ExecuTorch"):
        importlib.import_module("torch_export_names.executorch")
