"""Write a run's results: JSON (every raw sample), a Markdown summary, PNG plots."""

from __future__ import annotations

import json
from math import nan
from pathlib import Path

from benchmarks.timing import fmt_time

METHOD_LABELS = {
    "export": "torch.export.export",
    "repair": "torch_export_names.repair",
    "top_level_loop": "upstream top-level loop (baseline)",
    "deepcopy": "deepcopy rebuild",
    "qnn_pipeline": "QNN export pipeline (hook on)",
}


def write_json(results: dict, path: Path) -> None:
    path.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")


def _t(stats: dict | None) -> str:
    if not stats or "median_s" not in stats:
        return "n/a" if not stats else "error"
    return fmt_time(stats["median_s"])


def _spread(stats: dict) -> str:
    return f"{fmt_time(stats['median_s'])} [{fmt_time(stats['min_s'])} - {fmt_time(stats['max_s'])}]"


def markdown(results: dict, plots: dict[str, str]) -> str:
    env, s = results["environment"], results["settings"]
    load = results["load"]
    lines = [
        "# Benchmark results",
        "",
        f"Command: `{results['command']}`  ",
        f"Run: {results['started']}, {results['duration_s']:.0f} s. torch {env['torch']}, ExecuTorch "
        f"{env['executorch']}, Python {env['python']}, {env['cpu']} ({env['cpus_usable']} usable CPUs), "
        f"torch threads {env['torch_num_threads']}, peak memory {results.get('peak_rss_gib', 'n/a')} GiB.  ",
        f"Load average (1 min) before {load['before'][0] if load['before'] else 'n/a'}, after "
        f"{load['after'][0] if load['after'] else 'n/a'}, during {load['min_1min']}-{load['max_1min']} "
        "(other jobs shared the machine; all ratios below come from this one run).  ",
        f"Medians of {s['export_reps']} exports and of {s['micro_reps']} repetitions of each naming method "
        "(each on the just-exported names, restored untimed before every repetition).",
        "",
        "## Llama decoders (dim 256, 8 heads, KV cache, random weights)",
        "",
        "| layers | nodes (top / all graphs) | torch.export | repair | repair per node | repair / export "
        "| top-level loop | repair / loop | repair / loop, instructions | deepcopy rebuild "
        "| deepcopy / repair | QNN export pipeline |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    instr = results.get("instructions") or {}
    ir_ratio = {x["layers"]: x["ratios"]["repair_to_top_level_loop"] for x in instr.get("llama", [])}
    for r in results.get("llama", []):
        q = r.get("qnn_pipeline")
        ir = f"{ir_ratio[r['layers']]:.2f}x" if r["layers"] in ir_ratio else "n/a"
        lines.append(
            f"| {r['layers']} | {r['nodes_top']} / {r['nodes_total']} "
            f"| {_t(r['export'])} | {_t(r['repair'])} "
            f"| {r['repair_ns_per_node']:.0f} ns | {r['ratios']['repair_to_export'] * 100:.4f}% "
            f"| {_t(r['top_level_loop'])} | {r['ratios']['repair_to_top_level_loop']:.2f}x | {ir} "
            f"| {_t(r['deepcopy'])} | {r['ratios']['deepcopy_to_repair']:.0f}x | {_t(q)} |"
        )
    lines += [
        "",
        "repair records and legalizes every name in one pass, then names HOP subgraph placeholders; "
        "the public record_node_names and propagate_subgraph_names alone took "
        + ", ".join(
            f"{r['layers']}L {_t(r['record_node_names'])} + {_t(r['propagate_subgraph_names'])}"
            for r in results.get("llama", [])
        )
        + ". The top-level loop is a baseline copy of the upstream ExecuTorch helper (top-level graph "
        "only, `_used_names` only); deepcopy rebuild is `gm.graph = copy.deepcopy(gm.graph)` for every "
        "GraphModule (the setter recompiles).",
    ]
    if "llama" in plots:
        lines += ["", f"![time vs nodes]({plots['llama']})"]

    e2e = results.get("end_to_end", [])
    if e2e:
        lines += [
            "",
            "## Hook off vs on, end to end (median [min - max])",
            "",
            "| pipeline | layers | runs each | hook off | hook on | on / off | on - off | noise "
            "| within noise | programs repaired per run | time in the hook per run |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for e in e2e:
            lines.append(
                f"| {e['label']} | {e['layers']} | {e['hook_off']['n']} | {_spread(e['hook_off'])} "
                f"| {_spread(e['hook_on'])} | {e['ratio_on_to_off']:.3f} | {e['median_diff_s']:+.3f} s "
                f"| {e['noise_s']:.3f} s | {'yes' if e['within_noise'] else 'no'} "
                f"| {e['hook_repairs_per_run']:g} "
                f"| {_spread(e['hook_time_per_run'])} ({e['hook_time_to_run'] * 100:.2f}% of the run) |"
            )
        lines += [
            "",
            f"Noise rule: {e2e[0]['noise_rule']}. Order: {e2e[0]['order']}. The time in the hook is "
            "measured directly, around the function the hook calls after each ExportedProgram is built "
            "(snapshot, repair, log line); it includes any garbage collection that happens to run "
            "inside it.",
        ]

    htp = results.get("htp_partition")
    if htp is not None:
        lines += ["", "## QNN partitioning: HTP adapter vs plain QnnPartitioner", ""]
        if htp.get("available"):
            lines += [
                f"{htp['note']}. Per partitioner: `ops_to_not_decompose(ep)` with its node filter applied to "
                "every node, plus `generate_partitions(edge_program)`, on the same programs, in rotation "
                f"(medians of {s['htp_reps']}). The adapter's own analysis (`constant_only_nodes` on the "
                "exported and the edge program) is also timed alone.",
                "",
                "| layers | nodes (exported / edge) | QnnPartitioner | ConstantAwareQnnPartitioner "
                "| difference | adapter analysis alone | analysis / export |",
                "| --- | --- | --- | --- | --- | --- | --- |",
            ]
            for r in htp["rows"]:
                if "error" in r:
                    lines.append(f"| {r['layers']} | error: {r['error']} | | | | | |")
                    continue
                to_export = f"{r['analysis_to_export'] * 100:.3f}%" if "analysis_to_export" in r else "n/a"
                lines.append(
                    f"| {r['layers']} | {r['nodes_exported']} / {r['nodes']} "
                    f"| {_t(r['plain'])} | {_t(r['adapter'])} "
                    f"| {fmt_time(r['extra_s'])} ({r['extra_to_plain'] * 100:+.1f}%) "
                    f"| {fmt_time(r['analysis_s'])} | {to_export} |"
                )
        else:
            lines.append(f"{htp['reason']}.")

    syn = results.get("synthetic")
    if syn and syn.get("points"):
        k = syn["export_like_every"]
        lines += [
            "",
            "## repair alone on synthetic graphs",
            "",
            f'Bare torch.fx Graphs, names assigned directly as torch.export does; "all": every name '
            f'unrecorded (worst case), "export-like": 1 in {k} unrecorded (the Llama graphs: 16-18%). '
            "Medians; the four series interleaved.",
            "",
            "| nodes | reps | repair, all | per node | repair, export-like | per node | top-level loop, all "
            "| per node | plain set/dict floor | per node |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for p in syn["points"]:
            lines.append(
                f"| {p['nodes']:,} | {p['reps']} | {_t(p['repair'])} | {p['repair_ns_per_node']:.0f} ns "
                f"| {_t(p['repair_export_like'])} | {p['repair_export_like_ns_per_node']:.0f} ns "
                f"| {_t(p['top_level_loop'])} | {p['top_level_loop_ns_per_node']:.0f} ns "
                f"| {_t(p['hash_table_floor'])} | {p['hash_table_floor_ns_per_node']:.0f} ns |"
            )
        lines += [
            "",
            "The floor does the set/dict work of recording every name on plain Python containers (no "
            "torch.fx): how this machine's hash tables alone scale once they outgrow the CPU caches.",
            "",
        ]
        for fit_key in ("fit", "fit_export_like", "fit_top_level_loop", "fit_hash_table_floor"):
            fit = syn[fit_key]
            lines.append(
                f"- {fit['series']}: slope {fit.get('slope_ns_per_node', nan):.1f} ns/node, "
                f"intercept {fit.get('intercept_s', nan) * 1e3:.2f} ms, R^2 {fit.get('r_squared', nan):.5f}, "
                f"log-log exponent {fit.get('loglog_exponent', nan):.3f}; per node at "
                f"{fit['per_node_large_nodes']:,} / at {fit['per_node_small_nodes']:,}: "
                f"{fit['per_node_ratio_large_to_small']:.2f}x"
            )
        if "synthetic" in plots:
            lines += ["", f"![repair scaling]({plots['synthetic']})"]

    lines += _instructions_section(instr)
    lines += ["", "## Targets", "", "| target | met | figures |", "| --- | --- | --- |"]
    for t in results.get("targets", []):
        met = {True: "yes", False: "**no**", None: "not measured"}[t["met"]]
        lines.append(f"| {t['target']} | {met} | {t['figure']} |")
    return "\n".join(lines) + "\n"


def _instructions_section(instr: dict) -> list[str]:
    """Instruction counts per call (callgrind), next to which the wall-clock ratios above are noisy."""
    lines = ["", "## Instructions per call (valgrind callgrind)", ""]
    if not instr:
        return lines + ["Not measured (--no-instructions)."]
    if not instr.get("available"):
        return lines + [f"Not measured: {instr['reason']}."]
    lines += [
        f"{instr['tool']}; a child process exports the same models, then counts each method's "
        f"instructions over {instr['reps']} calls (after {instr['warmup']} uncounted ones), each on the "
        "just-exported names put back uncounted, minus the cost of switching the counter on and off "
        f"({instr['duration_s']:.0f} s). Repeatable whatever the load; blind to cache misses and kernel "
        "time. The 1.2x target is judged on these.",
        "",
        "| case | nodes | repair | per node | top-level loop | per node | repair / loop |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in instr.get("llama", []):
        n = r["nodes_total"]
        rep, loop = r["repair"]["Ir"], r["top_level_loop"]["Ir"]
        lines.append(
            f"| Llama {r['layers']} layers | {n:,} | {rep:,.0f} | {rep / n:,.0f} | {loop:,.0f} "
            f"| {loop / n:,.0f} | {r['ratios']['repair_to_top_level_loop']:.2f}x |"
        )
    for r in instr.get("synthetic", []):
        n, loop = r["nodes"], r["top_level_loop"]["Ir"]
        for key, state, ratio in (
            ("repair_export_like", "export-like", "repair_export_like_to_top_level_loop"),
            ("repair", "every name unrecorded", "repair_to_top_level_loop"),
        ):
            rep = r[key]["Ir"]
            lines.append(
                f"| synthetic, {state} | {n:,} | {rep:,.0f} | {rep / n:,.0f} | {loop:,.0f} "
                f"| {loop / n:,.0f} | {r['ratios'][ratio]:.2f}x |"
            )
    lines += [
        "",
        "The loop on a Llama program reads `graph_module.graph` (a property) for every node; on the "
        "synthetic graphs it runs on a bare Graph held in a plain attribute, so it costs about half as "
        "much per node there.",
    ]
    return lines


def plot(results: dict, out_dir: Path) -> dict[str, str]:
    """PNG plots (log-log time vs nodes); returns {name: file name}."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = {}
    rows = results.get("llama", [])
    if rows:
        fig, ax = plt.subplots(figsize=(7.5, 5), dpi=120)
        nodes = [r["nodes_total"] for r in rows]
        for key, marker in (
            ("export", "o"),
            ("qnn_pipeline", "v"),
            ("deepcopy", "s"),
            ("repair", "D"),
            ("top_level_loop", "^"),
        ):
            pts = [(n, r[key]) for n, r in zip(nodes, rows) if r.get(key) and "median_s" in r[key]]
            if not pts:
                continue
            xs = [n for n, _ in pts]
            ax.plot(xs, [st["median_s"] for _, st in pts], marker=marker, label=METHOD_LABELS[key])
            ax.fill_between(xs, [st["q1_s"] for _, st in pts], [st["q3_s"] for _, st in pts], alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(nodes, [f"{n}\n{r['layers']}L" for n, r in zip(nodes, rows)])
        ax.minorticks_off()
        ax.set_xlabel("nodes in the exported program (all graphs), layers")
        ax.set_ylabel("time (s): median, band = interquartile range")
        ax.set_title(f"Llama decoders, torch {results['environment']['torch']}: time vs graph size")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / "llama.png")
        plt.close(fig)
        made["llama"] = "llama.png"

    syn = results.get("synthetic")
    if syn and syn.get("points"):
        pts = syn["points"]
        n = [p["nodes"] for p in pts]
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=120)
        series = (
            ("repair", "D", "repair, every name unrecorded", "fit"),
            (
                "repair_export_like",
                "o",
                f"repair, 1 in {syn['export_like_every']} unrecorded",
                "fit_export_like",
            ),
            ("top_level_loop", "^", "upstream top-level loop (baseline)", "fit_top_level_loop"),
            ("hash_table_floor", "x", "plain set/dict floor (no torch.fx)", "fit_hash_table_floor"),
        )
        for key, marker, label, fit_key in series:
            fit = syn[fit_key]
            extra = (
                f" (slope {fit['slope_ns_per_node']:.0f} ns/node, exp {fit['loglog_exponent']:.2f})"
                if ("slope_ns_per_node" in fit)
                else ""
            )
            ax.plot(n, [p[key]["median_s"] for p in pts], marker=marker, label=label + extra)
            ax2.plot(n, [p[f"{key}_ns_per_node"] for p in pts], marker=marker, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes")
        ax.set_ylabel("time (s), median")
        ax.set_title("repair alone, synthetic graphs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax2.set_xscale("log")
        ax2.set_ylim(bottom=0)
        ax2.set_xlabel("nodes")
        ax2.set_ylabel("ns per node")
        ax2.set_title("time per node (flat = linear)")
        ax2.grid(True, which="both", alpha=0.3)
        ax2.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / "synthetic.png")
        plt.close(fig)
        made["synthetic"] = "synthetic.png"
    return made
