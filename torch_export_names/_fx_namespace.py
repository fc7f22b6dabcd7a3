"""The one place that touches torch.fx's private name-space state.

TODO(pytorch/pytorch#202927): torch.export assigns ``node.name`` without
recording the name in ``graph._graph_namespace``. Once every supported torch
records the names it assigns, this module (and everything that imports it) can
be deleted: ``find_unrecorded_names`` then returns ``[]`` on every export.

Everything here reads or writes ``torch.fx.graph._Namespace``:
``_used_names`` (every name handed out), ``_obj_to_name`` (node -> name) and
``_base_count`` (next suffix per base name, which keeps ``create_name`` O(1)).
Names are recorded here, and renamed where they cannot be a parameter of fx's generated code
(``_codegen_rule.can_be_parameter``: ``is_illegal``). It also reads the names ``create_name``
refuses (``refused_names``: ``torch.fx.graph._illegal_names``, every keyword and builtin), which
the code-generator guard checks a parameter against: such a parameter may meet a global of the
generated code.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import threading
from typing import Any, Iterable

import torch.fx

from ._codegen_rule import can_be_parameter, codegen_names, illegal_identifiers
from ._warnings import PrivateStateMissing

__all__ = [
    "PrivateStateMissing",
    "Rollback",
    "check",
    "codegen_of",
    "custom_builtins",
    "stateless_codegens",
    "fresh_name",
    "is_illegal",
    "is_used",
    "legal_names",
    "refused_names",
    "is_recorded",
    "name_of",
    "names_by_object",
    "names_at_risk",
    "namespace_state",
    "placeholders",
    "record",
    "record_all",
    "rename",
    "reserve_name",
    "restore_namespace",
    "split_suffix",
    "take_name",
]


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
        raise PrivateStateMissing(f"torch {torch.__version__}: torch.fx.Graph has no _graph_namespace")
    for attr, kind in (("_used_names", set), ("_obj_to_name", dict), ("_base_count", dict)):
        if not isinstance(getattr(ns, attr, None), kind):
            raise PrivateStateMissing(
                f"torch {torch.__version__}: graph._graph_namespace.{attr} is missing "
                f"or not a {kind.__name__}"
            )
    return ns


def refused_names() -> dict:
    """The names ``create_name`` refuses for a node, as a dict (``in`` and ``.keys()``).

    ``torch.fx.graph._illegal_names`` where this torch has it; torch releases
    before 2.7 check the same three sources inline in ``create_name``
    (keywords, builtins, ``_custom_builtins``), so the set is built from them.
    The code-generator guard asks it whether a parameter could meet a global of fx's code.
    """
    names = getattr(torch.fx.graph, "_illegal_names", None)
    if isinstance(names, dict):
        return names
    return _refused_names_from_sources()


@functools.lru_cache(maxsize=None)
def _refused_names_from_sources() -> dict:
    custom = getattr(torch.fx.graph, "_custom_builtins", None)
    if not isinstance(custom, dict):
        raise PrivateStateMissing(
            f"torch {torch.__version__}: neither torch.fx.graph._illegal_names nor "
            "torch.fx.graph._custom_builtins is there"
        )
    return {**dict.fromkeys(keyword.kwlist), **builtins.__dict__, **custom}


def check(graphs: Iterable[torch.fx.Graph]) -> None:
    """Raise PrivateStateMissing unless every graph has the state we use."""
    refused_names()
    codegen_names()
    for g in graphs:
        _namespace(g)


def is_recorded(graph: torch.fx.Graph, node: torch.fx.Node) -> bool:
    """Whether ``graph``'s name space knows ``node.name`` as a used name."""
    return node.name in _namespace(graph)._used_names


def names_at_risk(graph: torch.fx.Graph) -> tuple[list[str], list[str]]:
    """``(unrecorded, illegal)``: the names of ``graph``'s own nodes (not nested graphs)
    that its name space does not know, and its placeholders that cannot be a parameter of the
    generated code (``is_illegal``).

    One pass over the nodes, then set operations; the audit asks this before
    every node creation, and nearly always gets ``([], [])``.
    """
    used = _namespace(graph)._used_names
    names = [node.name for node in graph.nodes]
    unrecorded = [] if used.issuperset(names) else [n for n in names if n not in used]
    if illegal_identifiers().isdisjoint(names) and all(map(str.isidentifier, names)):
        return unrecorded, []
    return unrecorded, [n.name for n in placeholders(graph) if is_illegal(n)]


