"""The code-generator guard: parameters keep their names and never shadow what the body uses.

Each reproduction runs twice: with the guard suspended (stock torch.fx: wrong numbers or a
crash; the test skips, saying so, once torch no longer reproduces it) and with the guard (eager's
numbers, the same parameters as stock torch).
"""

import builtins
import inspect
import keyword
import math
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
from expecttest import assert_expected_inline

from torch_export_names import codegen_guard, hook
from torch_export_names._codegen_rule import codegen_names

from helpers import not_reproduced, outcome, same_values, torch_api

X = torch.tensor([2.0, -3.0])


def _model(params: str, body: str) -> torch.nn.Module:
    """A module whose ``forward(self, <params>)`` returns ``body``."""
    namespace = {"T": torch, "math": math, "builtins": builtins}
    exec(f"def forward(self, {params}):\n    return {body}\n", namespace)
    return type("Model", (torch.nn.Module,), {"forward": namespace["forward"]})()


def _stock(run):
    """What ``run()`` gives on stock torch.fx (the guard suspended): a value, or the exception."""
    with hook.suspended():
        return outcome(run)


_same = same_values


def _forward_params(gm: torch.nn.Module) -> list[str]:
    return list(inspect.signature(gm.forward).parameters)


# One program per global of fx's generated code: the argument is named like the global, and the
# body makes fx write that global. Exported where export writes it, symbolically traced where only
# fx's own graphs do (a non-identifier submodule path, slice and Ellipsis indices). The names are
# read from torch.fx (codegen_names): a global a later torch adds fails the first test until it
# has a program here.
EXPORTED = {
    "inf": "inf * math.inf + inf",
    "nan": "T.where(nan > 0, nan, math.nan)",
    "device": "device + T.ones(2, device='cpu')",
    "torch": "torch + T.ones(2, dtype=T.float32)",
    "pytree": "pytree * 2",
    "fx_pytree": "fx_pytree * 2",
}
TRACED = {"getattr": "self.sub[0](getattr)", "slice": "slice[1:] * 2", "Ellipsis": "Ellipsis[..., None] * 2"}


def test_every_global_of_fx_code_has_a_reproduction_here():
    names = codegen_names() - set(keyword.kwlist) - {"self"}
    assert names == set(EXPORTED) | set(TRACED), "torch.fx's code writes other globals now: add programs"


def _program(name: str):
    """(module to call, eager module): ``ep.module()`` of the export, or the symbolic trace."""
    if name in EXPORTED:
        model = _model(name, EXPORTED[name])
        ep = torch.export.export(model, (X.clone(),))
        return ep.module, model
    model = _model(name, TRACED[name])
    model.sub = torch.nn.Sequential(torch.nn.ReLU())
    gm = torch.fx.symbolic_trace(model)
    return lambda: (gm.recompile(), gm)[1], model


@pytest.mark.parametrize("name", sorted([*EXPORTED, *TRACED]))
def test_an_argument_named_like_a_global_of_fx_code_computes_eager_results(name):
    make, model = _program(name)
    expected = model(X)
    stock = _stock(lambda: make()(X))
    stock_params = _stock(lambda: _forward_params(make()))
    if _same(stock, expected):
        not_reproduced(f"keeps an argument called {name!r} from shadowing fx's global")
    module = make()
    assert _same(module(X), expected)
    assert _forward_params(module) == stock_params == [name]


def test_keyword_calls_work_as_on_stock_torch():
    model = _model("x, device", "x + device + T.ones(2, device='cpu')")
    ep = torch.export.export(model, (X,), {"device": X * 2})
    assert _same(ep.module()(X, device=X * 2), model(X, device=X * 2))
    assert _forward_params(ep.module()) == ["x", "device"]


