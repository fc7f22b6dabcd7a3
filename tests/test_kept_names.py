"""Every name the user gave is kept, through every flow, and the program computes eager's numbers.

An input called ``inf``, ``nan`` or ``device`` is a parameter of the code fx generates; stock
torch lets it shadow the global of that name. The package keeps the name (the code generator
renames what its body uses instead, ``codegen_guard``), so calls by keyword, ``dynamic_shapes``
dicts, guards and saved programs work as on stock torch, and ``ep.module()`` computes what eager
does. Only a name Python cannot bind as a parameter is renamed (``find_illegal_names``).
"""

import copy
import inspect
import math
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

from torch_export_names import (
    TorchExportNamesWarning,
    _hops,
    codegen_guard,
    find_illegal_names,
    find_unrecorded_names,
    installed,
    legalize_node_names,
    repair,
)
from torch_export_names.hook import suspended

from helpers import lint_all, not_reproduced, outcome, same_values

X = torch.tensor([2.0, -3.0, 0.5])
Dim = torch.export.Dim
AUTO = getattr(Dim, "AUTO", None)
needs_auto = pytest.mark.skipif(AUTO is None, reason=f"torch {torch.__version__} has no Dim.AUTO")


_same, _outcome = same_values, outcome


def _input_names(ep) -> list[str]:
    return [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]


class InfInput(torch.nn.Module):
    def forward(self, inf):
        return inf * math.inf + inf


class NanInput(torch.nn.Module):
    def forward(self, nan):
        return torch.where(nan > 0, nan, math.nan)


@pytest.mark.parametrize("model", [InfInput(), NanInput()], ids=["inf", "nan"])
def test_an_input_named_like_a_float_constant_computes_eager_results_and_keeps_its_name(model):
    name = inspect.signature(model.forward).parameters.__iter__().__next__()
    with suspended():
        stock = torch.export.export(InfInput(), (X,))  # nan: stock torch cannot even export it
        stock_out = _outcome(lambda: torch.export.export(model, (X,)).module()(X))
    if _same(stock_out, model(X)):
        not_reproduced(f"keeps an input called {name!r} from shadowing fx's global")
    with installed():
        ep = torch.export.export(model, (X,))
    assert _input_names(ep) == [name] and _input_names(stock) == ["inf"]
    assert _same(ep.module()(X), model(X))
    assert find_illegal_names(ep) == [] and find_unrecorded_names(ep) == []
    lint_all(ep)


class KeywordDevice(torch.nn.Module):
    def forward(self, x, *, device):
        return x + device + torch.ones(3, device="cpu")


