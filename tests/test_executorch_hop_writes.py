"""The adapter's analysis on a buffer written inside a higher-order op's subgraph.

torch.export puts the work of a ``with torch.no_grad():`` or ``with torch.autocast(...):``
region, of a cond branch and of a while_loop body into a subgraph that a higher-order op
(HOP) calls, and leaves a KV-cache write there in place. Such a buffer is run-time state:
``runtime_placeholders`` must name it and a linear reading it must not be constant-only.
Each test first checks where torch.export put the write, so that it says so if torch
changes that. A write in a map or scan body, which this torch may refuse to export, is also
added by hand, as a pass could; a read alone leaves the buffer constant; a HOP this package
cannot map (another torch's argument layout) makes what it reads run time.
"""

from __future__ import annotations

import importlib

import pytest
import torch
import torch.nn.functional as F

from helpers import import_or_skip, needs_autocast_hop, needs_scan  # noqa: I001

import_or_skip(
    "executorch.backends.qualcomm._passes",  # ExecuTorch 0.7: its Qualcomm passes do not import
    "needs ExecuTorch with a Qualcomm backend whose passes import",
)
# ExecuTorch 0.5 (beside torch 2.6.0): its _passes, a namespace package, imports; this does not
import_or_skip(
    "executorch.backends.qualcomm.partition.qnn_partitioner",
    "needs ExecuTorch with a Qualcomm backend that imports",
)

import torch_export_names._hops as _hops  # noqa: E402
from torch_export_names._warnings import TorchExportNamesWarning  # noqa: E402
from torch_export_names.executorch import (  # noqa: E402
    ConstantAwareQnnPartitioner,
    constant_only_nodes,
    runtime_placeholders,
)

from executorch_helpers import htp_specs  # noqa: E402

X = (torch.randn(4, 16),)
LINEAR = torch.ops.aten.linear.default


def _hop(module: str, name: str):
    """The user-facing function of a HOP (``torch._higher_order_ops.map`` is also a function)."""
    return getattr(importlib.import_module(f"torch._higher_order_ops.{module}"), name)


class Cache(torch.nn.Module):
    """``x + linear(cache, w)`` after ``forward`` wrote (``write``) or read (``read``) the cache."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 16))
        self.w = torch.nn.Parameter(torch.randn(16, 16))

    def write(self, x):
        self.cache[:2].copy_(x[:2])  # a KV-cache update: rows written through a slice

    def read(self, x):
        return x * self.cache.sum()

    def result(self, x):
        return x + F.linear(self.cache, self.w)


class WriteUnderNoGrad(Cache):
    def forward(self, x):
        with torch.no_grad():
            self.write(x)
        return self.result(x)


class ReadUnderNoGrad(Cache):
    def forward(self, x):
        with torch.no_grad():
            y = self.read(x)
        return self.result(y)


class WriteUnderAutocast(Cache):
    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            self.write(x)
        return self.result(x)


class WriteInCondBranch(Cache):
    """The write in one branch of a cond (export refuses it unless grad is off)."""

    def __init__(self, branch):
        super().__init__()
        self.branch = branch

    def forward(self, x):
        def writes(x):
            self.write(x)
            return x.clone()

        def reads(x):
            return self.read(x)

        true_fn, false_fn = (writes, reads) if self.branch == "true" else (reads, writes)
        with torch.no_grad():
            y = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))
        return self.result(y)


class WriteThroughViewPassedToCond(Cache):
    """cond receives a row of the cache (a view) and writes it."""

    def forward(self, x):
        def writes(x, row):
            row.copy_(x[0])
            return x.clone()

        def keeps(x, row):
            return x.clone()

        with torch.no_grad():
            y = torch.cond(x.sum() > 0, writes, keeps, (x, self.cache[0]))
        return self.result(y)


class WriteInWhileLoopBody(Cache):
    def forward(self, x):
        def cond_fn(i, y):
            return i < 2

        def body_fn(i, y):
            self.write(y)
            return i + 1, y.clone()

        i = torch.zeros((), dtype=torch.int64)  # not torch.tensor(0): its lifted copy is written (detach_)
        with torch.no_grad():
            _, y = torch._higher_order_ops.while_loop(cond_fn, body_fn, (i, x))
        return self.result(y)


class WriteUnderAutocastUnderNoGrad(Cache):
    def forward(self, x):
        with torch.no_grad():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                self.write(x)
        return self.result(x)


class WriteUnderAutocastInCondBranch(Cache):
    def forward(self, x):
        def writes(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                self.write(x)
            return x.clone()

        with torch.no_grad():
            y = torch.cond(x.sum() > 0, writes, lambda x: x.clone(), (x,))
        return self.result(y)


class WriteInMapBody(Cache):
    def forward(self, x):
        def body(row):
            self.cache[0].add_(row)
            return row.clone()

        with torch.no_grad():
            y = _hop("map", "map")(body, x)
        return self.result(y)


class WriteInScanCombine(Cache):
    def forward(self, x):
        def combine(carry, row):
            self.cache[0].add_(row)
            return carry + row, row.clone()

        with torch.no_grad():
            _, y = _hop("scan", "scan")(combine, torch.zeros(16), x)
        return self.result(y)


class ReadInMapBody(Cache):
    def forward(self, x):
        y = _hop("map", "map")(lambda row, cache: row + cache[0], x, self.cache)
        return self.result(y)


class ReadInScanCombine(Cache):
    def forward(self, x):
        def combine(carry, row):
            return carry + row + self.cache[0], row.clone()

        _, y = _hop("scan", "scan")(combine, torch.zeros(16), x)
        return self.result(y)


# --- where torch.export puts the write --------------------------------------------------


def _writes(node: torch.fx.Node) -> bool:
    return isinstance(node.target, torch._ops.OpOverload) and node.target._schema.is_mutable


def _write_paths(module: torch.fx.GraphModule, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The HOPs (outermost first) under which ``module``'s graph writes in place, one tuple a write."""
    found = set()
    for node in module.graph.nodes:
        if _writes(node):
            found.add(path)
        elif node.op == "call_function" and isinstance(node.target, torch._ops.HigherOrderOperator):
            for arg in node.args:
                if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
                    found |= _write_paths(getattr(module, arg.target), (*path, node.target._name))
    return found


