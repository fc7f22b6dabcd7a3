"""The rule, proved over every name torch.fx's name space refuses.

``repair`` renames a name only where keeping it changes what fx's generated code
means or makes that code invalid (``_codegen_rule.shadows``). For every name in
``torch.fx.graph._illegal_names`` (keywords, builtins, ``_custom_builtins``) and
every name the rule itself lists:

- a name the package leaves alone is kept, and programs that exercise every
  construct whose generated code reads a global (inf/nan constants, device and
  dtype arguments, ``getattr`` paths, pytree input and output specs, a cond
  subgraph whose placeholder takes the name, slice and Ellipsis indices)
  compute eager's results;
- a name the package renames makes stock torch compute something else or
  crash on one of those programs, and with ``repair`` they compute eager's
  results.
"""

import builtins
import inspect
import keyword
import math
import operator

import pytest
import torch

from torch_export_names import (
    TorchExportNamesWarning,
    _codegen_rule,
    _fx_namespace,
    find_illegal_names,
    repair,
)
from torch_export_names._torch_compat import forward_arg_names

from helpers import lint_all, torch_release


def _illegal_names() -> list[str]:
    names = set(_fx_namespace.illegal_names()) | _codegen_rule.codegen_names()
    return sorted(names)


def _as_parameter(name: str) -> bool:
    """Whether ``name`` can be a parameter of a Python ``forward`` (else: a ``**kwargs`` key)."""
    return not keyword.iskeyword(name) and _codegen_rule._bindable(name) and name != "self"


class _Rich(torch.nn.Module):
    """Every construct of an exported program whose generated code reads a global.

    Called as ``forward(x, <name>, d)``; ``<name>`` is a tensor of shape (3,).
    ``ep.module()`` reads its Sequential's weights as ``getattr(self.layers, "0")``.
    """

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(3, 3))

    def body(self, x, t, d):
        a = self.layers(t) + d["k"]
        b = torch.where(a > 0, a, math.nan) * math.inf  # nan and inf constants
        c = torch.ones(3, device="cpu", dtype=torch.float32) + t  # device and dtype arguments
        e = torch.cond(t.sum() > 0, lambda p, q: p * math.inf - q, lambda p, q: p - q, (t, x))
        return {"b": b, "c": c, "e": e}


def _rich_model(name: str):
    """``_Rich`` with its argument called ``name`` (a ``**kwargs`` key where Python needs one)."""
    if _as_parameter(name):
        namespace = {}
        exec(f"def forward(self, x, {name}, d):\n    return self.body(x, {name}, d)\n", namespace)
        model = type("Rich", (_Rich,), {"forward": namespace["forward"]})()
        return model, lambda x, t, d: ((x, t, d), {})
    model = type("RichKw", (_Rich,), {"forward": lambda self, x, d, **kw: self.body(x, kw[name], d)})()
    return model, lambda x, t, d: ((x, d), {name: t})


def _inputs():
    torch.manual_seed(0)
    return torch.randn(3), torch.tensor([0.5, -2.0, 1.5]), {"k": torch.randn(3)}


def _indexing_graph(name: str) -> torch.fx.GraphModule:
    """An fx program whose code indexes its argument ``name`` with a slice and Ellipsis."""
    graph = torch.fx.Graph()
    arg = graph.placeholder(name)
    item = graph.call_function(operator.getitem, (arg, (slice(1, None), Ellipsis)))
    out = graph.call_function(torch.ops.aten.mul.Tensor, (item, 2.0))
    graph.output(out)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _runs_like_eager(fn, expected) -> bool:
    try:
        got = fn()
    except Exception:  # noqa: BLE001 - a crash is one of the ways a name breaks the program
        return False
    try:
        torch.testing.assert_close(got, expected, equal_nan=True)
    except AssertionError:
        return False
    return True


KEPT = [n for n in _illegal_names() if not _codegen_rule.shadows(n)]
RENAMED = [n for n in _illegal_names() if _codegen_rule.shadows(n)]


def test_the_rule_keeps_most_builtins_and_renames_what_the_code_reads():
    assert "input" in KEPT and "type" in KEPT and "len" in KEPT and "NoneType" in KEPT
    assert {"inf", "nan", "device", "torch", "pytree", "fx_pytree", "getattr", "self"} <= set(RENAMED)


@pytest.mark.skipif(torch_release() != (2, 13), reason="the README lists torch 2.13's names")
def test_on_torch_2_13_the_generated_code_writes_the_globals_the_readme_lists():
    written = _codegen_rule.codegen_names() - set(keyword.kwlist) - {"__debug__"}
    readme = {"torch", "inf", "nan", "device", "pytree", "fx_pytree", "getattr", "slice", "Ellipsis", "self"}
    assert written == readme