def test_a_keyword_argument_named_device_is_called_by_that_keyword_as_on_stock_torch():
    kwargs = {"device": X * 2}
    with installed():
        ep = torch.export.export(KeywordDevice(), (X,), kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = ep.module()(X, device=kwargs["device"])
    assert _same(got, KeywordDevice()(X, **kwargs))
    assert not [w for w in caught if issubclass(w.category, TorchExportNamesWarning)]


class InfConv(torch.nn.Module):
    """A conv stack whose argument is called ``inf`` and which uses ``float("inf")``."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
        )

    def forward(self, inf):
        return torch.clamp(self.body(inf), max=math.inf) * 2


CONV = torch.randn(2, 3, 8, 8)
NEW_SHAPE = torch.randn(5, 3, 11, 9)


@needs_auto
def test_the_pt2e_recipe_reexports_with_the_same_dynamic_shapes_dict():
    model = InfConv().eval()
    shapes = {"inf": {0: AUTO, 2: AUTO, 3: AUTO}}
    with installed():
        ep = torch.export.export(model, (CONV,), dynamic_shapes=shapes)
        again = torch.export.export(ep.module(), (CONV,), dynamic_shapes=shapes)
    assert _same(again.module()(NEW_SHAPE), model(NEW_SHAPE))
    assert _same(ep.module()(inf=NEW_SHAPE) if False else ep.module()(NEW_SHAPE), model(NEW_SHAPE))


@needs_auto
def test_guards_name_the_argument_the_forward_takes_through_every_flow(tmp_path):
    model = InfConv().eval()
    with installed():
        ep = torch.export.export(model, (CONV,), dynamic_shapes=({0: AUTO, 2: AUTO, 3: AUTO},))
        decomposed = ep.run_decompositions()
        path = tmp_path / "inf.pt2"
        torch.export.save(ep, path)
        loaded = torch.export.load(path)
    for program in (ep, decomposed, loaded):
        assert _input_names(program) == ["inf"]
        assert _same(program.module()(NEW_SHAPE), model(NEW_SHAPE))
    assert _same(torch.export.unflatten(ep)(NEW_SHAPE), model(NEW_SHAPE))


def test_a_program_saved_by_stock_torch_computes_eager_results_in_a_process_with_the_package(tmp_path):
    path = tmp_path / "stock.pt2"
    with suspended():
        torch.export.save(torch.export.export(InfInput(), (X,)), path)
    code = textwrap.dedent(
        f"""
        import torch, torch_export_names
        x = torch.tensor({X.tolist()})
        got = torch.export.load({str(path)!r}).module()(x)
        assert torch.equal(got, x * float("inf") + x), got
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


class CondInfOperand(torch.nn.Module):
    """torch names the branch placeholders after the operand: ``inf``."""

    def forward(self, x, inf):
        return torch.cond(x.sum() > 0, lambda a, b: a * math.inf + b, lambda a, b: a - b * math.inf, (x, inf))


def test_a_cond_branch_placeholder_named_inf_keeps_its_name_and_computes_eager_results():
    args = (X, X * 2)
    with suspended():
        ep = torch.export.export(CondInfOperand(), args)
        stock_out = ep.module()(*args)
    branch = [n.name for n in ep.graph_module.true_graph_0.graph.nodes if n.op == "placeholder"]
    if "inf" not in branch or _same(stock_out, CondInfOperand()(*args)):
        not_reproduced(f"names cond branch placeholders {branch} and computes them right")
    repair(ep)
    assert [n.name for n in ep.graph_module.true_graph_0.graph.nodes if n.op == "placeholder"] == branch
    assert _same(ep.module()(*args), CondInfOperand()(*args))


class WhileInfOperand(torch.nn.Module):
    def forward(self, it, inf):
        return while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * math.inf - 1), (it, inf))


def test_while_loop_body_placeholders_take_their_operands_names_inf_included():
    args = (torch.tensor(0), X)
    ep = torch.export.export(WhileInfOperand(), args)
    repair(ep)
    body = ep.graph_module.while_loop_body_graph_0
    assert [n.name for n in body.graph.nodes if n.op == "placeholder"] == ["it", "inf"]
    assert _same(ep.module()(*args), WhileInfOperand()(*args))


class MutatesInf(torch.nn.Module):
    def forward(self, inf, device):
        inf.add_(1)
        return inf * math.inf + device


def test_an_input_mutation_of_an_input_named_inf_writes_the_callers_tensor():
    # Stock torch's module() deep-copies the graph, whose copy calls the input ``inf_1``, then
    # looks the mutated input up as ``inf``: "Could not find inf". Under the hook copies keep names.
    args = (X.clone(), X * 2)
    with installed():
        ep = torch.export.export(MutatesInf(), (args[0].clone(), args[1])).run_decompositions()
    assert list(ep.graph_signature.user_inputs_to_mutate.values()) == ["inf"]
    eager_in, exported_in = args[0].clone(), args[0].clone()
    expected = MutatesInf()(eager_in, args[1])
    with installed():
        assert _same(ep.module()(exported_in, args[1]), expected)
    assert _same(exported_in, eager_in)


def _stock_does_it_too(what: str):
    """Skip: this torch ``<what>`` on its own (a bug of torch's copies and re-traces, not of
    #202927: torch 2.4's run_decompositions, for one, never copies the graph)."""
    pytest.skip(f"torch {torch.__version__} {what} without the package: nothing to compare")


class MutatesInput(torch.nn.Module):
    """An input named like a builtin (``input``: every ``torch.nn`` module's argument) that the
    model writes to."""

    def forward(self, input, x):
        input.add_(x)
        return input * 2


MUTATED = {"input": MutatesInput, "inf": MutatesInf}


def _mutated_args():
    return (X.clone(), X * 2)