def _export_writing_under(model, *hops: str):
    """``model`` exported, after checking that its only write is under ``hops`` (outermost first)."""
    ep = torch.export.export(model, X)
    paths = _write_paths(ep.graph_module)
    assert paths == {hops}, (
        f"torch {torch.__version__} exports this write under {sorted(paths)} (HOPs, outermost first), "
        f"not only under {hops}: the test no longer covers a write in that subgraph"
    )
    return ep


def _export_without_writes(model):
    ep = torch.export.export(model, X)
    assert not _write_paths(ep.graph_module), "the model should not write in place"
    return ep


def _export_or_skip_refused(model, *hops: str):
    """``_export_writing_under``, or skip naming torch's refusal of a write inside ``hops``."""
    try:
        return _export_writing_under(model, *hops)
    except torch._dynamo.exc.UncapturedHigherOrderOpError as e:
        refusal = [line.strip() for line in str(e).splitlines() if "mutation" in line]
        if not refusal:
            raise
        pytest.skip(f"torch {torch.__version__} refuses to export a buffer write under {hops}: {refusal[0]}")


def _node(ep, target):
    (node,) = [n for n in ep.graph.nodes if n.target == target]
    return node


def _assert_cache_is_runtime(ep):
    assert "b_cache" in runtime_placeholders(ep)
    assert _node(ep, LINEAR) not in constant_only_nodes(ep)


# --- writes torch.export leaves inside HOP subgraphs ---------------------------------------


def test_buffer_written_under_no_grad_is_runtime():
    ep = _export_writing_under(WriteUnderNoGrad(), "wrap_with_set_grad_enabled")
    _assert_cache_is_runtime(ep)


@needs_autocast_hop
def test_buffer_written_under_autocast_is_runtime():
    ep = _export_writing_under(WriteUnderAutocast(), "wrap_with_autocast")
    _assert_cache_is_runtime(ep)


@pytest.mark.parametrize("branch", ["true", "false"])
def test_buffer_written_in_a_cond_branch_is_runtime(branch):
    ep = _export_writing_under(WriteInCondBranch(branch), "cond")
    _assert_cache_is_runtime(ep)


def test_buffer_written_through_a_view_passed_to_cond_is_runtime():
    ep = _export_writing_under(WriteThroughViewPassedToCond(), "cond")
    (hop,) = [n for n in ep.graph.nodes if n.target is torch.ops.higher_order.cond]
    row = hop.args[3][1]
    assert row.op == "call_function" and row.args[0].name == "b_cache", "cond gets a view of the cache"
    _assert_cache_is_runtime(ep)


