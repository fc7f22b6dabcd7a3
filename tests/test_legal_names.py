"""Names that shadow the globals of fx's generated code: each reproduction without and with repair.

torch.fx's name space never hands out ``inf``, ``nan``, ``device``, ``torch``,
``pytree``, ``fx_pytree``, keywords or builtins, because the generated
``forward`` refers to those as globals. torch.export assigns input names
directly, so a model whose argument is called ``inf`` exports a program whose
``ep.module()`` reads that argument where the graph means ``float("inf")``.
"""

import io
import math
import re
import warnings

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

from torch_export_names import (
    TorchExportNamesWarning,
    find_illegal_names,
    find_unrecorded_names,
    installed,
    legalize_node_names,
    repair,
)
from torch_export_names._torch_compat import forward_arg_names, module_legalizes_arg_names

from helpers import lint_all, not_reproduced


def model_with_inputs(*names: str, body: str) -> torch.nn.Module:
    """A module whose forward takes ``names``; ``body`` is its return expression."""
    namespace = {"T": torch, "INF": math.inf, "NAN": math.nan}
    exec(f"def forward(self, {', '.join(names)}):\n    return {body}\n", namespace)
    return type("Model", (torch.nn.Module,), {"forward": namespace["forward"]})()


X = torch.tensor([2.0, -3.0, 0.5])


def eager_and_exported(model, args, *, repaired: bool, kwargs=None):
    ep = torch.export.export(model, args, kwargs)
    if repaired:
        repair(ep)
    return model(*args, **(kwargs or {})), ep


def _computes_what_eager_does(ep, expected, *args, **kwargs) -> bool:
    return torch.testing.assert_close(ep.module()(*args, **kwargs), expected, equal_nan=True) is None


# --- silently wrong results: inf and nan --------------------------------------------------------

WRONG_RESULTS = {
    "inf": model_with_inputs("inf", body="inf * INF + inf"),
    "nan": model_with_inputs("nan", body="nan * NAN + nan"),
}


@pytest.mark.parametrize("name", WRONG_RESULTS)
def test_input_named_like_a_float_constant_changes_results_without_repair(name):
    expected, ep = eager_and_exported(WRONG_RESULTS[name], (X,), repaired=False)
    got = ep.module()(X)
    if torch.allclose(got, expected, equal_nan=True):
        not_reproduced(f"gives an input called {name!r} a legal name")
    assert name in [n.name for n in ep.graph.nodes]


@pytest.mark.parametrize("name", WRONG_RESULTS)
def test_input_named_like_a_float_constant_computes_eager_results_with_repair(name):
    expected, ep = eager_and_exported(WRONG_RESULTS[name], (X,), repaired=True)
    assert _computes_what_eager_does(ep, expected, X)
    assert find_illegal_names(ep) == [] and find_unrecorded_names(ep) == []
    assert [s.arg.name for s in ep.graph_signature.input_specs] == [f"{name}_1"]
    lint_all(ep)


# --- crashes: device, torch, pytree, fx_pytree, NoneType ----------------------------------------

CRASHES = ["device", "torch", "pytree", "fx_pytree"]


def _crash_model(name):
    return model_with_inputs(name, body=f"{name} + T.ones(3, device='cpu', dtype=T.float32)")


@pytest.mark.parametrize("name", CRASHES)
def test_input_named_like_a_codegen_global_breaks_module_without_repair(name):
    expected, ep = eager_and_exported(_crash_model(name), (X,), repaired=False)
    try:
        ok = torch.allclose(ep.module()(X), expected)
    except Exception as e:  # noqa: BLE001 - the crash is the reproduction
        assert isinstance(e, (TypeError, AttributeError, NameError)), e
        return
    if ok:
        not_reproduced(f"gives an input called {name!r} a legal name")
    pytest.fail(f"an input called {name!r} gave wrong results instead of a crash")


@pytest.mark.parametrize("name", CRASHES)
def test_input_named_like_a_codegen_global_runs_with_repair(name):
    expected, ep = eager_and_exported(_crash_model(name), (X,), repaired=True)
    assert _computes_what_eager_does(ep, expected, X)
    assert find_illegal_names(ep) == []


def test_a_name_is_illegal_only_where_it_shadows_what_the_generated_code_reads():
    from torch_export_names import _fx_namespace

    assert not _fx_namespace.is_legal("inf") and not _fx_namespace.is_legal("class")
    assert not _fx_namespace.is_legal("getattr") and not _fx_namespace.is_legal("my-input")
    assert _fx_namespace.is_legal("inf_1") and _fx_namespace.is_legal("input")
    assert _fx_namespace.is_legal("print")  # a builtin the generated code never reads


