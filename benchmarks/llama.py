"""Per-size measurements on Llama decoders: export, the naming methods, the pipelines."""

from __future__ import annotations

import statistics

from benchmarks import methods
from benchmarks.models import build_llama, export_llama
from benchmarks.pipelines import PIPELINES, hook, qnn_export_pipeline
from benchmarks.timing import ratio, run_interleaved, run_timed, summarize
from torch_export_names import find_unrecorded_names, propagate_subgraph_names, record_node_names, repair


def _names(obj) -> list[list[str]]:
    return [[n.name for n in m.graph.nodes] for m in methods.graph_modules(obj)]


def measure_size(n_layers: int, *, export_reps: int, micro_reps: int, qnn: bool, progress) -> dict:
    """Export time and node counts; repair vs the alternatives; the QNN export pipeline.

    Every method is timed on the same exported program, put back to its
    just-exported names before each repetition (``methods.Unrepaired``).
    """
    model, inputs = build_llama(n_layers)
    t_export, eps = run_timed(lambda: export_llama(model, inputs), reps=export_reps)
    export = summarize(t_export)
    progress.step(f"llama {n_layers} layers: torch.export.export x{export_reps}, {export['median_s']:.2f} s")

    ep = eps[0]
    top, total, n_graphs = methods.node_counts(ep)
    unrecorded = len(find_unrecorded_names(ep))
    exported_names = _names(ep)
    reset = methods.Unrepaired(ep)

    # The deepcopy rebuild is timed in its own rotation: it and the reset after it recompile
    # the module (new forward, type attribute caches invalidated, a heap of garbage), which
    # slows whatever runs next, by more for a call that comes sooner after it (repair at 1
    # layer measured 16 us before it in the rotation, 30 us two calls after it).
    rebuild = {"deepcopy": lambda: methods.deepcopy_rebuild(ep)}
    timed = {
        "top_level_loop": lambda: methods.run_upstream_top_level_loop(ep),
        "record_node_names": lambda: record_node_names(ep),
        "propagate_subgraph_names": lambda: propagate_subgraph_names(ep),
        "repair": lambda: methods.run_repair(ep),  # last: leaves ep repaired
    }
    # Untimed check first: the rebuild keeps every name and leaves none unrecorded.
    methods.deepcopy_rebuild(ep)
    checks = {
        "deepcopy_keeps_names": _names(ep) == exported_names,
        "deepcopy_leaves_unrecorded": len(find_unrecorded_names(ep)),
    }
    reset.reset()
    row: dict = {
        "layers": n_layers,
        "nodes_top": top,
        "nodes_total": total,
        "graphs": n_graphs,
        "unrecorded_after_export": unrecorded,
        "export": export,
    }
    seconds, _ = run_interleaved(rebuild, reps=micro_reps, setup=reset.reset)
    more, results = run_interleaved(timed, reps=micro_reps, setup=reset.reset)
    seconds.update(more)
    for name, t in seconds.items():
        row[name] = summarize(t)
    if set(results["repair"]) != {unrecorded}:
        raise AssertionError(
            f"each repair repetition should record the {unrecorded} unrecorded names, got {results['repair']}"
        )
    row["repair_recorded_per_rep"] = unrecorded
    row["repair_leaves_unrecorded"] = len(find_unrecorded_names(ep))
    row.update(checks)
    row["repair_ns_per_node"] = row["repair"]["median_s"] / total * 1e9
    row["ratios"] = {
        "repair_to_export": ratio(row["repair"], export),
        "repair_to_top_level_loop": ratio(row["repair"], row["top_level_loop"]),
        "deepcopy_to_repair": ratio(row["deepcopy"], row["repair"]),
    }
    progress.step(
        f"llama {n_layers} layers: {total} nodes, repair {row['repair']['median_s'] * 1e6:.0f} us, "
        f"deepcopy {row['deepcopy']['median_s'] * 1e3:.1f} ms (x{micro_reps} each)"
    )

    if qnn:
        row["qnn_pipeline"] = _qnn_pipeline(eps)
        if "median_s" in row["qnn_pipeline"]:
            row["ratios"]["qnn_pipeline_to_export"] = ratio(row["qnn_pipeline"], export)
        progress.step(f"llama {n_layers} layers: QNN export pipeline (hook on) x{len(eps)}")
    return row


