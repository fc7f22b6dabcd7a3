"""Reproduction cases of the name bug, shared by ``doctor`` and the test suite.

Each case exports a small model whose input names collide with names a later
step creates, checks that the collision is really set up, runs the step, and
checks that the step really ran (the op it decomposes is gone), that every
graph lints, and, where the step preserves numerics, that the result matches
eager.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
from typing import Callable, Sequence

import torch
import torch.nn.functional as F

from .. import _suspension, _torch_compat, hook
from .._codegen_rule import can_be_parameter
from ..passes import _graph_modules, repair

__all__ = [
    "CASES",
    "Case",
    "Outcome",
    "all_nodes",
    "executorch_missing",
    "root_cause",
    "run_case",
]


@functools.lru_cache(maxsize=None)
def executorch_missing() -> str | None:
    """Why the ExecuTorch cases cannot run here, or None: they need ExecuTorch's Qualcomm
    export pipeline (``QnnPassManager.transform_for_export_pipeline``, ExecuTorch 1.x)."""
    if importlib.util.find_spec("executorch") is None:
        return "executorch is not installed"
    try:
        from executorch.backends.qualcomm._passes.qnn_pass_manager import QnnPassManager
    except Exception as e:  # noqa: BLE001 - ImportError, or a backend's own error (1.0 fetches the QNN SDK)
        return f"this ExecuTorch's Qualcomm pass manager does not import ({type(e).__name__}: {str(e)[:160]})"
    if not hasattr(QnnPassManager, "transform_for_export_pipeline"):
        return "this ExecuTorch's QnnPassManager has no transform_for_export_pipeline"
    return None


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    summary: str
    make: Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]
    step: Callable[[torch.export.ExportedProgram], torch.export.ExportedProgram]
    # Names the exported graph must hold, or the case tests nothing.
    colliding: tuple[str, ...]
    # An op the step must remove (shows the colliding pass ran), or None.
    consumed: Callable[[torch.fx.Node], bool] | None = None
    matches_eager: bool = True
    needs_executorch: bool = False


@dataclasses.dataclass(frozen=True)
class Outcome:
    case: str
    repaired: bool
    ok: bool
    # Where it failed: "export" (this torch cannot export the model), "setup"
    # (the collision is not set up on this torch), "repair" (repair raised),
    # "step" (the step raised), "check" (the step ran but a check failed).
    stage: str | None = None
    error: str | None = None


def root_cause(e: BaseException) -> BaseException:
    """The first exception of ``e``'s ``raise ... from`` chain: pass managers wrap the real
    error ("An error occurred when running ...")."""
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def _describe(e: BaseException) -> str:
    root = root_cause(e)
    text = str(root).strip().splitlines()[0] if str(root).strip() else ""
    return f"{type(root).__name__}: {text}"[:200]


def all_nodes(ep) -> list[torch.fx.Node]:
    """Every node of ``ep``'s graph and of its nested graphs."""
    return [n for _, _, g in _graph_modules(ep) for n in g.nodes]


def run_case(case: Case, *, repaired: bool) -> Outcome:
    """Export ``case``'s model, optionally ``repair`` it, run its step and check."""

    def fail(stage: str, error: str) -> Outcome:
        return Outcome(case.name, repaired, False, stage, error)

    model, args = case.make()
    # The collision is checked on what torch itself exports, hook or no hook.
    try:
        with hook.suspended():
            ep = torch.export.export(model, args)
    except Exception as e:  # noqa: BLE001 - a torch that cannot export the case
        return fail("export", _describe(e))
    names = {n.name for n in all_nodes(ep)}
    # A torch that keeps names legal (patched) never produces an illegal one:
    # that is the fix, not a broken set-up; the case then runs to show it passes.
    missing = [c for c in case.colliding if c not in names and can_be_parameter(c)]
    if missing:
        return fail("setup", f"export produced no node named {', '.join(missing)}")
    if case.consumed is not None and not any(map(case.consumed, all_nodes(ep))):
        return fail("setup", "export produced no op for the step to decompose")
    if hook.is_installed():
        ep = torch.export.export(model, args)  # this one as the hook hands it out
    if repaired:
        try:
            repair(ep, strict=True)
        except Exception as e:  # noqa: BLE001 - e.g. private state this torch lacks
            return fail("repair", _describe(e))
    # Without the repair (and no hook to make it), stock torch all the way: no code-generator
    # guard either, although importing the package put it in place. With it, the guard that
    # repair puts in place, even inside doctor's suspended block.
    context: contextlib.AbstractContextManager[None]
    if repaired:
        context = _suspension.resumed()
    else:
        context = contextlib.nullcontext() if hook.is_installed() else hook.suspended()
    with context:
        failed = _step_and_check(case, ep, model, args, fail)
    return failed or Outcome(case.name, repaired, True)


def _step_and_check(case: Case, ep, model, args, fail: Callable[[str, str], Outcome]) -> Outcome | None:
    try:
        out = case.step(ep)
        for _, _, graph in _graph_modules(out):
            graph.lint()
    except Exception as e:  # noqa: BLE001 - the error is the result
        return fail("step", _describe(e))
    if case.consumed is not None and any(map(case.consumed, all_nodes(out))):
        return fail("check", "the step left the op it should decompose")
    if case.matches_eager:
        try:
            torch.testing.assert_close(out.module()(*args), model(*args), equal_nan=True)
        except AssertionError as e:
            return fail("check", f"differs from eager: {_describe(e)}")
        except Exception as e:  # noqa: BLE001 - the error is the result
            return fail("check", f"does not run: {_describe(e)}")
    return None


