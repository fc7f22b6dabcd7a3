"""The performance targets (benchmarks/README.md), judged on the figures of one run.

repair within 1.2x of the upstream loop is judged on instruction counts (callgrind,
``benchmarks/instructions.py``): the wall-clock ratio of two calls of tens of microseconds
moves with the load of a shared machine and with its caches, so it is reported in the
figure but not judged. The other targets are wall clock.
"""

from __future__ import annotations

REPAIR_TO_EXPORT_MAX = 0.0002  # 0.02 % of torch.export.export
REPAIR_TO_LOOP_MAX = 1.2  # one pass over the nodes; judged on instruction counts
DEEPCOPY_TO_REPAIR_MIN = 20.0
PER_NODE_GROWTH_MAX = 1.5


def _target(name: str, met: bool | None, figure: str) -> dict:
    return {"target": name, "met": met, "figure": figure}


def evaluate(results: dict) -> list[dict]:
    """One entry per target: met (True/False, None if not measured) and the figures."""
    out = []
    rows = results.get("llama", [])
    if rows:
        r = [row["ratios"]["repair_to_export"] for row in rows]
        figure = "repair/export: " + ", ".join(f"{row['layers']}L {x * 100:.4f}%" for row, x in zip(rows, r))
        # Where the baseline itself is over the bound, say so: the bound is then below one pass.
        loop_shares = [
            (row["layers"], row["top_level_loop"]["median_s"] / row["export"]["median_s"]) for row in rows
        ]
        loop_over = [(n, x) for n, x in loop_shares if x > REPAIR_TO_EXPORT_MAX]
        if loop_over:
            figure += "; the upstream top-level loop alone is over it too: " + ", ".join(
                f"{n}L {x * 100:.4f}%" for n, x in loop_over
            )
        out.append(
            _target(
                "repair <= 0.02% of torch.export.export time, every Llama size",
                max(r) <= REPAIR_TO_EXPORT_MAX,
                figure,
            )
        )
        out.append(_loop_target(rows, results.get("instructions")))
        r = [row["ratios"]["deepcopy_to_repair"] for row in rows]
        out.append(
            _target(
                "repair >= 20x faster than the deepcopy rebuild",
                min(r) >= DEEPCOPY_TO_REPAIR_MIN,
                "deepcopy/repair: " + ", ".join(f"{row['layers']}L {x:.0f}x" for row, x in zip(rows, r)),
            )
        )
    else:
        for name in (
            "repair <= 0.02% of export",
            "repair within 1.2x of top-level loop (instructions)",
            "repair >= 20x deepcopy",
        ):
            out.append(_target(name, None, "not measured"))

    e2e = results.get("end_to_end", [])
    out.append(
        _target(
            "hook on vs off: end-to-end lowering within measurement noise",
            all(e["within_noise"] for e in e2e) if e2e else None,
            "; ".join(
                f"{e['pipeline']} {e['layers']}L: on/off {e['ratio_on_to_off']:.3f}, "
                f"diff {e['median_diff_s']:+.3f} s vs noise {e['noise_s']:.3f} s, "
                f"time in the hook {e['hook_time_per_run']['median_s'] * 1e3:.1f} ms per run "
                f"({e['hook_time_to_run'] * 100:.2f}%)"
                for e in e2e
            )
            or "not measured",
        )
    )

    out.append(_synthetic_loop_target(results.get("instructions")))

    syn = results.get("synthetic")
    if syn and syn.get("points"):
        for fit_key, state in (("fit", "every name unrecorded"), ("fit_export_like", "export-like names")):
            fit = syn[fit_key]
            small, large = fit["per_node_small_nodes"], fit["per_node_large_nodes"]
            ratio = fit["per_node_ratio_large_to_small"]
            key = fit["series"]
            out.append(
                _target(
                    f"linear scaling ({state}): time per node at {large:,} within 1.5x of that at {small:,}",
                    ratio <= PER_NODE_GROWTH_MAX and large >= 1_000_000 and small <= 10_000,
                    f"{syn['points'][-1][key + '_ns_per_node']:.0f} ns/node at {large:,} vs "
                    f"{syn['points'][0][key + '_ns_per_node']:.0f} ns/node at {small:,}: {ratio:.2f}x; "
                    f"fit slope {fit.get('slope_ns_per_node', float('nan')):.0f} ns/node, "
                    f"log-log exponent {fit.get('loglog_exponent', float('nan')):.3f}, "
                    f"R^2 {fit.get('r_squared', float('nan')):.5f}",
                )
            )
    else:
        out.append(_target("linear scaling to 1M nodes", None, "not measured"))
    return out


