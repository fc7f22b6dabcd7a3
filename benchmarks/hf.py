"""Hugging Face architectures, exported the way transformers' ExecuTorch integration exports them.

    python -m benchmarks.hf                 # real layer counts, reduced widths (models.SMALL)
    python -m benchmarks.hf --full          # real layer counts and real widths
    python -m benchmarks.hf --lowering      # also export -> XNNPACK lowering, hook on and off
    python -m benchmarks.hf --no-instructions   # skip the instruction counts (callgrind)

Each model is built from its configuration with random weights (no download)
and exported with ``transformers.integrations.executorch.
TorchExportableModuleForDecoderOnlyLM`` (static or hybrid sliding-window KV
cache, one token per call, as ``optimum-executorch`` does). Per model: export
time, node counts, ``repair`` time and its ratio to export time and to the
upstream top-level loop (interleaved, median), and with ``--lowering`` the
export + ``to_edge_transform_and_lower`` with the XNNPACK partitioner with the
hook on and off (a model that fails to lower keeps its other figures and the error). Unless
``--no-instructions``, ``benchmarks.instructions`` then counts the instructions of
``repair`` and of the loop per call on each model, exported again under callgrind: the
1.2x target is judged on those counts, as in ``python -m benchmarks``. Results go to
``benchmarks/results[/full]/hf.{json,md}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

import torch

from benchmarks import env, instructions, llama, methods, targets
from benchmarks.common import error_line
from benchmarks.models import ARCHITECTURES
from benchmarks.models import build_hf as build
from benchmarks.models import export_hf as export
from benchmarks.timing import fmt_time, loadavg, run_interleaved, summarize
from torch_export_names import find_unrecorded_names, repair


def lower_xnnpack(model) -> float:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    start = time.perf_counter()
    to_edge_transform_and_lower(export(model), partitioner=[XnnpackPartitioner()]).to_executorch()
    return time.perf_counter() - start


def measure(name: str, *, full: bool, reps: int, lowering_reps: int, layers: int | None = None) -> dict:
    model = build(name, full=full, layers=layers)
    start = time.perf_counter()
    ep = export(model)
    export_s = time.perf_counter() - start
    top, total, graphs = methods.node_counts(ep)
    row = {
        "model": name,
        "full_width": full,
        "export_s": export_s,
        "nodes_top": top,
        "nodes_total": total,
        "graphs": graphs,
        "unrecorded_after_export": len(find_unrecorded_names(ep)),
    }
    reset = methods.Unrepaired(ep)
    seconds, _ = run_interleaved(
        {"top_level_loop": lambda: methods.run_upstream_top_level_loop(ep), "repair": lambda: repair(ep)},
        reps=reps,
        setup=reset.reset,
    )
    for key, samples in seconds.items():
        row[key] = summarize(samples)
    row["repair_over_export"] = row["repair"]["median_s"] / export_s
    row["repair_over_loop"] = row["repair"]["median_s"] / row["top_level_loop"]["median_s"]
    if lowering_reps:
        row.update(_lowering(model, lowering_reps))
    return row


def _lowering(model, pairs: int) -> dict:
    """Export + XNNPACK lowering, hook off and on, ``pairs`` of each in alternating order (off, on,
    on, off, ...), with the time spent in the hook measured directly (``pipelines.hook``)."""
    from benchmarks.pipelines import hook

    samples: dict[bool, list[float]] = {False: [], True: []}
    in_hook, programs = [], []
    for i in range(pairs):
        for on in (False, True) if i % 2 == 0 else (True, False):
            try:
                with hook(on=on) as meter:
                    samples[on].append(lower_xnnpack(model))
            except Exception as e:  # noqa: BLE001 - reported in the table, with the hook state
                return {"lowering_error": f"hook {'on' if on else 'off'}: {error_line(e)}"}
            if on:
                in_hook.append(meter.seconds)
                programs.append(meter.calls)
            print(
                f"  lowering {i + 1}/{pairs}, hook {'on' if on else 'off'}: {samples[on][-1]:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    off, on_ = summarize(samples[False]), summarize(samples[True])
    return {
        "lowering_off": off,
        "lowering_on": on_,
        "lowering_on_over_off": on_["median_s"] / off["median_s"],
        "lowering_hook_time": summarize(in_hook),
        "lowering_hook_programs": statistics.median(programs),
        **{f"lowering_{k}": v for k, v in llama.noise_verdict(off, on_).items()},
    }


def _instructions_cell(r: dict) -> str:
    instr = r.get("instructions")
    if instr is None:
        return "not measured"
    if "error" in instr:
        return f"failed: {instr['error']}"
    return (
        f"{instr['ratios']['repair_to_top_level_loop']:.2f}x "
        f"({instr['repair']['Ir'] / 1e3:,.0f}k / {instr['top_level_loop']['Ir'] / 1e3:,.0f}k)"
    )


def _verdict(met: bool | None) -> str:
    return "not measured" if met is None else "met" if met else "not met"


def to_markdown(rows: list[dict], header: str) -> str:
    lines = [
        header,
        "",
        "| model | nodes (top / all, graphs) | torch.export | repair | repair / export "
        "| top-level loop | repair / loop, wall clock | repair / loop, instructions |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} | | | | | | |")
            continue
        lines.append(
            f"| {r['model']} | {r['nodes_top']} / {r['nodes_total']}, {r['graphs']} | {r['export_s']:.2f} s "
            f"| {fmt_time(r['repair']['median_s'])} | {100 * r['repair_over_export']:.4f}% "
            f"| {fmt_time(r['top_level_loop']['median_s'])} | {r['repair_over_loop']:.2f}x "
            f"| {_instructions_cell(r)} |"
        )
    if any("lowering_on" in r or "lowering_error" in r for r in rows):
        lines += [
            "",
            "| model | export + XNNPACK lowering, hook off | hook on | on / off | within noise "
            "| time in the hook per run | programs repaired per run |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in rows:
            if "lowering_error" in r:
                lines.append(f"| {r['model']} | failed: {r['lowering_error']} | | | | | |")
            elif "lowering_on" in r:
                off, on = r["lowering_off"], r["lowering_on"]
                hook_cells = "| not measured | not measured |"
                if "lowering_hook_time" in r:  # results of before the hook was metered have none
                    t = r["lowering_hook_time"]["median_s"]
                    hook_cells = (
                        f"| {fmt_time(t)} ({100 * t / on['median_s']:.3f}% of the run) "
                        f"| {r['lowering_hook_programs']:g} |"
                    )
                noise = llama.noise_verdict(off, on)
                lines.append(
                    f"| {r['model']} | {off['median_s']:.2f} s ({off['min_s']:.2f}-{off['max_s']:.2f}) "
                    f"| {on['median_s']:.2f} s ({on['min_s']:.2f}-{on['max_s']:.2f}) "
                    f"| {r['lowering_on_over_off']:.3f} | {'yes' if noise['within_noise'] else 'no'} "
                    f"{hook_cells}"
                )
        lines += [
            "",
            f"Lowering: median (min-max) per state; {llama.NOISE_RULE}. The time in the hook "
            "is measured directly around what the hook runs after each ExportedProgram is built.",
        ]
    found = targets.evaluate_hf(rows)
    if found:
        lines += [
            "",
            "Targets (the 1.2x one is judged on instruction counts, as in `python -m benchmarks`):",
        ]
        lines += [f"- **{_verdict(t['met'])}** {t['target']}: {t['figure']}" for t in found]
    return "\n".join(lines) + "\n"


def _return_freed_memory() -> bool:
    """Make glibc give large freed blocks back to the system (True if it could be asked).

    glibc raises its mmap threshold each time a large mmapped block is freed, so the tensors
    of the next model come from the heap and memory freed there stays with the process: at
    real widths Gemma 3 1B's export (about 19 GB) followed by Granite's build was killed for
    memory on a 24 GB machine. A fixed threshold (mallopt M_MMAP_THRESHOLD) keeps blocks from
    1 MB on in their own mappings, returned when freed. Not glibc: nothing to do.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(-3, 1 << 20))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hf", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="real widths (default: reduced widths, real depths)")
    p.add_argument(
        "--lowering",
        type=int,
        nargs="?",
        const=3,
        default=0,
        metavar="PAIRS",
        help="also time export + XNNPACK lowering with the hook off and on (default 3 of each)",
    )
    p.add_argument("--reps", type=int, default=51, help="repair / loop repetitions (default 51)")
    p.add_argument(
        "--models",
        nargs="*",
        default=list(ARCHITECTURES),
        choices=list(ARCHITECTURES),
        metavar="MODEL",
        help=f"subset of the models (default all: {', '.join(ARCHITECTURES)})",
    )
    p.add_argument(
        "--no-instructions",
        action="store_true",
        help="skip the instruction counts under callgrind (each model is exported again there)",
    )
    p.add_argument(
        "--instr-reps",
        type=int,
        default=instructions.DEFAULT_REPS,
        help=f"counted calls per method under callgrind (default {instructions.DEFAULT_REPS})",
    )
    p.add_argument("--out", type=Path, help="output directory (default benchmarks/results[/full])")
    p.add_argument(
        "--render",
        type=Path,
        metavar="HF_JSON",
        help="measure nothing: write hf.md again from an hf.json (next to it)",
    )
    args = p.parse_args(argv)
    if args.render is not None:
        saved = json.loads(args.render.read_text())
        (args.render.parent / "hf.md").write_text(to_markdown(saved["rows"], saved["header"]))
        return 0
    torch.set_num_threads(1)
    _return_freed_memory()
    out = args.out or Path(__file__).resolve().parent / "results" / ("full" if args.full else "")
    out.mkdir(parents=True, exist_ok=True)
    rows, start, load_before = [], time.perf_counter(), loadavg()
    environment = env.environment()  # the code measured: a checkout may move while this runs
    for name in args.models:
        print(f"{name}: building and exporting ...", file=sys.stderr, flush=True)
        try:
            rows.append(measure(name, full=args.full, reps=args.reps, lowering_reps=args.lowering))
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows.append({"model": name, "error": error_line(e)})
        # A model and its exported programs hold reference cycles: free them before the next
        # model is built. (The --full run killed for memory needed _return_freed_memory as well:
        # a model was collected, but glibc kept its freed memory.)
        gc.collect()
        print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    instr_note = "instructions not counted (--no-instructions)"
    exported = [r["model"] for r in rows if "error" not in r]
    if not args.no_instructions and exported:
        print(f"instruction counts under callgrind: {', '.join(exported)} ...", file=sys.stderr, flush=True)
        counted = instructions.measure(
            [], [], hf_models=exported, hf_full_width=args.full, reps=args.instr_reps
        )
        if counted["available"]:
            by_model = {r["model"]: r for r in counted["hf"]}
            for r in rows:
                if r["model"] in by_model:
                    r["instructions"] = by_model[r["model"]]
            instr_note = (
                f"instructions: {counted['tool']}, {counted['reps']} counted calls per method, "
                f"{counted['duration_s']:.0f} s"
            )
        else:
            instr_note = f"instructions not counted: {counted['reason']}"
    import transformers

    took = time.perf_counter() - start
    commit = (environment["git_commit"] or "unknown")[:7]
    if environment["git_dirty_files"]:
        commit += f" + {environment['git_dirty_files']} uncommitted files"
    header = (
        f"Command: `python -m benchmarks.hf {shlex.join(argv if argv is not None else sys.argv[1:])}`. "
        f"Hugging Face architectures ({'real widths' if args.full else 'real depths, reduced widths'}), "
        f"transformers {transformers.__version__}, torch {torch.__version__}, 1 thread, code of commit "
        f"{commit}; {took:.0f} s for the run, load average (1 min) {load_before[:1]} before, "
        f"{loadavg()[:1]} after; {instr_note}"
    )
    saved = {"header": header, "environment": environment, "rows": rows}
    (out / "hf.json").write_text(json.dumps(saved, indent=1) + "\n")
    (out / "hf.md").write_text(to_markdown(rows, header))
    print(to_markdown(rows, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
