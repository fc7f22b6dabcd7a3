"""Benchmark runner: what recording node names costs when lowering Llama graphs.

    python -m benchmarks            # default sweep, a few minutes on 2 cores
    python -m benchmarks --full     # up to 256 layers (~24k nodes), longer end-to-end sweep
    python benchmarks/lowering.py --help

Measures, in one process, each figure a median of several repetitions: torch.export time
and node counts; ``repair`` alone against the upstream top-level-only loop and the deepcopy
rebuild, on the same graphs; end-to-end lowering with the export hook on and off
(alternating); ExecuTorch's Qualcomm export pipeline with the hook; the HTP adapter's
partitioning cost (QNN SDK replaced by a test double); and ``repair`` alone on synthetic
graphs up to a million nodes. Last, in a child process under valgrind's callgrind
(``benchmarks/instructions.py``), the instructions ``repair`` and the loop execute per
call: the measure that does not move with the machine's load, on which the 1.2x target
is judged. Writes ``results.json`` (every sample, environment, load),
``results.md`` and PNG plots to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import logging
import resource
import shlex
import sys
import time
import warnings
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/lowering.py: import from the repository root
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks.common import int_list  # noqa: E402 (after the sys.path line)

DEFAULT = {
    "layers": [1, 2, 4, 8, 16],
    "e2e_layers": [1],
    "htp_layers": [1],
    "synthetic_sizes": [10_000, 30_000, 100_000, 300_000, 1_000_000],
    "instr_layers": [1, 4, 16],
    "instr_synthetic_sizes": [10_000],
    "out": Path(__file__).resolve().parent / "results",
}
FULL = {
    "layers": [1, 2, 4, 8, 16, 32, 64, 128, 256],
    "e2e_layers": [1, 4, 16],
    "htp_layers": [1, 4, 8],
    "synthetic_sizes": [10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000],
    "instr_layers": [1, 4, 16, 64],
    "instr_synthetic_sizes": [10_000, 100_000],
    "out": Path(__file__).resolve().parent / "results" / "full",
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="larger sweep (layers up to 256, e2e up to 16 layers)")
    p.add_argument("--layers", type=int_list, help=f"Llama layer counts (default {DEFAULT['layers']})")
    p.add_argument(
        "--e2e-layers",
        type=int_list,
        help=f"layer counts for end-to-end runs (default {DEFAULT['e2e_layers']})",
    )
    p.add_argument(
        "--htp-layers",
        type=int_list,
        help=f"layer counts for QNN partitioning (default {DEFAULT['htp_layers']})",
    )
    p.add_argument("--synthetic-sizes", type=int_list, help="synthetic graph sizes in nodes")
    p.add_argument(
        "--instr-layers",
        type=int_list,
        help=f"layer counts for instruction counts under callgrind (default {DEFAULT['instr_layers']})",
    )
    p.add_argument(
        "--instr-synthetic-sizes",
        type=int_list,
        help=f"synthetic sizes for instruction counts (default {DEFAULT['instr_synthetic_sizes']})",
    )
    p.add_argument(
        "--instr-reps", type=int, default=2, help="counted calls per method under callgrind (default 2)"
    )
    p.add_argument("--export-reps", type=int, default=3, help="torch.export repetitions per size (default 3)")
    p.add_argument(
        "--micro-reps", type=int, default=15, help="repetitions of each naming method (default 15)"
    )
    p.add_argument(
        "--e2e-pairs", type=int, default=3, help="hook off/on pairs per end-to-end pipeline (default 3)"
    )
    p.add_argument(
        "--htp-reps", type=int, default=5, help="repetitions of each QNN partitioning step (default 5)"
    )
    p.add_argument(
        "--synthetic-reps",
        type=int,
        default=3,
        help="repetitions per synthetic size from 300k nodes, 3x below (default 3)",
    )
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    p.add_argument("--out", type=Path, help="output directory (default benchmarks/results, --full: .../full)")
    p.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="measure nothing: write results.md and the plots again from a results.json (next to it)",
    )
    for part in ("e2e", "qnn", "htp", "synthetic", "instructions", "plots"):
        p.add_argument(f"--no-{part}", action="store_true", help=f"skip the {part} part")
    args = p.parse_args(argv)
    preset = FULL if args.full else DEFAULT
    lists = ("layers", "e2e_layers", "htp_layers", "synthetic_sizes", "instr_layers", "instr_synthetic_sizes")
    for key in lists:
        if getattr(args, key) is None:
            setattr(args, key, preset[key])
    if args.out is None:
        args.out = Path(preset["out"])
    counts = ("export_reps", "micro_reps", "e2e_pairs", "htp_reps", "synthetic_reps", "instr_reps", "threads")
    for key in counts:
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1, got {getattr(args, key)}")
    return args


def _quiet() -> None:
    """Silence torch/ExecuTorch warnings and log chatter so the progress lines stay readable."""
    warnings.simplefilter("ignore")
    logging.getLogger().setLevel(logging.ERROR)
    # Several ExecuTorch modules set their own logger's level (DEBUG, INFO, WARNING) on import.
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in ("executorch", "torch")]
    for name in ("executorch", "torch", *names):
        logging.getLogger(name).setLevel(logging.ERROR)


def _total_steps(args) -> int:
    per_size = 2 + (0 if args.no_qnn else 1)
    steps = len(args.layers) * per_size + 1
    if not args.no_e2e:
        steps += len(args.e2e_layers) * 2 * (1 + 2 * args.e2e_pairs)
    if not args.no_htp:
        steps += len(args.htp_layers)
    if not args.no_synthetic:
        steps += len(set(args.synthetic_sizes))
    if not args.no_instructions:
        steps += 1
    return steps


def render(path: Path, *, plots: bool = True) -> None:
    """results.md and the plots from an existing results.json (noise and targets judged again)."""
    import json

    from benchmarks import llama, report, targets

    results = json.loads(path.read_text())
    for e in results.get("end_to_end", []):
        e.update(llama.noise_verdict(e["hook_off"], e["hook_on"]))
    results["targets"] = targets.evaluate(results)
    made = report.plot(results, path.parent) if plots else {}
    report.write_json(results, path)
    (path.parent / "results.md").write_text(report.markdown(results, made))


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.render is not None:
        render(args.render, plots=not args.no_plots)
        print(f"wrote {args.render.parent}/results.md and plots from {args.render}", file=sys.stderr)
        return 0
    _quiet()
    from benchmarks.timing import loadavg

    load_before = loadavg()
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    t_start = time.perf_counter()

    import torch

    torch.set_num_threads(args.threads)
    from benchmarks import htp, instructions, llama, report, synthetic, targets
    from benchmarks.env import environment
    from benchmarks.models import build_llama, export_llama
    from benchmarks.progress import Progress

    try:  # imported here so that their logging set-up (basicConfig, levels) runs before _quiet()
        import executorch.backends.qualcomm._passes.qnn_pass_manager  # noqa: F401
        import executorch.backends.qualcomm.partition.qnn_partitioner  # noqa: F401
        import executorch.backends.qualcomm.qnn_preprocess  # noqa: F401
    except ImportError:
        pass
    _quiet()  # again: importing ExecuTorch resets some filters and the root level
    progress = Progress(_total_steps(args))
    model, inputs = build_llama(1)
    export_llama(model, inputs)  # warm-up: first export pays one-time costs
    progress.step("warm-up export (1 layer)")
    # Everything imported so far is permanent: freezing it keeps each gc.collect() before a timed
    # call to the objects the benchmark itself creates (a full collection here takes ~0.3 s).
    gc.collect()
    gc.freeze()

    results: dict = {
        "schema": 1,
        "command": shlex.join(["python", "-m", "benchmarks", *(sys.argv[1:] if argv is None else argv)]),
        "started": started,
        "settings": {
            "layers": args.layers,
            "e2e_layers": [] if args.no_e2e else args.e2e_layers,
            "synthetic_sizes": [] if args.no_synthetic else sorted(set(args.synthetic_sizes)),
            "export_reps": args.export_reps,
            "micro_reps": args.micro_reps,
            "e2e_pairs": args.e2e_pairs,
            "htp_layers": [] if args.no_htp else args.htp_layers,
            "htp_reps": args.htp_reps,
            "synthetic_reps": args.synthetic_reps,
            "instr_layers": [] if args.no_instructions else args.instr_layers,
            "instr_synthetic_sizes": [] if args.no_instructions else args.instr_synthetic_sizes,
            "instr_reps": args.instr_reps,
            "torch_num_threads": args.threads,
            "export": "torch.export.export(model, (tokens, {'input_pos': ...}), strict=False)",
            "gc": "gc.freeze() after imports and a warm-up export; single-step timings: gc.collect() then "
            "the untimed reset, collector off until the call returns; end-to-end runs: gc.collect() "
            "before, collector on during",
            "interleaving": "naming methods run in rotation within each repetition (loop, "
            "record_node_names, propagate_subgraph_names, repair); the deepcopy rebuild before them, "
            "in its own repetitions (it recompiles the module, which slows the calls after it); "
            "end-to-end hook off/on alternate, first of each pair swapped",
            "reset_between_reps": "the just-exported names and name spaces "
            "(torch_export_names._fx_namespace.Rollback), put back untimed (repair is idempotent)",
        },
        "environment": environment(),
    }
    results["llama"] = [
        llama.measure_size(
            n,
            export_reps=args.export_reps,
            micro_reps=args.micro_reps,
            qnn=not args.no_qnn,
            progress=progress,
        )
        for n in args.layers
    ]
    if not args.no_e2e:
        results["end_to_end"] = [
            llama.measure_end_to_end(n, pipeline, pairs=args.e2e_pairs, progress=progress)
            for n in args.e2e_layers
            for pipeline in ("to_edge", "xnnpack")
        ]
    if not args.no_htp:
        _quiet()  # modules imported since may have set their loggers' levels
        results["htp_partition"] = htp.measure(
            args.htp_layers,
            reps=args.htp_reps,
            export_medians={r["layers"]: r["export"] for r in results["llama"]},
            progress=progress,
        )
        if not results["htp_partition"]["available"]:
            progress.step(f"QNN partitioning: {results['htp_partition']['reason']}")
    if not args.no_synthetic:
        results["synthetic"] = synthetic.scaling_run(
            args.synthetic_sizes, reps=args.synthetic_reps, progress=progress
        )
    if not args.no_instructions:
        # Last, so that the child (one core, under valgrind) runs while nothing is timed.
        results["instructions"] = instructions.measure(
            args.instr_layers, args.instr_synthetic_sizes, reps=args.instr_reps, progress=progress
        )

    load_after = loadavg()
    samples = [s["loadavg"][0] for s in progress.load_samples if s["loadavg"]]
    results["load"] = {
        "before": load_before,
        "after": load_after,
        "min_1min": min(samples, default=None),
        "max_1min": max(samples, default=None),
        "samples": progress.load_samples,
        "note": "os.getloadavg(); the machine was shared with other jobs",
    }
    results["duration_s"] = time.perf_counter() - t_start
    results["peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    results["targets"] = targets.evaluate(results)

    args.out.mkdir(parents=True, exist_ok=True)
    plots = {} if args.no_plots else report.plot(results, args.out)
    report.write_json(results, args.out / "results.json")
    (args.out / "results.md").write_text(report.markdown(results, plots))
    print(
        f"wrote {args.out}/results.json, results.md" + "".join(f", {p}" for p in plots.values()),
        file=sys.stderr,
    )
    for t in results["targets"]:
        met = {True: "met", False: "NOT MET", None: "not measured"}[t["met"]]
        print(f"  [{met}] {t['target']}: {t['figure']}", file=sys.stderr)
    print(f"total {results['duration_s']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
