"""Which nodes of a program read no runtime value (the HTP constant-only rule).

Qualcomm's HTP refuses a graph that reads no runtime input, so work computed
only from constants must stay on the CPU, and must then be decomposed: an op
QNN keeps whole (linear, rms_norm, ...) has no CPU kernel path. This module
only answers the question "does this node read a runtime value?"; the
partitioner in ``partitioner.py`` acts on the answer.
"""

from __future__ import annotations

import operator

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from .._hops import hop_name, hop_nodes, hop_subgraphs
from .._warnings import warn_once

__all__ = ["constant_only_nodes", "is_quantize_op", "runtime_placeholders"]

# Placeholders whose value is fixed when the program is built.
_CONSTANT_KINDS = {InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ}


def runtime_placeholders(ep: ExportedProgram) -> set[str]:
    """Names of ``ep``'s placeholders whose value is only known at run time.

    User inputs, effect tokens and mutated buffers (a KV cache is run-time
    state, not a constant), whether the program writes them back as an output
    (functional form) or in place (torch.export's default form). An in-place
    write counts wherever it is: in the top-level graph, or inside the
    subgraph of a higher-order op the placeholder is passed to
    (``wrap_with_set_grad_enabled`` and ``wrap_with_autocast``, which
    ``torch.no_grad()`` and ``torch.autocast(...)`` regions export to, both
    branches of ``cond``, ``while_loop``'s condition and body, ``map_impl``'s
    and ``scan``'s body), at any depth, and through views on either side of
    the call. Parameters, buffers that are never written and lifted constants
    are constants. A placeholder the signature does not describe counts as run
    time, which errs towards plain QNN behaviour; so does one passed to such a
    higher-order op whose arguments this package cannot map to its subgraph's
    placeholders (another torch release's layout: a warning says so).
    """
    mutated = set(ep.graph_signature.buffers_to_mutate.values())
    constant = {
        spec.arg.name
        for spec in ep.graph_signature.input_specs
        if spec.kind in _CONSTANT_KINDS
        and not (spec.kind == InputKind.BUFFER and spec.target in mutated)
        and hasattr(spec.arg, "name")
    }
    written = _written_placeholders(ep.graph_module, {})
    return {
        n.name for n in ep.graph.nodes if n.op == "placeholder" and (n.name not in constant or n in written)
    }


def _schema(node: torch.fx.Node):
    return getattr(node.target, "_schema", None) if node.op == "call_function" else None


# Their outputs are views of the input, although the schema does not say so.
_UNSAFE_VIEWS = {"aten::unsafe_split", "aten::unsafe_split_with_sizes", "aten::unsafe_chunk"}


def _view_base(node: torch.fx.Node) -> torch.fx.Node:
    """The tensor ``node`` is a view of, or ``node`` itself.

    Follows any chain of views: single-output ones (``slice``, ``select``,
    ``view``, ...) and multi-output ones (``unbind``, ``split``, ``chunk``,
    ``split_with_sizes``, ``unsafe_split``, ...) through the ``getitem`` that
    picks one of their outputs.
    """
    while node.args and isinstance(node.args[0], torch.fx.Node):
        if node.op == "call_function" and node.target is operator.getitem:
            node = node.args[0]  # type: ignore[assignment]  # getitem's input is a node
            continue
        schema = _schema(node)
        if schema is None or not schema.arguments or not schema.returns:
            break
        if schema.name not in _UNSAFE_VIEWS:
            source, result = schema.arguments[0].alias_info, schema.returns[0].alias_info
            if source is None or source.is_write or result is None:
                break
        node = node.args[0]  # type: ignore[assignment]  # a view's input is a node
    return node


