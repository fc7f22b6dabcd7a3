"""ExecuTorch 1.5.1's Qualcomm pass pipelines on models whose input names collide.

Every node-adding pass of the Qualcomm export and annotation pipelines (all
backends: HTP, GPU, LPAI) gets a model whose input is named after a node that
pass creates. Without the hook the pass fails with ``Node redefined name``;
with only ``torch_export_names.installed()`` in front of unchanged code it
runs, every graph lints and, where the pass preserves numerics, the result
matches eager. Each case first checks that the colliding name is really there
and that the op the pass rewrites is really in the graph, and afterwards that
the pass really rewrote it.

The pipelines themselves run too: ``transform_for_annotation_pipeline`` on
``ep.module()`` and ``to_edge_transform_and_lower_to_qnn`` (against
``FakeQnnManager``, or the real SDK when ``QNN_SDK_ROOT`` is set) for the
reproductions of ``torch_export_names.tools.cases``; the export pipeline for them is
covered by tests/test_cases.py and tests/test_hook.py.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
from typing import Callable

import pytest
import torch
import torch.nn.functional as F
from case_expectations import EXPECTED

from consumer_models import Named
from helpers import all_nodes, import_or_skip, lint_all, not_reproduced, root_cause

import_or_skip(
    "executorch.backends.qualcomm._passes",  # ExecuTorch 0.7: its Qualcomm passes do not import
    "needs ExecuTorch with a Qualcomm backend whose passes import",
)
# ExecuTorch 0.5 (beside torch 2.6.0): its _passes, a namespace package, imports; this does not
import_or_skip(
    "executorch.backends.qualcomm._passes.backends.gpu",
    "needs ExecuTorch with a Qualcomm backend that imports",
)

from executorch.backends.qualcomm import _passes as qnn_passes  # noqa: E402
from executorch.backends.qualcomm._passes.backends.gpu import QnnGpuPassManager  # noqa: E402
from executorch.backends.qualcomm._passes.backends.htp import QnnHtpPassManager  # noqa: E402
from executorch.backends.qualcomm._passes.backends.lpai import QnnLpaiPassManager  # noqa: E402
from executorch.backends.qualcomm._passes.qnn_pass_manager import QnnPassManager  # noqa: E402
from executorch.backends.transforms.decompose_sdpa import DecomposeScaledDotProductAttention  # noqa: E402
from executorch.exir.program._program import lift_constant_tensor_pass  # noqa: E402

import torch_export_names  # noqa: E402
from torch_export_names.tools.cases import CASES  # noqa: E402

from executorch_helpers import (  # noqa: E402
    delegated_nodes,
    htp_specs,
    qnn_manager,  # noqa: E402,F401 - fixture
    top_level_nodes,
)

CASE = {c.name: c for c in CASES}
REDEFINED = "Node redefined name"
NO_COLLISION = "no longer produces this collision: the repair has nothing to do here"


def _rand(*shapes, positive=False):
    gen = torch.Generator().manual_seed(0)
    out = tuple(torch.randn(*s, generator=gen) for s in shapes)
    return tuple(t.abs() + 1 for t in out) if positive else out


def _is(*targets) -> Callable[[torch.fx.Node], bool]:
    def match(n: torch.fx.Node) -> bool:
        return n.op == "call_function" and any(
            n.target is t or getattr(n.target, "_name", None) == t for t in targets
        )

    return match


def _with_alpha(n):
    return _is(torch.ops.aten.add.Tensor, torch.ops.aten.sub.Tensor)(n) and n.kwargs.get("alpha", 1) != 1


def _scalar_operand(n):
    return _is(torch.ops.aten.mul.Tensor)(n) and not isinstance(n.args[1], torch.fx.Node)


def _argmax_without_dim(n):
    return _is(torch.ops.aten.argmax.default)(n) and (len(n.args) < 2 or n.args[1] is None)


def _float_arange_end_only(n):
    return _is(torch.ops.aten.arange.default)(n) and len(n.args) == 1


@dataclasses.dataclass(frozen=True)
class PassCase:
    """A model whose input names collide with the nodes ``pass_name`` adds."""

    pass_name: str
    make: Callable[[], tuple[torch.nn.Module, tuple]]
    colliding: tuple[str, ...]
    # The node the pass rewrites: must be in the export; gone afterwards.
    acts_on: Callable[[torch.fx.Node], bool]
    # For passes that build an op from a pattern: the op they build.
    creates: Callable[[torch.fx.Node], bool] | None = None
    expected_error: str = REDEFINED
    matches_eager: bool = True
    # Passes the pipelines run later that the graph needs before it runs eagerly.
    then: tuple[str, ...] = ()


def named(pass_name, fn, names, args, acts_on, **kw) -> PassCase:
    """A ``PassCase`` for ``fn``; its first argument is the one named after a node the pass adds."""
    return PassCase(pass_name, lambda: (Named(fn, names), args), (names[0],), acts_on, **kw)


def from_case(pass_name, case_name) -> PassCase:
    c = CASE[case_name]
    return PassCase(
        pass_name,
        c.make,
        c.colliding,
        c.consumed,
        expected_error=EXPECTED[case_name].error,
        matches_eager=c.matches_eager,
    )


aten = torch.ops.aten
# fmt: off
# Names were found by running each pass with all names recorded and listing
# the names of the nodes it added; any of them collides, the first is used.
PASS_CASES = (
    # export pipeline (all backends), most also in the annotation pipeline
    named("DecomposeAsStrided", lambda a: torch.as_strided(a, (2, 2), (1, 2)), ("index_select",),
          _rand((4, 4)), _is(aten.as_strided.default)),
    named("DecomposeBinaryAlpha", lambda a, y: torch.add(a, y, alpha=2), ("mul_scalar", "y"),
          _rand((3,), (3,)), _with_alpha),
    named("DecomposeCDist", lambda a, y: torch.cdist(a, y), ("sqrt", "y"),
          _rand((1, 3, 4), (1, 2, 4)), _is(aten.cdist.default, aten._cdist_forward.default)),
    named("DecomposePDist", lambda a: F.pdist(a), ("rows",), _rand((3, 4)),
          _is(aten.pdist.default, aten._pdist_forward.default)),
    named("DecomposePad", lambda a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="reflect"), ("arange",),
          _rand((1, 1, 3, 3, 3)), _is(aten.pad.default)),
    from_case("DecomposeScaledDotProductAttention", "qnn-sdpa"),
    from_case("DecomposeRoll", "qnn-roll"),
    named("DecomposeSelectScatter", lambda a, src: torch.select_scatter(a, src, 0, 0),
          ("unsqueeze_default", "src"), _rand((2, 3), (3,)), _is(aten.select_scatter.default)),
    named("DecomposeThreshold", lambda a: F.threshold(a, 0.5, 2.0), ("where",), _rand((3,)),
          _is(aten.threshold.default)),
    from_case("DecomposeTriu", "qnn-triu"),
    named("DecomposeLinalgVectorNorm", lambda a: torch.linalg.vector_norm(a, 2, [1]), ("abs_1",),
          _rand((2, 3)), _is(aten.linalg_vector_norm.default)),
    named("DecomposeExpM1", torch.expm1, ("exp_default",), _rand((3,)), _is(aten.expm1.default)),
    named("DecomposeFill", lambda a: torch.fill(a, 2.0) + a, ("full_default",), _rand((3,)),
          _is(aten.fill.Scalar)),
    named("DecomposeVar", lambda a: torch.var(a, dim=0), ("mean_dim",), _rand((3, 4)),
          _is(aten.var.dim, aten.var.correction)),
    named("DecomposeFloorDivide", torch.floor_divide, ("div", "y"),
          (torch.arange(1, 7), torch.full((6,), 2)), _is(aten.floor_divide.default)),
    from_case("DecomposeWrapWithAutocast", "qnn-autocast"),
    named("ConvertSquareToPow", torch.square, ("pow_tensor_scalar",), _rand((3,)), _is(aten.square.default)),
    named("LiftConstantScalarOperands", lambda a: a * 2.5, ("_tensor_constant_0",), _rand((3,)),
          _scalar_operand),
    named("InsertReshapeForReduceOps", torch.argmax, ("reshape_default",), _rand((2, 3)),
          _argmax_without_dim),
    # HTP and GPU add DecomposeReciprocal, LPAI DecomposeHardsigmoid
    named("DecomposeReciprocal", torch.reciprocal, ("div_tensor",), _rand((3,)),
          _is(aten.reciprocal.default)),
    named("DecomposeHardsigmoid", F.hardsigmoid, ("add",), _rand((3,)), _is(aten.hardsigmoid.default)),
    # annotation pipeline only
    named("RecomposePixelUnshuffle",
          lambda a: a.view(1, 2, 2, 2, 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 2),
          ("pixel_unshuffle_default",), _rand((1, 2, 4, 4)), _is(aten.permute.default),
          creates=_is(aten.pixel_unshuffle.default)),
    named("RecomposeRmsNorm", lambda a, w: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
          ("rms_norm_default", "w"), _rand((2, 4), (4,)), _is(aten.rsqrt.default),
          creates=_is(aten.rms_norm.default)),
    named("ReplaceArangeArgs", lambda a: a + torch.arange(3.0), ("arange_start_step",), _rand((3,)),
          _float_arange_end_only),
    named("DecomposeAcos", torch.acos, ("asin_default",), (torch.linspace(-0.9, 0.9, 5),),
          _is(aten.acos.default)),
    named("DecomposeAddmm", torch.addmm, ("mm_default", "x", "y"), _rand((2, 2), (2, 3), (3, 2)),
          _is(aten.addmm.default)),
    # DecomposeAtan2 leaves eq.Tensor(x, 0.0); LiftConstantScalarOperands, later in the
    # annotation pipeline, makes the 0.0 a tensor.
    named("DecomposeAtan2", torch.atan2, ("atan_default", "y"), _rand((3,), (3,)), _is(aten.atan2.default),
          then=("LiftConstantScalarOperands",)),
    named("DecomposeDiagonal", torch.diagonal, ("view_default",), _rand((3, 3)), _is(aten.diagonal.default)),
    named("DecomposeDivMode", lambda a, y: torch.div(a, y, rounding_mode="floor"), ("floor_default", "y"),
          _rand((3,), (3,), positive=True), _is(aten.div.Tensor_mode)),
    named("DecomposeMaxPool3d", lambda a: F.max_pool3d(a, 2), ("max_pool2d",), _rand((1, 1, 4, 4, 4)),
          _is(aten.max_pool3d.default, aten.max_pool3d_with_indices.default)),
    named("DecomposeSilu", F.silu, ("sigmoid_default",), _rand((3,)), _is(aten.silu.default)),
    named("DecomposeTan", torch.tan, ("sin_default",), _rand((3,)), _is(aten.tan.default)),
    named("DecomposeTrunc", torch.trunc, ("sign_default",), _rand((3,)), _is(aten.trunc.default)),
    named("DecomposeEinsum", lambda a, y: torch.einsum("ij,jk->ik", a, y), ("bmm", "y"),
          _rand((2, 3), (3, 2)), _is(aten.einsum.default)),
    named("DecomposeGlu", F.glu, ("sigmoid",), _rand((2, 4)), _is(aten.glu.default)),
    named("DecomposeHyperbolicVariants", torch.sinh, ("neg_default",), _rand((3,)), _is(aten.sinh.default)),
    named("DecomposeRemainder", torch.remainder, ("floor_default", "y"), _rand((3,), (3,), positive=True),
          _is(aten.remainder.Tensor)),
    named("DecomposeLogVariants", torch.log2, ("log_default",), _rand((3,), positive=True),
          _is(aten.log2.default)),
)
# fmt: on

# Passes of those pipelines that cannot collide, with the reason (checked below).
CANNOT_COLLIDE = {
    "RemoveRedundancy": "removes nodes (in the annotation pipeline: _assert_tensor_metadata) and adds none",
    "RecomposeHadamard": (
        "rewrites only matmuls whose weight is a get_attr, which a raw exported program does not have "
        "(weights are placeholders there), and only with QNN SDK >= 2.47; the annotation pipeline runs it "
        "on ep.module(), whose graph records every name"
    ),
}

PIPELINE_MANAGERS = (QnnPassManager, QnnHtpPassManager, QnnGpuPassManager, QnnLpaiPassManager)


def _pass_class(name):
    if name == "DecomposeScaledDotProductAttention":
        return DecomposeScaledDotProductAttention
    return getattr(qnn_passes, name)


def _run_pass(name: str, ep: torch.export.ExportedProgram) -> None:
    """Run one pass on ``ep``'s graph as the Qualcomm pipelines do, then lift its constants."""
    cls = _pass_class(name)
    available = {"edge_program": ep, "quantization_capture": True}
    params = inspect.signature(cls.__init__).parameters
    cls(**{k: v for k, v in available.items() if k in params})(ep.graph_module)
    lift_constant_tensor_pass(ep)


