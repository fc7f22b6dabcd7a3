"""ExecuTorch 1.5.1 consumers beyond Qualcomm that edit a raw exported program in place.

Each consumer gets a model whose first input is named after a node the
consumer creates (found by reading its source and confirmed with
``torch_export_names.audit``). Without the hook the consumer produces a graph
that fails to lint with ``Node redefined name`` (or, if a torch/ExecuTorch
update removed the collision, the test skips and says so); with only
``torch_export_names.installed()`` around export and consumer, it runs, every
graph lints and, where the consumer keeps numerics, the program computes what
eager does. Each case checks that the colliding name is really a node of the
export and that the consumer really did its work.

Two neighbouring ExecuTorch bugs that are not naming ones are reproduced as
strict xfails at the end, then what the README says of the Samsung backend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import pkgutil
import re
import typing
from typing import Callable

import pytest
import torch
import torch.nn.functional as F

from consumer_models import Named, WithParam, _rand, linear_relu_scale
from helpers import import_or_skip, is_pinned, lint_all, not_reproduced

import_or_skip("executorch.exir", "needs ExecuTorch")

import torch_export_names  # noqa: E402
from torch_export_names.hook import suspended  # noqa: E402
from torch_export_names.passes import _graph_modules  # noqa: E402

REDEFINED = "Node redefined name"
aten = torch.ops.aten


def _root(e: BaseException) -> BaseException:
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def _nodes(obj):
    return [n for _, _, g in _graph_modules(obj) for n in g.nodes]


def _aten(target):
    """The ATen op behind an edge op (``EdgeOpOverload._op``); other targets as they are."""
    return target if isinstance(target, torch._ops.OpOverload) else getattr(target, "_op", target)


def _targets(obj):
    return {_aten(n.target) for n in _nodes(obj) if n.op == "call_function"}


def _flat(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _import(module: str, what: str):
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - ImportError, or a backend's RuntimeError for a missing SDK
        pytest.skip(f"{what}: cannot import {module} ({type(e).__name__}: {e})")


@contextlib.contextmanager
def _lend_typing_override():
    """ExecuTorch 1.5.1's Cadence compiler does ``from typing import override`` (Python >= 3.12).

    On an older Python, lend it ``typing_extensions.override`` (the same no-op
    decorator) for the import only; the Cadence code that runs is unchanged.
    """
    if hasattr(typing, "override"):
        yield
        return
    typing_extensions = pytest.importorskip("typing_extensions")
    typing.override = typing_extensions.override
    try:
        yield
    finally:
        del typing.override


def _cadence():
    with _lend_typing_override():
        return _import("executorch.backends.cadence.aot.compiler", "Cadence compiler")


@dataclasses.dataclass(frozen=True)
class Consumer:
    """A consumer and a model whose input ``colliding`` is named after a node it creates."""

    id: str
    colliding: str
    make: Callable[[], tuple[torch.nn.Module, tuple]]
    # Exports (what the test checks holds ``colliding``) and runs the consumer:
    # (model, args) -> (exported program it edited or None, what it produced).
    pipeline: Callable
    # What the consumer did: True once it ran (checked on what it produced).
    did_work: Callable[[object], bool]
    # (model, args, produced) -> (actual, expected) flat outputs; None: numerics not kept.
    numerics: Callable | None = None
    # The export the collision lives in, when the pipeline exports internally.
    export: Callable | None = None
    # Skips the test when this ExecuTorch lacks the consumer (older releases): () -> None.
    needs: Callable[[], None] | None = None


def _has(module, *names: str) -> None:
    """Skip unless ``module`` (a module, or its dotted name) has every one of ``names``."""
    import importlib.metadata

    if isinstance(module, str):
        module = _import(module, "consumer")
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        pytest.skip(
            f"ExecuTorch {importlib.metadata.version('executorch')} has no "
            f"{module.__name__}.{', '.join(missing)}: the consumer is not in this release"
        )


def _export(model, args):
    return torch.export.export(model, args)


# --- exir passes on aten-level programs ---------------------------------------


def _write_back(model, args):
    from executorch.exir.passes.insert_write_back_for_buffers_pass import insert_write_back_for_buffers_pass

    ep = torch.export.export(model, args).run_decompositions()
    insert_write_back_for_buffers_pass(ep)
    return ep, ep


def _eager_module(model, args, ep):
    return _flat(ep.module()(*args)), _flat(model(*args))


def _write_back_numerics(model, args, ep):
    fresh, module = WithParam(model.fn, ("x",)), ep.module()
    got, want = _flat(module(*args)), _flat(fresh(*args))
    return (*got, module.cache), (*want, fresh.cache)


def _constant_prop(model, args):
    from executorch.exir.passes.constant_prop_pass import constant_prop_pass

    ep = constant_prop_pass(torch.export.export(model, args))
    return ep, ep


def _has_prop_constant(ep):
    return any(n.op == "placeholder" and n.target.startswith("_prop_tensor_constant") for n in ep.graph.nodes)


# --- devtools, backends/transforms ---------------------------------------------


def _tap(model, args):
    from executorch.devtools.intermediate_output_tap import tap_intermediate_outputs_

    ep = torch.export.export(model, args)
    tap_intermediate_outputs_(ep)
    return ep, ep


def _tap_numerics(model, args, ep):
    out = _flat(ep.module()(*args))
    n_taps = sum(1 for n in ep.graph.nodes if n.target is torch.ops.executorch_devtools.tap.Tensor)
    assert len(out) == 1 + n_taps, (len(out), n_taps)
    return out[:1], _flat(model(*args))


def _sdpa(model, args):
    from executorch.backends.transforms.decompose_sdpa import DecomposeScaledDotProductAttention

    ep = torch.export.export(model, args)
    DecomposeScaledDotProductAttention()(ep.graph_module)
    return ep, ep


# --- Cadence ---------------------------------------------------------------------


def _cadence_edge(model, args):
    return None, _cadence().export_to_edge(model, args).exported_program()


def _cadence_quantize(model, args):
    return None, _cadence().quantize_pt2(model, args)


def _cadence_trace(model, args):
    return _cadence().trace(model, args)


def _cadence_numerics(entry):
    def numerics(model, args, ep):
        # The same flow on the same weights with an input name that collides with nothing.
        _, ref = entry(linear_relu_scale("x"), args)
        return _flat(ep.module()(*args)), _flat(ref.module()(*args))

    return numerics


def _full_then_mul(ep):
    # ReplaceMulTensorWithMulAndFullOpsPass: mul(x, 2.0) -> mul(x, full([1], 2.0))
    targets = _targets(ep)
    return aten.full.default in targets and not any(
        _aten(n.target) is aten.mul.Tensor and not isinstance(n.args[1], torch.fx.Node)
        for n in _nodes(ep)
        if n.op == "call_function"
    )


# --- Arm, NXP ----------------------------------------------------------------------


def _arm_annotation(model, args):
    _import("tosa_serializer", "Arm backend needs tosa-tools (pip install tosa-tools==2026.5.0)")
    pm = _import("executorch.backends.arm._passes.arm_pass_manager", "Arm pass manager")
    spec = _import("executorch.backends.arm.tosa.compile_spec", "Arm compile spec")
    ep = torch.export.export(model, args)
    gm = pm.ArmPassManager(spec.TosaCompileSpec("TOSA-1.0+FP")).transform_for_annotation_pipeline(
        ep.graph_module
    )
    return ep, gm


def _nxp(pass_module: str, pass_class: str):
    """An NXP aten pass run through the PassManager that NeutronAtenPassManager subclasses: that
    manager imports the eIQ Neutron SDK (not on PyPI) at import time, its passes do not."""

    def pipeline(model, args):
        mod = _import(f"executorch.backends.nxp.aten_passes.{pass_module}", "NXP aten pass")
        from executorch.exir.pass_manager import PassManager  # what NeutronAtenPassManager subclasses

        ep = torch.export.export(model, args)
        PassManager([getattr(mod, pass_class)()])(ep.graph_module)
        return ep, ep

    return pipeline


def _run_graph_module(model, args, ep):
    return _flat(ep.graph_module(*args)), _flat(model(*args))


# fmt: off
CONSUMERS = (
    Consumer("exir-write-back-after-run_decompositions", "copy__default",
             lambda: (WithParam(lambda m, x: (m.cache.add_(x), x * 2)[1], ("copy__default",)), _rand((3,))),
             _write_back, lambda ep: aten.copy_.default in _targets(ep), _write_back_numerics,
             needs=lambda: _has("executorch.exir.passes.insert_write_back_for_buffers_pass",
                                "insert_write_back_for_buffers_pass")),
    Consumer("exir-constant_prop_pass", "aten_clone_default",
             lambda: (WithParam(lambda m, x: (x + 1, m.w * 2), ("aten_clone_default",)), _rand((3,))),
             _constant_prop, _has_prop_constant, _eager_module,
             needs=lambda: _has("executorch.exir.passes.constant_prop_pass", "constant_prop_pass")),
    Consumer("devtools-intermediate-output-tap", "tap_tensor",
             lambda: (Named(lambda a: a.sin() * 2, ("tap_tensor",)), _rand((2, 4))),
             _tap, lambda ep: torch.ops.executorch_devtools.tap.Tensor in _targets(ep), _tap_numerics,
             needs=lambda: _has("executorch.devtools.intermediate_output_tap", "tap_intermediate_outputs_")),
    Consumer("transforms-DecomposeScaledDotProductAttention", "bmm",
             lambda: (Named(F.scaled_dot_product_attention, ("bmm", "k", "v")), _rand(*[(1, 2, 3, 4)] * 3)),
             _sdpa, lambda ep: aten.scaled_dot_product_attention.default not in _targets(ep)
             and aten.bmm.default in _targets(ep), _eager_module,
             needs=lambda: _has("executorch.backends.transforms.decompose_sdpa",
                                "DecomposeScaledDotProductAttention")),
    Consumer("cadence-export_to_edge", "full_default", lambda: (linear_relu_scale("full_default"),
             _rand((2, 4))), _cadence_edge, _full_then_mul, _cadence_numerics(_cadence_edge),
             export=_cadence_trace, needs=lambda: _has(_cadence(), "trace", "export_to_edge")),
    Consumer("cadence-quantize_pt2", "full_default", lambda: (linear_relu_scale("full_default"),
             _rand((2, 4))), _cadence_quantize,
             lambda ep: _full_then_mul(ep) and any("quantized_linear" in str(t) for t in _targets(ep)),
             _cadence_numerics(_cadence_quantize), export=_cadence_trace,
             needs=lambda: _has(_cadence(), "trace", "quantize_pt2")),
    # ScalarsToAttributePass edits the raw graph in place (rsub.Scalar -> sub.Tensor on a
    # get_attr constant) before the first retracing pass rebuilds the graph it returns.
    Consumer("arm-transform_for_annotation_pipeline", "sub_tensor",
             lambda: (Named(lambda a: 1.0 - a, ("sub_tensor",)), _rand((2, 4))), _arm_annotation,
             lambda gm: aten.rsub.Scalar not in _targets(gm) and aten.sub.Tensor in _targets(gm),
             lambda model, args, gm: (_flat(gm(*args)), _flat(model(*args)))),
    Consumer("nxp-ConvertDivToMulPass", "mul_tensor",
             lambda: (Named(lambda a: a / 2.0, ("mul_tensor",)), _rand((2, 4))),
             _nxp("convert_div_to_mul", "ConvertDivToMulPass"),
             lambda ep: aten.div.Tensor not in _targets(ep) and aten.mul.Tensor in _targets(ep),
             _run_graph_module),
    Consumer("nxp-DecomposeSplitToSlicesPass", "slice_tensor",
             lambda: (Named(lambda a: torch.split(a, 2, dim=1)[0] + 1, ("slice_tensor",)), _rand((2, 4))),
             _nxp("decompose_split_to_slices_pass", "DecomposeSplitToSlicesPass"),
             lambda ep: aten.split.Tensor not in _targets(ep) and aten.slice.Tensor in _targets(ep),
             _run_graph_module),
)
# fmt: on


def _check_export_names(case: Consumer, model, args):
    """The colliding name is a node of the export the consumer works on."""
    ep = (case.export or _export)(model, args)
    names = {n.name for n in ep.graph.nodes}
    assert case.colliding in names, f"export named no node {case.colliding}: {sorted(names)}"


@pytest.mark.usefixtures("without_hook")
@pytest.mark.parametrize("case", CONSUMERS, ids=lambda c: c.id)
def test_consumer_collides_without_hook(case):
    if case.needs:
        case.needs()
    model, args = case.make()
    _check_export_names(case, model, args)
    try:
        ep, out = case.pipeline(model, args)
        for obj in (ep, out):
            if obj is not None:
                lint_all(obj)
    except Exception as e:  # noqa: BLE001 - the error is what is checked
        root = _root(e)
        assert re.search(REDEFINED, f"{type(root).__name__}: {root}"), repr(root)
        return
    what = f"{case.id}: no collision (the consumer may now rebuild the graph before adding nodes)"
    if is_pinned("executorch"):  # older releases' consumers differ (docs/reports/compatibility.md)
        not_reproduced(f"with ExecuTorch {importlib.metadata.version('executorch')}: {what}")
    pytest.skip(f"torch {torch.__version__}: {what}; nothing for the hook to repair")


@pytest.mark.parametrize("case", CONSUMERS, ids=lambda c: c.id)
def test_consumer_runs_with_hook(case):
    if case.needs:
        case.needs()
    model, args = case.make()
    with torch_export_names.installed():
        _check_export_names(case, model, args)
        ep, out = case.pipeline(model, args)
    for obj in (ep, out):
        if obj is not None:
            lint_all(obj)
    if not case.did_work(out):
        try:  # did this release's consumer do it without the hook?
            with suspended():
                _, plain = case.pipeline(*case.make())
        except Exception:  # noqa: BLE001 - it collided: it does the work, so the assert below stands
            plain = out
        if plain is not out and not case.did_work(plain) and not is_pinned("executorch"):
            pytest.skip(
                f"{case.id}: this ExecuTorch's consumer does not do the work the case checks, "
                "hook or no hook (an older release)"
            )
    assert case.did_work(out), f"{case.id} did not do its work"
    names = {n.name for n in _nodes(out)}
    assert case.colliding in names, f"{case.colliding} was renamed: {sorted(names)}"
    if case.numerics is not None:
        got, want = case.numerics(model, args, out)
        torch.testing.assert_close(got, want, equal_nan=True)


# --- neighbouring ExecuTorch bugs (not naming ones) ---------------------------------


@pytest.mark.xfail(
    strict=True,
    raises=SyntaxError,
    reason=(
        "ExecuTorch 1.5.1 constant_prop_pass names the new placeholder's *target* "
        "_prop_tensor_constant<N> by counting ep.constants, not checking other placeholders; an input "
        "called _prop_tensor_constant0 has that target too, and fx's generated forward gets a "
        "duplicate argument. The hook makes the node *name* unique; the target is ExecuTorch's."
    ),
)
def test_constant_prop_placeholder_target_shared_with_an_input():
    _has("executorch.exir.passes.constant_prop_pass", "constant_prop_pass")
    from executorch.exir.passes.constant_prop_pass import constant_prop_pass

    model = WithParam(lambda m, x: (x + 1, m.w * 2), ("_prop_tensor_constant0",))
    args = _rand((3,))
    with torch_export_names.installed():
        ep = constant_prop_pass(torch.export.export(model, args))
    lint_all(ep)
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    assert len({n.name for n in placeholders}) == len(placeholders)  # the names are unique
    torch.testing.assert_close(ep.module()(*args), model(*args))  # the shared target is not


@pytest.mark.xfail(
    strict=True,
    reason=(
        "ExecuTorch 1.5.1 Qualcomm ConcatObserver finds the observers of cat's inputs with "
        "getattr(module, observer_node.name), not .target; an input called activation_post_process_1 "
        "shifts the observer nodes' names by one, so it widens the range of the wrong observers "
        "(with or without the hook: prepare_pt2e runs on ep.module(), whose names are recorded)"
    ),
)
def test_qualcomm_concat_observer_finds_observers_by_node_name():
    _import("executorch.backends.qualcomm.quantizer.quantizer", "Qualcomm quantizer")
    _import("executorch.backends.qualcomm.quantizer.observers.concat_observer", "Qualcomm ConcatObserver")
    _import("torchao.quantization.pt2e.quantize_pt2e", "torchao's pt2e quantization (ExecuTorch 1.x)")
    from executorch.backends.qualcomm.quantizer.observers.concat_observer import ConcatObserver
    from executorch.backends.qualcomm.quantizer.quantizer import QnnQuantizer
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    args = (torch.randn(1, 4), torch.randn(1, 4) * 10)
    model = Named(lambda a, b: torch.cat([a.relu(), b.relu()], dim=1), ("activation_post_process_1", "b"))
    with torch_export_names.installed():
        gm = prepare_pt2e(torch.export.export(model, args).module(), QnnQuantizer())
    gm(*args)  # calibration: ConcatObserver.forward collects the input observers
    concat = [m for m in gm.modules() if isinstance(m, ConcatObserver)]
    assert len(concat) == 1
    obs = concat[0]
    called = [  # the observer module each input of cat really calls
        getattr(gm, next(u for u in node.users if u is not obs.concat_node).target)
        for node in obs.input_nodes
    ]
    assert len(obs.input_observers) == len(called) == 2
    assert all(a is b for a, b in zip(obs.input_observers, called))


# --- ExecuTorch's Samsung backend (1.5.1): the Samsung report runs as the qnn-roll case ------------

samsung_backend_of_executorch_1_5_1 = pytest.mark.skipif(
    not is_pinned("executorch"), reason="what the README says of ExecuTorch 1.5.1's Samsung backend"
)


@samsung_backend_of_executorch_1_5_1
def test_samsung_backend_has_no_roll_decomposition():
    passes = _import("executorch.backends.samsung._passes", "Samsung backend")
    classes = {
        name
        for module in pkgutil.iter_modules(passes.__path__)
        for name, obj in vars(importlib.import_module(f"{passes.__name__}.{module.name}")).items()
        if inspect.isclass(obj)
    }
    assert classes, "found no pass of the Samsung backend: the check is out of date"
    assert [c for c in classes if "roll" in c.lower()] == []


@samsung_backend_of_executorch_1_5_1
def test_samsung_partitioner_needs_the_samsung_sdk():
    with pytest.raises(ImportError, match="executorch.backends.samsung.python"):
        importlib.import_module("executorch.backends.samsung.partition.enn_partitioner")


def test_each_consumer_family_the_readme_names_has_a_case():
    """README: docs/exposure.md lists the consumers the tests cover (exir, devtools, Cadence, Arm, NXP)."""
    families = {c.id.split("-", 1)[0] for c in CONSUMERS}
    assert {"exir", "devtools", "cadence", "arm", "nxp"} <= families, families