def _written_in_place(graph: torch.fx.Graph) -> set[torch.fx.Node]:
    """Placeholders an op writes in place (``add_``, ``copy_`` into a slice, ``index_put_``, ...)."""
    written = set()
    for node in graph.nodes:
        schema = _schema(node)
        if schema is None:
            continue
        for i, arg in enumerate(schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            value = node.args[i] if i < len(node.args) else node.kwargs.get(arg.name)
            if isinstance(value, torch.fx.Node) and (base := _view_base(value)).op == "placeholder":
                written.add(base)
    return written


def _written_placeholders(
    module: torch.fx.GraphModule, seen: dict[int, set[torch.fx.Node]]
) -> set[torch.fx.Node]:
    """Placeholders of ``module``'s graph written in place there or in the HOP subgraphs it calls.

    A subgraph placeholder that is written (in turn, by this rule) counts as a
    write of the operand the HOP call passes to it, or of the placeholder
    that operand is a view of. Every placeholder a HOP call of unknown
    argument layout reads counts as written, since its subgraphs cannot be
    followed. ``seen`` holds the answer for each subgraph already visited (by
    ``id``): a subgraph shared by several calls is read once.
    """
    if id(module) in seen:
        return seen[id(module)]
    written = _written_in_place(module.graph)
    if not module._modules:  # no subgraphs to follow
        seen[id(module)] = written
        return written
    followed, unmapped = set(), set()
    for hop, sub, operands in hop_subgraphs(module):  # warns of, and leaves out, unknown layouts
        placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(operands):  # another torch's HOP schema
            unmapped.add(hop)
            continue
        followed.add(hop)
        inner = _written_placeholders(sub, seen)
        for placeholder, operand in zip(placeholders, operands):
            if (
                placeholder in inner
                and isinstance(operand, torch.fx.Node)
                and (base := _view_base(operand)).op == "placeholder"
            ):
                written.add(base)
    for hop in hop_nodes(module.graph):
        if hop in unmapped or hop not in followed:
            warn_once(
                f"executorch-hop-{hop_name(hop)}",
                f"torch_export_names.executorch: the operands of {hop_name(hop)} node {hop.name!r} "
                "could not be matched to its subgraphs' placeholders (this torch's HOP schema is "
                "not the one this package knows); every placeholder it reads counts as run time.",
            )
            written.update(
                base for arg in hop.all_input_nodes if (base := _view_base(arg)).op == "placeholder"
            )
    seen[id(module)] = written
    return written


def constant_only_nodes(ep: ExportedProgram) -> frozenset[torch.fx.Node]:
    """The nodes of ``ep``'s top-level graph that read no runtime value, transitively.

    A node is constant-only if it is a constant placeholder (see
    ``runtime_placeholders``), a ``get_attr``, or a ``call_function`` all of
    whose input nodes are constant-only; an op with no input nodes (``arange``,
    ``full``, ``zeros``) is constant-only. Constant-ness propagates through
    every op, quantize/dequantize included. ``call_module``, ``output`` and
    nodes of nested graphs are never constant-only. Being transitive is the
    point: in ``table * 2 - 1`` the ``sub`` reads only the ``mul``, which reads
    only constants, so the whole chain is constant-only and is never split
    between the CPU and a delegate.
    """
    return _propagate(ep.graph, runtime_placeholders(ep))


def _propagate(graph: torch.fx.Graph, runtime: set[str]) -> frozenset[torch.fx.Node]:
    """``constant_only_nodes`` for a graph whose run-time placeholders are named ``runtime``."""
    constant: set[torch.fx.Node] = set()
    for node in graph.nodes:  # topological order: inputs are decided first
        if node.op == "placeholder":
            if node.name not in runtime:
                constant.add(node)
        elif node.op == "get_attr":
            constant.add(node)
        elif node.op == "call_function":
            if all(arg in constant for arg in node.all_input_nodes):
                constant.add(node)
    return frozenset(constant)


def is_quantize_op(target) -> bool:
    """Whether ``target`` quantizes or dequantizes (or picks qparams for) a tensor.

    ``quantized_decomposed.*`` and torchao's ``*quantize*`` / ``choose_qparams*``
    ops, in ATen or edge form. QNN builds weight encodings from them, so they
    stay whole even when they read only constants.
    """
    schema = getattr(target, "_schema", None)
    if schema is None:
        return False
    namespace, _, name = schema.name.partition("::")
    if namespace == "quantized_decomposed":
        return True
    return namespace == "torchao" and ("quantize" in name or name.startswith("choose_qparams"))
