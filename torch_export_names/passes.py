"""Passes that restore torch.fx's naming invariant on what torch.export returns.

The invariant: every node name of a graph is known to its name space, so ``create_name``
never hands out a name that is already taken, and every placeholder can be a parameter of the
code fx generates (not a keyword, ``__debug__``, ``self`` or a non-identifier). torch.export
(2.4 to 2.15 at least) breaks the first by assigning ``node.name`` directly; see
pytorch/pytorch#202927. Names such as ``inf`` or ``device`` are kept: that such a parameter
shadows a global of the generated code is fixed in the code generator (``codegen_guard``).
"""

from __future__ import annotations

from typing import NamedTuple, Union

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from . import _fx_namespace as _ns
from . import _hops, _signature, codegen_guard
from ._codegen_rule import can_be_parameter
from ._warnings import PrivateStateMissing, warn_once

__all__ = [
    "RepairNamesPass",
    "RepairReport",
    "find_illegal_names",
    "find_unrecorded_names",
    "legalize_node_names",
    "propagate_subgraph_names",
    "repair",
    "record_node_names",
]


#: What the public functions take: a program, or a graph module or graph (with its nested graphs).
Program = Union[ExportedProgram, torch.fx.GraphModule, torch.fx.Graph]


class RepairReport(NamedTuple):
    """What ``repair`` did: names newly recorded, subgraph placeholders propagated (named
    after their operands), placeholders and ``ep.module()`` arguments legalized (renamed
    because no parameter can have their name)."""

    recorded: int
    propagated: int
    legalized: int = 0  # placeholders and arguments renamed because no parameter can have their name


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
    if not root._modules:  # the common case: no nested graph, no module walk
        return [("", root, root.graph)]
    return [
        (path, mod, mod.graph) for path, mod in root.named_modules() if isinstance(mod, torch.fx.GraphModule)
    ]


def _checked_graphs(obj, strict: bool, caller: str):
    """The graphs of ``obj``, or None if torch.fx lacks the private state we use.

    In that case warn once (raise with ``strict=True``); the caller then does
    nothing, so the program stays as torch returned it.
    """
    graphs = _graph_modules(obj)
    try:
        _ns.check([g for _, _, g in graphs])
    except PrivateStateMissing as e:
        if strict:
            raise
        _warn_private_state(e, caller)
        return None
    return graphs


def _warn_private_state(e: Exception, caller: str) -> None:
    warn_once(
        "private-state",
        f"torch_export_names.{caller} did nothing: {e}. The program is left "
        "as torch returned it; see pytorch/pytorch#202927.",
        stacklevel=5,
    )


def record_node_names(obj: Program, *, strict: bool = False) -> int:
    """Record every node name of ``obj`` and of every nested graph in its own name space.

    ``obj`` is an ``ExportedProgram``, a ``GraphModule`` or a ``Graph``.
    Afterwards ``create_name`` in any of those graphs never returns a name a
    node already has, and stays O(1) (the per-base suffix counter is raised to
    the largest recorded suffix). Idempotent. Returns how many names were
    newly recorded: 0 on a torch that records them itself.
    """
    graphs = _checked_graphs(obj, strict, "record_node_names")
    if graphs is None:
        return 0
    return sum(_ns.record_all(graph) for _, _, graph in graphs)


def _legalize(obj, graphs, illegal: dict[int, list[torch.fx.Node]]) -> int:
    """Rename the nodes in ``illegal`` (graph index -> nodes) as ``create_name`` would."""
    renamed = 0
    is_program = isinstance(obj, torch.export.ExportedProgram)
    for i, (_, module, graph) in enumerate(graphs):
        nodes = illegal.get(i)
        if not nodes:
            continue
        renames = {}
        for node in nodes:
            if node.name != node.target and can_be_parameter(node.name):
                new = node.name  # only its target, the generated parameter, is refused: it follows
            else:
                new = _ns.fresh_name(graph, node.name)
            renames[node.name] = new
            _ns.rename(graph, node, new)
        renamed += len(nodes)
        if is_program and i == 0:
            _signature.rename_in_program(obj, renames)
        if module is not None:
            module.recompile()
    return renamed


def legalize_node_names(obj: Program, *, strict: bool = False) -> int:
    """Rename every placeholder whose name cannot be a parameter of fx's generated code.

    Such a name (a keyword such as ``class``, ``__debug__``, ``self``, or one that is not an
    identifier) makes torch.fx's code invalid. Each is renamed as ``create_name`` would rename
    it (``class`` -> ``class_1``) and recorded; its target follows, and for an
    ``ExportedProgram`` so do the graph signature and module call signatures. An argument of
    ``ep.module()`` no parameter can take (a ``**kwargs`` key ``my-input``) is renamed the same
    way (``my_input``; the module is then called by that keyword). Every other name (``inf``,
    ``device``, ``input``, ...) is kept. Returns the number of placeholders and arguments renamed.
    """
    graphs = _checked_graphs(obj, strict, "legalize_node_names")
    if graphs is None:
        return 0
    illegal: dict[int, list[torch.fx.Node]] = {}
    for i, (_, _, graph) in enumerate(graphs):
        found = [n for n in _ns.placeholders(graph) if _ns.is_illegal(n)]
        if found:
            illegal[i] = found
    legalized = _legalize(obj, graphs, illegal)
    if isinstance(obj, torch.export.ExportedProgram):
        legalized += len(_signature.legalize_arguments(obj))
    return legalized