def test_buffer_written_in_a_while_loop_body_is_runtime():
    ep = _export_writing_under(WriteInWhileLoopBody(), "while_loop")
    _assert_cache_is_runtime(ep)


@needs_autocast_hop
@pytest.mark.parametrize(
    "model, hops",
    [
        (WriteUnderAutocastUnderNoGrad, ("wrap_with_set_grad_enabled", "wrap_with_autocast")),
        (WriteUnderAutocastInCondBranch, ("cond", "wrap_with_autocast")),
    ],
    ids=["autocast-under-no_grad", "autocast-in-cond"],
)
def test_buffer_written_in_a_nested_hop_subgraph_is_runtime(model, hops):
    ep = _export_writing_under(model(), *hops)
    _assert_cache_is_runtime(ep)


@pytest.mark.parametrize(
    "model, hop",
    [(WriteInMapBody, "map_impl"), pytest.param(WriteInScanCombine, "scan", marks=needs_scan)],
    ids=["map", "scan"],
)
def test_buffer_written_in_a_map_or_scan_body_is_runtime(model, hop):
    ep = _export_or_skip_refused(model(), hop)
    _assert_cache_is_runtime(ep)


@pytest.mark.parametrize(
    "model, hop",
    [(ReadInMapBody, "map_impl"), pytest.param(ReadInScanCombine, "scan", marks=needs_scan)],
    ids=["map", "scan"],
)
def test_buffer_a_pass_writes_in_a_map_or_scan_body_is_runtime(model, hop):
    """torch.export refuses a write in these bodies (the test above); a pass can still put one there.

    The write (``add_`` on the body's placeholder for the cache, its last one) is added by hand.
    """
    ep = _export_without_writes(model())
    (call,) = [n for n in ep.graph.nodes if getattr(n.target, "_name", None) == hop]
    body = getattr(ep.graph_module, call.args[0].target)
    *_, cache = [n for n in body.graph.nodes if n.op == "placeholder"]
    with body.graph.inserting_after(cache):
        body.graph.call_function(torch.ops.aten.add_.Tensor, (cache, 1))
    body.recompile()
    assert _write_paths(ep.graph_module) == {(hop,)}
    _assert_cache_is_runtime(ep)


def test_linear_on_a_buffer_written_under_no_grad_stays_whole():
    ep = _export_writing_under(WriteUnderNoGrad(), "wrap_with_set_grad_enabled")
    ops, check = ConstantAwareQnnPartitioner(htp_specs()).ops_to_not_decompose(ep)
    linear = _node(ep, LINEAR)
    assert linear.target in ops and check(linear)


# --- what does not make a buffer run time ----------------------------------------------------


def test_buffer_only_read_under_no_grad_stays_constant():
    ep = _export_without_writes(ReadUnderNoGrad())
    assert any(n.target is torch.ops.higher_order.wrap_with_set_grad_enabled for n in ep.graph.nodes)
    assert runtime_placeholders(ep) == {"x"}
    assert _node(ep, LINEAR) in constant_only_nodes(ep)


def _raises(node):
    raise IndexError("no such argument")


# What HOP_SUBGRAPH_OPERANDS' entry does on a torch that lays the HOP's arguments out otherwise.
UNKNOWN_LAYOUTS = {
    "arguments-not-found": _raises,
    "operands-miscounted": lambda node: [(node.args[1], node.args[3:])],
}


@pytest.mark.parametrize("layout", UNKNOWN_LAYOUTS)
def test_buffer_passed_to_a_hop_of_unknown_layout_counts_as_runtime(monkeypatch, layout):
    """A HOP whose arguments this package cannot map to its subgraph's placeholders (another
    torch release) hides what the subgraph writes: what it reads counts as run time (plain QNN
    behaviour), with a warning."""
    ep = _export_without_writes(ReadUnderNoGrad())
    monkeypatch.setitem(_hops.HOP_SUBGRAPH_OPERANDS, "wrap_with_set_grad_enabled", UNKNOWN_LAYOUTS[layout])
    with pytest.warns(TorchExportNamesWarning) as caught:  # _hops.hop_subgraphs may warn too
        runtime = runtime_placeholders(ep)
    assert any(
        "wrap_with_set_grad_enabled" in str(w.message) and "counts as run time" in str(w.message)
        for w in caught
    ), [str(w.message) for w in caught]
    assert runtime == {"x", "b_cache"}  # not p_w: the HOP does not read it