def _qnn_pipeline(eps) -> dict:
    """``transform_for_export_pipeline`` with the hook installed, once on each exported program.

    The programs come from the export repetitions (exported with the hook off);
    each is repaired first, untimed, which is what the hook would have done at
    export. The hook stays installed during the pipeline, so programs the
    pipeline builds are repaired too (and that is timed).
    """
    for ep in eps:
        repair(ep)
    pending = list(eps)
    try:
        with hook(on=True) as counter:
            t, _ = run_timed(lambda: qnn_export_pipeline(pending.pop(0)), reps=len(eps))
    except Exception as e:  # report, do not abort the run
        return {"error": f"{type(e).__name__}: {e}"[:500]}
    out = summarize(t)
    out["hook_repairs_per_run"] = counter.calls / len(eps)
    out["hook_seconds_per_run"] = counter.seconds / len(eps)
    return out


NOISE_RULE = (
    "within noise if the hook-off and hook-on min-max ranges overlap (a difference of medians inside "
    "the run-to-run spread of either state cannot be told from it); noise is the wider of the two ranges"
)


def noise_verdict(off: dict, on: dict) -> dict:
    """Whether hook-on and hook-off runs can be told apart, from their summaries (``timing.summarize``).

    Overlapping min-max ranges: with three runs per state, the rule used before (the
    difference of medians against the *smaller* range) called a pipeline that ran faster
    with the hook "not within noise" when one state's three runs happened to lie close.
    """
    overlap = off["min_s"] <= on["max_s"] and on["min_s"] <= off["max_s"]
    noise = max(off["max_s"] - off["min_s"], on["max_s"] - on["min_s"])
    return {"noise_s": noise, "noise_rule": NOISE_RULE, "within_noise": overlap}


def measure_end_to_end(n_layers: int, pipeline: str, *, pairs: int, progress) -> dict:
    """One pipeline, hook off and on alternately, after one warm-up run.

    Pairs alternate which state runs first (off, on, on, off, off, on, ...), so
    a linear drift of the machine's load, and any cost a run leaves to the
    next, fall on both states alike. The cyclic collector runs before each run
    and stays on during it: these are whole lowering runs, timed as a user sees them.
    """
    label, run = PIPELINES[pipeline]
    model, inputs = build_llama(n_layers)
    with hook(on=False):
        run(model, inputs)  # warm-up: lazy imports and first-call caches
    progress.step(f"e2e {pipeline} {n_layers} layers: warm-up")
    samples: dict[bool, list[float]] = {False: [], True: []}
    repairs, in_hook = [], []
    for i in range(pairs):
        for on in (False, True) if i % 2 == 0 else (True, False):
            with hook(on=on) as meter:
                t, _ = run_timed(lambda: run(model, inputs), reps=1, disable_gc=False)
            samples[on].append(t[0])
            if on:
                repairs.append(meter.calls)
                in_hook.append(meter.seconds)
            progress.step(
                f"e2e {pipeline} {n_layers} layers: pair {i + 1}/{pairs} "
                f"hook {'on' if on else 'off'} {t[0]:.2f} s"
            )
    off, on_ = summarize(samples[False]), summarize(samples[True])
    diff = on_["median_s"] - off["median_s"]
    return {
        "pipeline": pipeline,
        "label": label,
        "layers": n_layers,
        "order": "alternating, first state swapped every pair (off,on,on,off,...), one warm-up run first",
        "hook_off": off,
        "hook_on": on_,
        "ratio_on_to_off": ratio(on_, off),
        "median_diff_s": diff,
        **noise_verdict(off, on_),
        "hook_repairs_per_run": statistics.median(repairs),
        # The hook's own cost inside the pipeline, measured directly (see pipelines.hook).
        "hook_time_per_run": summarize(in_hook),
        "hook_time_to_run": statistics.median(in_hook) / on_["median_s"],
    }
