"""Name the placeholders of higher-order-op subgraphs after the operands they receive.

torch.export names the placeholders of ``cond``, ``map_impl`` and
``wrap_with_set_grad_enabled`` subgraphs after their operands
(``_name_hoo_subgraph_placeholders``), and leaves those of ``wrap_with_autocast``,
``while_loop`` and ``scan`` as ``arg0_1``, ...; programs built later
(``run_decompositions``, ``load``, passes) are not named at all. ``propagate`` names every
known HOP's subgraph placeholders in every program the same way.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Iterator, Sequence

import torch
import torch.fx

from . import _fx_namespace as _ns
from ._codegen_rule import can_be_parameter
from ._warnings import warn_once

__all__ = ["HOP_SUBGRAPH_OPERANDS", "hop_name", "hop_nodes", "hop_subgraphs", "propagate"]


# One description of every HOP whose subgraphs receive the HOP's operands as their
# placeholders, in order: per HOP, its layouts, newest first, each
# (the HOP's positional parameters, the subgraphs, the operands the placeholders receive),
# written as Python ("*x" spreads a tuple). This package builds HOP_SUBGRAPH_OPERANDS from it
# below (by reading the names: no eval), and patches/recipe.py writes torch's
# _HOP_SUBGRAPH_OPERANDS from it (the upstream HOP-naming PR, patches/upstream/hops/), so the
# hook and a patched torch name the same placeholders. A node whose args fit none of its HOP's
# layouts is left as it is.
# Not listed: invoke_subgraph and invoke_quant_packed (one subgraph is shared by every call, so
# one call's operands cannot name it), flex_attention (its score/mask subgraphs take scalars it
# makes, not its operands), run_const_graph (its operands are lifted constants),
# strict_mode, tag_activation_checkpoint and local_map_hop (not seen in an exported program
# here: not tried).
HOP_LAYOUTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "cond": (("pred, true_fn, false_fn, operands", "true_fn, false_fn", "*operands"),),
    "wrap_with_set_grad_enabled": (("enabled, body, *operands", "body", "*operands"),),
    "map_impl": (("body, xs, args", "body", "*xs, *args"),),
    "wrap_with_autocast": (("device, dtype, enabled, cache, body, *operands", "body", "*operands"),),
    "while_loop": (("cond_fn, body_fn, carried, additional", "cond_fn, body_fn", "*carried, *additional"),),
    "while_loop_stack_output": (
        ("cond_fn, body_fn, carried, additional", "cond_fn, body_fn", "*carried, *additional"),
    ),
    "scan": (
        ("combine_fn, init, xs, additional", "combine_fn", "*init, *xs, *additional"),
        ("combine_fn, init, xs, dim, reverse, additional", "combine_fn", "*init, *xs, *additional"),
    ),
    # combine_fn takes two elements of each xs, then the additional inputs
    "associative_scan": (
        ("combine_fn, xs, additional", "combine_fn", "*xs, *xs, *additional"),
        ("combine_fn, xs, dim", "combine_fn", "*xs, *xs"),
    ),
    "hints_wrapper": (("body, args, kwargs", "body", "*args"),),
    "switch": (("index, branches, operands", "*branches", "*operands"),),
}


def layout_lambda(layout: tuple[str, str, str]) -> str:
    """A layout as the source of a function of the HOP's args that returns
    (the subgraphs, the operands): the text torch's table holds."""
    params, subgraphs, operands = layout
    subgraphs, operands = (f"({t})" if "," in t else f"({t},)" for t in (subgraphs, operands))
    return f"lambda {params}: ({subgraphs}, {operands})"


_SubgraphOperands = Callable[[torch.fx.Node], list[tuple[Any, Sequence[Any]]]]
_Names = tuple[tuple[str, bool], ...]  # (name, spread with "*")


def _names(text: str) -> _Names:
    """``"a, *b"`` -> ``(("a", False), ("b", True))``."""
    return tuple((t.strip().lstrip("*"), t.strip().startswith("*")) for t in text.split(","))


