"""The legality rule: which node and argument names change what fx's generated code means.

A placeholder becomes a parameter of the ``forward`` torch.fx generates, named after its
target, and every node a local of it: a name that is a global that code reads (``inf``,
``nan``, ``device``, ``torch``, ``pytree``, ``getattr``, ...), its parameter ``self``, a keyword,
``__debug__`` or not an identifier changes what the code computes or makes it invalid.
``codegen_names`` reads those names from torch.fx's code generator itself (its output for a
probe graph, parsed with ``symtable``), so the rule follows whatever torch is installed; it
uses torch.fx's private code-generator classes (``_PyTreeCodeGen``, ``_PyTreeInfo``) for that
probe and nothing of a graph's name space (that is ``_fx_namespace``). Every other name,
builtins such as ``input`` included, is kept as torch named it.
"""

from __future__ import annotations

import builtins
import keyword
import math
import operator
import symtable
from typing import Any

import torch.fx

from ._warnings import PrivateStateMissing

__all__ = ["candidates", "codegen_names", "is_legal", "shadows"]


def _codegen_probe() -> torch.fx.Graph:
    """A graph whose generated code uses every construct of fx's code generator that
    writes a global or a parameter name of its own: attribute paths that are not
    identifiers (``getattr(...)``), ``call_method``/``call_module``/``get_attr``,
    slice, Ellipsis and None arguments, inf/nan/-inf constants, dtype, layout,
    device and memory-format arguments, a ``getattr`` call, and the pytree
    input/output handling of an exported program's module (``ep.module()``).
    """
    from torch.utils import _pytree as pytree

    g = torch.fx.Graph()
    x = g.placeholder("x")
    k = g.placeholder("k")
    weight = g.get_attr("sub.0.weight")
    sub = g.call_module("sub.0", (x,))
    total = g.call_method("sum", (sub,), {"dim": -1})
    index: Any = (slice(1, None), Ellipsis, None)
    item = g.call_function(operator.getitem, (weight, index))
    full = g.call_function(
        torch.ops.aten.full.default,
        ([2], math.inf),
        {"dtype": torch.float32, "layout": torch.strided, "device": torch.device("cpu")},
    )
    clamped = g.call_function(torch.ops.aten.clamp.default, (full, -math.inf, math.nan))
    shape = g.call_function(getattr, (x, "shape"))
    other = g.call_function(getattr, (x, "not-an-identifier", None))
    clone = g.call_function(torch.ops.aten.clone.default, (item,), {"memory_format": torch.contiguous_format})
    g.output((total, clamped, clone, shape, other, k))
    in_spec = pytree.tree_structure(((1,), {"k": 2}))
    out_spec = pytree.tree_structure((1, 2, 3, 4, 5, 6))
    g._codegen = torch.fx.graph._PyTreeCodeGen(torch.fx.graph._PyTreeInfo(["x", "k"], in_spec, out_spec))
    return g


_codegen_names_cache: frozenset[str] | None = None


def codegen_names() -> frozenset[str]:
    """The names fx's generated code binds or reads besides the names of its nodes.

    Read from torch.fx itself, once per process: the code generator's output
    for ``_codegen_probe()`` is parsed with ``symtable``, and the result is
    every global its ``forward`` reads when it runs (``torch``, ``inf``,
    ``nan``, ``device``, ``fx_pytree``, ``pytree``, and the builtins the
    generator writes out literally: ``getattr``, ``slice``, ``Ellipsis``),
    every parameter that is not a placeholder's (``self``), and the Python
    keywords. A placeholder becomes a parameter of that ``forward`` named after
    its target, so one with any of these names either shadows what the code
    means by it or makes the code invalid; so does a builtin name Python does
    not let a parameter take (``__debug__``).

    Not included, because a parameter of that name shadows nothing the code
    reads: builtins the generated code never refers to (``input``, ``type``,
    ``id``, ...), and ``_custom_builtins`` that only appear in annotations
    (``NoneType``: Python evaluates a parameter's annotation where the function
    is defined, and never evaluates a local variable's).
    """
    global _codegen_names_cache
    if _codegen_names_cache is None:
        try:
            graph = _codegen_probe()
            code = graph.python_code(root_module="self")
            table = symtable.symtable(code.src, "<torch.fx generated code>", "exec")
            forward = next(t for t in table.get_children() if t.get_name() == "forward")
            assert isinstance(forward, symtable.Function), type(forward)
        except Exception as e:  # noqa: BLE001 - any failure means this torch's codegen is not known
            raise PrivateStateMissing(
                f"torch {torch.__version__}: cannot read the names of torch.fx's generated code "
                f"({type(e).__name__}: {e})"
            ) from e
        own = {n.target for n in graph.nodes if n.op == "placeholder"}
        params = set(forward.get_parameters()) - own
        unbindable = {n for n in builtins.__dict__ if n.isidentifier() and not _bindable(n)}
        _codegen_names_cache = frozenset({*forward.get_globals(), *params, *keyword.kwlist, *unbindable})
    return _codegen_names_cache


def _bindable(name: str) -> bool:
    """Whether Python accepts ``name`` as a parameter (not ``__debug__``, not a keyword)."""
    try:
        compile(f"def f({name}): pass", "<name>", "exec")
    except SyntaxError:
        return False
    return True


def _calls_builtin(graph: torch.fx.Graph | None, name: str) -> bool:
    """Whether ``graph`` calls the builtin ``name``: its generated code then reads the
    global ``name`` (``add_global`` keeps a builtin's own name)."""
    if graph is None:
        return False
    target = builtins.__dict__.get(name)
    if target is None or not callable(target):
        return False
    find = getattr(graph, "find_nodes", None)
    if find is not None:
        try:
            return bool(find(op="call_function", target=target))
        except TypeError:  # an unhashable builtin cannot be in the index
            pass
    return any(n.op == "call_function" and n.target is target for n in graph.nodes)


def shadows(name: str, graph: torch.fx.Graph | None = None) -> bool:
    """Whether a node or argument called ``name`` changes what ``graph``'s generated
    code means, or makes it invalid.

    True when ``name`` is not an identifier, is a keyword, or is one of
    ``codegen_names()`` (a global fx's generated code reads, such as ``inf`` or
    ``device``, or its parameter ``self``), or is a builtin that ``graph`` calls
    (``add_global`` gives it its own name in the generated code). Every other
    name, builtins such as ``input`` included, is kept as torch named it.
    """
    return (
        not name.isidentifier()
        or name in codegen_names()
        or (name in builtins.__dict__ and _calls_builtin(graph, name))
    )


def is_legal(name: str, graph: torch.fx.Graph | None = None) -> bool:
    """Whether ``name`` can name a node or argument of ``graph``: it shadows nothing."""
    return not shadows(name, graph)


_candidates_cache: frozenset[str] | None = None


def candidates() -> frozenset[str]:
    """Every identifier ``shadows`` can be true for (for one set test before the real one)."""
    global _candidates_cache
    if _candidates_cache is None:
        _candidates_cache = frozenset(codegen_names() | builtins.__dict__.keys())
    return _candidates_cache