@pytest.mark.parametrize("name", sorted(MUTATED))
def test_a_mutated_input_named_like_a_global_survives_two_decompositions(name):
    # run_decompositions unlifts through ep.module(), whose deep copy of the graph calls the
    # input ``input_1`` while the mutation still writes to ``input``: the second one fails.
    model = MUTATED[name]()
    with suspended():
        stock = outcome(
            lambda: torch.export.export(model, _mutated_args()).run_decompositions().run_decompositions()
        )
    with installed():
        ep = torch.export.export(model, _mutated_args()).run_decompositions().run_decompositions()
        module = ep.module()
    assert _input_names(ep)[0] == name and list(ep.graph_signature.user_inputs_to_mutate.values()) == [name]
    eager_in, exported_in = _mutated_args(), _mutated_args()
    assert _same(module(*exported_in), model(*eager_in))
    assert _same(exported_in[0], eager_in[0])
    if not isinstance(stock, Exception):
        _stock_does_it_too(f"keeps the mutated input {name} through run_decompositions twice")


def test_legalize_graph_keeps_the_names_of_the_nodes_it_copies():
    from torch.fx.passes.tools_common import legalize_graph

    with installed():
        ep = torch.export.export(MutatesInput(), _mutated_args()).run_decompositions()
        names = [n.name for n in ep.graph.nodes]
        gm = legalize_graph(torch.fx.GraphModule(ep.graph_module, copy.deepcopy(ep.graph)))
    assert sorted(n.name for n in gm.graph.nodes) == sorted(names)
    assert find_unrecorded_names(gm) == []
    with suspended():
        copied = legalize_graph(torch.fx.GraphModule(ep.graph_module, ep.graph))
    if "input" in {n.name for n in copied.graph.nodes}:
        _stock_does_it_too("keeps the placeholder name input in legalize_graph")


def test_a_copy_keeps_torchs_name_where_the_name_is_taken():
    graph = torch.fx.Graph()
    graph.placeholder("x")
    source = torch.fx.Graph()
    node = source.placeholder("y")
    node.name = "x"  # a name the destination already has
    with installed():
        copied = graph.node_copy(node)
    assert copied.name == "x_1" and find_unrecorded_names(torch.fx.GraphModule({}, graph)) == []


@pytest.mark.parametrize("name", sorted(MUTATED))
def test_an_export_pass_retrace_keeps_a_placeholder_named_like_a_global(name):
    from torch._export.pass_base import _ExportPassBaseDeprecatedDoNotUse as ExportPass

    model = MUTATED[name]()
    with installed():
        ep = torch.export.export(model, _mutated_args()).run_decompositions()
        retraced = ep._transform_do_not_use(ExportPass())
        module = retraced.module()
    assert _input_names(retraced)[0] == name
    _validate(retraced)
    eager_in, exported_in = _mutated_args(), _mutated_args()
    assert _same(module(*exported_in), model(*eager_in))
    assert _same(exported_in[0], eager_in[0])
    with suspended():
        stock_names = [
            n.name for n in ExportPass()(ep.graph_module).graph_module.graph.nodes if n.op == "placeholder"
        ]
    if name in stock_names:
        _stock_does_it_too(f"keeps the placeholder name {name} through an ExportPass re-trace")


def _executorch_lowered(model, args, *, stock: bool):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    with suspended() if stock else installed():
        ep = torch.export.export(model, args)
        return to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTATED))
def test_executorch_lowers_and_runs_a_mutated_input_named_like_a_global(name):
    """ExecuTorch's edge passes re-trace through its own ExportPass and its partitioner copies the
    graph (legalize_graph): the placeholder keeps its name, so the edge program's signature holds
    and the program runs in ExecuTorch's runtime as the same model with a plain name does."""
    pytest.importorskip(
        "executorch.backends.xnnpack.partition.xnnpack_partitioner", reason="needs ExecuTorch"
    )
    runtime = pytest.importorskip("executorch.runtime", reason="needs ExecuTorch's runtime bindings")

    class Plain(torch.nn.Module):
        def forward(self, a, x):
            return MUTATED[name]().forward(a, x)

    stock = outcome(lambda: _executorch_lowered(MUTATED[name](), _mutated_args(), stock=True))
    lowered = _executorch_lowered(MUTATED[name](), _mutated_args(), stock=False)
    reference = _executorch_lowered(Plain(), _mutated_args(), stock=True)

    def run(program):
        method = runtime.Runtime.get().load_program(program.buffer).load_method("forward")
        args = _mutated_args()
        return method.execute(list(args)), args

    assert _same(run(lowered), run(reference))
    if not isinstance(stock, Exception):
        _stock_does_it_too(f"lowers a program whose mutated input is named {name} to ExecuTorch")