def test_find_illegal_names_reports_shadowing_nodes_and_forward_arguments():
    _, ep = eager_and_exported(WRONG_RESULTS["inf"], (X,), repaired=False)
    # A torch whose ep.module() legalizes its own argument names (the upstream fix) has none to report.
    forward = [] if module_legalizes_arg_names() else ["<forward>.inf"]
    assert find_illegal_names(ep) == ["inf", *forward]
    repair(ep)
    assert find_illegal_names(ep) == []


class InfAndMulInputs(torch.nn.Module):
    """``inf`` shadows; ``mul`` makes torch rename the model's own mul and leave names unrecorded."""

    def forward(self, x, inf, mul):
        return x * mul * 2 + inf * math.inf


def test_legalize_node_names_renames_only_what_shadows_and_the_signature_follows():
    if not hasattr(torch.export.Dim, "AUTO"):
        pytest.skip(f"torch {torch.__version__} has no Dim.AUTO (the guards that name the inputs)")
    args = (X, X * 2, X - 1)
    auto = {0: torch.export.Dim.AUTO}  # guards relating the inputs' sizes, which name them
    expected = InfAndMulInputs()(*args)
    ep = torch.export.export(InfAndMulInputs(), args, dynamic_shapes=(auto, auto, auto))
    unrecorded = find_unrecorded_names(ep)
    with pytest.warns(TorchExportNamesWarning, match=re.escape("argument 'inf' is renamed 'inf_1'")):
        assert legalize_node_names(ep) == 1
    assert find_illegal_names(ep) == []
    assert list(ep.graph_signature.user_inputs) == ["x", "inf_1", "mul"]
    assert forward_arg_names(ep, ep.module_call_graph[0]) == ["x", "inf_1", "mul"]
    if hasattr(ep, "_guards_code"):  # where this torch keeps the guards ep.module() checks
        assert any("L['inf_1']" in g for g in ep._guards_code), ep._guards_code
        assert not any("L['inf']" in g for g in ep._guards_code), ep._guards_code
    assert find_unrecorded_names(ep) == [n for n in unrecorded if n != "inf"]  # recording is repair's
    assert _computes_what_eager_does(ep, expected, *args)


def test_each_renamed_argument_warns_once():
    model = model_with_inputs("inf", "x", "nan", body="inf * INF + x * nan")
    ep = torch.export.export(model, (X, X, X))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        repair(ep)
        repair(ep)
        ep.module()(X, X, X)
    ours = [str(w.message) for w in caught if issubclass(w.category, TorchExportNamesWarning)]
    assert len(ours) == 2, ours
    assert "argument 'inf' is renamed 'inf_1'" in ours[0] and "argument 'nan' is renamed 'nan_1'" in ours[1]


# --- inside HOP subgraphs -----------------------------------------------------------------------


class CondInfOperand(torch.nn.Module):
    """torch names the branch placeholders after the operand: ``inf``."""

    def forward(self, x, inf):
        return torch.cond(x.sum() > 0, lambda a, b: a * math.inf + b, lambda a, b: a - b * math.inf, (x, inf))


def test_cond_branch_placeholder_named_inf_without_and_with_repair():
    args = (X, X * 2)
    expected, ep = eager_and_exported(CondInfOperand(), args, repaired=False)
    branch_names = [n.name for n in ep.graph_module.true_graph_0.graph.nodes if n.op == "placeholder"]
    if "inf" not in branch_names:
        not_reproduced(f"names cond branch placeholders {branch_names}")
    assert not torch.allclose(ep.module()(*args), expected, equal_nan=True)
    repair(ep)
    assert find_illegal_names(ep) == []
    assert _computes_what_eager_does(ep, expected, *args)


class WhileInfOperand(torch.nn.Module):
    """torch leaves the body's placeholders as arg0_1...; propagation must not call one ``inf``."""

    def forward(self, it, inf):
        return while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * math.inf - 1), (it, inf))


def test_while_loop_body_never_gets_an_illegal_name_from_propagation():
    args = (torch.tensor(0), X)
    expected, ep = eager_and_exported(WhileInfOperand(), args, repaired=True)
    body = ep.graph_module.while_loop_body_graph_0
    assert [n.name for n in body.graph.nodes if n.op == "placeholder"] == ["it", "inf_1"]
    assert find_illegal_names(ep) == []
    assert _computes_what_eager_does(ep, expected, *args)


# --- everything derived from the signature follows the rename -----------------------------------


class MutatesInf(torch.nn.Module):
    def forward(self, inf, device):
        inf.add_(1)
        return inf * math.inf + device