def _not_measured(instr: dict | None) -> str:
    if not instr:
        return "instruction counts not measured (--no-instructions)"
    return f"instruction counts not measured ({instr.get('reason', 'no sizes')})"


def _loop_target(rows: list[dict], instr: dict | None) -> dict:
    """repair vs the upstream loop on the Llama programs: judged on instructions executed.

    Wall-clock ratios of calls of tens of microseconds move with the load of a shared
    machine and the state of its caches; they are reported next to the counts, not judged.
    """
    wall = "wall clock (medians, interleaved): " + ", ".join(
        f"{row['layers']}L {row['ratios']['repair_to_top_level_loop']:.2f}x" for row in rows
    )
    nested = sum(row["graphs"] - 1 for row in rows)
    name = "repair within 1.2x of the upstream top-level-only loop (instructions, Llama sizes)"
    if not instr or not instr.get("available") or not instr.get("llama"):
        return _target(name, None, f"{_not_measured(instr)}; {wall}")
    r = [(x["layers"], x["ratios"]["repair_to_top_level_loop"]) for x in instr["llama"]]
    return _target(
        name,
        max(x for _, x in r) <= REPAIR_TO_LOOP_MAX,
        "instructions (callgrind): "
        + ", ".join(f"{n}L {x:.2f}x" for n, x in r)
        + f"; {wall} (nested graphs in these programs: {nested})",
    )


def _synthetic_loop_target(instr: dict | None) -> dict:
    """The same on the synthetic graphs, in both states (export-like and every name unrecorded)."""
    name = "repair within 1.2x of the upstream top-level-only loop (instructions, synthetic graphs)"
    if not instr or not instr.get("available") or not instr.get("synthetic"):
        return _target(name, None, _not_measured(instr))
    rows = instr["synthetic"]
    worst = max(
        max(r["ratios"]["repair_export_like_to_top_level_loop"], r["ratios"]["repair_to_top_level_loop"])
        for r in rows
    )
    return _target(
        name,
        worst <= REPAIR_TO_LOOP_MAX,
        "instructions (callgrind), export-like / every name unrecorded: "
        + ", ".join(
            f"{r['nodes']:,} nodes {r['ratios']['repair_export_like_to_top_level_loop']:.2f}x / "
            f"{r['ratios']['repair_to_top_level_loop']:.2f}x"
            for r in rows
        )
        + " (the loop on a bare Graph: no GraphModule.graph property per node)",
    )


def evaluate_hf(rows: list[dict]) -> list[dict]:
    """The per-call targets over ``benchmarks.hf`` rows (models that failed to export are left out)."""
    done = [r for r in rows if "error" not in r]
    if not done:
        return []
    share = {r["model"]: r["repair_over_export"] for r in done}
    worst = max(share, key=share.get)
    out = [
        _target(
            "repair <= 0.02% of torch.export time, every model",
            share[worst] <= REPAIR_TO_EXPORT_MAX,
            f"at most {share[worst] * 100:.4f}% ({worst})",
        )
    ]
    name = "repair within 1.2x of the upstream top-level-only loop (instructions), every model"
    ratio = {
        r["model"]: r["instructions"]["ratios"]["repair_to_top_level_loop"]
        for r in done
        if "ratios" in r.get("instructions", {})
    }
    missing = [r["model"] for r in done if r["model"] not in ratio]
    if not ratio:
        out.append(_target(name, None, "instruction counts not measured"))
        return out
    worst = max(ratio, key=ratio.get)
    figure = f"at most {ratio[worst]:.2f}x ({worst})"
    if missing:
        figure += "; not counted: " + ", ".join(missing)
    met = False if ratio[worst] > REPAIR_TO_LOOP_MAX else None if missing else True
    out.append(_target(name, met, figure))
    return out
