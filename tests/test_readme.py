"""The README: its Quick start is what CI runs, its releases and cost figures are those of the
committed matrix and benchmark results, and each of its claims names the test that guards it
(``CLAIMS``); docs/development.md's layout diagram matches the files."""

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def quick_start_commands():
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands():
    commands = quick_start_commands()
    assert len(commands) == 2, commands
    assert "torch-export-names doctor" in commands[0]
    assert commands[1] == "bash scripts/test.sh"
    assert "python -m pytest tests --slow" in (ROOT / "scripts" / "test.sh").read_text()


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quick_start_commands()[1] in ci


def test_layout_diagram_matches_the_package():
    development = (ROOT / "docs" / "development.md").read_text()
    layout = development.split("## Layout", 1)[1].split("```", 2)[1]
    listed = set(re.findall(r"\b(\w+\.py)\b", layout))
    package = ROOT / "torch_export_names"
    assert {p.name for p in package.glob("*.py")} <= listed
    for sub in (d for d in package.iterdir() if (d / "__init__.py").exists()):
        assert f"{sub.name}/" in layout, sub.name
    existing = {p.name for p in ROOT.rglob("*.py") if not any(part.startswith(".") for part in p.parts)}
    assert listed <= existing, listed - existing


def _normalized(text: str) -> str:
    return " ".join(text.split())


def test_every_file_the_readme_links_to_exists():
    links = [t for t in re.findall(r"\]\(([^)#]+)\)", README) if "://" not in t]
    assert links, "found no link in the README: the pattern is out of date"
    assert [t for t in links if not (ROOT / t).is_file()] == []


# --- the supported releases: README, scripts/matrix.sh, patches/, docs/compatibility.md, CI -------


def readme_releases() -> list[str]:
    """The releases the README's "Supported torch" names: "each of the twelve releases (2.4.1, ...)"."""
    found = re.search(r"each of the twelve releases \(([\d., ]+)\)", _normalized(README))
    assert found, "the README no longer lists the twelve releases"
    return found.group(1).split(", ")


def test_scripts_matrix_runs_the_suite_and_the_patch_check_on_the_readme_releases():
    matrix = (ROOT / "scripts" / "matrix.sh").read_text()
    versions = re.search(r"^VERSIONS=\(([^)]*)\)$", matrix, re.M).group(1).split()
    assert versions == readme_releases() and len(versions) == 12
    assert "-m pytest tests --slow" in matrix and "-m torch_export_names patch verify" in matrix


def test_every_readme_release_has_a_patch():
    from torch_export_names._torch_patch import store

    assert store.available() == readme_releases()


def compatibility_rows() -> dict[str, list[str]]:
    """docs/compatibility.md's table: release -> its cells, by the column headings."""
    lines = (ROOT / "docs" / "compatibility.md").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| torch | commit |"))
    heads = [c.strip() for c in lines[header].strip("|").split("|")]
    rows = {}
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        cells = dict(zip(heads, (c.strip() for c in line.strip("|").split("|"))))
        rows[cells["torch"]] = cells
    return rows


def test_every_release_of_the_compatibility_matrix_needs_the_hook_on_stock_torch():
    rows = compatibility_rows()
    assert list(rows) == readme_releases()
    assert {v: r["hook needed on stock torch"] for v, r in rows.items()} == dict.fromkeys(rows, "yes")


def test_pip_install_kept_the_torch_of_every_release_in_the_compatibility_matrix():
    rows = compatibility_rows()
    assert list(rows) == readme_releases()
    kept = {v: r["`pip install .` keeps this torch"] for v, r in rows.items()}
    assert [v for v, cell in kept.items() if not cell.startswith(f"yes (`{v}+")] == []


def test_ci_runs_the_suite_on_the_pinned_torch_and_on_2_4_1():
    ci = (ROOT / ".ci" / "run").read_text()
    pinned = re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M).group(1)
    assert pinned == "2.13.0" and quick_start_commands()[1] in ci.splitlines()  # test.sh: -c constraints.txt
    assert re.search(r"^OLDEST=(\S+)$", ci, re.M).group(1) == "2.4.1"
    assert '"$old/bin/pip" install -q "torch==$OLDEST"' in ci
    assert '"$old/bin/python" -m pytest tests -m "not slow"' in ci  # the fast tier


