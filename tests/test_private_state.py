"""If torch.fx's private name-space state is missing, warn once and change nothing."""

import warnings

import pytest
import torch

from torch_export_names import (
    TorchExportNamesWarning,
    find_unrecorded_names,
    propagate_subgraph_names,
    repair,
    reserve_node_names,
)
from torch_export_names._fx_namespace import PrivateStateMissing
from torch_export_names.passes import _graph_modules


class AutocastT1Input(torch.nn.Module):
    def forward(self, t_1):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return t_1.t() @ t_1.t().t()


def names_and_code(ep):
    return [
        (path, [(n.name, n.target) for n in g.nodes], sorted(g._graph_namespace._used_names), mod.code)
        for path, mod, g in _graph_modules(ep)
    ]


@pytest.fixture
def ep_missing_state(monkeypatch):
    """An export whose nested graph's name space lacks _base_count, as a future torch might."""
    ep = torch.export.export(AutocastT1Input(), (torch.randn(3, 3),))
    monkeypatch.delattr(ep.graph_module.get_submodule("submod_1").graph._graph_namespace, "_base_count")
    return ep


@pytest.mark.parametrize(
    "fn", [reserve_node_names, propagate_subgraph_names, find_unrecorded_names, repair]
)
def test_missing_state_warns_once_and_changes_nothing(ep_missing_state, fn):
    before = names_and_code(ep_missing_state)
    with pytest.warns(TorchExportNamesWarning, match=r"did nothing: .*_base_count is missing"):
        fn(ep_missing_state)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(ep_missing_state)  # the second call is silent
    assert names_and_code(ep_missing_state) == before


@pytest.mark.parametrize(
    "fn", [reserve_node_names, propagate_subgraph_names, find_unrecorded_names, repair]
)
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
        reserve_node_names(graph, strict=True)


def test_illegal_names_are_built_from_their_sources_on_a_torch_without_the_table(monkeypatch):
    """torch before 2.7 has no torch.fx.graph._illegal_names; create_name checks the same sources."""
    import builtins
    import keyword

    import torch.fx.graph

    from torch_export_names import _fx_namespace

    real = getattr(torch.fx.graph, "_illegal_names", None)
    monkeypatch.delattr(torch.fx.graph, "_illegal_names", raising=False)
    monkeypatch.setattr(_fx_namespace, "_illegal_cache", None)
    built = _fx_namespace.illegal_names()
    assert {"inf", "nan", "device", "torch", "class", "print"} <= built.keys()
    assert set(built) == set(keyword.kwlist) | set(builtins.__dict__) | set(torch.fx.graph._custom_builtins)
    if real is not None:  # torch's table is taken at import; builtins may gain entries later
        assert set(real) <= set(built)