def _export_checked(case: PassCase):
    model, args = case.make()
    ep = torch.export.export(model, args)
    names = {n.name for n in all_nodes(ep)}
    assert set(case.colliding) <= names, f"export named no node {case.colliding}: {sorted(names)}"
    assert any(map(case.acts_on, all_nodes(ep))), f"export produced nothing for {case.pass_name} to rewrite"
    return model, args, ep


def test_every_node_adding_pass_of_the_pipelines_has_a_case():
    in_pipelines = {
        p.__name__ for m in PIPELINE_MANAGERS for p in (*m.get_export_passes(), *m.get_annotation_passes())
    }
    covered = {c.pass_name for c in PASS_CASES}
    assert covered.isdisjoint(CANNOT_COLLIDE)
    assert in_pipelines == covered | set(CANNOT_COLLIDE)


@pytest.mark.usefixtures("without_hook")
@pytest.mark.parametrize("case", PASS_CASES, ids=lambda c: c.pass_name)
def test_pass_fails_without_hook(case):
    _, _, ep = _export_checked(case)
    try:
        _run_pass(case.pass_name, ep)
        lint_all(ep)
    except Exception as e:  # noqa: BLE001 - the error is what is checked
        root = root_cause(e)
        assert re.search(case.expected_error, f"{type(root).__name__}: {root}"), repr(root)
        return
    not_reproduced(NO_COLLISION)