def test_input_mutation_and_order_survive_the_rename():
    args = (X.clone(), X * 2)
    # run_decompositions functionalizes: the write becomes a USER_INPUT_MUTATION output naming `inf`.
    ep = torch.export.export(MutatesInf(), (args[0].clone(), args[1])).run_decompositions()
    assert list(ep.graph_signature.user_inputs_to_mutate.values()) == ["inf"]
    repair(ep)
    sig = ep.graph_signature
    assert list(sig.user_inputs) == ["inf_1", "device_1"]
    assert list(sig.user_inputs_to_mutate.values()) == ["inf_1"]
    eager_in, exported_in = args[0].clone(), args[0].clone()
    expected = MutatesInf()(eager_in, args[1])
    torch.testing.assert_close(ep.module()(exported_in, args[1]), expected)
    torch.testing.assert_close(exported_in, eager_in)  # the input was written in place, as in eager


def test_unflatten_load_and_run_decompositions_of_a_repaired_program_compute_eager_results():
    model = WRONG_RESULTS["inf"]
    expected, ep = eager_and_exported(model, (X,), repaired=True)
    torch.testing.assert_close(torch.export.unflatten(ep)(X), expected, equal_nan=True)
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    with installed():
        loaded = torch.export.load(buf)
        decomposed = ep.run_decompositions()
    for program in (loaded, decomposed):
        assert find_illegal_names(program) == []
        assert _computes_what_eager_does(program, expected, X)


class KeywordInf(torch.nn.Module):
    def forward(self, x, *, inf):
        return x * math.inf + inf


def test_keyword_argument_is_renamed_with_one_warning_and_accepted_by_its_new_name():
    kwargs = {"inf": X * 2}
    ep = torch.export.export(KeywordInf(), (X,), kwargs)
    with pytest.warns(TorchExportNamesWarning, match=re.escape("argument 'inf' is renamed 'inf_1'")):
        repair(ep)
    expected = KeywordInf()(X, **kwargs)
    m = ep.module()
    torch.testing.assert_close(m(X, inf_1=kwargs["inf"]), expected, equal_nan=True)
    # torch's own error for a keyword the program does not take (worded differently before 2.6)
    with pytest.raises(ValueError, match="kwarg keyword mismatch|exported input tree spec"):
        m(X, inf=kwargs["inf"])


def test_positional_argument_is_still_taken_by_position_after_the_rename():
    model = model_with_inputs("x", "nan", body="x * INF + nan")
    expected, ep = eager_and_exported(model, (X, X), repaired=True)
    assert forward_arg_names(ep, ep.module_call_graph[0]) == ["x", "nan_1"]
    assert _computes_what_eager_does(ep, expected, X, X)


class InfSubmodule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(3, 3)

    def forward(self, x, inf):
        return self.inner(x) * math.inf + inf


def test_only_the_top_level_entry_of_the_module_call_graph_holds_forward_arg_names():
    """What _legalize_forward_arg_names relies on to read one entry, not one per submodule call."""
    ep = torch.export.export(InfSubmodule(), (X, X), preserve_module_call_signature=("inner",))
    entries = ep.module_call_graph
    assert entries[0].fqn == "" and forward_arg_names(ep, entries[0]) == ["x", "inf"]
    inner = next(e for e in entries if e.fqn == "inner")
    assert inner.signature is not None  # preserved, and still without argument names
    assert [e.fqn for e in entries[1:] if forward_arg_names(ep, e)] == []


def test_top_level_forward_arg_names_are_found_when_the_entry_is_not_first():
    expected, ep = eager_and_exported(InfSubmodule(), (X, X), repaired=False)
    ep._module_call_graph.reverse()  # torch puts it first; a program edited by hand may not
    assert [e.fqn for e in ep.module_call_graph] == ["inner", ""]
    with pytest.warns(TorchExportNamesWarning, match=re.escape("argument 'inf' is renamed 'inf_1'")):
        repair(ep)
    assert forward_arg_names(ep, ep.module_call_graph[-1]) == ["x", "inf_1"]
    ep._module_call_graph.reverse()
    assert _computes_what_eager_does(ep, expected, X, X)


def test_a_failing_repair_puts_the_signature_back(monkeypatch, caplog):
    import torch_export_names._signature

    def boom(ep):  # after the graph and its signature were renamed
        raise RuntimeError("injected failure")

    monkeypatch.setattr(torch_export_names._signature, "legalize_forward_arg_names", boom)
    with installed():
        ep = torch.export.export(MutatesInf(), (X.clone(), X))
    assert "repair failed" in caplog.text
    assert list(ep.graph_signature.user_inputs) == ["inf", "device"]
    assert [n.name for n in ep.graph.nodes if n.op == "placeholder"] == ["inf", "device"]
    assert list(forward_arg_names(ep, ep.module_call_graph[0])) == ["inf", "device"]