def test_keywords_debug_and_names_that_are_not_identifiers_are_renamed():
    for name in [*keyword.kwlist, "__debug__", "my-input", "2x"]:
        assert _codegen_rule.shadows(name), name


class SliceInput(torch.nn.Module):
    def forward(self, slice):
        return slice * 2


def test_a_generated_code_global_is_renamed_even_where_the_program_never_reads_it():
    x = torch.randn(3)
    ep = torch.export.export(SliceInput(), (x,))
    torch.testing.assert_close(ep.module()(x), x * 2)  # stock torch runs it: nothing reads slice
    with pytest.warns(TorchExportNamesWarning, match="argument 'slice' is renamed 'slice_1'"):
        repair(ep)
    assert list(inspect.signature(ep.module().forward).parameters) == ["slice_1"]
    torch.testing.assert_close(ep.module()(x), x * 2)


def _names(ep) -> list[list[str]]:
    """Every node name of every graph of ``ep``, and ``ep.module()``'s argument names."""
    graphs = [m.graph for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)]
    entry = ep.module_call_graph[0]
    return [[n.name for n in g.nodes] for g in graphs] + [list(forward_arg_names(ep, entry) or [])]


def _renamed_call(ep, name, args, kwargs):
    """``args, kwargs`` with the keyword ``name`` under the name ``ep.module()`` now takes it by."""
    if name not in kwargs:
        return args, kwargs
    new = forward_arg_names(ep, ep.module_call_graph[0])[-1]
    return args, {new if k == name else k: v for k, v in kwargs.items()}


# The proof over every name: one export per builtin, about 75 s in all on a quiet machine (254 s
# under load), so both are slow; the two rule tests below them are not.
@pytest.mark.slow
@pytest.mark.parametrize("name", KEPT)
def test_a_kept_name_stays_and_every_construct_computes_eager_results(name):
    model, call = _rich_model(name)
    args, kwargs = call(*_inputs())
    expected = model(*args, **kwargs)
    ep = torch.export.export(model, args, kwargs)
    stock = _names(ep)
    report = repair(ep)  # what the hook does
    assert (report.renamed, report.legalized) == (0, 0) and _names(ep) == stock
    assert name in _names(ep)[-1]
    assert name in inspect.signature(ep.module().forward).parameters
    torch.testing.assert_close(ep.module()(*args, **kwargs), expected, equal_nan=True)
    lint_all(ep)

    gm = _indexing_graph(name)
    t = torch.randn(3, 2)
    repair(gm)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == [name]
    torch.testing.assert_close(gm(t), t[1:, ...] * 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", RENAMED)
def test_a_renamed_name_breaks_stock_torch_and_runs_after_repair(name):
    model, call = _rich_model(name)
    args, kwargs = call(*_inputs())
    t = torch.randn(3, 2)
    broken = []
    try:
        expected = model(*args, **kwargs)
        ep = torch.export.export(model, args, kwargs)
    except (TypeError, SyntaxError) as e:  # forward(x, d, self=...); torch traces `def f(self, class)`
        broken.append(f"exported program: {type(e).__name__}")
    else:
        if not _runs_like_eager(lambda: ep.module()(*args, **kwargs), expected):
            broken.append("exported program")
        repair(ep)
        assert find_illegal_names(ep) == []
        args, kwargs = _renamed_call(ep, name, args, kwargs)
        torch.testing.assert_close(ep.module()(*args, **kwargs), expected, equal_nan=True)
        lint_all(ep)
    try:
        gm = _indexing_graph(name)
    except SyntaxError:  # the recompile of `def forward(self, class)` fails already
        broken.append("fx program: SyntaxError")
    else:
        if not _runs_like_eager(lambda: gm(t), t[1:, ...] * 2.0):
            broken.append("fx program")
    assert broken, f"stock torch runs every program with an argument called {name!r}: the rule is too wide"
    gm = _indexing_graph("arg")
    placeholder = next(iter(gm.graph.nodes))
    placeholder.name = placeholder.target = name  # as torch.export assigns names: not recorded
    repair(gm)
    torch.testing.assert_close(gm(t), t[1:, ...] * 2.0)


def test_a_builtin_the_graph_calls_is_renamed_only_in_that_graph():
    graph = torch.fx.Graph()
    arg = graph.placeholder("len")
    graph.output(graph.call_function(builtins.len, (arg,)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    t = torch.randn(4, 2)
    with pytest.raises(TypeError):
        gm(t)  # stock: the generated code calls the argument
    assert _codegen_rule.shadows("len", gm.graph) and not _codegen_rule.shadows("len")
    repair(gm)
    assert gm(t) == 4
