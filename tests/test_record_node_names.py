"""record_node_names / find_unrecorded_names on top-level and nested graphs."""

import re

import pytest
import torch

from torch_export_names import _fx_namespace, find_unrecorded_names, record_node_names, repair

from helpers import add_named_node, lint_all, not_reproduced, require_unrecorded, submodule
from models import CondMulInput, MulInput

REDEFINED = re.compile(r"Node redefined name")


class NoGradMulInput(torch.nn.Module):
    def forward(self, mul):
        with torch.no_grad():
            y = mul * 2
        return y + 1


def export(model, *shapes):
    return torch.export.export(model, tuple(torch.randn(*s) for s in shapes))


def graph_at(ep, path):
    return submodule(ep, path).graph if path else ep.graph


def expect_collision_without_repair(make_ep, path, name):
    """Skip unless adding a node named ``name`` at ``path`` of a fresh export collides."""
    graph = graph_at(make_ep(), path)
    add_named_node(graph, name)
    try:
        graph.lint()
    except RuntimeError as e:
        assert REDEFINED.search(str(e)), e
    else:
        not_reproduced("records export names or no longer produces this collision")


def test_top_level_collision_is_fixed():
    def make():
        return export(MulInput(), (3,))

    ep = make()
    assert [n.name for n in ep.graph.nodes] == ["mul", "mul_1", "output"]
    expect_collision_without_repair(make, "", "mul")
    assert record_node_names(ep) > 0
    node = add_named_node(ep.graph, "mul")
    assert node.name == "mul_2"
    lint_all(ep)


def test_cond_branch_collision_is_fixed():
    def make():
        return export(CondMulInput(), (3,), (3,))

    ep = make()
    branch = submodule(ep, "true_graph_0").graph
    # the branch takes the cond's operands, named as they are (their order differs between releases)
    cond = next(n for n in ep.graph.nodes if n.op == "call_function" and n.target._name == "cond")
    operands = [a.name for a in cond.args[3]]
    assert sorted(operands) == ["mul", "x"]
    assert [n.name for n in branch.nodes if n.op == "placeholder"] == operands
    require_unrecorded(ep, "true_graph_0.mul_2")
    expect_collision_without_repair(make, "true_graph_0", "mul")
    record_node_names(ep)
    add_named_node(branch, "mul")
    lint_all(ep)


def test_set_grad_region_collision_is_fixed():
    def make():
        return export(NoGradMulInput(), (3,))

    ep = make()
    (path,) = [p for p, m in ep.graph_module.named_children() if isinstance(m, torch.fx.GraphModule)]
    region = submodule(ep, path).graph
    require_unrecorded(ep, f"{path}.mul_1")
    expect_collision_without_repair(make, path, "mul")
    record_node_names(ep)
    add_named_node(region, "mul")
    lint_all(ep)


def test_unrecorded_names_are_qualified_with_the_submodule_path():
    ep = export(CondMulInput(), (3,), (3,))
    unrecorded = require_unrecorded(ep, "x", "mul")
    assert {n.split(".")[0] for n in unrecorded if "." in n} == {"true_graph_0", "false_graph_0"}
    repair(ep)
    assert find_unrecorded_names(ep) == []


def test_is_idempotent():
    ep = export(CondMulInput(), (3,), (3,))
    unrecorded = require_unrecorded(ep)
    assert record_node_names(ep) == len(unrecorded)
    assert record_node_names(ep) == 0
    assert repair(ep) == (0, 0, 0)


@pytest.mark.parametrize("kind", ["exported_program", "graph_module", "graph"])
def test_accepts_program_module_or_graph(kind):
    ep = export(CondMulInput(), (3,), (3,))
    obj = {"exported_program": ep, "graph_module": ep.graph_module, "graph": ep.graph}[kind]
    unrecorded = require_unrecorded(ep)
    assert any("." in n for n in unrecorded)  # nested graphs are covered too
    assert record_node_names(obj) == len(unrecorded)
    assert find_unrecorded_names(ep) == []


def test_detached_graph_without_module():
    ep = export(MulInput(), (3,))
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(ep.graph, {}))
    for n in graph.nodes:
        n.name = n.name + "_x"  # renamed the way torch.export does: unrecorded
    assert len(find_unrecorded_names(graph)) == 3
    assert record_node_names(graph) == 3
    assert find_unrecorded_names(graph) == []


def test_rejects_other_objects_with_a_clear_error():
    expected = r"ExportedProgram, torch.fx.GraphModule or torch.fx.Graph, got torch.nn.modules.linear.Linear"
    with pytest.raises(TypeError, match=expected):
        record_node_names(torch.nn.Linear(2, 2))


def test_suffix_counter_follows_recorded_names():
    """create_name stays O(1): the next suffix comes from the counter, not a walk."""
    ep = export(MulInput(), (3,))
    op = next(n for n in ep.graph.nodes if n.name == "mul_1")
    op.name = "mul_1000"  # as torch.export would: unrecorded
    record_node_names(ep)
    ns = ep.graph._graph_namespace
    assert ns._base_count["mul"] == 1000
    assert ns._obj_to_name[op] == "mul_1000"
    assert add_named_node(ep.graph, "mul").name == "mul_1001"
    lint_all(ep)


def test_create_name_never_returns_a_used_name_after_repair():
    ep = export(CondMulInput(), (3,), (3,))
    repair(ep)
    for _, m in ep.graph_module.named_modules():
        taken = {n.name for n in m.graph.nodes}
        for candidate in sorted(taken):
            fresh = _fx_namespace.fresh_name(m.graph, candidate)
            assert fresh not in taken
            taken.add(fresh)