# --- the cases -------------------------------------------------------------


# The probe models the cases, ``patch verify``'s child and the tests share (tests/models.py).


class MulInput(torch.nn.Module):
    """Input ``mul``: export renames the model's own ``mul`` to ``mul_1`` without recording it."""

    def forward(self, mul):
        return mul * 2


class CollidingInputs(torch.nn.Module):
    """Inputs ``mul`` and ``cat`` make torch.export rename the model's ops to mul_1, cat_1."""

    def forward(self, mul, cat):
        return torch.cat([mul * 2, cat])


class CondMulInput(torch.nn.Module):
    """torch names the branch's ops mul_1, mul_2 after the operand ``mul``, unrecorded."""

    def forward(self, x, mul):
        return torch.cond(x.sum() > 0, lambda a, b: a * b * 2, lambda a, b: a - b, (x, mul))


def _add_mul_node(ep):
    """A pass that builds a node from an op's short name, as node-copying passes do."""
    g = ep.graph
    ph = next(n for n in g.nodes if n.op == "placeholder")
    out = _torch_compat.output_node(g)
    with g.inserting_before(out):
        extra = g.create_node("call_function", torch.ops.aten.mul.Tensor, (ph, ph), name="mul")
    g.lint()
    g.erase_node(extra)
    ep.graph_module.recompile()
    return ep


class InfInput(torch.nn.Module):
    """Input ``inf``: fx's generated code reads ``float("inf")`` as the global ``inf``."""

    def forward(self, inf):
        return inf * float("inf") + inf


class DeviceInput(torch.nn.Module):
    """Input ``device``: fx's generated code builds devices with the global ``device``."""

    def forward(self, device):
        return device + torch.ones(2, device="cpu")


def _unchanged(ep):
    """No pass at all: the exported program as it is (then run against eager)."""
    return ep


class SdpaMulInput(torch.nn.Module):
    def forward(self, mul, k, v):
        return F.scaled_dot_product_attention(mul, k, v)


class CatRollInput(torch.nn.Module):
    """The Samsung report: input ``cat``, torch.cat then torch.roll."""

    def forward(self, x, cat):
        return torch.roll(torch.cat([x, cat]), 1, 0)


class TriuArangeInput(torch.nn.Module):
    def forward(self, x, arange):
        return torch.triu(x) + arange


class AutocastT1Input(torch.nn.Module):
    def forward(self, t_1):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = t_1.t() @ t_1.t().t()
        return y


def qnn_export_pipeline(ep):
    """ExecuTorch's Qualcomm export pipeline, which needs no QNN SDK."""
    from executorch.backends.qualcomm._passes.qnn_pass_manager import QnnPassManager

    return QnnPassManager().transform_for_export_pipeline(ep)


def _is(*targets) -> Callable[[torch.fx.Node], bool]:
    def match(n: torch.fx.Node) -> bool:
        return n.op == "call_function" and any(
            n.target is t or getattr(n.target, "_name", None) == t for t in targets
        )

    return match


def _randn(*shapes: Sequence[int]) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(*s, generator=gen) for s in shapes)


CASES: tuple[Case, ...] = (
    Case(
        name="torch-create-node",
        summary="input `mul`; a pass adds a node named after aten.mul",
        make=lambda: (MulInput(), _randn((3,))),
        step=_add_mul_node,
        colliding=("mul", "mul_1"),
    ),
    Case(
        name="torch-inf-input",
        summary="input `inf` shadows fx's global inf: ep.module() computes x*inf+x wrongly",
        make=lambda: (InfInput(), (torch.tensor([2.0, -3.0]),)),
        step=_unchanged,
        colliding=("inf",),
    ),
    Case(
        name="torch-device-input",
        summary="input `device` shadows fx's global device: ep.module() fails",
        make=lambda: (DeviceInput(), _randn((2,))),
        step=_unchanged,
        colliding=("device",),
    ),
    Case(
        name="qnn-sdpa",
        summary="scaled_dot_product_attention(mul, k, v), QNN export pipeline",
        make=lambda: (SdpaMulInput(), _randn((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8))),
        step=qnn_export_pipeline,
        colliding=("mul",),
        consumed=_is(torch.ops.aten.scaled_dot_product_attention.default),
        needs_executorch=True,
    ),
    Case(
        name="qnn-roll",
        summary="torch.roll(torch.cat([x, cat]), 1, 0), QNN export pipeline",
        make=lambda: (CatRollInput(), _randn((2, 3), (2, 3))),
        step=qnn_export_pipeline,
        colliding=("cat", "cat_1"),
        consumed=_is(torch.ops.aten.roll.default),
        needs_executorch=True,
    ),
    Case(
        name="qnn-triu",
        summary="torch.triu(x) + arange, QNN export pipeline",
        make=lambda: (TriuArangeInput(), _randn((4, 4), (4, 4))),
        step=qnn_export_pipeline,
        colliding=("arange",),
        consumed=_is(torch.ops.aten.triu.default),
        needs_executorch=True,
    ),
    Case(
        name="qnn-autocast",
        summary="autocast region t_1.t() @ t_1.t().t(), QNN export pipeline",
        make=lambda: (AutocastT1Input(), _randn((3, 3))),
        step=qnn_export_pipeline,
        colliding=("t_1",),
        consumed=_is("wrap_with_autocast"),
        # The pass drops the autocast casts (an ExecuTorch issue, see README).
        matches_eager=False,
        needs_executorch=True,
    ),
)