def _binder(layout: tuple[str, str, str]) -> Callable[[Sequence[Any]], tuple[list[Any], list[Any]]]:
    """What ``layout_lambda(layout)`` computes, read from the layout's names: a HOP's args ->
    (its subgraphs, the operands). Raises TypeError where that function would: args that do
    not fit the parameters, or a "*" name that holds no tuple."""
    params, subgraphs, operands = (_names(t) for t in layout)
    fixed = [name for name, spread in params if not spread]
    spread_last = params[-1][0] if params[-1][1] else None
    if any(spread for _, spread in params[:-1]):
        raise ValueError(f"{layout}: only the last parameter may be spread")

    def bind(args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        if len(args) < len(fixed) or (spread_last is None and len(args) > len(fixed)):
            raise TypeError(f"{len(args)} args for the parameters {layout[0]!r}")
        bound = dict(zip(fixed, args))
        if spread_last is not None:
            bound[spread_last] = tuple(args[len(fixed) :])

        def values(names: _Names) -> list[Any]:
            out: list[Any] = []
            for name, spread in names:
                if spread:
                    out.extend(bound[name])  # TypeError if it holds no sequence
                else:
                    out.append(bound[name])
            return out

        return values(subgraphs), values(operands)

    return bind


def _from_layouts(layouts: tuple[tuple[str, str, str], ...]) -> _SubgraphOperands:
    binders = [_binder(layout) for layout in layouts]

    def subgraph_operands(n: torch.fx.Node) -> list[tuple[Any, Sequence[Any]]]:
        for bind in binders:
            try:
                subgraphs, operands = bind(n.args)
            except TypeError:  # another layout (another torch release)
                continue
            return [(subgraph, operands) for subgraph in subgraphs]
        raise TypeError(f"{hop_name(n)}: no known layout fits {len(n.args)} args")

    return subgraph_operands


def hop_name(node: torch.fx.Node) -> str:
    """The name of the higher-order op ``node`` calls (``cond``, ``while_loop``, ...)."""
    return getattr(node.target, "_name", str(node.target))


# node -> [(get_attr node of the subgraph, operands in placeholder order)]
HOP_SUBGRAPH_OPERANDS: dict[str, _SubgraphOperands] = {
    name: _from_layouts(layouts) for name, layouts in HOP_LAYOUTS.items()
}


@functools.lru_cache(maxsize=None)
def _hop_ops() -> dict[str, Any]:
    """The HOPs of ``HOP_SUBGRAPH_OPERANDS`` that this torch has, by name."""
    found: dict[str, Any] = {}
    for name in HOP_SUBGRAPH_OPERANDS:
        try:
            op = getattr(torch.ops.higher_order, name)
        except (AttributeError, RuntimeError):
            continue
        if isinstance(op, torch._ops.HigherOrderOperator):
            found[name] = op
    return found


def hop_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """The calls of known HOPs in ``graph``, in graph order.

    Looked up in torch.fx's node index (``Graph.find_nodes``, in every supported
    torch), so a graph without HOP calls costs a few dict lookups, not a scan
    of its nodes.
    """
    found = [n for op in _hop_ops().values() for n in graph.find_nodes(op="call_function", target=op)]
    if len(found) > 1:  # several queries: put them back in graph order
        wanted = set(found)
        found = [n for n in graph.nodes if n in wanted]
    return found


def hop_subgraphs(
    module: torch.fx.GraphModule,
) -> Iterator[tuple[torch.fx.Node, torch.fx.GraphModule, Sequence[object]]]:
    if not module._modules:  # a HOP's subgraphs are submodules of the module that calls it
        return
    for node in hop_nodes(module.graph):
        try:
            subgraphs = HOP_SUBGRAPH_OPERANDS[hop_name(node)](node)
        except (TypeError, IndexError, ValueError):
            # This torch calls the HOP with other arguments than the ones the table
            # knows (while_loop and scan before 2.7): leave its subgraphs as they are.
            warn_once(
                f"hop-schema-{hop_name(node)}",
                f"torch_export_names: {hop_name(node)} node {node.name!r} has arguments this "
                "package does not know (another torch release); its subgraph placeholder names "
                "were left as they are. Names are still recorded and made legal.",
            )
            continue
        for attr, operands in subgraphs:
            if not (isinstance(attr, torch.fx.Node) and attr.op == "get_attr"):
                continue
            sub = operator.attrgetter(str(attr.target))(module)
            if isinstance(sub, torch.fx.GraphModule):
                yield node, sub, operands


def _suffixed(graph: torch.fx.Graph, ph: torch.fx.Node, name: str, taken: set[str]) -> str:
    """A suffixed form of ``name`` for placeholder ``ph``: the one it has if it has one (from an
    earlier repair, so that repair is idempotent), else a fresh one."""
    current = ph.name
    if current != name and _ns.split_suffix(current)[0] == name and current not in taken:
        return current
    return _ns.fresh_name(graph, name)


def _propagate_into(sub: torch.fx.GraphModule, operands: Sequence[object], placeholders) -> int:
    graph = sub.graph
    wanted: dict[torch.fx.Node, str] = {
        ph: op.name if can_be_parameter(op.name) else _ns.fresh_name(graph, op.name)
        for ph, op in zip(placeholders, operands)
        if isinstance(op, torch.fx.Node)
    }
    for name in wanted.values():
        _ns.reserve_name(graph, name)
    # Torch's rule for cond: a node that already holds an operand's name is re-suffixed.
    for node in graph.nodes:
        if node not in wanted and node.name in wanted.values():
            _ns.rename(graph, node, _ns.fresh_name(graph, node.name))
    final: dict[torch.fx.Node, str] = {}
    for ph, name in wanted.items():
        if name in final.values():  # the same operand passed twice: the later placeholder gets a suffix
            name = _suffixed(graph, ph, name, set(final.values()))
        final[ph] = name
    renamed = 0
    for ph, name in final.items():
        if ph.name != name:
            _ns.rename(graph, ph, name)
            renamed += 1
    if renamed:
        sub.recompile()
    return renamed


def propagate(graphs) -> int:
    """``propagate_subgraph_names`` over already checked ``graphs``."""
    renamed, seen = 0, set()
    for _, module, _ in graphs:
        if module is None:
            continue
        for hop, sub, operands in hop_subgraphs(module):
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            placeholders = _ns.placeholders(sub.graph)
            n_ph = len(placeholders)
            if n_ph != len(operands):
                warn_once(
                    f"hop-arity-{hop_name(hop)}",
                    f"torch_export_names: {hop_name(hop)} node {hop.name!r} has "
                    f"{len(operands)} operands but its subgraph has {n_ph} "
                    "placeholders; its subgraph names were left as they are "
                    "(this torch's HOP schema is not the one this package knows).",
                )
                continue
            renamed += _propagate_into(sub, operands, placeholders)
    return renamed