def test_symbolic_trace_of_an_argument_named_inf_computes_eager_results():
    model = _model("inf", "inf * math.inf + inf")
    gm = _stock(lambda: torch.fx.symbolic_trace(model))
    stock = _stock(lambda: gm(X))
    if _same(stock, model(X)):
        not_reproduced("keeps a symbolic_trace argument called 'inf' from shadowing fx's global")
    gm.recompile()
    assert _same(gm(X), model(X))
    assert _forward_params(gm) == ["inf"]


def test_a_builtin_the_graph_calls_is_not_shadowed_by_an_argument_of_its_name():
    auto = torch_api("torch.export", "Dim").AUTO if hasattr(torch.export.Dim, "AUTO") else None
    if auto is None:
        pytest.skip(f"torch {torch.__version__} has no Dim.AUTO")
    model = _model("x, round", "x[: builtins.round(x.shape[0] / 3)] + round.sum()")
    args = (torch.randn(6), torch.randn(3))
    with hook.suspended():
        exported = outcome(lambda: torch.export.export(model, args, dynamic_shapes=({0: auto}, {0: auto})))
    if isinstance(exported, Exception):  # torch 2.5: the verifier refuses builtins.round
        pytest.skip(f"torch {torch.__version__} cannot export it: {type(exported).__name__}")
    ep = torch.export.export(model, args, dynamic_shapes=({0: auto}, {0: auto}))
    if not any(n.target is builtins.round for n in ep.graph.nodes):
        pytest.skip(f"torch {torch.__version__} exports no call of round for this model")
    stock = _stock(lambda: ep.module()(*args))
    if _same(stock, model(*args)):
        not_reproduced("keeps an argument called 'round' from shadowing the builtin the graph calls")
    assert _same(ep.module()(*args), model(*args))


def test_an_argument_is_not_overwritten_by_another_placeholders_local():
    model = _model("input, input_1", "input - input_1")
    args = (torch.ones(2), -torch.ones(2))
    ep = torch.export.export(model, args)
    stock = _stock(lambda: ep.module()(*args))
    if _same(stock, model(*args)):
        not_reproduced("keeps the local of placeholder 'input' apart from the argument 'input_1'")
    assert _same(ep.module()(*args), model(*args))
    assert _forward_params(ep.module()) == ["input", "input_1"]


def test_code_is_byte_identical_to_stocks_where_no_argument_collides():
    # ``input`` is a builtin that fx's code never reads: nothing collides, nothing changes.
    for params, body in [("x, y", "x * y + 1"), ("input", "T.nn.functional.relu(input)"), ("inf", "inf + 1")]:
        ep = torch.export.export(_model(params, body), tuple(X * i for i, _ in enumerate(params.split(","))))
        gm = ep.module()
        guarded = gm.code
        stock = _stock(lambda: (gm.recompile(), gm.code)[1])
        assert guarded == stock, params


def test_the_generated_code_renames_the_global_not_the_argument():
    ep = torch.export.export(_model("x, inf", "T.full_like(x, math.inf) + inf"), (X, X * 2))
    ep.graph_module.recompile()
    assert_expected_inline(
        ep.graph_module.code.strip(),
        """\
def forward(self, x, inf):
    inf_1 = inf
    full_like = torch.ops.aten.full_like.default(x, __import__('math').inf, pin_memory = False);  x = None
    add = torch.ops.aten.add.Tensor(full_like, inf_1);  full_like = inf_1 = None
    return (add,)""",
    )


def test_the_guard_is_reversible_and_visible_in_the_hook_status():
    graph_cls = torch.fx.Graph
    assert codegen_guard.is_installed() and hook.status().codegen_guard
    wrapper = graph_cls.__dict__["_python_code"]
    codegen_guard.uninstall()
    try:
        assert not hook.status().codegen_guard
        assert graph_cls.__dict__["_python_code"] is codegen_guard_original(wrapper)
    finally:
        codegen_guard.install()
    assert codegen_guard.is_installed()


def codegen_guard_original(wrapper):
    from torch_export_names._patching import original_of

    return original_of(wrapper)


