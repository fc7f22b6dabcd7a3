"""The benchmark runner's pieces, at tiny sizes: well-formed records, faithful baselines.

No timing is asserted (performance figures come from ``python -m benchmarks``); these
tests check that what the benchmark times is the work it claims to time.
"""

from __future__ import annotations

import json

import pytest
import torch

import torch_export_names
from benchmarks import instructions, methods, synthetic, targets
from benchmarks.lowering import parse_args
from benchmarks.pipelines import hook
from torch_export_names import find_unrecorded_names, repair

import _torchvision_shim
from helpers import import_or_skip, not_reproduced

# Select them alone with -m benchmark_smoke, leave them out with -m 'not benchmark_smoke'.
pytestmark = pytest.mark.benchmark_smoke


class MulThenCondMulInput(torch.nn.Module):
    """A ``mul`` input next to a ``mul`` op, and a cond: names unrecorded at top level and nested."""

    def forward(self, x, mul):
        y = mul * 2
        return torch.cond(x.sum() > 0, lambda a, b: a * b * 2, lambda a, b: a - b, (x, y))


def export_cond():
    return torch.export.export(MulThenCondMulInput(), (torch.randn(3), torch.randn(3)))


def names(ep) -> list[list[str]]:
    return [[n.name for n in m.graph.nodes] for m in methods.graph_modules(ep)]


def unrecorded_or_skip(ep) -> list[str]:
    found = find_unrecorded_names(ep)
    if not found:
        not_reproduced("records export names: nothing for the benchmark to time")
    return found


def test_reset_brings_back_every_unrecorded_name():
    ep = export_cond()
    before = unrecorded_or_skip(ep)
    reset = methods.Unrepaired(ep)
    first = repair(ep).recorded
    assert find_unrecorded_names(ep) == []
    reset.reset()
    assert find_unrecorded_names(ep) == before
    assert repair(ep).recorded == first == len(before)


def test_reset_puts_back_a_graph_the_deepcopy_rebuild_replaced():
    ep = export_cond()
    before = unrecorded_or_skip(ep)
    graphs = [m.graph for m in methods.graph_modules(ep)]
    reset = methods.Unrepaired(ep)
    methods.deepcopy_rebuild(ep)
    assert all(m.graph is not g for m, g in zip(methods.graph_modules(ep), graphs))
    reset.reset()
    assert [m.graph for m in methods.graph_modules(ep)] == graphs
    assert find_unrecorded_names(ep) == before


def test_deepcopy_rebuild_and_repair_leave_the_same_names_all_recorded():
    repaired, rebuilt = export_cond(), export_cond()
    unrecorded_or_skip(rebuilt)
    repair(repaired)
    methods.deepcopy_rebuild(rebuilt)
    assert names(rebuilt) == names(repaired)
    assert find_unrecorded_names(rebuilt) == find_unrecorded_names(repaired) == []
    assert [m.code for m in methods.graph_modules(rebuilt)] == [
        m.code for m in methods.graph_modules(repaired)
    ]


def test_upstream_loop_baseline_covers_the_top_level_graph_only():
    ep = export_cond()
    unrecorded = unrecorded_or_skip(ep)
    if not any("." in name for name in unrecorded):
        not_reproduced("leaves no nested name unrecorded here")
    methods.run_upstream_top_level_loop(ep)
    left = find_unrecorded_names(ep)
    assert left and all("." in name for name in left)


def test_growing_graph_leaves_every_name_unrecorded_and_reset_restores_that():
    grown = synthetic.GrowingGraph()
    grown.grow_to(50)
    reset = methods.Unrepaired(grown.graph)
    assert len(find_unrecorded_names(grown.graph)) == 50
    assert repair(grown.graph).recorded == 50
    reset.reset()
    grown.grow_to(80)
    assert len(find_unrecorded_names(grown.graph)) == 80


def test_scaling_run_record_is_well_formed():
    result = synthetic.scaling_run([60, 120], reps=1)
    assert [p["nodes"] for p in result["points"]] == [60, 120]
    for p in result["points"]:
        assert p["unrecorded_all"] == p["nodes"]
        assert p["unrecorded_export_like"] == len(range(0, p["nodes"], synthetic.EXPORT_LIKE_EVERY))
        for key in ("repair", "repair_export_like", "top_level_loop", "hash_table_floor"):
            assert p[key]["n"] == p["reps"] and p[key]["median_s"] > 0
    for key in ("fit", "fit_export_like", "fit_top_level_loop", "fit_hash_table_floor"):
        assert {"slope_ns_per_node", "loglog_exponent", "per_node_ratio_large_to_small"} <= result[key].keys()


