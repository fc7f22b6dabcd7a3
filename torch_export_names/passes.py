"""Passes that restore torch.fx's naming invariant on what torch.export returns.

The invariant: every node name of a graph is one its name space could have
handed out, and is known to it. Known, so ``create_name`` never hands out a
name that is already taken; handed out, so no name is one ``create_name``
refuses (a keyword, a builtin, or a global of fx's generated code such as
``inf``, ``nan``, ``device``, ``torch``: a placeholder of that name becomes a
parameter of the generated ``forward`` and shadows the global, changing what
the program computes). torch.export (2.4 to 2.15 at least) breaks both by
assigning ``node.name`` directly; see pytorch/pytorch#202927.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterator, NamedTuple, Sequence

import torch
import torch.fx

from . import _fx_namespace as _ns
from . import _torch_compat as _compat
from ._warnings import warn_once

__all__ = [
    "RepairReport",
    "find_illegal_names",
    "find_unrecorded_names",
    "legalize_node_names",
    "propagate_subgraph_names",
    "repair",
    "reserve_node_names",
]


class RepairReport(NamedTuple):
    """What ``repair`` did: names newly recorded, subgraph placeholders renamed
    after their operands, nodes renamed because their name was illegal."""

    recorded: int
    renamed: int
    legalized: int = 0


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
        _ns.check([g for _, _, g in graphs])
    except _ns.PrivateStateMissing as e:
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


def _rename_in_program(ep, renames: dict[str, str]) -> None:
    """Carry top-level placeholder/output renames into ``ep``'s signatures.

    The graph signature (input and output specs, and the input a user-input
    mutation writes to) and every module call signature refer to nodes by name.
    """
    from torch.export.graph_signature import OutputKind

    sig = ep.graph_signature
    for old, new in renames.items():
        sig.replace_all_uses(old, new)
    for spec in sig.output_specs:
        if spec.kind == OutputKind.USER_INPUT_MUTATION and spec.target in renames:
            spec.target = renames[spec.target]
    for entry in ep.module_call_graph:
        if entry.signature is None:
            continue
        for arg in (*entry.signature.inputs, *entry.signature.outputs):
            if getattr(arg, "name", None) in renames:
                arg.name = renames[arg.name]


def _is_args_kwargs_spec(spec) -> bool:
    if spec is None or spec.type is not tuple:
        return False
    children = _compat.spec_children(spec)
    return len(children) == 2 and children[0].type is tuple and children[1].type is dict


def _rename_kwargs_in_spec(spec, renames: dict[str, str]):
    """``spec`` of ``(args, kwargs)`` with the kwargs keys in ``renames`` renamed (order kept)."""
    from torch.utils import _pytree as pytree

    args, kwargs = pytree.tree_unflatten(list(range(spec.num_leaves)), spec)
    return pytree.tree_structure((args, {renames.get(k, k): v for k, v in kwargs.items()}))


def _legalize_forward_arg_names(ep) -> dict[str, str]:
    """Give ``ep.module()``'s generated ``forward`` parameter names that shadow nothing.

    torch builds that ``forward`` from ``forward_arg_names``, the user's own
    argument names; one called ``inf`` would read the argument wherever the
    graph means ``float("inf")``, and a keyword argument's key that is not an
    identifier (``my-input``) makes the code invalid. Everything that names a
    renamed argument follows: an argument passed by keyword at export time is
    renamed in the call's input spec and example inputs, so ``ep.module()``
    accepts it by its new keyword, and the program's guards (``ep._guards_code``,
    which refer to arguments as ``L['name']``) name it by its new name.
    Returns ``{old: new}`` for the arguments renamed.

    Only the top-level entry of ``ep.module_call_graph`` can hold such names:
    torch gives every submodule's signature ``forward_arg_names=None`` ("we only
    propagate forward_arg_names for the top level module", torch/export/_trace.py;
    so does ``collect_tracepoints_pass``), and ``unflatten`` / ``swap`` name a
    submodule's arguments through ``create_name``. The top-level entry comes
    first, so the other entries (one per submodule call, 263 in a 16-layer
    decoder) are not read.
    """
    entries = ep.module_call_graph
    if not entries:
        return {}
    entry = entries[0]
    if entry.fqn:  # not torch's layout (the top level first): look for it
        entry = next((e for e in entries if not e.fqn), None)
        if entry is None:
            return {}
    sig = entry.signature
    names = _compat.forward_arg_names(ep, entry)
    if not names:
        return {}
    if _ns.candidates().isdisjoint(names) and all(map(str.isidentifier, names)):
        return {}  # the common case: no name is one that can shadow
    graph = ep.graph
    if not any(_ns.shadows(n, graph) for n in names):
        return {}
    legal = _ns.legal_names(names, graph)
    renames = {old: new for old, new in zip(names, legal) if old != new}
    _compat.set_forward_arg_names(ep, entry, legal)
    if _is_args_kwargs_spec(sig.in_spec) and any(
        k in renames for k in _compat.spec_children(sig.in_spec)[1].context
    ):
        sig.in_spec = _rename_kwargs_in_spec(sig.in_spec, renames)
        if ep.example_inputs is not None:
            args, kwargs = ep.example_inputs
            _compat.set_example_inputs(ep, (args, {renames.get(k, k): v for k, v in kwargs.items()}))
    return renames


def _reconcile_guards(ep) -> None:
    """Make ``ep``'s guards name the arguments its ``forward`` has.

    A guard that still names an argument by the name it had before ``repair``
    renamed it (``L['inf']`` when ``ep.module()`` takes ``inf_1``) breaks
    ``ep.module()`` with ``NameError: name 'L' is not defined``. torch writes
    such guards whenever it builds a program from one whose argument was renamed:
    at export, ``run_decompositions`` (the guards come from the shape
    environment, which keeps the user's names) and ``torch.export.load`` of a
    program saved without the package. Each such name is the argument whose
    new name ``legal_names`` gives it in its position; a name that fits no
    argument, or more than one, is left as it is.
    """
    guarded = _compat.guard_arg_names(ep)
    if not guarded:
        return
    entry = next((e for e in ep.module_call_graph if not e.fqn), None)
    names = _compat.forward_arg_names(ep, entry) if entry is not None else None
    if not names:
        return
    graph = ep.graph
    renames = {}
    for old in guarded.difference(names):
        if not _ns.shadows(old, graph):
            continue
        fits = [
            new for i, new in enumerate(names)
            if new not in guarded and _ns.legal_names([*names[:i], old, *names[i + 1:]], graph)[i] == new
        ]
        if len(fits) == 1:
            renames[old] = fits[0]
    _compat.rename_in_guards(ep, renames)


def _warn_renamed_args(renames: dict[str, str]) -> None:
    """One warning per renamed argument; called once the whole repair has succeeded."""
    for old, new in renames.items():
        warn_once(
            f"renamed-arg-{old}",
            f"torch_export_names: the exported program's argument {old!r} is renamed {new!r}: as a "
            f"parameter of the code torch.fx generates it would shadow the global {old!r} that "
            f"code uses (or is not a Python identifier), and change what ep.module() computes. "
            f"ep.module() takes it in the same position, or by keyword as {new}=...",
            stacklevel=6,
        )


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
            if node.op == "placeholder" and node.name != node.target and not _ns.shadows(node.name, graph):
                new = node.name  # only its target, the generated parameter, shadows: it follows
            else:
                new = _ns.fresh_name(graph, node.name)
            renames[node.name] = new
            _ns.rename(graph, node, new)
        renamed += len(nodes)
        if is_program and i == 0:
            _rename_in_program(obj, renames)
        if module is not None:
            module.recompile()
    return renamed


def legalize_node_names(obj, *, strict: bool = False) -> int:
    """Rename every node whose name ``create_name`` would refuse, in every graph.

    Such a name (``inf``, ``nan``, ``device``, ``torch``, a builtin, ...) shadows
    a global of the code torch.fx generates: a placeholder called ``inf`` makes
    ``float("inf")`` in the graph read that input. Each is renamed to what
    ``create_name`` gives (``inf_1``) and recorded; a placeholder's target
    follows. For an ``ExportedProgram`` the graph signature and module call
    signatures follow too, and the argument names of ``ep.module()``'s
    ``forward`` are made legal the same way (warning once per renamed
    argument, since a keyword call must then use the new name). Input order
    and what the program computes are kept. Returns the number of nodes renamed.
    """
    graphs = _checked_graphs(obj, strict, "legalize_node_names")
    if graphs is None:
        return 0
    illegal: dict[int, list[torch.fx.Node]] = {}
    for i, (_, _, graph) in enumerate(graphs):
        clobbered = _ns.clobbered_placeholders(graph)
        found = [
            n for n in graph.nodes
            if _ns.shadows(n.name, graph) or n in clobbered
            or n.op == "placeholder" and isinstance(n.target, str) and _ns.shadows(n.target, graph)
        ]
        if found:
            illegal[i] = found
    renamed = _legalize(obj, graphs, illegal)
    if isinstance(obj, torch.export.ExportedProgram):
        args = _legalize_forward_arg_names(obj)
        _reconcile_guards(obj)
        _warn_renamed_args(args)
    return renamed


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


_hop_ops_cache: dict[str, object] | None = None


def _hop_ops() -> dict[str, object]:
    """The HOPs of ``HOP_SUBGRAPH_OPERANDS`` that this torch has, by name."""
    global _hop_ops_cache
    if _hop_ops_cache is None:
        found = {}
        for name in HOP_SUBGRAPH_OPERANDS:
            try:
                op = getattr(torch.ops.higher_order, name)
            except (AttributeError, RuntimeError):
                continue
            if isinstance(op, torch._ops.HigherOrderOperator):
                found[name] = op
        _hop_ops_cache = found
    return _hop_ops_cache


def _hop_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """The calls of known HOPs in ``graph``, in graph order.

    Looked up in torch.fx's node index (``Graph.find_nodes``) where this torch
    has one, so a graph without HOP calls costs a few dict lookups, not a
    scan of its nodes.
    """
    find = getattr(graph, "find_nodes", None)
    if find is None:
        return [
            n for n in graph.nodes
            if n.op == "call_function"
            and isinstance(n.target, torch._ops.HigherOrderOperator)
            and n.target._name in HOP_SUBGRAPH_OPERANDS
        ]
    found = [n for op in _hop_ops().values() for n in find(op="call_function", target=op)]
    if len(found) > 1:  # several queries: put them back in graph order
        wanted = set(found)
        found = [n for n in graph.nodes if n in wanted]
    return found


def _hop_subgraphs(
    module: torch.fx.GraphModule,
) -> Iterator[tuple[torch.fx.Node, torch.fx.GraphModule, Sequence[object]]]:
    if not module._modules:  # a HOP's subgraphs are submodules of the module that calls it
        return
    for node in _hop_nodes(module.graph):
        try:
            subgraphs = HOP_SUBGRAPH_OPERANDS[node.target._name](node)
        except (TypeError, IndexError, ValueError):
            # This torch calls the HOP with other arguments than the ones the table
            # knows (while_loop and scan before 2.7): leave its subgraphs as they are.
            warn_once(
                f"hop-schema-{node.target._name}",
                f"torch_export_names: {node.target._name} node {node.name!r} has arguments this "
                "package does not know (another torch release); its subgraph placeholder names "
                "were left as they are. Names are still recorded and made legal.",
            )
            continue
        for attr, operands in subgraphs:
            if not (isinstance(attr, torch.fx.Node) and attr.op == "get_attr"):
                continue
            sub = operator.attrgetter(attr.target)(module)
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
        ph: op.name if _ns.is_legal(op.name, graph) else _ns.fresh_name(graph, op.name)
        for ph, op in zip(placeholders, operands)
        if isinstance(op, torch.fx.Node)
    }
    for name in wanted.values():
        _ns.reserve(graph, name)
    # Torch's rule for cond: a node that already holds an operand's name is re-suffixed.
    for node in graph.nodes:
        if node not in wanted and node.name in wanted.values():
            _ns.rename(graph, node, _ns.fresh_name(graph, node.name))
    final: dict[torch.fx.Node, str] = {}
    for ph, name in wanted.items():
        if name in final.values():  # the same operand passed twice: the later placeholder gets a suffix
            name = _suffixed(graph, ph, name, set(final.values()))
        final[ph] = name
    # fx's generated local for a builtin-named placeholder (``iter`` -> ``iter_1 = iter``) must not
    # be a later placeholder's parameter (an operand passed twice: ``iter``, ``iter_1``).
    for i in _ns.clobbering([final.get(ph, ph.name) for ph in placeholders]):
        ph = placeholders[i]
        if ph in final:
            final[ph] = _suffixed(graph, ph, final[ph], {n for p, n in final.items() if p is not ph})
    renamed = 0
    for ph, name in final.items():
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
    for _, _, graph in graphs:  # so that renames below draw fresh names (repair did this already)
        _ns.record_all(graph)
    return _propagate(graphs)


def _propagate(graphs) -> int:
    """``propagate_subgraph_names`` over already checked ``graphs``."""
    renamed, seen = 0, set()
    for _, module, _ in graphs:
        if module is None:
            continue
        for hop, sub, operands in _hop_subgraphs(module):
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            placeholders = _ns.placeholders(sub.graph)
            n_ph = len(placeholders)
            if n_ph != len(operands):
                warn_once(
                    f"hop-arity-{hop.target._name}",
                    f"torch_export_names: {hop.target._name} node {hop.name!r} has "
                    f"{len(operands)} operands but its subgraph has {n_ph} "
                    "placeholders; its subgraph names were left as they are "
                    "(this torch's HOP schema is not the one this package knows).",
                )
                continue
            renamed += _propagate_into(sub, operands, placeholders)
    return renamed


def repair(obj, *, strict: bool = False) -> RepairReport:
    """Make every node name of ``obj`` recorded and legal; name HOP subgraph placeholders.

    In one pass over the nodes of every graph, ``reserve_node_names`` (so the
    renames below draw fresh names) and ``legalize_node_names``; then
    ``propagate_subgraph_names``. Afterwards ``find_unrecorded_names(obj)`` and
    ``find_illegal_names(obj)`` are empty, and what the program computes is
    what it computed before (or, where a name shadowed a global of fx's
    generated code, what eager computes). Modifies ``obj`` in place.
    """
    if isinstance(obj, torch.fx.GraphModule) and not obj._modules or (
        isinstance(obj, torch.export.ExportedProgram) and not obj.graph_module._modules
    ):
        # One graph: record_all checks the private state before it writes anything.
        root = obj if isinstance(obj, torch.fx.GraphModule) else obj.graph_module
        graphs = [("", root, root.graph)]
        found: list[torch.fx.Node] = []
        try:
            recorded = _ns.record_all(root.graph, found, exported=root is not obj)
        except _ns.PrivateStateMissing as e:
            if strict:
                raise
            _warn_private_state(e, "repair")
            return RepairReport(0, 0, 0)
        illegal = {0: found} if found else {}
    else:
        graphs = _checked_graphs(obj, strict, "repair")
        if graphs is None:
            return RepairReport(0, 0, 0)
        illegal = {}
        recorded = 0
        exported = isinstance(obj, torch.export.ExportedProgram)
        for i, (_, _, graph) in enumerate(graphs):
            found = []
            recorded += _ns.record_all(graph, found, exported=exported)
            if found:
                illegal[i] = found
    legalized = _legalize(obj, graphs, illegal) if illegal else 0
    args = {}
    if isinstance(obj, torch.export.ExportedProgram):
        args = _legalize_forward_arg_names(obj)
        _reconcile_guards(obj)
    renamed = _propagate(graphs) if len(graphs) > 1 else 0  # HOP subgraphs are submodules
    _warn_renamed_args(args)  # last: a repair that fails before here warns of nothing
    return RepairReport(recorded=recorded, renamed=renamed, legalized=legalized)


def _snapshot_program(ep):
    """The names in ``ep``'s signatures, for ``_restore_program`` (None for a non-program)."""
    if not isinstance(ep, torch.export.ExportedProgram):
        return None
    sig = ep.graph_signature
    named = [s.arg for s in (*sig.input_specs, *sig.output_specs) if hasattr(s.arg, "name")]
    entries = [e for e in ep.module_call_graph if e.signature is not None]
    named += [a for e in entries for a in (*e.signature.inputs, *e.signature.outputs) if hasattr(a, "name")]
    return (
        [(a, a.name) for a in named],
        [(s, s.target) for s in sig.output_specs],
        [(e, _compat.forward_arg_names(ep, e), e.signature.in_spec) for e in entries],
        ep.example_inputs,
        getattr(ep, "_guards_code", None),
    )


def _restore_program(ep, snap) -> None:
    """Put back the names ``_snapshot_program`` saw."""
    if snap is None:
        return
    args, outputs, calls, example_inputs, guards = snap
    for arg, name in args:
        arg.name = name
    for spec, target in outputs:
        spec.target = target
    for entry, names, in_spec in calls:
        if names is not None:
            _compat.set_forward_arg_names(ep, entry, names)
        entry.signature.in_spec = in_spec
    if ep.example_inputs is not example_inputs:
        _compat.set_example_inputs(ep, example_inputs)
    if guards is not None:
        ep._guards_code = guards


def find_illegal_names(obj, *, strict: bool = False) -> list[str]:
    """Every node name ``create_name`` would refuse (it shadows a keyword, builtin
    or fx codegen global), qualified like ``find_unrecorded_names``; for an
    ``ExportedProgram`` also illegal ``forward`` argument names of ``ep.module()``,
    as ``"<forward>.inf"``."""
    graphs = _checked_graphs(obj, strict, "find_illegal_names")
    if graphs is None:
        return []
    clobbered_in = {graph: _ns.clobbered_placeholders(graph) for _, _, graph in graphs}
    found = [
        f"{path}.{node.name}" if path else node.name
        for path, _, graph in graphs
        for node in graph.nodes
        if _ns.shadows(node.name, graph) or node in clobbered_in[graph]
        or node.op == "placeholder" and isinstance(node.target, str) and _ns.shadows(node.target, graph)
    ]
    if isinstance(obj, torch.export.ExportedProgram):
        for entry in obj.module_call_graph:
            names = _compat.forward_arg_names(obj, entry) or []
            found += [f"<forward{'.' + entry.fqn if entry.fqn else ''}>.{n}" for n in names
                      if _ns.shadows(n, obj.graph)]
    return found


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
