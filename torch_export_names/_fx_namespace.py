"""The one place that touches torch.fx's private name-space state.

TODO(pytorch/pytorch#202927): torch.export assigns ``node.name`` without
recording the name in ``graph._graph_namespace``. Once every supported torch
records the names it assigns, this module (and everything that imports it) can
be deleted: ``find_unrecorded_names`` then returns ``[]`` on every export.

Everything here reads or writes ``torch.fx.graph._Namespace``:
``_used_names`` (every name handed out), ``_obj_to_name`` (node -> name) and
``_base_count`` (next suffix per base name, which keeps ``create_name`` O(1)).
It also reads ``torch.fx.graph._illegal_names``: the keywords, builtins and
globals of fx's generated code (``inf``, ``nan``, ``device``, ``torch``, ...)
that ``create_name`` never hands out, because a local of that name would
shadow the global in the generated ``forward``.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterable, Iterator, Sequence

import torch.fx

__all__ = [
    "PrivateStateMissing",
    "check",
    "fresh_name",
    "illegal_names",
    "is_legal",
    "is_recorded",
    "legal_names",
    "names_at_risk",
    "namespace_state",
    "placeholders",
    "record",
    "record_all",
    "rename",
    "reserve",
    "restore",
    "restore_namespace",
    "snapshot",
    "split_suffix",
    "undo_log",
]


class PrivateStateMissing(RuntimeError):
    """The torch.fx private name-space state this package relies on is not there."""


def split_suffix(name: str) -> tuple[str, int | None]:
    """Split a node name into base and numeric suffix, as ``_Namespace.create_name`` does.

    ``"mul_7" -> ("mul", 7)``, ``"mul" -> ("mul", None)``. Same answer as
    ``torch.fx.graph._name_regex`` for every valid identifier, at a quarter of
    its cost (this runs once per newly recorded name).
    """
    base, sep, digits = name.rpartition("_")
    if sep and base and digits.isascii() and digits.isdigit():
        return base, int(digits)
    return name, None


def _namespace(graph: torch.fx.Graph):
    ns = getattr(graph, "_graph_namespace", None)
    if ns is None:
        raise PrivateStateMissing(
            f"torch {torch.__version__}: torch.fx.Graph has no _graph_namespace"
        )
    for attr, kind in (("_used_names", set), ("_obj_to_name", dict), ("_base_count", dict)):
        if not isinstance(getattr(ns, attr, None), kind):
            raise PrivateStateMissing(
                f"torch {torch.__version__}: graph._graph_namespace.{attr} is missing "
                f"or not a {kind.__name__}"
            )
    return ns


_illegal_cache: dict | None = None


def illegal_names() -> dict:
    """The names ``create_name`` refuses for a node, as a dict (``in`` and ``.keys()``).

    ``torch.fx.graph._illegal_names`` where this torch has it; torch releases
    before 2.7 check the same three sources inline in ``create_name``
    (keywords, builtins, ``_custom_builtins``), so the set is built from them.
    """
    global _illegal_cache
    names = getattr(torch.fx.graph, "_illegal_names", None)
    if isinstance(names, dict):
        return names
    if _illegal_cache is None:
        custom = getattr(torch.fx.graph, "_custom_builtins", None)
        if not isinstance(custom, dict):
            raise PrivateStateMissing(
                f"torch {torch.__version__}: neither torch.fx.graph._illegal_names nor "
                "torch.fx.graph._custom_builtins is there"
            )
        import builtins
        import keyword

        _illegal_cache = {**dict.fromkeys(keyword.kwlist), **builtins.__dict__, **custom}
    return _illegal_cache


def is_legal(name: str) -> bool:
    """Whether ``create_name`` could hand out ``name`` for a node: an identifier that
    shadows no keyword, builtin or global of fx's generated code."""
    return name.isidentifier() and name not in illegal_names()


def check(graphs: Iterable[torch.fx.Graph]) -> None:
    """Raise PrivateStateMissing unless every graph has the state we use."""
    illegal_names()
    for g in graphs:
        _namespace(g)