def test_linear_fit_recovers_slope_and_exponent_of_linear_data():
    points = [
        {"nodes": n, "repair": {"median_s": 2e-9 * n}, "repair_ns_per_node": 2.0} for n in (10, 100, 1000)
    ]
    fit = synthetic.fit_linear(points, "repair")
    assert fit["slope_ns_per_node"] == pytest.approx(2.0)
    assert fit["loglog_exponent"] == pytest.approx(1.0)
    assert fit["per_node_ratio_large_to_small"] == pytest.approx(1.0)


def test_hook_meter_counts_each_repaired_program():
    with hook(on=True) as meter:
        export_cond()
    assert meter.calls == 1 and meter.seconds > 0
    with hook(on=False) as meter:
        export_cond()
    assert meter.calls == 0


def test_hook_off_refuses_to_time_while_the_hook_is_installed():
    import torch_export_names

    with torch_export_names.installed(), pytest.raises(RuntimeError, match="installed already"):
        with hook(on=False):
            pass


@pytest.mark.parametrize("value", ["0", "two", ""])
def test_bad_layer_list_is_an_error_naming_the_value(value, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--layers", value])
    assert "--layers" in capsys.readouterr().err


def test_llama_size_record_and_report_are_well_formed(tmp_path):
    llama_transformer = import_or_skip(
        "executorch.examples.models.llama.llama_transformer", "needs ExecuTorch"
    )
    if not hasattr(llama_transformer, "construct_transformer"):  # the benchmark builds it with that
        pytest.skip("this ExecuTorch's example Llama has no construct_transformer (ExecuTorch 1.x API)")
    from benchmarks import llama, report

    class Quiet:
        def step(self, label):
            pass

    row = llama.measure_size(1, export_reps=1, micro_reps=2, qnn=False, progress=Quiet())
    assert row["nodes_total"] >= row["nodes_top"] > 0
    assert row["repair_recorded_per_rep"] == row["unrecorded_after_export"] > 0
    assert row["repair_leaves_unrecorded"] == row["deepcopy_leaves_unrecorded"] == 0
    assert row["deepcopy_keeps_names"]
    for key in (
        "export",
        "repair",
        "top_level_loop",
        "deepcopy",
        "record_node_names",
        "propagate_subgraph_names",
    ):
        assert row[key]["n"] == (1 if key == "export" else 2)
    results = {
        "command": "python -m benchmarks --test",
        "started": "now",
        "duration_s": 1.0,
        "settings": {"export_reps": 1, "micro_reps": 2, "synthetic_reps": 1, "htp_reps": 1},
        "environment": {
            "torch": torch.__version__,
            "executorch": "x",
            "python": "3",
            "cpu": "cpu",
            "cpus_usable": 1,
            "torch_num_threads": 1,
        },
        "load": {"before": [0.0], "after": [0.0], "min_1min": 0.0, "max_1min": 0.0},
        "llama": [row],
        "synthetic": synthetic.scaling_run([60, 120], reps=1),
        "htp_partition": {"available": False, "reason": "not available (adapter missing: test)"},
    }
    results["targets"] = targets.evaluate(results)
    # Not measured: the 1.2x target without instruction counts (Llama and synthetic), end to end.
    assert [t["met"] is None for t in results["targets"]] == [False, True, False, True, True, False, False]
    results["instructions"] = fake_instructions(layers=1, repair=110.0, loop=100.0)
    results["targets"] = targets.evaluate(results)
    loop_target = results["targets"][1]
    assert loop_target["met"] is True and "1L 1.10x" in loop_target["figure"]
    assert "wall clock" in loop_target["figure"]
    report.write_json(results, tmp_path / "results.json")
    assert json.loads((tmp_path / "results.json").read_text())["llama"][0]["layers"] == 1
    md = report.markdown(results, {})
    assert "| layers | nodes (top / all graphs) |" in md and "not available (adapter missing: test)" in md
    assert "| 1.10x |" in md and "## Instructions per call" in md


@pytest.mark.slow
def test_hf_benchmark_measures_a_two_layer_model():
    pytest.importorskip("transformers", reason="benchmarks/hf.py needs the bench extra (transformers)")
    _torchvision_shim.import_torchvision_if_installed()  # transformers imports it if installed
    from benchmarks import hf

    row = hf.measure("Qwen3 0.6B", full=False, reps=3, lowering_reps=0, layers=2)
    assert row["nodes_top"] > 50 and row["unrecorded_after_export"] >= 0
    assert row["repair"]["n"] == 3 and row["repair_over_loop"] > 0
    assert "| Qwen3 0.6B |" in hf.to_markdown([row], "header")


class _TwoOps(torch.nn.Module):
    def forward(self, x):
        return (x * 2).relu()


def test_hf_model_that_fails_to_lower_keeps_its_export_figures_and_says_which_hook_state(monkeypatch):
    from benchmarks import hf

    calls = []

    def lower(model):
        calls.append(torch_export_names.is_installed())
        if len(calls) == 2:
            raise RuntimeError("\nOperator torch._ops.aten.histc.default is not in Core ATen opset")
        return 1.0

    monkeypatch.setattr(hf, "build", lambda name, *, full, layers=None: _TwoOps())
    monkeypatch.setattr(hf, "export", lambda model: torch.export.export(model, (torch.ones(3),)))
    monkeypatch.setattr(hf, "lower_xnnpack", lower)
    row = hf.measure("Qwen3 0.6B", full=False, reps=3, lowering_reps=2)
    assert calls == [False, True]
    assert row["lowering_error"] == (
        "hook on: RuntimeError: Operator torch._ops.aten.histc.default is not in Core ATen opset"
    )
    assert row["repair"]["n"] == 3 and row["nodes_top"] == 4 and "lowering_on" not in row
    md = hf.to_markdown([row], "header")
    assert "| Qwen3 0.6B | failed: hook on: RuntimeError: Operator torch._ops.aten.histc" in md
    assert "| Qwen3 0.6B | 4 / 4, 1 |" in md


def test_hf_lowering_alternates_the_hook_and_measures_the_time_spent_in_it(monkeypatch):
    from benchmarks import hf

    calls = []

    def lower(model):  # builds one ExportedProgram, as a lowering does many
        calls.append(torch_export_names.is_installed())
        torch.export.export(model, (torch.ones(3),))
        return 2.0 if calls[-1] else 1.0

    monkeypatch.setattr(hf, "lower_xnnpack", lower)
    row = hf._lowering(_TwoOps(), 2)
    assert calls == [False, True, True, False]
    assert row["lowering_on_over_off"] == 2.0 and row["lowering_within_noise"] is False
    assert row["lowering_hook_programs"] == 1 and 0 < row["lowering_hook_time"]["median_s"] < 1.0
    full = {
        "model": "M",
        "nodes_top": 4,
        "nodes_total": 4,
        "graphs": 1,
        "export_s": 1.0,
        "repair": {"median_s": 1e-5},
        "top_level_loop": {"median_s": 1e-5},
        "repair_over_export": 1e-5,
        "repair_over_loop": 1.0,
        **row,
    }
    line = next(ln for ln in hf.to_markdown([full], "h").splitlines() if ln.startswith("| M | 1.00 s"))
    assert "| 2.000 | no | " in line and "of the run) | 1 |" in line


def _hf_row(model: str, share: float, instr_ratio: float | None) -> dict:
    row = {"model": model, "repair_over_export": share}
    if instr_ratio is not None:
        row["instructions"] = {"ratios": {"repair_to_top_level_loop": instr_ratio}}
    return row


def test_hook_on_and_off_are_within_noise_when_their_ranges_overlap():
    from benchmarks.llama import noise_verdict
    from benchmarks.timing import summarize

    # A run of 2026-12-03 (to_edge, 1 layer): the hook-on runs were faster; the former rule
    # (difference of medians against the smaller range, 0.12 s) called it "not within noise".
    off, on = summarize([3.53, 3.41, 3.50]), summarize([3.32, 3.49, 3.02])
    verdict = noise_verdict(off, on)
    assert verdict["within_noise"] and verdict["noise_s"] == pytest.approx(0.47)
    slower = noise_verdict(summarize([1.0, 1.1, 1.05]), summarize([1.3, 1.4, 1.35]))
    assert not slower["within_noise"]
    assert "ranges overlap" in slower["noise_rule"]


def test_hf_targets_name_the_worst_model_and_what_was_not_counted():
    met = targets.evaluate_hf([_hf_row("A", 0.0001, 0.8), _hf_row("B", 0.00015, 1.1)])
    assert [(t["met"], t["figure"]) for t in met] == [
        (True, "at most 0.0150% (B)"),
        (True, "at most 1.10x (B)"),
    ]
    missed = targets.evaluate_hf(
        [_hf_row("A", 0.0003, 1.3), _hf_row("B", 0.0001, None), {"model": "C", "error": "x"}]
    )
    assert [(t["met"], t["figure"]) for t in missed] == [
        (False, "at most 0.0300% (A)"),
        (False, "at most 1.30x (A); not counted: B"),
    ]
    # Below the bound where counted, but a model was not counted: not judged.
    partial = targets.evaluate_hf([_hf_row("A", 0.0001, 1.0), _hf_row("B", 0.0001, None)])
    assert partial[1]["met"] is None
    assert targets.evaluate_hf([{"model": "C", "error": "x"}]) == []


def test_hf_results_render_again_from_their_json(tmp_path):
    from benchmarks import hf

    row = _hf_row("A", 0.0001, 0.8)
    row.update(
        nodes_top=10,
        nodes_total=12,
        graphs=2,
        export_s=1.0,
        repair_over_loop=1.5,
        repair={"median_s": 1e-4},
        top_level_loop={"median_s": 1e-4 / 1.5},
    )
    row["instructions"].update(repair={"Ir": 8e3}, top_level_loop={"Ir": 1e4})
    (tmp_path / "hf.json").write_text(json.dumps({"header": "the header", "rows": [row]}))
    assert hf.main(["--render", str(tmp_path / "hf.json")]) == 0
    md = (tmp_path / "hf.md").read_text()
    assert md.startswith("the header\n")
    assert "| A | 10 / 12, 2 | 1.00 s | 100 us | 0.0100% | 66.7 us | 1.50x | 0.80x (8k / 10k) |" in md
    assert "- **met** repair <= 0.02% of torch.export time, every model: at most 0.0100% (A)" in md


def fake_instructions(*, layers: int, repair: float, loop: float, nodes: int = 100) -> dict:
    """An ``instructions.measure`` record with the given counts per call (one Llama size, one synthetic)."""
    row = {
        "layers": layers,
        "nodes_top": nodes,
        "nodes_total": nodes,
        "graphs": 1,
        "repair": {"Ir": repair},
        "top_level_loop": {"Ir": loop},
    }
    instructions._add_ratios(row, "llama")
    syn = {
        "nodes": nodes,
        "repair": {"Ir": 3 * loop},
        "repair_export_like": {"Ir": repair},
        "top_level_loop": {"Ir": loop},
    }
    instructions._add_ratios(syn, "synthetic")
    return {
        "available": True,
        "tool": "callgrind (fake)",
        "reps": 3,
        "warmup": 2,
        "cache_sim": False,
        "duration_s": 1.0,
        "llama": [row],
        "synthetic": [syn],
    }


def test_export_share_target_says_where_the_upstream_loop_alone_is_over_the_bound():
    def row(layers, export_s, repair_s, loop_s):
        return {
            "layers": layers,
            "graphs": 1,
            "export": {"median_s": export_s},
            "top_level_loop": {"median_s": loop_s},
            "ratios": {
                "repair_to_export": repair_s / export_s,
                "repair_to_top_level_loop": repair_s / loop_s,
                "deepcopy_to_repair": 100.0,
            },
        }

    share = targets.evaluate({"llama": [row(1, 1.0, 1e-4, 5e-5), row(256, 40.0, 0.0108, 0.0094)]})[0]
    assert share["met"] is False
    assert share["figure"] == (
        "repair/export: 1L 0.0100%, 256L 0.0270%; "
        "the upstream top-level loop alone is over it too: 256L 0.0235%"
    )


def test_loop_targets_are_judged_on_instructions_and_not_measured_without_them():
    rows = [{"layers": 1, "graphs": 1, "ratios": {"repair_to_top_level_loop": 2.5}}]
    wall_only = targets._loop_target(rows, None)
    assert wall_only["met"] is None and "2.50x" in wall_only["figure"]
    assert targets._loop_target(rows, {"available": False, "reason": "no valgrind"})["met"] is None
    assert targets._loop_target(rows, fake_instructions(layers=1, repair=119, loop=100))["met"] is True
    assert targets._loop_target(rows, fake_instructions(layers=1, repair=121, loop=100))["met"] is False
    # Synthetic: judged on both states; every name unrecorded is 3x here.
    syn = targets._synthetic_loop_target(fake_instructions(layers=1, repair=100, loop=100))
    assert syn["met"] is False and "1.00x / 3.00x" in syn["figure"]


def test_callgrind_dump_is_parsed_for_its_label_and_totals(tmp_path):
    dump = tmp_path / "callgrind.out.123.4"
    dump.write_text(
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 123\n"
        "desc: Trigger: Client Request: llama1:repair\n\npositions: line\nevents: Ir Dr\n"
        "fl=(1) x.c\nfn=(1) f\n0 10 2\nsummary: 1234 56\ntotals: 1234 56\n"
    )
    assert instructions._parse_dump(dump) == ("llama1:repair", {"Ir": 1234, "Dr": 56})
    (tmp_path / "not_a_dump").write_text("events: Ir\nsummary: 1\n")
    with pytest.raises(ValueError):
        instructions._parse_dump(tmp_path / "not_a_dump")


@pytest.mark.slow
@pytest.mark.callgrind  # outside CI (docs/development.md)
def test_instruction_counts_of_a_one_layer_program_under_callgrind():
    """The child really runs under callgrind and counts both methods (about a minute)."""
    pytest.importorskip("executorch.examples.models.llama.llama_transformer", reason="needs ExecuTorch")
    result = instructions.measure([1], [], reps=1)
    if not result["available"]:
        pytest.skip(result["reason"])
    (row,) = result["llama"]
    assert row["repair"]["Ir"] > 0 and row["top_level_loop"]["Ir"] > 0
    assert row["ratios"]["repair_to_top_level_loop"] == row["repair"]["Ir"] / row["top_level_loop"]["Ir"]


@pytest.mark.slow
@pytest.mark.callgrind  # outside CI (docs/development.md)
def test_instruction_counts_of_a_two_layer_hugging_face_model_under_callgrind(tmp_path, monkeypatch):
    """An architecture from benchmarks.hf, exported in the child as benchmarks.hf exports it."""
    pytest.importorskip("transformers", reason="benchmarks/hf.py needs the bench extra (transformers)")
    # transformers imports torchvision whenever it is installed; CI's cannot load beside the CPU
    # torch without the shim (tests/_torchvision_shim.py), in the child as here.
    _torchvision_shim.shim_python_subprocesses(tmp_path, monkeypatch)
    # Two models: the second one's counts came out as -9.2e18 when one child built each model
    # between CALLGRIND_STOP/START_INSTRUMENTATION.
    result = instructions.measure([], [], hf_models=["Qwen3 0.6B", "Llama 3.2 1B"], hf_layers=2, reps=1)
    if not result["available"]:
        pytest.skip(result["reason"])
    assert [row["model"] for row in result["hf"]] == ["Qwen3 0.6B", "Llama 3.2 1B"]
    for row in result["hf"]:
        assert "error" not in row, row  # the model failed in the callgrind child
        assert row["nodes_top"] > 50, row
        assert row["repair"]["Ir"] > 0 and row["top_level_loop"]["Ir"] > 0
        assert row["ratios"]["repair_to_top_level_loop"] == row["repair"]["Ir"] / row["top_level_loop"]["Ir"]
        assert 0.3 < row["ratios"]["repair_to_top_level_loop"] < 3
    assert "| Llama 3.2 1B |" in instructions.format_table(result)


def test_recompile_benchmark_writes_one_row_per_program_and_leaves_the_guard_in_place(tmp_path):
    from benchmarks import recompile
    from torch_export_names import codegen_guard

    import_or_skip("executorch.examples.models.llama", "the Llama decoder is ExecuTorch's: not installed")
    llama = import_or_skip("executorch.examples.models.llama.llama_transformer", "needs ExecuTorch")
    if not hasattr(llama, "construct_transformer"):  # the benchmark builds it with that; 0.5 has none
        pytest.skip("this ExecuTorch's example Llama has no construct_transformer (ExecuTorch 1.x API)")
    argv = ["--layers", "1", "--nodes", "200", "--inputs", "20", "--reps", "1", "--out", str(tmp_path)]
    assert recompile.main(argv) == 0
    rows = json.loads((tmp_path / "recompile.json").read_text())["rows"]
    # Three graphs, each (a) as built, (b) an input named like an unread global, (c) called torch:
    # only (c), the real collision, changes the code.
    assert [r["identical_code"] for r in rows] == [True, True, False] * 3
    assert all(r["ratio"] > 0 for r in rows) and codegen_guard.is_installed()
    assert "| program |" in (tmp_path / "recompile.md").read_text()


def test_startup_benchmark_times_run_and_the_env_var_and_checks_what_they_ran(tmp_path, capsys):
    """``python -m benchmarks.startup`` on the workload that imports nothing: each way's start is
    measured, run's program saw no torch, the ratio is written."""
    from benchmarks import startup

    assert startup.main(["--reps", "1", "--workloads", "empty", "--out", str(tmp_path)]) == 0
    (result,) = json.loads((tmp_path / "startup.json").read_text())["workloads"]
    assert set(result["figures"]) == {"env var", "run", "python"}
    assert result["run_over_env_var"]["cpu_s"] > 0
    assert result["commands"]["run"].endswith("run empty.py")
    assert "| empty | run |" in (tmp_path / "startup.md").read_text()
