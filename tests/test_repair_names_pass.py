"""RepairNamesPass: repair as a torch.fx PassBase, in torch's and ExecuTorch's pass managers."""

import pytest
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult
from torch.fx.passes.infra.pass_manager import PassManager

from torch_export_names import RepairNamesPass, find_unrecorded_names, repair

from helpers import add_named_node, import_or_skip, not_reproduced
from models import MulInput

X = torch.randn(3)


@pytest.fixture
def exported(without_hook):
    ep = torch.export.export(MulInput(), (X,))
    if not find_unrecorded_names(ep):
        not_reproduced("records the names export assigns: nothing to repair")
    return ep


def test_is_a_pass_base_that_returns_a_pass_result(exported):
    gm = exported.graph_module
    result = RepairNamesPass()(gm)
    assert isinstance(RepairNamesPass(), PassBase)
    assert isinstance(result, PassResult) and result.graph_module is gm and result.modified
    assert find_unrecorded_names(gm) == []


def test_second_run_reports_unmodified(exported):
    gm = exported.graph_module
    RepairNamesPass()(gm)
    assert RepairNamesPass()(gm).modified is False


def test_in_torch_pass_manager_a_later_pass_can_add_a_node_named_like_an_op(exported):
    def add_mul(gm):
        add_named_node(gm.graph, "mul")
        gm.graph.lint()  # "Node redefined name mul_1!" without the repair
        return PassResult(gm, True)

    with pytest.raises(Exception, match="'add_mul' pass") as failed:
        PassManager([add_mul])(torch.export.export(MulInput(), (X,)).graph_module)
    assert "Node redefined name mul_1!" in str(failed.value.__cause__)
    PassManager([RepairNamesPass(), add_mul])(exported.graph_module)


def test_an_exported_program_is_refused_with_what_to_call_instead(exported):
    with pytest.raises(TypeError, match=r"ExportedProgram call torch_export_names.repair\(ep\)"):
        RepairNamesPass()(exported)


def test_in_executorch_pass_manager_a_later_pass_can_add_a_node_named_like_an_op(exported):
    pass_manager = _executorch_pass_manager()

    def add_mul(gm):  # what ExecuTorch's Qualcomm passes do: a node named after its op
        node = add_named_node(gm.graph, "mul")
        node.meta["val"] = node.args[0].meta["val"] * node.args[1].meta["val"]  # for the verifier
        gm.graph.lint()
        return PassResult(gm, True)

    with pytest.raises(Exception, match="add_mul") as failed:
        pass_manager.ExportedProgramPassManager([add_mul])(torch.export.export(MulInput(), (X,)))
    assert "Node redefined name mul_1!" in str(failed.value.__cause__)
    result = pass_manager.ExportedProgramPassManager([RepairNamesPass(), add_mul])(exported)
    assert result.modified
    assert find_unrecorded_names(result.exported_program) == []


def _executorch_pass_manager():
    """ExecuTorch's pass manager module, or skip: not installed, or too old for
    ``ExportedProgramPassManager`` (ExecuTorch 1.0.1, the release beside torch 2.9.1)."""
    pass_manager = import_or_skip("executorch.exir.pass_manager", "ExecuTorch is not installed")
    if not hasattr(pass_manager, "ExportedProgramPassManager"):
        pytest.skip("this ExecuTorch has no exir.pass_manager.ExportedProgramPassManager")
    return pass_manager


def test_in_executorch_pass_manager_every_input_keeps_its_name(without_hook):
    pass_manager = _executorch_pass_manager()

    class InfInput(torch.nn.Module):
        def forward(self, inf):
            return inf * 2

    ep = torch.export.export(InfInput(), (X,))
    program = pass_manager.ExportedProgramPassManager([RepairNamesPass()])(ep).exported_program
    assert [n.name for n in program.graph.nodes if n.op == "placeholder"] == ["inf"]
    assert list(program.graph_signature.user_inputs) == ["inf"]
    assert torch.equal(program.module()(X), X * 2)


def test_repair_of_the_program_and_the_pass_agree_on_names(exported):
    other = torch.export.export(MulInput(), (X,))
    RepairNamesPass()(exported.graph_module)
    repair(other)
    assert [n.name for n in exported.graph.nodes] == [n.name for n in other.graph.nodes]