def is_illegal(node: torch.fx.Node) -> bool:
    """Whether ``node`` is a placeholder whose name or target cannot be a parameter of fx's
    generated code (``can_be_parameter``). Other nodes become locals, which the code generator
    names itself."""
    if node.op != "placeholder":
        return False
    return not can_be_parameter(node.name) or (
        isinstance(node.target, str) and not can_be_parameter(node.target)
    )


def reserve_name(where, name: str) -> bool:
    """Mark ``name`` as used in a name space (a graph's, or a ``_Namespace``: the code
    generator's) without binding it to anything, so ``create_name`` gives it to nothing.

    Returns True if the name was not used before.
    """
    ns = _namespace(where) if isinstance(where, torch.fx.Graph) else where
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
    new = reserve_name(graph, node.name)
    _namespace(graph)._obj_to_name[node] = node.name
    return new


def fresh_name(graph: torch.fx.Graph, candidate: str) -> str:
    """A name not used in ``graph`` that can be a parameter, derived from ``candidate``
    as ``create_name`` derives it (``class`` -> ``class_1``, ``my-input`` -> ``my_input``);
    it is reserved."""
    return _fresh_in(_namespace(graph), candidate)


def _fresh_in(ns, candidate: str) -> str:
    name = ns.create_name(candidate, None)
    while not can_be_parameter(name):  # create_name hands out what it does not know: ``self``
        name = ns.create_name(name, None)
    return name


def legal_names(names: list[str]) -> list[str]:
    """``names`` with each one no parameter can take derived as ``create_name`` derives it
    (``my-input`` -> ``my_input``, ``class`` -> ``class_1``), apart from every other name of the
    list; the others unchanged. For argument lists: no graph is involved."""
    ns = torch.fx.graph._Namespace()
    ns._used_names.update(name for name in names if can_be_parameter(name))
    return [name if can_be_parameter(name) else _fresh_in(ns, name) for name in names]


_undo = threading.local()  # .log: list of (node, name, target) while a Rollback is open


class Rollback:
    """What puts graphs' names back as they were: copies of each name space's containers, taken
    up front, and either ``(node, old name, old target)`` for every ``rename`` made in this
    thread while it is open (the cost of the renames, not of a copy of every node's name: what
    ``repair`` uses) or, with ``every_name=True``, every node's name and target taken up front
    (for putting a graph back again and again whatever changed it: the benchmarks).

        with Rollback(graphs) as rollback:
            try:
                ...  # record, rename
            except BaseException:
                rollback.undo()
                raise

    ``undo()`` can be called again: each call puts back fresh copies. A rollback opened inside
    another hands its renames to the outer one when it closes without undoing them.
    """

    def __init__(self, graphs: Iterable[torch.fx.Graph], *, every_name: bool = False) -> None:
        self._states = [(g, namespace_state(g), _node_names(g) if every_name else None) for g in graphs]
        self._log: list[tuple[torch.fx.Node, str, Any]] = []
        self._outer: list | None = None

    def __enter__(self) -> Rollback:
        self._outer = getattr(_undo, "log", None)
        _undo.log = self._log
        return self

    def __exit__(self, *exc) -> None:
        _undo.log = self._outer
        if self._outer is not None:
            self._outer.extend(self._log)

    def undo(self) -> list[torch.fx.Graph]:
        """Every logged rename undone, every node named as it was (``every_name``), every name
        space as it was. Returns the graphs whose node names or targets it changed (their code
        needs ``recompile()``)."""
        changed = {node.graph for node, _, _ in self._log}
        for node, name, target in reversed(self._log):
            node.name, node.target = name, target
        self._log.clear()
        for graph, state, names in self._states:
            if names is not None and _put_names_back(graph, names):
                changed.add(graph)
            restore_namespace(graph, state)
        return [g for g, _, _ in self._states if g in changed]


def _node_names(graph: torch.fx.Graph):
    nodes = list(graph.nodes)
    return nodes, [n.name for n in nodes], [n.target for n in nodes]