# --- the README's cost figures: the range of the committed benchmark results --------------------

RESULTS = ROOT / "benchmarks" / "results"


def _committed_results() -> list[dict]:
    """Every committed timing result (instructions-*.json count instructions, not time)."""
    paths = [p for p in sorted(RESULTS.rglob("*.json")) if not p.name.startswith("instructions-")]
    return [json.loads(p.read_text()) for p in paths]


def repair_shares() -> list[float]:
    """repair's time over torch.export's, in every committed result (Llama decoders, HF models)."""
    shares = []
    for result in _committed_results():
        shares += [r["ratios"]["repair_to_export"] for r in result.get("llama", [])]
        shares += [r["repair_over_export"] for r in result.get("rows", []) if "repair_over_export" in r]
    return shares


def hook_shares() -> list[float]:
    """The hook's time over an ExecuTorch lowering's, in every committed result."""
    shares = []
    for result in _committed_results():
        shares += [e["hook_time_to_run"] for e in result.get("end_to_end", [])]
        shares += [
            r["lowering_hook_time"]["median_s"] / r["lowering_on"]["median_s"]
            for r in result.get("rows", [])
            if "lowering_hook_time" in r
        ]
    return shares


def readme_cost(what: str) -> tuple[str, str]:
    """The README's range for ``what`` (```repair``` or ``the hook``), as written: ("0.002", "0.03")."""
    found = re.search(rf"{re.escape(what)}: ([\d.]+)-([\d.]+)%", _normalized(README))
    assert found, f"the README no longer gives a cost for {what}"
    return found.group(1), found.group(2)


def _percent_range(shares: list[float]) -> tuple[str, str]:
    """The lowest and highest share as percentages rounded to one significant figure."""
    return f"{min(shares) * 100:.1g}", f"{max(shares) * 100:.1g}"


def test_the_readme_repair_cost_is_the_range_of_the_committed_benchmarks():
    shares = repair_shares()
    assert len(shares) >= 20, "fewer results than committed: the reader is out of date"
    assert readme_cost("`repair`") == _percent_range(shares)


def test_the_readme_hook_cost_is_the_range_of_the_committed_benchmarks():
    shares = hook_shares()
    assert len(shares) >= 10, "fewer results than committed: the reader is out of date"
    assert readme_cost("the hook") == _percent_range(shares)


# --- every user-facing claim of the README, and the test that guards it -------------------------