def propagate_subgraph_names(obj: Program, *, strict: bool = False) -> int:
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
    for _, _, graph in graphs:  # so that renames below draw fresh names (repair did this already)
        _ns.record_all(graph)
    return _hops.propagate(graphs)


def repair(obj: Program, *, strict: bool = False) -> RepairReport:
    """Make every node name of ``obj`` recorded and legal; name HOP subgraph placeholders.

    In one pass over the nodes of every graph, ``record_node_names`` (so the
    renames below draw fresh names) and ``legalize_node_names``; then
    ``propagate_subgraph_names``. Afterwards ``find_unrecorded_names(obj)`` and
    ``find_illegal_names(obj)`` are empty. Modifies ``obj`` in place, all or nothing: if any
    step fails, every name, name space and signature is put back and the error raised.

    Code generated for the program, now or after later passes, keeps a parameter such as
    ``inf`` apart from the globals of that code: importing the package put the code-generator
    guard (``codegen_guard``) in place; code generated before that is generated again here.
    """
    graphs = _checked_graphs(obj, strict, "repair")
    if graphs is None:
        return RepairReport(0, 0, 0)
    program = _signature.snapshot(obj) if isinstance(obj, torch.export.ExportedProgram) else None
    with _ns.Rollback(graph for _, _, graph in graphs) as rollback:
        try:
            report = _repair(obj, graphs)
        except BaseException:
            rollback.undo()
            for _, module, _ in graphs:
                if module is not None:
                    module.recompile()
            if program is not None:
                _signature.restore(obj, program)
            raise
    return report


def _repair(obj: Program, graphs) -> RepairReport:
    """``repair``'s work, once the way back is kept."""
    illegal: dict[int, list[torch.fx.Node]] = {}
    recorded = 0
    for i, (_, _, graph) in enumerate(graphs):
        found: list[torch.fx.Node] = []
        recorded += _ns.record_all(graph, found)
        if found:
            illegal[i] = found
    legalized = _legalize(obj, graphs, illegal) if illegal else 0
    if isinstance(obj, torch.export.ExportedProgram):
        legalized += len(_signature.legalize_arguments(obj))
    propagated = _hops.propagate(graphs) if len(graphs) > 1 else 0  # HOP subgraphs are submodules
    for _, module, _ in graphs:  # code generated without the guard (before the package was imported)
        if module is not None:
            codegen_guard.refresh(module)
    return RepairReport(recorded=recorded, propagated=propagated, legalized=legalized)


def find_illegal_names(obj: Program, *, strict: bool = False) -> list[str]:
    """Every placeholder whose name or target cannot be a parameter of fx's generated code (a
    keyword, ``__debug__``, ``self``, not an identifier), qualified like
    ``find_unrecorded_names``."""
    graphs = _checked_graphs(obj, strict, "find_illegal_names")
    if graphs is None:
        return []
    return [
        f"{path}.{node.name}" if path else node.name
        for path, _, graph in graphs
        for node in _ns.placeholders(graph)
        if _ns.is_illegal(node)
    ]


def find_unrecorded_names(obj: Program, *, strict: bool = False) -> list[str]:
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


class RepairNamesPass(PassBase):
    """``repair`` as a torch.fx pass, for torch's and ExecuTorch's pass managers.

    Restores the invariant of ``repair`` on the GraphModule it is given and every graph nested
    in it, in place, and returns ``PassResult(graph_module, modified)``; ``modified`` is
    whether any name was recorded or renamed. A pass sees a GraphModule, not the program
    around it: ExecuTorch's ``transform`` rebuilds the graph signature from the placeholders
    it returns, so a legalized input follows there, but to carry it into an
    ``ExportedProgram``'s module call signatures and ``ep.module()``'s argument names (only
    names no parameter can take are legalized), call ``repair(ep)`` on the program (the hook
    does).

        from torch.fx.passes.infra.pass_manager import PassManager
        PassManager([RepairNamesPass()])(gm)
        edge = to_edge(ep).transform([RepairNamesPass()])  # ExecuTorch
    """

    def __init__(self, *, strict: bool = False) -> None:
        super().__init__()
        self.strict = strict

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        if not isinstance(graph_module, torch.fx.GraphModule):
            raise TypeError(
                "RepairNamesPass runs on a torch.fx.GraphModule, got "
                f"{type(graph_module).__module__}.{type(graph_module).__qualname__}"
                + (
                    "; for an ExportedProgram call torch_export_names.repair(ep)"
                    if isinstance(graph_module, torch.export.ExportedProgram)
                    else ""
                )
            )
        report = repair(graph_module, strict=self.strict)
        return PassResult(graph_module, any(report))
