"""torch.fx's private name-space state: if it is missing, warn once and change nothing; the rollback
over it (``_fx_namespace.Rollback``) puts names back."""

import warnings

import pytest
import torch

from torch_export_names import (
    TorchExportNamesWarning,
    _fx_namespace,
    find_unrecorded_names,
    propagate_subgraph_names,
    record_node_names,
    repair,
)
from torch_export_names._fx_namespace import PrivateStateMissing
from torch_export_names.passes import _graph_modules

from models import CondT1Input


def names_and_code(ep):
    return [
        (path, [(n.name, n.target) for n in g.nodes], sorted(g._graph_namespace._used_names), mod.code)
        for path, mod, g in _graph_modules(ep)
    ]


@pytest.fixture
def ep_missing_state(monkeypatch):
    """An export whose nested graph's name space lacks _base_count, as a future torch might."""
    ep = torch.export.export(CondT1Input(), (torch.randn(3, 3),))
    monkeypatch.delattr(ep.graph_module.get_submodule("true_graph_0").graph._graph_namespace, "_base_count")
    return ep


@pytest.mark.parametrize("fn", [record_node_names, propagate_subgraph_names, find_unrecorded_names, repair])
def test_missing_state_warns_once_and_changes_nothing(ep_missing_state, fn):
    before = names_and_code(ep_missing_state)
    with pytest.warns(TorchExportNamesWarning, match=r"did nothing: .*_base_count is missing"):
        fn(ep_missing_state)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(ep_missing_state)  # the second call is silent
    assert names_and_code(ep_missing_state) == before


@pytest.mark.parametrize("fn", [record_node_names, propagate_subgraph_names, find_unrecorded_names, repair])
def test_missing_state_raises_with_strict(ep_missing_state, fn):
    before = names_and_code(ep_missing_state)
    with pytest.raises(PrivateStateMissing, match="_base_count"):
        fn(ep_missing_state, strict=True)
    assert names_and_code(ep_missing_state) == before


def test_missing_namespace_is_reported_by_name():
    graph = torch.fx.Graph()
    graph.output(graph.placeholder("x"))
    del graph._graph_namespace
    with pytest.raises(PrivateStateMissing, match="torch.fx.Graph has no _graph_namespace"):
        record_node_names(graph, strict=True)


def test_illegal_names_are_built_from_their_sources_on_a_torch_without_the_table(monkeypatch):
    """torch before 2.7 has no torch.fx.graph._illegal_names; create_name checks the same sources."""
    import builtins
    import keyword

    import torch.fx.graph

    from torch_export_names import _fx_namespace

    real = getattr(torch.fx.graph, "_illegal_names", None)
    monkeypatch.delattr(torch.fx.graph, "_illegal_names", raising=False)
    _fx_namespace._refused_names_from_sources.cache_clear()
    built = _fx_namespace.refused_names()
    assert {"inf", "nan", "device", "torch", "class", "print"} <= built.keys()
    assert set(built) == set(keyword.kwlist) | set(builtins.__dict__) | set(torch.fx.graph._custom_builtins)
    if real is not None:  # torch's table is taken at import; builtins may gain entries later
        assert set(real) <= set(built)


def test_without_the_state_is_affected_raises_and_doctor_says_it_cannot_tell(monkeypatch):
    """A torch whose name space lacks the state: no false "not affected", no traceback."""
    from torch_export_names import _fx_namespace
    from torch_export_names._detect import is_affected
    from torch_export_names.tools import doctor
    from torch_export_names.tools.cases import CASES

    def missing(graph):
        raise PrivateStateMissing("torch X: graph._graph_namespace._base_count is missing or not a dict")

    monkeypatch.setattr(_fx_namespace, "_namespace", missing)
    monkeypatch.setattr(doctor, "CASES", [c for c in CASES if c.name == "torch-create-node"])
    is_affected.cache_clear()
    try:
        with pytest.raises(PrivateStateMissing, match="_base_count"):
            is_affected()
        report = doctor.collect()
    finally:
        is_affected.cache_clear()
    assert report["affected"] is None and "_base_count" in report["affected_error"]
    (case,) = report["cases"]
    assert case["with_repair"]["stage"] == "repair" and "_base_count" in case["with_repair"]["error"]
    assert not report["ok"]
    text = doctor.format_report(report)
    assert "this torch leaves node names unrecorded or illegal: cannot tell (torch X:" in text
    assert text.splitlines()[-1].startswith("next: this torch lacks the torch.fx state")


def _graph_of_three():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.relu, (x,)))
    return graph


def _names(graph):
    return [(n.name, n.target) for n in graph.nodes], _fx_namespace.namespace_state(graph)


def test_a_rollback_of_every_name_puts_a_graph_back_again_and_again():
    graph = _graph_of_three()
    before = _names(graph)
    rollback = _fx_namespace.Rollback([graph], every_name=True)
    for name in ("a", "b"):
        node = next(iter(graph.nodes))
        node.name = node.target = name  # as a pass would, unrecorded
        _fx_namespace.record(graph, node)
        assert rollback.undo() == [graph]
        assert _names(graph) == before
    assert rollback.undo() == []  # nothing changed since: no recompile needed


def test_a_rollback_inside_another_hands_its_renames_out():
    graph = _graph_of_three()
    before = _names(graph)
    with _fx_namespace.Rollback([graph]) as outer:
        with _fx_namespace.Rollback([graph]):
            _fx_namespace.rename(graph, next(iter(graph.nodes)), "renamed")
    assert [n.name for n in graph.nodes][0] == "renamed"
    assert outer.undo() == [graph] and _names(graph) == before
