#!/usr/bin/env python
"""Where ExecuTorch flows are exposed to unrecorded export names: the audit, hook off and on.

Runs a few ExecuTorch flows on small models under
``torch_export_names.audit.audited()``, once without the hook and once inside
``torch_export_names.installed()``, and writes a Markdown report (between the markers of
the output file, keeping the prose around them). Each flow
runs on a model with ordinary input names and on one whose input is named
after a node the flow creates. Flows whose backend cannot be imported here
are listed with the reason.

    python scripts/exposure.py [--out docs/reports/exposure.md]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import platform
import statistics
import sys
import time
import typing
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_export_names
from torch_export_names.audit import audited

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from consumer_models import Named, WithParam, _rand, linear_relu_scale  # noqa: E402  (shared with the tests)


@contextlib.contextmanager
def _typing_override():
    """Cadence (ExecuTorch 1.5.1) imports typing.override (Python >= 3.12): lend it for the import."""
    if hasattr(typing, "override"):
        yield
        return
    import typing_extensions

    typing.override = typing_extensions.override
    try:
        yield
    finally:
        del typing.override


def _import(name: str):
    with _typing_override():
        return importlib.import_module(name)


# --- flows: (model, args) -> None ------------------------------------------------------


def qnn_export(model, args):
    from executorch.backends.qualcomm._passes.qnn_pass_manager import QnnPassManager

    QnnPassManager().transform_for_export_pipeline(torch.export.export(model, args))


def xnnpack_lower(model, args):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    to_edge_transform_and_lower(torch.export.export(model, args), partitioner=[XnnpackPartitioner()])


def cadence_export_to_edge(model, args):
    _import("executorch.backends.cadence.aot.compiler").export_to_edge(model, args)


def cadence_quantize(model, args):
    _import("executorch.backends.cadence.aot.compiler").quantize_pt2(model, args)


def exir_write_back(model, args):
    from executorch.exir.passes.insert_write_back_for_buffers_pass import insert_write_back_for_buffers_pass

    insert_write_back_for_buffers_pass(torch.export.export(model, args).run_decompositions())


def exir_constant_prop(model, args):
    from executorch.exir.passes.constant_prop_pass import constant_prop_pass

    constant_prop_pass(torch.export.export(model, args))


def devtools_tap(model, args):
    from executorch.devtools.intermediate_output_tap import tap_intermediate_outputs_

    tap_intermediate_outputs_(torch.export.export(model, args))


def transforms_sdpa(model, args):
    from executorch.backends.transforms.decompose_sdpa import DecomposeScaledDotProductAttention

    DecomposeScaledDotProductAttention()(torch.export.export(model, args).graph_module)


def arm_annotation(model, args):
    pm = _import("executorch.backends.arm._passes.arm_pass_manager")
    spec = _import("executorch.backends.arm.tosa.compile_spec")
    pm.ArmPassManager(spec.TosaCompileSpec("TOSA-1.0+FP")).transform_for_annotation_pipeline(
        torch.export.export(model, args).graph_module
    )


def nxp_div_to_mul(model, args):
    from executorch.exir.pass_manager import PassManager

    mod = _import("executorch.backends.nxp.aten_passes.convert_div_to_mul")
    PassManager([mod.ConvertDivToMulPass()])(torch.export.export(model, args).graph_module)


# (flow label, what it runs, flow function, module that must import, [(inputs label, make)])
def _flows():
    x24 = _rand((2, 4))
    q = _rand(*[(1, 2, 3, 4)] * 3)
    triu = lambda a, b: torch.triu(a) + b  # noqa: E731
    return [
        (
            "Qualcomm export pipeline",
            "QnnPassManager().transform_for_export_pipeline(ep)",
            qnn_export,
            "executorch.backends.qualcomm._passes.qnn_pass_manager",
            [
                ("x, y", lambda: (Named(triu, ("x", "y")), _rand((4, 4), (4, 4)))),
                ("x, arange", lambda: (Named(triu, ("x", "arange")), _rand((4, 4), (4, 4)))),
            ],
        ),
        (
            "XNNPACK",
            "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])",
            xnnpack_lower,
            "executorch.backends.xnnpack.partition.xnnpack_partitioner",
            [("x", lambda: (linear_relu_scale("x"), x24)), ("mul", lambda: (linear_relu_scale("mul"), x24))],
        ),
        (
            "Cadence export",
            "cadence.aot.compiler.export_to_edge(model, args)",
            cadence_export_to_edge,
            "executorch.backends.cadence.aot.compiler",
            [
                ("x", lambda: (linear_relu_scale("x"), x24)),
                ("full_default", lambda: (linear_relu_scale("full_default"), x24)),
            ],
        ),
        (
            "Cadence quantize",
            "cadence.aot.compiler.quantize_pt2(model, args)",
            cadence_quantize,
            "executorch.backends.cadence.aot.compiler",
            [
                ("x", lambda: (linear_relu_scale("x"), x24)),
                ("full_default", lambda: (linear_relu_scale("full_default"), x24)),
            ],
        ),
        (
            "exir write-back",
            "insert_write_back_for_buffers_pass(ep.run_decompositions())",
            exir_write_back,
            "executorch.exir.passes.insert_write_back_for_buffers_pass",
            [
                ("x", lambda: (WithParam(lambda m, a: (m.cache.add_(a), a * 2)[1], ("x",)), _rand((3,)))),
                (
                    "copy__default",
                    lambda: (
                        WithParam(lambda m, a: (m.cache.add_(a), a * 2)[1], ("copy__default",)),
                        _rand((3,)),
                    ),
                ),
            ],
        ),
        (
            "exir constant propagation",
            "constant_prop_pass(ep)",
            exir_constant_prop,
            "executorch.exir.passes.constant_prop_pass",
            [
                ("x", lambda: (WithParam(lambda m, a: (a + 1, m.w * 2), ("x",)), _rand((3,)))),
                (
                    "aten_clone_default",
                    lambda: (WithParam(lambda m, a: (a + 1, m.w * 2), ("aten_clone_default",)), _rand((3,))),
                ),
                (
                    "_prop_tensor_constant0",
                    lambda: (
                        WithParam(lambda m, a: (a + 1, m.w * 2), ("_prop_tensor_constant0",)),
                        _rand((3,)),
                    ),
                ),
            ],
        ),
        (
            "devtools intermediate-output tap",
            "tap_intermediate_outputs_(ep)",
            devtools_tap,
            "executorch.devtools.intermediate_output_tap",
            [
                ("x", lambda: (Named(lambda a: a.sin() * 2, ("x",)), x24)),
                ("tap_tensor", lambda: (Named(lambda a: a.sin() * 2, ("tap_tensor",)), x24)),
            ],
        ),
        (
            "backends/transforms SDPA",
            "DecomposeScaledDotProductAttention()(ep.graph_module)",
            transforms_sdpa,
            "executorch.backends.transforms.decompose_sdpa",
            [
                ("q, k, v", lambda: (Named(F.scaled_dot_product_attention, ("q", "k", "v")), q)),
                ("bmm, k, v", lambda: (Named(F.scaled_dot_product_attention, ("bmm", "k", "v")), q)),
            ],
        ),
        (
            "Arm annotation pipeline",
            "ArmPassManager(TOSA-1.0+FP).transform_for_annotation_pipeline(ep.graph_module)",
            arm_annotation,
            "tosa_serializer",
            [
                ("x", lambda: (Named(lambda a: 1.0 - a, ("x",)), x24)),
                ("sub_tensor", lambda: (Named(lambda a: 1.0 - a, ("sub_tensor",)), x24)),
            ],
        ),
        (
            "NXP ConvertDivToMulPass",
            "PassManager([ConvertDivToMulPass()])(ep.graph_module)",
            nxp_div_to_mul,
            "executorch.backends.nxp.aten_passes.convert_div_to_mul",
            [
                ("x", lambda: (Named(lambda a: a / 2.0, ("x",)), x24)),
                ("mul_tensor", lambda: (Named(lambda a: a / 2.0, ("mul_tensor",)), x24)),
            ],
        ),
    ]


def _root(e: BaseException) -> BaseException:
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def _run_once(flow, make, hook: bool):
    """(outcome, report) for one run of ``flow`` under the audit."""
    model, args = make()
    with contextlib.ExitStack() as stack:
        if hook:
            stack.enter_context(torch_export_names.installed())
        report = stack.enter_context(audited())
        try:
            flow(model, args)
            outcome = "ok"
        except Exception as e:  # noqa: BLE001 - the outcome is what is reported
            root = _root(e)
            first = str(root).splitlines()[0][:90] if str(root) else ""
            outcome = f"{type(root).__name__}: {first}" if first else type(root).__name__
    if outcome == "ok" and report.duplicates:
        outcome = "ok, but the graph holds duplicate names"
    return outcome, report


def _overhead(flow, make, repeats: int = 7) -> tuple[float, float]:
    """Median seconds of ``flow`` without and with the audit (hook off)."""
    plain, audited_times = [], []
    for _ in range(repeats):
        for bucket, cm in ((plain, contextlib.nullcontext), (audited_times, audited)):
            model, args = make()
            start = time.perf_counter()
            with cm():
                try:
                    flow(model, args)
                except Exception:  # noqa: BLE001
                    pass
            bucket.append(time.perf_counter() - start)
    return statistics.median(plain), statistics.median(audited_times)


def _write(path: Path, report: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# The audit over ExecuTorch flows\n\n" + report.rstrip("\n") + "\n")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "reports" / "exposure.md"))
    opts = ap.parse_args(argv)
    if torch_export_names.is_installed():
        print("the hook is installed for this process (TORCH_EXPORT_NAMES?); unset it", file=sys.stderr)
        return 2
    import executorch.version

    start = time.perf_counter()
    rows, sites, unavailable = [], [], []
    overhead = None
    for label, what, flow, needs, models in _flows():
        try:
            _import(needs)
        except Exception as e:  # noqa: BLE001 - a backend that needs an SDK or a package
            why = f"cannot import {needs} ({type(e).__name__}: {str(e).splitlines()[0]})"
            unavailable.append((label, why))
            continue
        for inputs, make in models:
            for hook in (False, True):
                state = "on" if hook else "off"
                print(f"[exposure] {label} / {inputs} / hook {state}", file=sys.stderr, flush=True)
                outcome, report = _run_once(flow, make, hook)
                at_risk = sum(e.kind == "at-risk" for e in report.events)
                shared = sum(e.kind == "shared-target" for e in report.events)
                rows.append(
                    (
                        label,
                        inputs,
                        "on" if hook else "off",
                        outcome,
                        at_risk,
                        len(report.duplicates),
                        shared,
                        len(report.errors),
                    )
                )
                if not hook:
                    for s in report.sites():
                        sites.append((label, inputs, s))
        if label == "Qualcomm export pipeline":
            overhead = _overhead(flow, models[0][1])
    elapsed = time.perf_counter() - start

    out = []
    out.append(
        f"Generated by `python scripts/exposure.py` in {elapsed:.0f} s: torch {torch.__version__}, "
        f"ExecuTorch {executorch.version.__version__}, Python {platform.python_version()}. Each flow runs "
        "on a model with ordinary input names and on one whose input is named after a node the flow "
        "creates, under `torch_export_names.audit.audited()`, without the hook and inside "
        "`torch_export_names.installed()`.\n"
    )
    out.append(
        "*at-risk creations*: nodes created on a graph that held names its name space did not know (or "
        "illegal names) at that moment; *duplicates*: created nodes whose name another node of that graph "
        "already had (the graph no longer lints: `Node redefined name`); *shared targets*: created "
        "placeholders whose target another placeholder has (`SyntaxError: duplicate argument`).\n"
    )
    out.append("| flow | inputs | hook | outcome | at-risk creations | duplicates | shared targets |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for label, inputs, hook, outcome, at_risk, dups, shared, errors in rows:
        note = f" (audit errors: {errors})" if errors else ""
        out.append(
            f"| {label} | `{inputs}` | {hook} | {_md_escape(outcome)}{note} | {at_risk} | {dups} | {shared} |"
        )
    out.append("")
    out.append("What each flow runs:\n")
    for label, what, _, _, _ in _flows():
        out.append(f"- {label}: `{what}`")
    out.append("")
    out.append(
        "The Arm flow needs `tosa_serializer` from `tosa-tools==2026.5.0` (ExecuTorch's `ethos-u` and `vgf` "
        "extras; it requires numpy<2.2). NXP's `NeutronAtenPassManager` imports the eIQ Neutron SDK, "
        "which is not on PyPI, so one of its SDK-free passes runs through the `PassManager` the manager "
        "subclasses.\n"
    )
    if unavailable:
        out.append("Not run here:\n")
        for label, why in unavailable:
            out.append(f"- {label}: {_md_escape(why)}")
        out.append("")
    out.append("### Where (hook off)\n")
    out.append(
        "The first stack frame outside torch and this package for every at-risk creation or shared target.\n"
    )
    out.append("| flow | inputs | kind | site | api | count | created | duplicates |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, inputs, s in sites:
        more = len(s["created"]) - 4
        created = ", ".join(s["created"][:4]) + (f" (+{more})" if more > 0 else "")
        dups = ", ".join(s["duplicates"] or s["shared_targets"])
        out.append(
            f"| {label} | `{inputs}` | {s['kind']} | `{s['site']}` | {s['api']} | {s['creations']} | "
            f"{created} | {dups} |"
        )
    out.append("")
    if overhead is not None:
        plain, with_audit = overhead
        out.append("### Audit overhead\n")
        out.append(
            "Qualcomm export pipeline (export included) on the `x, y` model, hook off, median of 7 "
            f"interleaved runs: "
            f"{plain * 1e3:.0f} ms without the audit, {with_audit * 1e3:.0f} ms with it "
            f"({(with_audit / plain - 1) * 100:+.0f}%; a shared 2-core machine, so a few percent is noise). "
            "Without an open block the audit costs nothing: no function is patched.\n"
        )
    _write(Path(opts.out), "\n".join(out))
    print(f"wrote {opts.out} ({elapsed:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