def legal_names(names: Sequence[str]) -> list[str]:
    """``names`` with every illegal one replaced as ``create_name`` would replace it.

    For a list of Python parameter names (an unlifted module's ``forward``):
    legal names are kept, the others get a suffix that none of the kept names has.
    """
    space = torch.fx.graph._Namespace()
    for name in names:
        if is_legal(name):
            space._used_names.add(name)
    return [name if is_legal(name) else space.create_name(name, None) for name in names]


def is_recorded(graph: torch.fx.Graph, node: torch.fx.Node) -> bool:
    """Whether ``graph``'s name space knows ``node.name`` as a used name."""
    return node.name in _namespace(graph)._used_names


def names_at_risk(graph: torch.fx.Graph) -> tuple[list[str], list[str]]:
    """``(unrecorded, illegal)``: the names of ``graph``'s own nodes (not nested graphs)
    that its name space does not know, and those ``create_name`` would refuse.

    One pass over the nodes, then set operations; the audit asks this before
    every node creation, and nearly always gets ``([], [])``.
    """
    used = _namespace(graph)._used_names
    refused = illegal_names()
    names = [node.name for node in graph.nodes]
    unrecorded = [] if used.issuperset(names) else [n for n in names if n not in used]
    if refused.keys().isdisjoint(names) and all(map(str.isidentifier, names)):
        return unrecorded, []
    return unrecorded, [n for n in names if n in refused or not n.isidentifier()]


def reserve(graph: torch.fx.Graph, name: str) -> bool:
    """Mark ``name`` as used in ``graph``'s name space without binding it to a node.

    Returns True if the name was not used before.
    """
    ns = _namespace(graph)
    new = name not in ns._used_names
    ns._used_names.add(name)
    base, num = split_suffix(name)
    if num is not None and ns._base_count.get(base, 0) < num:
        ns._base_count[base] = num
    return new


def record(graph: torch.fx.Graph, node: torch.fx.Node) -> bool:
    """Record ``node.name`` in ``graph``'s name space, as ``Node._rename`` would.

    Keeps all three parts consistent: the name is used, the node maps to it,
    and the per-base suffix counter is at least the name's suffix. Returns True
    if the name was not recorded before.
    """
    new = reserve(graph, node.name)
    _namespace(graph)._obj_to_name[node] = node.name
    return new


def fresh_name(graph: torch.fx.Graph, candidate: str) -> str:
    """A name not used in ``graph``, derived from ``candidate``; it is reserved."""
    return _namespace(graph).create_name(candidate, None)


_undo = threading.local()  # .log: list of (node, name, target) while an undo_log() is open


@contextlib.contextmanager
def undo_log() -> Iterator[list]:
    """Collect ``(node, old name, old target)`` for every ``rename`` in this thread.

    With ``namespace_state``, what the hook needs to put a program back if a
    repair fails, at the cost of the renames rather than of a copy of every
    node's name.
    """
    outer = getattr(_undo, "log", None)
    _undo.log = log = []
    try:
        yield log
    finally:
        _undo.log = outer


def namespace_state(graph: torch.fx.Graph):
    """Copies of ``graph``'s name-space containers, for ``restore_namespace``."""
    ns = _namespace(graph)
    return ns._used_names.copy(), ns._obj_to_name.copy(), ns._base_count.copy()


def restore_namespace(graph: torch.fx.Graph, state, log: list) -> None:
    """Undo the renames in ``log`` that touched ``graph`` and put its name space back."""
    for node, name, target in reversed(log):
        if node.graph is graph:
            node.name, node.target = name, target
    ns = _namespace(graph)
    ns._used_names, ns._obj_to_name, ns._base_count = state


def rename(graph: torch.fx.Graph, node: torch.fx.Node, name: str) -> None:
    """Give ``node`` the name ``name`` and record it (a placeholder's target follows)."""
    log = getattr(_undo, "log", None)
    if log is not None:
        log.append((node, node.name, node.target))
    node.name = name
    if node.op == "placeholder":
        node.target = name
    record(graph, node)