def _validate(ep) -> None:
    """``ep.validate()``; torch before 2.5 has only ``ep._validate()``."""
    (getattr(ep, "validate", None) or ep._validate)()


def _deepcopied(model, args):
    with installed():
        ep = torch.export.export(model, args)
        return ep, copy.deepcopy(ep)


@pytest.mark.parametrize(
    "model",
    [torch.nn.Sequential(torch.nn.Linear(3, 2)), torch.nn.Linear(3, 2), InfInput()],
    ids=["sequential", "linear", "inf"],
)
def test_a_deep_copy_keeps_every_node_name_and_validates_saves_and_runs(model, tmp_path):
    args = (torch.randn(2, 3),)
    with suspended():
        stock = copy.deepcopy(torch.export.export(model, args))
    try:
        _validate(stock)
        stock_broken = False
    except Exception:  # noqa: BLE001 - torch's SpecViolationError
        stock_broken = True
    ep, ep2 = _deepcopied(model, args)
    assert [n.name for n in ep2.graph.nodes] == [n.name for n in ep.graph.nodes]
    _validate(ep2)
    torch.export.save(ep2, tmp_path / "copy.pt2")
    assert find_unrecorded_names(ep2) == []
    assert _same(ep2.module()(*args), model(*args))
    assert _same(ep2.run_decompositions().module()(*args), model(*args))
    if model.__class__ is not InfInput and not stock_broken:
        not_reproduced("keeps node names in copy.deepcopy of an exported program")


def test_a_placeholder_python_cannot_bind_is_renamed_and_the_signature_follows():
    ep = torch.export.export(InfInput(), (X,))
    node = next(n for n in ep.graph.nodes if n.op == "placeholder")
    node.name = node.target = "class"  # what no torch export writes, but a pass could
    for spec in ep.graph_signature.input_specs:
        spec.arg.name = "class"
    assert find_illegal_names(ep) == ["class"]
    assert legalize_node_names(ep) == 1
    assert _input_names(ep) == ["class_1"] and find_illegal_names(ep) == []
    assert _same(ep.module()(X), InfInput()(X))


def test_a_failing_repair_puts_every_name_back(monkeypatch, caplog):
    propagate = _hops.propagate

    def propagate_then_fail(graphs):  # after the subgraph placeholders were renamed
        propagate(graphs)
        raise RuntimeError("injected failure")

    monkeypatch.setattr(_hops, "propagate", propagate_then_fail)
    args = (torch.tensor(0), X)
    with suspended():
        stock = torch.export.export(WhileInfOperand(), args)
    with installed():
        ep = torch.export.export(WhileInfOperand(), args)
    assert "repair failed" in caplog.text
    body, stock_body = ep.graph_module.while_loop_body_graph_0, stock.graph_module.while_loop_body_graph_0
    assert [n.name for n in body.graph.nodes] == [n.name for n in stock_body.graph.nodes]
    assert _input_names(ep) == _input_names(stock)


def test_repair_called_directly_is_all_or_nothing(monkeypatch):
    """``repair`` keeps its own way back (the hook only calls it): a step failing after names were
    recorded and subgraph placeholders renamed raises, with every name, name space and signature
    as before."""
    from torch_export_names import _fx_namespace

    propagate = _hops.propagate

    def propagate_then_fail(graphs):
        propagate(graphs)
        raise RuntimeError("injected failure")

    with suspended():
        ep = torch.export.export(WhileInfOperand(), (torch.tensor(0), X))
    graphs = [m.graph for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)]
    before = [([(n.name, n.target) for n in g.nodes], _fx_namespace.namespace_state(g)) for g in graphs]
    inputs = _input_names(ep)
    monkeypatch.setattr(_hops, "propagate", propagate_then_fail)
    with pytest.raises(RuntimeError, match="injected failure"):
        repair(ep)
    after = [([(n.name, n.target) for n in g.nodes], _fx_namespace.namespace_state(g)) for g in graphs]
    assert after == before and _input_names(ep) == inputs
    assert find_unrecorded_names(ep) != []  # nothing of the repair stayed