def test_a_guard_that_fails_leaves_torchs_code_and_warns_once(monkeypatch):
    from torch_export_names import _keep_parameters

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(_keep_parameters, "_redirected", boom)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = torch.export.export(_model("x, inf", "x * math.inf + inf"), (X, X * 2))
        gm = ep.module()
        gm.recompile()
    assert len([w for w in caught if "code-generator guard" in str(w.message)]) == 1
    assert gm.code == _stock(lambda: (gm.recompile(), gm.code)[1])


def test_importing_the_package_puts_the_guard_on_without_importing_torch():
    code = textwrap.dedent(
        """
        import sys
        import torch_export_names
        assert "torch" not in sys.modules, "importing the package imported torch"
        import math, torch
        from torch_export_names import hook
        assert hook.status().codegen_guard
        class M(torch.nn.Module):
            def forward(self, inf):
                return inf * math.inf + inf
        x = torch.tensor([2.0, -3.0])
        got = torch.export.export(M(), (x,)).module()(x)
        assert torch.equal(got, M()(x)), got
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_torch_whose_code_generator_the_guard_cannot_read_keeps_its_own_code(monkeypatch):
    from torch_export_names import _fx_namespace
    from torch_export_names._warnings import PrivateStateMissing

    def missing():
        raise PrivateStateMissing("torch X: neither torch.fx.graph._illegal_names nor _custom_builtins")

    monkeypatch.setattr(_fx_namespace, "refused_names", missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = torch.export.export(_model("x, inf", "x * math.inf + inf"), (X, X * 2))
        gm = ep.module()
    assert len([w for w in caught if "could not keep the parameters" in str(w.message)]) == 1
    assert gm.code == _stock(lambda: (gm.recompile(), gm.code)[1])


# --- The guard is never worse than torch's own code generator (issue: the guard rewritten to read
# the graph only). Each test below failed with the guard that regenerated code with the
# placeholders' targets swapped on the live graph.


def _traced(params: str, body: str) -> tuple[torch.fx.GraphModule, torch.nn.Module]:
    model = _model(params, body)
    return torch.fx.symbolic_trace(model), model


def test_symbolic_trace_with_nested_concrete_args_works_as_on_stock_torch():
    from torch.fx._symbolic_trace import PH

    class M(torch.nn.Module):
        def forward(self, x, d):
            return x + d["a"]

    gm = torch.fx.symbolic_trace(M(), concrete_args={"d": {"a": PH}})
    assert _same(gm(X, {"a": X * 2}), X * 3)
    assert gm.code == _stock(lambda: (gm.recompile(), gm.code)[1])


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("inf", "inf * math.inf + inf"),
        ("nan", "T.where(nan > 0, nan, math.nan)"),
        ("getattr", "getattr * 2 + 1"),
    ],
)
def test_a_graph_module_whose_argument_shadows_a_global_survives_pickle_save_deepcopy_and_package(
    tmp_path, name, body
):
    import copy
    import io
    import pickle

    from torch.package import PackageExporter, PackageImporter

    gm, model = _traced(name, body)
    expected = model(X)
    buffer = io.BytesIO()
    torch.save(gm, buffer)
    buffer.seek(0)
    with PackageExporter(tmp_path / "m.pt") as exporter:
        exporter.extern("**")
        exporter.save_pickle("m", "m.pkl", gm)
    copies = {
        "pickle": pickle.loads(pickle.dumps(gm)),
        "torch.save": torch.load(buffer, weights_only=False),
        "deepcopy": copy.deepcopy(gm),
        "torch.package": PackageImporter(tmp_path / "m.pt").load_pickle("m", "m.pkl"),
    }
    for how, loaded in copies.items():
        assert _same(loaded(X), expected), how
        assert _forward_params(loaded) == [name], how


def test_to_folder_of_a_module_whose_argument_shadows_a_global_imports_and_computes_eager_results(tmp_path):
    import importlib

    gm, model = _traced("inf", "inf * math.inf + inf")
    gm.to_folder(tmp_path / "folded", "Folded")
    sys.path.insert(0, str(tmp_path))
    try:
        folded = importlib.import_module("folded").Folded()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("folded", None)
        sys.modules.pop("folded.module", None)
    assert _same(folded(X), model(X))


def test_coloured_printing_of_a_colliding_argument_adds_no_warning_and_shows_the_plain_code():
    import re

    if "colored" not in inspect.signature(torch.fx.GraphModule.print_readable).parameters:
        pytest.skip(f"torch {torch.__version__} prints no coloured code")
    gm, _ = _traced("inf", "inf * math.inf + inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coloured = gm.print_readable(colored=True, print_output=False)
        plain = gm.print_readable(print_output=False)
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    assert "__import__('math').inf" in plain


def test_code_generation_writes_nothing_to_the_graph(monkeypatch):
    """Stock code generation never sets a node's target or name, nor the code generator's
    pytree_info; neither may the guard (another thread may be reading the graph)."""
    ep = torch.export.export(_model("x, inf, torch", "x * math.inf + inf + torch"), (X, X, X))
    gm = ep.module()
    writes = []
    node_setattr = torch.fx.Node.__setattr__

    def recording(self, name, value):
        if name in ("target", "name", "args", "kwargs"):
            writes.append((self, name, value))
        node_setattr(self, name, value)

    codegen = gm.graph._codegen

    def recording_codegen(self, name, value):
        if self is codegen:  # the guard may set what it likes on a copy of its own
            writes.append((self, name, value))
        object.__setattr__(self, name, value)

    monkeypatch.setattr(torch.fx.Node, "__setattr__", recording)
    monkeypatch.setattr(type(codegen), "__setattr__", recording_codegen)
    gm.recompile()
    assert writes == []
    assert "__import__('torch').ops" in gm.code  # the guard did rewrite this code
    assert _same(gm(X, X, X), X * math.inf + X + X)


def test_a_fresh_name_is_never_another_parameter():
    graph = torch.fx.Graph()
    a, b = graph.placeholder("inf"), graph.placeholder("inf_1")
    graph.output(graph.call_function(torch.add, (graph.call_function(torch.sub, (a, b)), math.inf)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    assert _forward_params(gm) == ["inf", "inf_1"]
    assert _same(gm(torch.ones(1) * 3, torch.ones(1)), torch.tensor([math.inf]))
    assert _same(gm(-torch.ones(1) * math.inf, torch.ones(1)), torch.tensor([math.nan]))


def test_a_target_whose_nfkc_form_is_a_global_does_not_shadow_it():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    x.target = "\uff49\uff4e\uff46"  # fullwidth "inf": Python compiles it as inf
    graph.output(graph.call_function(torch.mul, (x, -math.inf)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    stock = _stock(lambda: (gm.recompile(), gm(X))[1])
    if _same(stock, X * -math.inf):
        not_reproduced("keeps a parameter whose NFKC form is 'inf' apart from the global inf")
    gm.recompile()
    assert _same(gm(X), X * -math.inf)


def test_the_profilers_locals_do_not_overwrite_a_parameter_of_their_name():
    if "record_func" not in inspect.signature(torch.fx.Graph.python_code).parameters:
        pytest.skip(f"torch {torch.__version__}'s code generator writes no profiler locals")
    graph = torch.fx.Graph()
    rf = graph.placeholder("_rf")
    graph.output(graph.call_function(torch.neg, (rf,)))

    def run():
        code = graph.python_code("self", record_func=True)
        scope = dict(code.globals)
        exec(code.src, scope)
        return scope["forward"](None, X)

    stock = _stock(lambda: outcome(run))
    if _same(stock, -X):
        not_reproduced("keeps a parameter '_rf' apart from the profiler's local")
    assert _same(run(), -X)


def test_install_after_uninstall_puts_the_guard_back_at_once():
    codegen_guard.install()
    codegen_guard.uninstall()
    assert not codegen_guard.is_installed()
    codegen_guard.install()
    assert codegen_guard.is_installed() and hook.status().codegen_guard
    gm, model = _traced("inf", "inf * math.inf + inf")
    assert _same(gm(X), model(X))


def test_reloading_the_guard_module_leaves_one_guard_that_uninstall_takes_off():
    import importlib

    from torch_export_names._patching import MARKER

    try:
        reloaded = importlib.reload(codegen_guard)
        assert reloaded.is_installed()
        reloaded.install()
        current = torch.fx.Graph.__dict__["_python_code"]
        assert getattr(current, MARKER).original is not None
        assert getattr(getattr(current, MARKER).original, MARKER, None) is None  # not stacked
        reloaded.uninstall()
        assert getattr(torch.fx.Graph.__dict__["_python_code"], MARKER, None) is None
    finally:
        importlib.reload(codegen_guard).install()


# --- Clients that export programs (the ONNX exporter among them): stock torch exports these.


def test_an_argument_named_like_a_global_beside_one_named_like_its_old_alias_exports():
    model = _model("inf, inf_param", "inf.masked_fill(inf_param > 0, math.inf)")
    args = (torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0]))
    ep = torch.export.export(model, args)
    assert _same(ep.module()(*args), model(*args))
    assert _forward_params(ep.module()) == ["inf", "inf_param"]


def test_a_forward_whose_self_is_called_otherwise_exports_as_on_stock_torch():
    namespace: dict = {}
    exec("def forward(this, self):\n    return self * 2\n", namespace)
    model = type("Model", (torch.nn.Module,), {"forward": namespace["forward"]})()
    stock = _stock(lambda: torch.export.export(model, (X,)))
    ep = outcome(lambda: torch.export.export(model, (X,)))  # raised SyntaxError (duplicate 'self')
    if isinstance(stock, Exception):  # torch 2.4: export itself refuses it
        assert type(ep) is type(stock)
        return
    assert ep.graph_module.code == stock.graph_module.code
    assert type(outcome(ep.module)) is type(_stock(stock.module))


def test_a_rewrite_that_would_not_compile_leaves_torchs_code_and_warns_once(monkeypatch):
    from torch_export_names import _keep_parameters

    monkeypatch.setattr(_keep_parameters._Spellings, "of", lambda self, name: "1 +")
    model = _model("x, inf", "x * math.inf + inf")  # the literal inf is a bare name: its line is checked
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gm = torch.fx.symbolic_trace(model)
    assert len([w for w in caught if "code-generator guard" in str(w.message)]) == 1
    assert gm.code == _stock(lambda: (gm.recompile(), gm.code)[1])


@pytest.mark.parametrize("names", [("x", "inf"), ("next", "iter"), ("args_iter", "y")])
def test_the_boxed_code_generator_keeps_its_own_names_apart_from_the_parameters(names):
    """aot_eager's boxed calling convention binds the parameters from ``args_list`` with
    ``next(args_iter)``: a parameter called ``next``, ``iter`` or ``args_iter`` broke that prologue,
    one called ``inf`` the body."""
    boxed = getattr(torch.fx.graph, "_BoxedCodeGen", None)
    if boxed is None:
        pytest.skip(f"torch {torch.__version__} has no boxed code generator")
    graph = torch.fx.Graph()
    a, b = (graph.placeholder(n) for n in names)
    graph.output(graph.call_function(torch.add, (graph.call_function(torch.mul, (a, math.inf)), b)))
    graph._codegen = boxed()
    expected = X * math.inf + X
    stock = _stock(lambda: torch.fx.GraphModule(torch.nn.Module(), graph)([X, X]))
    if _same(stock, expected):
        not_reproduced(f"keeps the boxed code generator's names apart from parameters {names}")
    assert _same(torch.fx.GraphModule(torch.nn.Module(), graph)([X, X]), expected)