@pytest.mark.parametrize("case", PASS_CASES, ids=lambda c: c.pass_name)
def test_pass_runs_and_lints_with_hook(case):
    with torch_export_names.installed():
        model, args, ep = _export_checked(case)
        _run_pass(case.pass_name, ep)
    lint_all(ep)
    nodes = all_nodes(ep)
    assert not any(map(case.acts_on, nodes)), f"{case.pass_name} left what it rewrites"
    if case.creates is not None:
        assert any(map(case.creates, nodes)), f"{case.pass_name} did not build its op"
    if case.matches_eager:
        for name in case.then:
            _run_pass(name, ep)
        torch.testing.assert_close(ep.module()(*args), model(*args))


def _pass_case(name: str) -> PassCase:
    return next(c for c in PASS_CASES if c.pass_name == name)


def test_decompose_atan2_alone_leaves_an_eq_that_runs_only_after_lift_constant_scalar_operands():
    case = _pass_case("DecomposeAtan2")
    with torch_export_names.installed():
        model, args, ep = _export_checked(case)
        _run_pass(case.pass_name, ep)
    lint_all(ep)
    assert [n for n in ep.graph.nodes if n.target == aten.eq.Tensor and n.args[1] == 0.0]
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'other'"):
        ep.module()(*args)
    _run_pass("LiftConstantScalarOperands", ep)
    torch.testing.assert_close(ep.module()(*args), model(*args))