def _put_names_back(graph: torch.fx.Graph, names) -> bool:
    """Whether any node of ``graph`` had another name or target than ``names`` says (then it is
    put back; assigning every name is avoided when none changed: it updates torch's node index)."""
    nodes, old_names, targets = names
    if len(graph.nodes) == len(nodes) and all(
        n.name == name and n.target is target for n, name, target in zip(nodes, old_names, targets)
    ):
        return False
    for node, name, target in zip(nodes, old_names, targets):
        node.name, node.target = name, target
    return True


def namespace_state(where) -> tuple[set, dict, dict]:
    """Copies of the containers of a name space (a ``_Namespace``, or a graph's), for
    ``restore_namespace``."""
    ns = _namespace(where) if isinstance(where, torch.fx.Graph) else where
    return ns._used_names.copy(), ns._obj_to_name.copy(), ns._base_count.copy()


def restore_namespace(where, state: tuple[set, dict, dict]) -> None:
    """Put a name space (a ``_Namespace``, or a graph's) back as ``namespace_state`` saw it: into
    its own containers (torch's code holds them), from the copies (which stay as they are)."""
    ns = _namespace(where) if isinstance(where, torch.fx.Graph) else where
    used, obj_to_name, base_count = state
    for mine, saved in ((ns._used_names, used), (ns._obj_to_name, obj_to_name), (ns._base_count, base_count)):
        mine.clear()
        mine.update(saved)


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

    Placeholders that cannot be a parameter of fx's generated code (``is_illegal``) are
    appended to ``illegal`` if given (every placeholder is checked: a pass may have set only its
    target), and keep their mapping until they are renamed. This is the loop the hook runs on
    every exported graph: one pass, the name space looked up once, a name's suffix parsed only
    when it is new.
    """
    ns = _namespace(graph)
    used, obj_to_name, base_count = ns._used_names, ns._obj_to_name, ns._base_count
    new = 0
    for node in graph.nodes:
        name = node.name
        if node.op == "placeholder" and is_illegal(node):  # however it got there (a pass may set
            if illegal is not None:  # only the target): checked on every repair
                illegal.append(node)
        elif obj_to_name.get(node) != name:
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
    return new


def placeholders(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """``graph``'s placeholders, in order, from torch.fx's node index (every supported torch,
    2.4 included, has ``Graph.find_nodes``)."""
    return graph.find_nodes(op="placeholder")


# --- the code generator's own name space (``codegen_guard``) ------------------------------------


def codegen_of(graph: torch.fx.Graph):
    """``graph``'s code generator (``graph._codegen``), read, never written."""
    return graph._codegen


def stateless_codegens() -> tuple[type, ...]:
    """torch.fx's code generators whose function prologue names depend on nothing but whether
    they have pytree information (``CodeGen``, ``_PyTreeCodeGen``; not ``_ExportCodeGen``,
    whose prologue names the tree's leaves)."""
    graph = torch.fx.graph
    return tuple(c for c in (getattr(graph, "CodeGen", None), getattr(graph, "_PyTreeCodeGen", None)) if c)


def custom_builtins() -> dict:
    """The globals torch.fx registers in every generated code, with their import statements
    (``torch.fx.graph._custom_builtins``: name -> (import_str, obj))."""
    custom = getattr(torch.fx.graph, "_custom_builtins", None)
    if not isinstance(custom, dict):
        raise PrivateStateMissing(f"torch {torch.__version__}: torch.fx.graph._custom_builtins is missing")
    return custom


def is_used(namespace, name: str) -> bool:
    """Whether ``namespace`` has handed out ``name``."""
    return name in namespace._used_names


def names_by_object(namespace) -> dict:
    """The code generator's name space's object -> name table (read only)."""
    return namespace._obj_to_name


def name_of(namespace, obj: object) -> str | None:
    """The name ``namespace`` gave ``obj``, if any."""
    return namespace._obj_to_name.get(obj)


def take_name(graph: torch.fx.Graph, node: torch.fx.Node, name: str) -> bool:
    """Give ``node``, just created, the name ``name`` instead of the one ``create_name`` handed
    it, if no node of ``graph`` has ``name`` and it can be a parameter; the name handed out is
    free again (nothing else can have it yet). Returns whether it did."""
    ns = _namespace(graph)
    if not can_be_parameter(name) or name in ns._used_names:
        return False
    old = node.name
    node.name = name
    record(graph, node)
    ns._used_names.discard(old)
    return True