# (a quote of the README, exact but for line breaks; the test that fails if it stops being true).
# A claim several tests guard is listed once per test; a parametrized test is named without its id.
CLAIMS = [
    # what the package fixes
    (
        "Fixes `RuntimeError: Node redefined name mul_1!` (and its cousins) after `torch.export`.",
        "tests/test_cases.py::test_fails_without_repair",
    ),
    (
        "Fixes `RuntimeError: Node redefined name mul_1!` (and its cousins) after `torch.export`.",
        "tests/test_cases.py::test_passes_with_repair",
    ),
    (
        "inputs take the user's argument names, so the model's own `mul` becomes `mul_1` to make room "
        "for an input called `mul`",
        "tests/test_reserve_node_names.py::test_top_level_collision_is_fixed",
    ),
    (
        "subgraph placeholders are renamed",
        "tests/test_reserve_node_names.py::test_cond_branch_collision_is_fixed",
    ),
    (
        "a later pass that adds a node (a backend's decomposition, a write-back, a quantizer) can be "
        "handed a name that is already taken, and the graph no longer lints: `Node redefined name mul_1!`",
        "tests/test_hook.py::test_entry_point_collides_without_hook",
    ),
    (
        "so `ep.module()` silently computes wrong results (`inf`, `nan`)",
        "tests/test_legal_names.py::test_input_named_like_a_float_constant_changes_results_without_repair",
    ),
    (
        "or crashes (`device`, `torch`)",
        "tests/test_legal_names.py::test_input_named_like_a_codegen_global_breaks_module_without_repair",
    ),
    (
        "Every torch from 2.4.0 to 2.15.0 is affected",
        "tests/test_readme.py::test_every_release_of_the_compatibility_matrix_needs_the_hook_on_stock_torch",
    ),
    ("Every torch from 2.4.0 to 2.15.0 is affected", "tests/test_cases.py::test_fails_without_repair"),
    (
        "This package records every node name of every (sub)graph right after export",
        "tests/test_hook.py::test_entry_point_is_repaired_with_hook",
    ),
    (
        "renames only the names that shadow a global of the generated code",
        "tests/test_shadowing_rule.py::test_a_kept_name_stays_and_every_construct_computes_eager_results",
    ),
    # Quick start
    ("with Python >= 3.10", "tests/test_project.py::test_python_requires_is_3_10_or_later"),
    (
        "`-c constraints.txt` pins the tested pair, torch 2.13.0 and ExecuTorch 1.5.1",
        "tests/test_project.py::test_constraints_pin_the_tested_pair",
    ),
    (
        "In a project pinned to an older torch (2.4 or later), install the package beside it",
        "tests/test_readme.py::test_pip_install_kept_the_torch_of_every_release_in_the_compatibility_matrix",
    ),
    (
        "`pip install .` keeps the torch you have",
        "tests/test_project.py::test_installing_the_package_never_replaces_the_installed_torch",
    ),
    (
        "The first prints a report to paste into a bug: versions",
        "tests/test_doctor.py::test_report_names_the_versions",
    ),
    (
        "whether this torch is affected (or patched)",
        "tests/test_doctor.py::test_doctor_prints_the_report_and_nothing_else",
    ),
    (
        "whether this torch is affected (or patched)",
        "tests/test_patches.py::test_doctor_reports_a_patched_torch",
    ),
    (
        "whether the hook is active and how it got there",
        "tests/test_doctor.py::test_report_says_how_the_hook_got_there",
    ),
    (
        "each reproduction case run without and with the repair",
        "tests/test_doctor.py::test_doctor_prints_the_report_and_nothing_else",
    ),
    (
        "the next step for your situation",
        "tests/test_doctor.py::test_report_ends_with_the_next_step_for_the_situation",
    ),
    (
        "The second runs the whole test suite",
        "tests/test_readme.py::test_quick_start_has_exactly_two_commands",
    ),
    (
        "CI runs exactly this line in a fresh virtual environment, `.ci/run`",
        "tests/test_readme.py::test_ci_runs_the_readme_test_command",
    ),
    # Use
    ("torch_export_names.repair(ep)", "tests/test_cases.py::test_passes_with_repair"),
    (
        "Repair every program torch hands out, whatever imported torch.export first.",
        "tests/test_hook.py::test_entry_point_is_repaired_with_hook",
    ),
    (
        "torch_export_names.install() # or: with torch_export_names.installed(): ...",
        "tests/test_hook.py::test_every_reproduction_passes_with_only_install_in_front",
    ),
    (
        "torch-export-names run my_export_script.py --its-args",
        "tests/test_zero_code_change.py::test_run_script",
    ),
    ("run -m my.module", "tests/test_zero_code_change.py::test_run_module"),
    ("run app_dir/", "tests/test_cli_run.py::test_folder_with_main_runs_like_python"),
    (
        "TORCH_EXPORT_NAMES=1 python my_export_script.py # via the installed .pth file",
        "tests/test_zero_code_change.py::test_env_var_installs_the_hook",
    ),
    (
        "`run` starts the program as `python` would (same `sys.path[0]`, `__file__` and exit status)",
        "tests/test_cli_run.py::test_script_gets_an_absolute_file_and_its_folder_first_on_the_path",
    ),
    (
        "`run` starts the program as `python` would (same `sys.path[0]`, `__file__` and exit status)",
        "tests/test_cli_run.py::test_program_exit_status_and_traceback_are_its_own",
    ),
    (
        "sets `TORCH_EXPORT_NAMES=1`, so its subprocesses are covered too",
        "tests/test_zero_code_change.py::test_run_covers_the_python_subprocesses_of_the_program",
    ),
    (
        "The `.pth` file, installed by `pip install .` and `pip install -e .` alike",
        "tests/test_project.py::test_the_wheel_puts_the_pth_file_in_site_packages",
    ),
    (
        "The `.pth` file, installed by `pip install .` and `pip install -e .` alike",
        "tests/test_editable_install.py::test_editable_install_has_the_pth_file",
    ),
    (
        "imports neither torch nor this package while the variable is unset",
        "tests/test_zero_code_change.py::test_without_env_var_startup_imports_neither_torch_nor_the_package",
    ),
    (
        "Details: [docs/reference.md](docs/reference.md).",
        "tests/test_readme.py::test_every_file_the_readme_links_to_exists",
    ),
    # the hook
    (
        "**The hook** wraps `ExportedProgram.__init__`",
        "tests/test_hook.py::test_uninstall_restores_the_original_object",
    ),
    (
        "which every producer of an `ExportedProgram` ends in (`export`, `run_decompositions`, `load`, "
        "`draft_export`, ...)",
        "tests/test_hook.py::test_entry_point_is_repaired_with_hook",
    ),
    (
        "so it also covers code that imported `export` before `install()`",
        "tests/test_hook.py::test_entry_point_is_repaired_with_hook",
    ),
    (
        "There is at most one wrapper, whoever asked for it",
        "tests/test_hook.py::test_install_and_installed_blocks_share_one_wrapper",
    ),
    (
        "There is at most one wrapper, whoever asked for it",
        "tests/test_zero_code_change.py::test_env_var_and_an_early_install_wrap_once_and_uninstall_completely",
    ),
    (
        "`installed()` blocks are counted, so one thread's block closing never removes the hook from under "
        "another's",
        "tests/test_hook.py::test_one_threads_block_closing_leaves_the_other_threads_hook",
    ),
    (
        "once nobody wants the hook the original function is back",
        "tests/test_hook.py::test_uninstall_inside_a_block_keeps_the_hook_until_the_block_closes",
    ),
    (
        "If a repair fails, the hook logs a warning and leaves the program exactly as torch built it",
        "tests/test_hook.py::test_failing_repair_leaves_the_program_as_torch_returned_it",
    ),
    (
        "(`install(strict=True)` raises instead)",
        "tests/test_hook.py::test_failing_repair_raises_after_install_strict",
    ),
    # the API table
    (
        "### API (all importable from `torch_export_names`)",
        "tests/test_api.py::test_every_name_in_the_readme_api_table_is_exported",
    ),
    (
        "### API (all importable from `torch_export_names`)",
        "tests/test_api.py::test_the_readme_api_table_gives_each_functions_signature",
    ),
    (
        "`from torch_export_names.executorch import ConstantAwareQnnPartitioner`",
        "tests/test_api.py::test_every_package_attribute_the_readme_uses_resolves_as_written",
    ),
    (
        "Records every node name of every graph (nested ones included) in its name space",
        "tests/test_reserve_node_names.py::test_unrecorded_names_are_qualified_with_the_submodule_path",
    ),
    (
        "renames the names that shadow (below)",
        "tests/test_legal_names.py::test_input_named_like_a_codegen_global_runs_with_repair",
    ),
    (
        "names HOP subgraph placeholders after their operands",
        "tests/test_propagate_subgraph_names.py::test_autocast_placeholder_takes_operand_name_and_colliding_node_is_resuffixed",
    ),
    (
        "`RepairReport(recorded, renamed, legalized)`",
        "tests/test_api.py::test_repair_reports_the_names_it_recorded_renamed_and_legalized",
    ),
    (
        "`obj` is an `ExportedProgram`, `GraphModule` or `Graph`",
        "tests/test_api.py::test_repair_accepts_a_program_a_graph_module_or_a_graph",
    ),
    ("What the hook applies.", "tests/test_hook.py::test_the_hook_applies_repair"),
    (
        "`RepairNamesPass()(gm)` returns `PassResult(gm, modified)`",
        "tests/test_repair_names_pass.py::test_is_a_pass_base_that_returns_a_pass_result",
    ),
    (
        "`RepairNamesPass()(gm)` returns `PassResult(gm, modified)`",
        "tests/test_repair_names_pass.py::test_second_run_reports_unmodified",
    ),
    (
        "use it in torch's `PassManager`",
        "tests/test_repair_names_pass.py::test_in_torch_pass_manager_a_later_pass_can_add_a_node_named_like_an_op",
    ),
    (
        "or an ExecuTorch pass list",
        "tests/test_repair_names_pass.py::test_in_executorch_pass_manager_a_later_pass_can_add_a_node_named_like_an_op",
    ),
    (
        "For an `ExportedProgram`, call `repair(ep)`.",
        "tests/test_repair_names_pass.py::test_an_exported_program_is_refused_with_what_to_call_instead",
    ),
    (
        "Only the recording; idempotent. Returns how many names were newly recorded.",
        "tests/test_reserve_node_names.py::test_is_idempotent",
    ),
    (
        "Only the renaming of names that shadow; the graph signature, `ep.module()`'s arguments and "
        "the guards follow.",
        "tests/test_legal_names.py::test_legalize_node_names_renames_only_what_shadows_and_the_signature_follows",
    ),
    (
        "Only the naming of `wrap_with_autocast`, `while_loop`, `scan`",
        "tests/test_propagate_subgraph_names.py::test_autocast_placeholder_takes_operand_name_and_colliding_node_is_resuffixed",
    ),
    (
        "Only the naming of `wrap_with_autocast`, `while_loop`, `scan`",
        "tests/test_propagate_subgraph_names.py::test_while_loop_cond_and_body_take_carried_names",
    ),
    (
        "Only the naming of `wrap_with_autocast`, `while_loop`, `scan`",
        "tests/test_propagate_subgraph_names.py::test_scan_node_named_like_an_operand_is_resuffixed",
    ),
    (
        "(and `cond`, `map`, set-grad regions) subgraph placeholders",
        "tests/test_propagate_subgraph_names.py::test_cond_map_and_set_grad_placeholders_take_their_operands_names",
    ),
    (
        "after recording every name; a name that shadows stays",
        "tests/test_propagate_subgraph_names.py::test_propagate_subgraph_names_records_names_and_leaves_names_that_shadow",
    ),
    (
        'Node names their graph\'s name space does not know (`"submod_1.t_1"`). Empty after `repair`.',
        "tests/test_reserve_node_names.py::test_unrecorded_names_are_qualified_with_the_submodule_path",
    ),
    (
        "Node names that shadow, and shadowing `forward` arguments of `ep.module()`. Empty after `repair`.",
        "tests/test_legal_names.py::test_find_illegal_names_reports_shadowing_nodes_and_forward_arguments",
    ),
    (
        "Whether this torch leaves names unrecorded or illegal",
        "tests/test_api.py::test_is_affected_matches_what_export_leaves",
    ),
    (
        "found by exporting a small model once",
        "tests/test_api.py::test_is_affected_exports_a_small_model_once_per_process",
    ),
    (
        "`torch_export_names.hook.status()` says who asked for it",
        "tests/test_hook.py::test_status_says_who_asked_for_the_hook",
    ),
    (
        "`hook.suspended()` turns it off in one thread's block",
        "tests/test_hook.py::test_suspended_exports_are_as_torch_returns_them",
    ),
    (
        "`hook.suspended()` turns it off in one thread's block",
        "tests/test_hook.py::test_suspended_in_one_thread_leaves_the_other_threads_exports_repaired",
    ),
    (
        "What `strict=True` raises where this torch lacks the torch.fx private state the package uses",
        "tests/test_private_state.py::test_missing_state_raises_with_strict",
    ),
    (
        "without `strict` the functions warn once and leave the program as it was",
        "tests/test_private_state.py::test_missing_state_warns_once_and_changes_nothing",
    ),
    (
        "The one warning category this package emits.",
        "tests/test_structure.py::test_every_warning_the_package_emits_is_a_torch_export_names_warning",
    ),
    (
        "`torch_export_names.audit.audited()` reports which code adds nodes to graphs at risk",
        "tests/test_audit.py::test_records_a_creation_on_a_graph_with_unrecorded_names",
    ),
    (
        "`torch_export_names.audit.audited()` reports which code adds nodes to graphs at risk",
        "tests/test_audit.py::test_names_the_first_frame_outside_torch_and_this_package",
    ),
    (
        "keeps constant-only partitions off Qualcomm's HTP",
        "tests/test_executorch_lowering.py::test_own_constant_partition_stays_on_cpu_decomposed",
    ),
    # which names are renamed
    (
        "Only a name that changes what torch.fx's generated code means, or makes it invalid.",
        "tests/test_shadowing_rule.py::test_a_renamed_name_breaks_stock_torch_and_runs_after_repair",
    ),
    (
        "(on torch 2.13: `torch`, `inf`, `nan`, `device`, `pytree`, `fx_pytree`, `getattr`, `slice`, "
        "`Ellipsis`, plus the parameter `self`)",
        "tests/test_shadowing_rule.py::test_on_torch_2_13_the_generated_code_writes_the_globals_the_readme_lists",
    ),
    (
        "renames those whether or not the code reads them today",
        "tests/test_shadowing_rule.py::test_a_generated_code_global_is_renamed_even_where_the_program_never_reads_it",
    ),
    (
        "Also renamed: keywords, `__debug__`, names that are not identifiers",
        "tests/test_shadowing_rule.py::test_keywords_debug_and_names_that_are_not_identifiers_are_renamed",
    ),
    (
        "builtins the graph itself calls",
        "tests/test_shadowing_rule.py::test_a_builtin_the_graph_calls_is_renamed_only_in_that_graph",
    ),
    (
        "a placeholder whose generated local would overwrite a later argument (`input` beside `input_1`)",
        "tests/test_renamed_arguments.py::test_a_kept_builtin_name_is_renamed_where_fx_would_clobber_the_next_argument",
    ),
    (
        "Every other name stays exactly as torch gave it, `input`, `type` and `len` included",
        "tests/test_shadowing_rule.py::test_the_rule_keeps_most_builtins_and_renames_what_the_code_reads",
    ),
    (
        "Every other name stays exactly as torch gave it, `input`, `type` and `len` included",
        "tests/test_shadowing_rule.py::test_a_kept_name_stays_and_every_construct_computes_eager_results",
    ),
    (
        "`tests/test_shadowing_rule.py` proves the rule over every name in `torch.fx.graph._illegal_names`",
        "tests/test_shadowing_rule.py::test_a_renamed_name_breaks_stock_torch_and_runs_after_repair",
    ),
    # renamed arguments
    (
        "A renamed argument is renamed everywhere the program refers to it (signature, `ep.module()`'s "
        "`forward`, the guards)",
        "tests/test_renamed_arguments.py::test_a_renamed_argument_is_renamed_in_the_guards",
    ),
    (
        "A renamed argument is renamed everywhere the program refers to it (signature, `ep.module()`'s "
        "`forward`, the guards)",
        "tests/test_legal_names.py::test_input_mutation_and_order_survive_the_rename",
    ),
    (
        "with one `TorchExportNamesWarning` per name",
        "tests/test_legal_names.py::test_each_renamed_argument_warns_once",
    ),
    (
        "`ep.module()` takes it in the same position as before",
        "tests/test_legal_names.py::test_positional_argument_is_still_taken_by_position_after_the_rename",
    ),
    (
        "`m(x, inf_1=t)` works, `m(x, inf=t)` raises",
        "tests/test_legal_names.py::test_keyword_argument_is_renamed_with_one_warning_and_accepted_by_its_new_name",
    ),
    (
        'A `**kwargs` key that is not an identifier (`{"my-input": y}`) becomes `my_input`: call '
        "`m(x, my_input=y)`; like every argument exported by keyword, torch does not take it by position.",
        "tests/test_renamed_arguments.py::test_a_keyword_key_that_is_not_an_identifier_becomes_one",
    ),
    # supported torch
    (
        "Every torch from 2.4 (the release that brought the renaming pass) to 2.15, detected by feature, "
        "not by version",
        "tests/test_structure.py::test_the_torch_version_is_reported_never_branched_on",
    ),
    (
        "`install_requires` is `torch>=2.4`",
        "tests/test_project.py::test_install_requires_is_torch_2_4_or_later_and_nothing_else",
    ),
    (
        "`scripts/matrix.sh` runs the whole suite and the patch check on each of the twelve releases",
        "tests/test_readme.py::test_scripts_matrix_runs_the_suite_and_the_patch_check_on_the_readme_releases",
    ),
    (
        "CI runs the suite on 2.13.0 and on 2.4.1.",
        "tests/test_readme.py::test_ci_runs_the_suite_on_the_pinned_torch_and_on_2_4_1",
    ),
    # fixing torch itself
    (
        "one `git format-patch` file per supported release",
        "tests/test_readme.py::test_every_readme_release_has_a_patch",
    ),
    (
        "one torch.fx helper that sets *and records* a node name, used wherever torch.export assigns one",
        "tests/test_patches.py::test_every_entry_point_records_all_names_with_the_patch",
    ),
    ("and the same shadowing rule", "tests/test_patches.py::test_case_passes_with_the_patch_and_no_hook"),
    (
        "`torch-export-names patch status` says whether your torch carries the patch (per file: stock, "
        "patched or modified otherwise)",
        "tests/test_patches.py::test_cli_status_exits_0_for_stock_and_patched_and_1_for_modified",
    ),
    (
        "`patch verify` runs the reproductions on your torch with the patch and without it",
        "tests/test_patches.py::test_case_passes_with_the_patch_and_no_hook",
    ),
    (
        "`patch verify` runs the reproductions on your torch with the patch and without it",
        "tests/test_patches.py::test_case_fails_without_the_patch",
    ),
    (
        "a throw-away overlay of it is the other one; the installed torch is never changed",
        "tests/test_patches.py::test_patched_run_imports_torch_from_the_overlay_without_the_hook",
    ),
    (
        "a throw-away overlay of it is the other one; the installed torch is never changed",
        "tests/test_patches.py::test_verify_leaves_the_installed_torch_as_released",
    ),
    (
        "a throw-away overlay of it is the other one; the installed torch is never changed",
        "tests/test_patches.py::test_verify_leaves_a_patched_torch_as_it_was",
    ),
    ("`patch list`", "tests/test_patches.py::test_cli_list_names_the_patch_of_every_release"),
    (
        "`patch apply [--dry-run]` (in place, only if every file has the release's sha256, with a backup)",
        "tests/test_patches.py::test_apply_writes_the_patched_files_and_keeps_a_backup",
    ),
    (
        "`patch apply [--dry-run]` (in place, only if every file has the release's sha256, with a backup)",
        "tests/test_patches.py::test_apply_refuses_a_file_that_is_not_the_release_and_changes_nothing",
    ),
    (
        "`patch apply [--dry-run]` (in place, only if every file has the release's sha256, with a backup)",
        "tests/test_patches.py::test_apply_dry_run_prints_the_diff_and_changes_nothing",
    ),
    ("`patch revert`", "tests/test_patches.py::test_revert_restores_the_release_files"),
    # Known issues
    (
        "Arguments renamed by `repair` keep their position, but a keyword call must use the new name",
        "tests/test_legal_names.py::test_keyword_argument_is_renamed_with_one_warning_and_accepted_by_its_new_name",
    ),
    (
        "an input called `_prop_tensor_constant0` fails with `SyntaxError: duplicate argument` even "
        "with the hook",
        "tests/test_consumers.py::test_constant_prop_placeholder_target_shared_with_an_input",
    ),
    (
        "Qualcomm's `ConcatObserver` finds observers by `node.name`, so an input called "
        "`activation_post_process_1` misleads it, hook or not.",
        "tests/test_consumers.py::test_qualcomm_concat_observer_finds_observers_by_node_name",
    ),
    (
        "a KV cache written back through `split` views whose write-back scatter stays on the CPU leaves "
        "the update's partition reading the cache as a static tensor, and HTP refuses it (`Failed to "
        "generate Qnn context binary`), with `QnnPartitioner` as with the adapter.",
        "tests/test_executorch_lowering.py::test_kv_cache_written_back_through_split_views_on_the_cpu_is_refused_by_htp",
    ),
    (
        "ExecuTorch 1.5.1 cannot lower a QNN delegate whose mutated-buffer output is also read by an op left "
        "on the CPU (`Tried to erase Node getitem_1 but it still had 1 users`), with or without the adapter.",
        "tests/test_executorch_lowering.py::test_mutated_buffer_output_read_by_a_cpu_op_does_not_lower",
    ),
    (
        "ExecuTorch's `DecomposeAtan2` alone leaves `eq.Tensor(x, 0.0)`, which does not run eagerly until "
        "`LiftConstantScalarOperands` (later in the same pipeline) lifts the scalar.",
        "tests/test_executorch_pipelines.py::test_decompose_atan2_alone_leaves_an_eq_that_runs_only_after_lift_constant_scalar_operands",
    ),
    (
        "ExecuTorch's Samsung backend (1.5.1) has no DecomposeRoll pass yet",
        "tests/test_consumers.py::test_samsung_backend_has_no_roll_decomposition",
    ),
    (
        "its partitioner needs the Samsung SDK",
        "tests/test_consumers.py::test_samsung_partitioner_needs_the_samsung_sdk",
    ),
    (
        "the Samsung report's model is the `qnn-roll` case, run through Qualcomm's `DecomposeRoll`",
        "tests/test_executorch_pipelines.py::test_pass_runs_and_lints_with_hook",
    ),
    (
        "ExecuTorch's `DecomposeWrapWithAutocast` runs and lints after `repair`, but drops the autocast "
        "casts (float32 output instead of bfloat16)",
        "tests/test_executorch_pipelines.py::test_decompose_wrap_with_autocast_runs_after_repair_but_drops_the_autocast_casts",
    ),
    # More
    (
        "the consumers the tests cover (exir, devtools, Cadence, Arm, NXP)",
        "tests/test_consumers.py::test_each_consumer_family_the_readme_names_has_a_case",
    ),
    (
        "(`repair`: 0.002-0.03% of `torch.export`'s time",
        "tests/test_readme.py::test_the_readme_repair_cost_is_the_range_of_the_committed_benchmarks",
    ),
    (
        "the hook: 0.01-0.05% of an ExecuTorch lowering)",
        "tests/test_readme.py::test_the_readme_hook_cost_is_the_range_of_the_committed_benchmarks",
    ),
]


def test_every_claim_is_quoted_from_the_readme():
    readme = _normalized(README)
    assert [quote for quote, _ in CLAIMS if _normalized(quote) not in readme] == []


def _test_functions(path: Path) -> set[str]:
    """Names of the test functions of ``path``, at module level or in a class."""
    tree = ast.parse(path.read_text())
    bodies = [tree.body, *(node.body for node in tree.body if isinstance(node, ast.ClassDef))]
    return {node.name for body in bodies for node in body if isinstance(node, ast.FunctionDef)}


def test_every_claim_names_a_test_that_exists():
    missing = []
    for _, test in CLAIMS:
        path, name = test.split("::")
        if not (ROOT / path).is_file() or name not in _test_functions(ROOT / path):
            missing.append(test)
    assert missing == []
