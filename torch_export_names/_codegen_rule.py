"""What fx's code generator writes besides node names, and which names can be its parameters.

A placeholder becomes a parameter of the ``forward`` torch.fx generates, named after its target.
Python refuses some names there (keywords, ``__debug__``, names that are not identifiers) and
the generator writes ``self`` itself: ``can_be_parameter`` is false for those, and they are the
only names ``repair`` changes. Every other name, ``inf``, ``device`` and ``input`` included, is
kept as torch named it; that a parameter then shadows a global of the generated code is the code
generator's to prevent (``codegen_guard``). ``codegen_names`` reads the names fx's generated
code uses from torch.fx's code generator itself (its output for a probe graph, parsed with
``symtable``), so both follow whatever torch is installed; the probe uses torch.fx's private
code-generator classes (``_PyTreeCodeGen``, ``_PyTreeInfo``) and nothing of a graph's name space
(that is ``_fx_namespace``).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import keyword
import math
import operator
import symtable
from typing import Any

import torch.fx

from ._suspension import suspended
from ._warnings import PrivateStateMissing

__all__ = ["can_be_parameter", "illegal_identifiers", "codegen_locals", "codegen_names", "codegen_params"]


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


@functools.lru_cache(maxsize=None)
def _probe() -> tuple[frozenset[str], frozenset[str]]:
    """(globals, own parameters) of the ``forward`` fx generates for ``_codegen_probe()``,
    read with ``symtable`` from torch's own code generator (the guard suspended)."""
    try:
        graph = _codegen_probe()
        with suspended():  # the probe reads torch's own code generator
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
    return frozenset(forward.get_globals()), frozenset(set(forward.get_parameters()) - own)


@functools.lru_cache(maxsize=None)
def codegen_names() -> frozenset[str]:
    """The names fx's generated code binds or reads besides the names of its nodes.

    Read from torch.fx itself, once per process: every global the ``forward`` generated for
    ``_codegen_probe()`` reads (``torch``, ``inf``, ``nan``, ``device``, ``fx_pytree``,
    ``pytree``, and the builtins the generator writes out literally: ``getattr``, ``slice``,
    ``Ellipsis``), every parameter that is not a placeholder's (``self``), and the Python
    keywords. A parameter with one of these names can meet a use of the name in the body: the
    code generator guard (``codegen_guard``) looks at such parameters.
    """
    globals_, params = _probe()
    return globals_ | params | frozenset(keyword.kwlist)


@functools.lru_cache(maxsize=None)
def codegen_locals() -> tuple[frozenset[str], tuple[str, ...]]:
    """Locals fx's code generator writes for itself (``_rf``) and the prefixes of those it
    derives from node names (``_rf_<node>``), read from its output for a small probe graph with
    profiler records (where this torch writes them), parsed with ``symtable``."""
    if "record_func" not in inspect.signature(torch.fx.Graph.python_code).parameters:
        return frozenset(), ()
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.relu, (x,)))
    with suspended():  # torch's own code generator
        src = g.python_code("self", record_func=True).src
    fn = symtable.symtable(src, "<probe>", "exec").get_children()[0]
    assert isinstance(fn, symtable.Function)
    own = set(fn.get_locals()) - set(fn.get_parameters()) - {"relu"}
    prefixes = tuple(n[: -len("relu")] for n in own if n.endswith("_relu"))
    return frozenset(n for n in own if not n.endswith("_relu")), prefixes


def codegen_params() -> frozenset[str]:
    """The parameters fx's code generator writes itself (``self``): no placeholder can take them."""
    return _probe()[1]


def _bindable(name: str) -> bool:
    """Whether Python accepts ``name`` as a parameter (not ``__debug__``, not a keyword)."""
    try:
        compile(f"def f({name}): pass", "<name>", "exec")
    except SyntaxError:
        return False
    return True


def can_be_parameter(name: str) -> bool:
    """Whether ``name`` can be a parameter of the ``forward`` fx generates.

    Not if it is not an identifier, is a keyword or ``__debug__`` (Python refuses them), or is a
    parameter the generator writes itself (``self``): stock torch cannot generate code for such
    a placeholder. Every other name can, ``inf``, ``device`` and ``input`` included: what a
    parameter would shadow in the body is the code generator's to keep apart (``codegen_guard``).
    """
    return name.isidentifier() and name not in illegal_identifiers()


@functools.lru_cache(maxsize=None)
def illegal_identifiers() -> frozenset[str]:
    """Every identifier ``can_be_parameter`` is false for (keywords, ``__debug__``, ``self``)."""
    unbindable = {n for n in builtins.__dict__ if n.isidentifier() and not _bindable(n)}
    return frozenset({*keyword.kwlist, *unbindable, *codegen_params()})