def record_all(graph: torch.fx.Graph, illegal: list[torch.fx.Node] | None = None) -> int:
    """``record`` every node of ``graph``; returns how many names were new.

    Nodes whose name ``create_name`` would refuse are appended to ``illegal``
    if given. A name can only be illegal if it was not handed out by
    ``create_name``: it is then new to the name space or its node's mapping is
    stale, or it is a placeholder's (user input names; torch.fx patched to
    record names without checking them). Only those are checked, and an
    illegal name's node keeps its stale mapping until it is renamed, so a
    later ``repair`` still finds it. This is the loop the hook runs on every
    exported graph: one pass, the name space looked up once, a name's suffix
    parsed only when it is new.
    """
    ns = _namespace(graph)
    used, obj_to_name, base_count = ns._used_names, ns._obj_to_name, ns._base_count
    refused = illegal_names()
    new = 0
    for node in graph.nodes:
        name = node.name
        if obj_to_name.get(node) != name:
            if name in refused:
                if illegal is not None:
                    illegal.append(node)
            else:
                obj_to_name[node] = name
        if name in used:
            continue
        used.add(name)
        new += 1
        base, _, digits = name.rpartition("_")  # split_suffix, inlined (no "_": base is "")
        if base and digits.isdigit() and digits.isascii():
            num = int(digits)
            if base_count.get(base, 0) < num:
                base_count[base] = num
    if illegal is not None:
        # A placeholder's refused name may be recorded with its node (torch.fx patched to
        # record names without checking them). Either ask about every placeholder, from
        # torch.fx's node index where it has one, or ask whether any recorded name is
        # refused (a set test per name of the smaller of the two): whichever is fewer
        # steps, a placeholder costing about two set tests.
        phs = _indexed_placeholders(graph, ordered=False)  # graph order is not needed to ask
        if phs is not None and 2 * len(phs) >= min(len(used), len(refused)):
            phs = None
        if phs is not None:
            at_risk = any([n for n in phs if n.name in refused])
        else:
            at_risk = not refused.keys().isdisjoint(used)
        if at_risk:
            illegal.extend(n for n in placeholders(graph) if n.name in refused and n not in illegal)
    return new


def _indexed_placeholders(graph: torch.fx.Graph, *, ordered: bool) -> list[torch.fx.Node] | None:
    """``graph``'s placeholders from torch.fx's node index, in graph order if ``ordered``;
    None where this torch has no index (``Graph.find_nodes``)."""
    find = getattr(graph, "find_nodes", None)
    if find is None:
        return None
    if ordered:
        return find(op="placeholder")
    try:
        return find(op="placeholder", sort=False)
    except TypeError:  # a find_nodes without ``sort``
        return find(op="placeholder")


def placeholders(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """``graph``'s placeholders, in order, from torch.fx's node index where it has one."""
    found = _indexed_placeholders(graph, ordered=True)
    if found is not None:
        return found
    return [n for n in graph.nodes if n.op == "placeholder"]


def snapshot(graph: torch.fx.Graph):
    """What ``restore`` needs to put ``graph``'s names back exactly as they are now."""
    ns = _namespace(graph)
    nodes = list(graph.nodes)
    return (
        nodes,
        [n.name for n in nodes],
        [n.target for n in nodes],
        set(ns._used_names),
        dict(ns._obj_to_name),
        dict(ns._base_count),
    )


def restore(graph: torch.fx.Graph, snap) -> None:
    """Undo every name change made to ``graph`` since ``snapshot``."""
    nodes, names, targets, used, obj_to_name, base_count = snap
    for node, name, target in zip(nodes, names, targets):
        node.name, node.target = name, target
    ns = _namespace(graph)
    ns._used_names, ns._obj_to_name, ns._base_count = used, obj_to_name, base_count