def test_decompose_wrap_with_autocast_runs_after_repair_but_drops_the_autocast_casts():
    """An ExecuTorch issue, not a naming one: the region computes in float32, eager in bfloat16."""
    case = _pass_case("DecomposeWrapWithAutocast")
    with torch_export_names.installed():
        model, args, ep = _export_checked(case)
        _run_pass(case.pass_name, ep)
    lint_all(ep)
    assert not any(map(case.acts_on, all_nodes(ep)))
    assert model(*args).dtype == torch.bfloat16
    assert ep.module()(*args).dtype == torch.float32


def _hadamard_candidates(gm):
    p = qnn_passes.RecomposeHadamard()
    return [n for n in gm.graph.nodes if p._is_hadamard_transform(gm, n)]


@pytest.mark.parametrize("name", sorted(CANNOT_COLLIDE))
def test_pass_that_cannot_collide(name):
    """Why the pass needs no case above (CANNOT_COLLIDE), checked: it passes, it does not skip."""
    if name == "RemoveRedundancy":
        ep = torch.export.export(Named(lambda a: a.to(torch.float64) * 2, ("a",)), _rand((3,)))
        before = {n.name for n in ep.graph.nodes}
        _run_pass(name, ep)
        assert {n.name for n in ep.graph.nodes} < before  # removed the assert, added nothing
    else:
        linear = torch.nn.Linear(2, 2, bias=False).requires_grad_(False)
        linear.weight.copy_(torch.tensor([[1.0, 1.0], [1.0, -1.0]]) / 2**0.5)  # a Hadamard matrix
        ep = torch.export.export(linear, _rand((2, 2)))
        assert _hadamard_candidates(ep.graph_module) == []  # weight is a placeholder
        assert len(_hadamard_candidates(ep.module())) == 1  # weight is a get_attr


