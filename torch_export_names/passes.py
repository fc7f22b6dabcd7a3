"""Passes that restore torch.fx's naming invariant on what torch.export returns.

The invariant: every node name of a graph is known to that graph's name space,
so ``create_name`` never hands out a name that is already taken. torch.export
(2.13 to 2.15 at least) breaks it by assigning ``node.name`` directly; see
pytorch/pytorch#202927.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterator, NamedTuple, Sequence

import torch
import torch.fx

from . import _fx_namespace as _ns
from ._warnings import warn_once

__all__ = [
    "RepairReport",
    "find_unrecorded_names",
    "propagate_subgraph_names",
    "repair",
    "reserve_node_names",
]


class RepairReport(NamedTuple):
    """What ``repair`` did: names newly recorded, subgraph placeholders renamed."""

    recorded: int
    renamed: int


def _root(obj) -> torch.fx.GraphModule | torch.fx.Graph:
    if isinstance(obj, torch.export.ExportedProgram):
        return obj.graph_module
    if isinstance(obj, torch.fx.GraphModule):
        return obj
    if isinstance(obj, torch.fx.Graph):
        owner = obj.owning_module
        if isinstance(owner, torch.fx.GraphModule) and owner.graph is obj:
            return owner
        return obj
    raise TypeError(
        "expected a torch.export.ExportedProgram, torch.fx.GraphModule or "
        f"torch.fx.Graph, got {type(obj).__module__}.{type(obj).__qualname__}"
    )


def _graph_modules(obj) -> list[tuple[str, torch.fx.GraphModule | None, torch.fx.Graph]]:
    """(qualified path, module, graph) for the graph of ``obj`` and every nested graph.

    Nested graphs are every ``GraphModule`` below the root, at any depth (HOP
    subgraphs, and regions a pass detached but left attached as attributes).
    Parents come before their children.
    """
    root = _root(obj)
    if isinstance(root, torch.fx.Graph):
        return [("", None, root)]
    return [
        (path, mod, mod.graph)
        for path, mod in root.named_modules()
        if isinstance(mod, torch.fx.GraphModule)
    ]


def _checked_graphs(obj, strict: bool, caller: str):
    """The graphs of ``obj``, or None if torch.fx lacks the private state we use.

    In that case warn once (raise with ``strict=True``); the caller then does
    nothing, so the program stays as torch returned it.
    """
    graphs = _graph_modules(obj)
    try:
        _ns.check(g for _, _, g in graphs)
    except _ns.PrivateStateMissing as e:
        if strict:
            raise
        warn_once(
            "private-state",
            f"torch_export_names.{caller} did nothing: {e}. The program is left "
            "as torch returned it; see pytorch/pytorch#202927.",
            stacklevel=4,
        )
        return None
    return graphs


def reserve_node_names(obj, *, strict: bool = False) -> int:
    """Record every node name of ``obj`` and of every nested graph in its own name space.

    ``obj`` is an ``ExportedProgram``, a ``GraphModule`` or a ``Graph``.
    Afterwards ``create_name`` in any of those graphs never returns a name a
    node already has, and stays O(1) (the per-base suffix counter is raised to
    the largest recorded suffix). Idempotent. Returns how many names were
    newly recorded: 0 on a torch that records them itself.
    """
    graphs = _checked_graphs(obj, strict, "reserve_node_names")
    if graphs is None:
        return 0
    return sum(_ns.record_all(graph) for _, _, graph in graphs)


# For each HOP whose subgraph placeholders take the HOP's operands in order:
# node -> [(get_attr node of the subgraph, operands in placeholder order)].
# torch's _name_hoo_subgraph_placeholders covers cond, map_impl and
# wrap_with_set_grad_enabled at export time only; they are listed too so that
# programs from run_decompositions / load / passes are covered the same way.
_SubgraphOperands = Callable[[torch.fx.Node], list[tuple[object, Sequence[object]]]]


def _while_loop(n):
    cond_fn, body_fn, carried, additional = n.args[:4]
    operands = (*carried, *additional)
    return [(cond_fn, operands), (body_fn, operands)]


HOP_SUBGRAPH_OPERANDS: dict[str, _SubgraphOperands] = {
    # wrap_with_autocast(device_type, dtype, enabled, cache_enabled, body, *operands)
    "wrap_with_autocast": lambda n: [(n.args[4], n.args[5:])],
    # wrap_with_set_grad_enabled(enabled, body, *operands)
    "wrap_with_set_grad_enabled": lambda n: [(n.args[1], n.args[2:])],
    # cond(pred, true_fn, false_fn, operands)
    "cond": lambda n: [(n.args[1], n.args[3]), (n.args[2], n.args[3])],
    # while_loop(cond_fn, body_fn, carried_inputs, additional_inputs)
    "while_loop": _while_loop,
    # scan(combine_fn, init, xs, additional_inputs): combine_fn(*init, *xs[i], *additional)
    "scan": lambda n: [(n.args[0], (*n.args[1], *n.args[2], *n.args[3]))],
    # map_impl(body, xs, args): body(*xs[i], *args)
    "map_impl": lambda n: [(n.args[0], (*n.args[1], *n.args[2]))],
}


def _hop_subgraphs(
    module: torch.fx.GraphModule,
) -> Iterator[tuple[torch.fx.Node, torch.fx.GraphModule, Sequence[object]]]:
    for node in module.graph.nodes:
        if node.op != "call_function" or not isinstance(
            node.target, torch._ops.HigherOrderOperator
        ):
            continue
        table = HOP_SUBGRAPH_OPERANDS.get(node.target._name)
        if table is None:
            continue
        for attr, operands in table(node):
            if not (isinstance(attr, torch.fx.Node) and attr.op == "get_attr"):
                continue
            sub = operator.attrgetter(attr.target)(module)
            if isinstance(sub, torch.fx.GraphModule):
                yield node, sub, operands


def _propagate_into(sub: torch.fx.GraphModule, operands: Sequence[object]) -> int:
    graph = sub.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    _ns.record_all(graph)
    wanted: dict[torch.fx.Node, str] = {
        ph: op.name
        for ph, op in zip(placeholders, operands)
        if isinstance(op, torch.fx.Node)
    }
    for name in wanted.values():
        _ns.reserve(graph, name)
    # Torch's rule for cond: a node that already holds an operand's name is re-suffixed.
    for node in graph.nodes:
        if node not in wanted and node.name in wanted.values():
            _ns.rename(graph, node, _ns.fresh_name(graph, node.name))
    renamed, given = 0, set()
    for ph, name in wanted.items():
        if name in given:  # the same operand passed twice
            name = _ns.fresh_name(graph, name)
        given.add(name)
        if ph.name != name:
            _ns.rename(graph, ph, name)
            renamed += 1
    if renamed:
        sub.recompile()
    return renamed


def propagate_subgraph_names(obj, *, strict: bool = False) -> int:
    """Name HOP subgraph placeholders after the operands they receive.

    torch.export leaves the placeholders of ``wrap_with_autocast``,
    ``while_loop`` and ``scan`` subgraphs as ``arg0_1``...; passes that map
    placeholders to operands by name (ExecuTorch's DecomposeWrapWithAutocast)
    then fail. Each placeholder takes its operand's name; a subgraph node
    that already has that name is re-suffixed, as torch does for cond. Names
    are recorded and changed subgraphs recompiled. Placeholders keep their
    positions, so what the program computes does not change. A subgraph shared
    by several HOP calls is named after its first call. Returns the number of
    placeholders renamed.
    """
    graphs = _checked_graphs(obj, strict, "propagate_subgraph_names")
    if graphs is None:
        return 0
    renamed, seen = 0, set()
    for _, module, _ in graphs:
        if module is None:
            continue
        for hop, sub, operands in _hop_subgraphs(module):
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            n_ph = sum(1 for n in sub.graph.nodes if n.op == "placeholder")
            if n_ph != len(operands):
                warn_once(
                    f"hop-arity-{hop.target._name}",
                    f"torch_export_names: {hop.target._name} node {hop.name!r} has "
                    f"{len(operands)} operands but its subgraph has {n_ph} "
                    "placeholders; its subgraph names were left as they are "
                    "(this torch's HOP schema is not the one this package knows).",
                )
                continue
            renamed += _propagate_into(sub, operands)
    return renamed


def repair(obj, *, strict: bool = False) -> RepairReport:
    """Record every node name of ``obj`` and name HOP subgraph placeholders.

    First ``reserve_node_names`` (so the renames below draw fresh names), then
    ``propagate_subgraph_names``. Afterwards ``find_unrecorded_names(obj)`` is
    empty. Modifies ``obj`` in place.
    """
    recorded = reserve_node_names(obj, strict=strict)
    renamed = propagate_subgraph_names(obj, strict=strict)
    return RepairReport(recorded=recorded, renamed=renamed)


def find_unrecorded_names(obj, *, strict: bool = False) -> list[str]:
    """Every node name its graph's name space does not know.

    Names are qualified with the submodule path: ``"t_1"`` at top level,
    ``"submod_1.t_1"`` inside a nested graph.
    """
    graphs = _checked_graphs(obj, strict, "find_unrecorded_names")
    if graphs is None:
        return []
    return [
        f"{path}.{node.name}" if path else node.name
        for path, _, graph in graphs
        for node in graph.nodes
        if not _ns.is_recorded(graph, node)
    ]