class KwargsKey(torch.nn.Module):
    def forward(self, x, **kwargs):
        return x * kwargs["my-input"] + kwargs["out scale"]


# A keyword (``class``) or a leading digit (``2d``) fails in export's own tracing, before any hook.
KWARGS = {"my-input": X * 2, "out scale": X + 1}


def _export_kwargs_key():
    """Export ``KwargsKey``; skip where torch's own export cannot (torch 2.4 traces with dynamo,
    whose generated code has the same parameter ``my-input``)."""
    try:
        return torch.export.export(KwargsKey(), (X,), dict(KWARGS))
    except SyntaxError as e:
        pytest.skip(f"torch {torch.__version__} cannot export a **kwargs key that is not an identifier: {e}")


def _arguments(ep):
    from torch_export_names._signature import _forward_arg_names

    return list(_forward_arg_names(ep)), ep.call_spec.in_spec, ep.example_inputs


def test_a_kwargs_key_no_parameter_can_take_is_called_by_its_legal_name(tmp_path):
    # ep.module() writes ``def forward(self, x, my-input, out scale)``: a SyntaxError on stock torch.
    expected = KwargsKey()(X, **KWARGS)
    with suspended():
        stock = outcome(lambda: _export_kwargs_key().module())
    with installed():
        ep = _export_kwargs_key()
        module = ep.module()
        assert list(inspect.signature(module.forward).parameters) == ["x", "my_input", "out_scale"]
        assert _same(module(X, my_input=KWARGS["my-input"], out_scale=KWARGS["out scale"]), expected)
        args, kwargs = ep.example_inputs
        assert _same(module(*args, **kwargs), expected)
        assert _same(
            ep.run_decompositions().module()(
                X, **{"my_input": KWARGS["my-input"], "out_scale": KWARGS["out scale"]}
            ),
            expected,
        )
        torch.export.save(ep, tmp_path / "kwargs.pt2")
        loaded = torch.export.load(tmp_path / "kwargs.pt2").module()
        assert _same(loaded(X, my_input=KWARGS["my-input"], out_scale=KWARGS["out scale"]), expected)
    if not isinstance(stock, Exception):
        _stock_does_it_too("generates ep.module() for a **kwargs key that is not an identifier")


def test_a_failing_repair_puts_the_argument_names_back(monkeypatch):
    with suspended():
        ep = _export_kwargs_key()
    before = _arguments(ep)
    monkeypatch.setattr(
        codegen_guard, "refresh", lambda module: (_ for _ in ()).throw(RuntimeError("injected"))
    )
    with pytest.raises(RuntimeError, match="injected"):
        repair(ep)
    assert _arguments(ep)[0] == before[0] and _arguments(ep)[1] == before[1]
    assert list(_arguments(ep)[2][1]) == list(before[2][1])


@pytest.mark.parametrize("target", ["class", "self", "__debug__", "my-input"])
def test_repair_legalizes_a_target_a_pass_set_on_a_recorded_placeholder(target):
    """A pass may set only a placeholder's target (its name stays recorded): repair still
    legalizes it, keeping the node's legal name, and the module builds again."""
    model = torch.fx.symbolic_trace(_Add())
    placeholder = [n for n in model.graph.nodes if n.op == "placeholder"][1]
    placeholder.target = target
    with suspended():
        assert isinstance(outcome(model.recompile), SyntaxError)  # stock fx cannot build it
    assert find_illegal_names(model) == ["y"]
    assert repair(model).legalized == 1
    assert find_illegal_names(model) == [] and placeholder.target == "y"
    assert same_values(model(X, X), X + X)


def test_repair_legalizes_a_placeholder_the_graph_named_self():
    graph = torch.fx.Graph()
    x = graph.placeholder("self")
    graph.output(graph.call_function(torch.neg, (x,)))
    assert find_illegal_names(graph) == ["self"]
    assert repair(graph).legalized == 1
    assert find_illegal_names(graph) == [] and x.name == x.target != "self"
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    assert same_values(module(X), -X)


class _Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y