# --- the pipelines --------------------------------------------------------------

QNN_CASES = [c for c in CASES if c.needs_executorch]


def _annotation_pipeline(model, args):
    return QnnPassManager().transform_for_annotation_pipeline(torch.export.export(model, args).module())


# ep.module() rebuilds the top-level graph, which records every name: only HOP subgraph names, as in
# the autocast case, reach the annotation pipeline unrecorded. The other cases run clean without the hook.
ANNOTATION_COLLIDES = {"qnn-autocast"}
ANNOTATION_CASES = [c for c in QNN_CASES if c.name in ANNOTATION_COLLIDES]


@pytest.mark.usefixtures("without_hook")
@pytest.mark.parametrize("case", ANNOTATION_CASES, ids=lambda c: c.name)
def test_annotation_pipeline_fails_without_hook(case):
    model, args = case.make()
    try:
        lint_all(_annotation_pipeline(model, args))
    except Exception as e:  # noqa: BLE001
        root = root_cause(e)
        assert re.search(EXPECTED[case.name].error, f"{type(root).__name__}: {root}"), repr(root)
        return
    not_reproduced(NO_COLLISION)


@pytest.mark.usefixtures("without_hook")
@pytest.mark.parametrize("case", [c for c in QNN_CASES if c not in ANNOTATION_CASES], ids=lambda c: c.name)
def test_annotation_pipeline_without_hop_names_needs_no_hook(case):
    model, args = case.make()
    gm = _annotation_pipeline(model, args)
    lint_all(gm)
    assert not any(map(case.consumed, all_nodes(gm)))


@pytest.mark.parametrize("case", QNN_CASES, ids=lambda c: c.name)
def test_annotation_pipeline_on_module_runs_with_hook(case):
    model, args = case.make()
    with torch_export_names.installed():
        gm = _annotation_pipeline(model, args)
    lint_all(gm)
    assert not any(map(case.consumed, all_nodes(gm)))
    if case.matches_eager:
        torch.testing.assert_close(gm(*args), model(*args))


def _lower(model, args):
    from executorch.backends.qualcomm.utils.utils import to_edge_transform_and_lower_to_qnn

    return to_edge_transform_and_lower_to_qnn(model, args, htp_specs()).exported_program()


@pytest.mark.usefixtures("qnn_manager", "without_hook")
@pytest.mark.parametrize("case", QNN_CASES, ids=lambda c: c.name)
def test_qnn_lowering_fails_without_hook(case):
    model, args = case.make()
    try:
        _lower(model, args)
    except Exception as e:  # noqa: BLE001
        root = root_cause(e)
        assert re.search(EXPECTED[case.name].error, f"{type(root).__name__}: {root}"), repr(root)
        return
    not_reproduced(NO_COLLISION)


@pytest.mark.usefixtures("qnn_manager")
@pytest.mark.parametrize("case", QNN_CASES, ids=lambda c: c.name)
def test_qnn_lowering_runs_with_hook(case):
    model, args = case.make()
    with torch_export_names.installed():
        edge = _lower(model, args)
    lint_all(edge)
    delegated = delegated_nodes(edge)
    assert delegated, "nothing was delegated"
    assert not any(case.consumed(_as_aten(n)) for n in top_level_nodes(edge) + delegated)


def _as_aten(node: torch.fx.Node):
    """A stand-in for ``node`` whose target is the ATen op behind an edge op, for ``_is``."""
    return types.SimpleNamespace(op=node.op, target=getattr(node.target, "_op", node.target))
