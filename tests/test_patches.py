"""The torch patches: the harness on the installed torch, and apply/revert on a copy.

The harness (``verify``) runs once per session (about 25 s on torch 2.13.0):
one subprocess imports torch from a patched overlay, one the installed torch.
apply/revert only ever touch a throw-away copy of the files the patch changes.
"""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torch_export_names.tools.cases import CASES
from torch_export_names.tools.torch_patch import diff, install, overlay, status, store
from torch_export_names.tools.torch_patch.store import installed_site
from torch_export_names.tools.torch_patch.verify import VerifyError, verify

SITE = installed_site()
try:
    PATCH = store.load(torch.__version__)
except store.NoPatch as e:
    pytestmark = pytest.mark.skip(reason=str(e))
    PATCH = None

REPO_PATCHES = Path(__file__).resolve().parents[1] / "patches"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def patched_text(rel: str) -> str:
    change = next(f for f in PATCH.torch_files if f.path == rel)
    return diff.apply_file((SITE / rel).read_text(encoding="utf-8"), change)


@pytest.fixture(scope="module")
def report():
    return verify()


def checks(run, kind):
    return {c.name: c for c in run.checks if c.kind == kind}


# --- the harness, on the installed torch --------------------------------------


def test_patched_run_imports_torch_from_the_overlay_without_the_hook(report):
    info = report.patched.torch
    assert "torch-export-names-verify-" in info["fx_graph_file"]
    assert not info["fx_graph_file"].startswith(str(SITE))
    assert info["records_assigned_names"] is True
    assert info["hook_installed"] is False and info["TORCH_EXPORT_NAMES"] is None


@pytest.mark.parametrize(
    ("value", "active"),
    [(None, False), ("", False), ("0", False), ("false", False), ("OFF", False), ("no", False)]
    + [("1", True), ("true", True), ("Yes", True), ("on", True)],
)
def test_the_harness_reads_torch_export_names_as_the_package_does(value, active):
    from torch_export_names import _bootstrap
    from torch_export_names.tools.torch_patch._child import hook_installed_or_asked_for

    environ = {} if value is None else {"TORCH_EXPORT_NAMES": value}
    assert hook_installed_or_asked_for(False, environ) is active is _bootstrap.enabled(environ)
    assert hook_installed_or_asked_for(True, environ) is True


def test_unpatched_run_imports_the_installed_torch(report):
    assert report.baseline.torch["fx_graph_file"].startswith(str(SITE))
    assert report.baseline.torch["records_assigned_names"] is False


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_case_passes_with_the_patch_and_no_hook(report, case):
    check = checks(report.patched, "case")[case]
    if check.ok is None:
        pytest.skip(check.detail)
    assert check.ok, check.detail


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_case_fails_without_the_patch(report, case):
    check = checks(report.baseline, "case")[case]
    if check.ok is None:
        pytest.skip(check.detail)
    assert check.ok is False, f"{case} passes on unpatched torch {torch.__version__}"


def test_every_entry_point_records_all_names_with_the_patch(report):
    # An entry point this torch lacks (draft_export, move_to_device_pass on older
    # releases) is skipped with the reason; every other one must pass.
    entries = checks(report.patched, "entry")
    assert len(entries) >= 9
    assert {n: c.detail for n, c in entries.items() if c.ok is False} == {}
    assert [n for n, c in entries.items() if c.ok is None and not c.detail] == []
    assert sum(c.ok is True for c in entries.values()) >= 7


def test_carried_tests_pass_with_the_patch(report):
    # A carried test that needs what this torch lacks (scan, wrap_with_autocast,
    # ...) skips with the reason; every other one must pass.
    tests = checks(report.patched, "test")
    assert len(tests) >= 10, sorted(tests)
    assert {n: c.detail for n, c in tests.items() if c.ok is False} == {}
    assert [n for n, c in tests.items() if c.ok is None and not c.detail] == []
    assert sum(c.ok is True for c in tests.values()) >= 10


def test_carried_tests_fail_without_the_patch(report):
    tests = checks(report.baseline, "test")
    patched = checks(report.patched, "test")
    assert set(tests) == set(patched)
    # each test that runs with the patch fails without it; one that skips, skips in both
    assert [n for n, c in tests.items() if c.ok is True] == []
    assert [n for n, c in tests.items() if (c.ok is None) != (patched[n].ok is None)] == []


def test_guards_pass_with_and_without_the_patch_and_show_the_same(report):
    # nn.Sequential with dynamic shapes and an argument called input: torch handles
    # them without the patch, and the patch must not change what a caller sees
    patched, stock = checks(report.patched, "guard"), checks(report.baseline, "guard")
    assert {"nn.Sequential with dynamic shapes", "argument named input"} <= set(patched)
    assert any(n.startswith("TestNamesKept.") for n in patched)  # the carried test file's
    assert set(patched) == set(stock)
    assert {n: c.detail for n, c in patched.items() if c.ok is not True} == {}
    assert {n: c.detail for n, c in stock.items() if c.ok is not True} == {}
    assert {n: (c.detail, stock[n].detail) for n, c in patched.items() if c.detail != stock[n].detail} == {}
    assert "forward(input)" in patched["nn.Sequential with dynamic shapes"].detail


def _report(patched_checks, stock_checks):
    from torch_export_names.tools.torch_patch.verify import Check, Report, Run

    def run(label, rows):
        torch = {"fx_graph_file": "graph.py", "records_assigned_names": True, "hook_installed": False}
        return Run(label, torch, tuple(Check(*row) for row in rows))

    return Report("0", "site", "patch", run("patched", patched_checks), run("unpatched", stock_checks))


def test_a_guard_that_fails_without_the_patch_or_looks_different_with_it_fails_the_verdict():
    same = ("guard", "g", True, "forward(input)")
    assert _report([same], [same]).problems == []
    stock_fails = _report([same], [("guard", "g", False, "NameError: name 'L' is not defined")])
    assert stock_fails.problems == [
        "without the patch, guard g fails too: NameError: name 'L' is not defined"
    ]
    renamed = _report([("guard", "g", True, "forward(input_1)")], [same])
    assert renamed.problems == [
        "guard g differs from torch without the patch: 'forward(input_1)' instead of 'forward(input)'"
    ]
    patched_fails = _report([("guard", "g", False, "NameError: name 'L' is not defined")], [same])
    assert patched_fails.problems == ["with the patch, guard g fails: NameError: name 'L' is not defined"]


def _summary_counts(text: str) -> int:
    """How many checks the summary's lines for the run without the patch account for: each
    line's "M of N" (the checks that ran) and ", K skipped"."""
    summary = " ".join(text.split("without it, ", 1)[1].split("verdict:")[0].split())
    ran = sum(int(n) for n in re.findall(r"\b\d+ of (\d+) (?:pass|fail)", summary))
    return ran + sum(int(n) for n in re.findall(r", (\d+) skipped", summary))


def test_verify_report_fits_100_columns_and_its_summary_counts_every_check(report):
    text = report.format()
    assert [line for line in text.splitlines() if len(line) > 100] == []
    assert f"without it, {len(report.baseline.checks)} checks:" in text
    assert _summary_counts(text) == len(report.baseline.checks)
    # Every check has its row (a carried test's under its class).
    for c in report.patched.checks:
        assert c.name.split(".")[-1] in text, c.name


def test_verify_summary_names_the_entry_points_that_pass_without_the_patch_and_why(report):
    from torch_export_names.tools.torch_patch.verify import BUILT_ANEW

    passing = [c.name for c in report.baseline.checks if c.kind == "entry" and c.ok]
    assert set(passing) <= set(BUILT_ANEW)
    text = " ".join(report.format().split())
    if passing:
        assert f"{len(passing)} pass, as expected: " in text
        assert "build their graphs anew, recording every name they give" in text
        assert all(name in text.split("as expected: ")[1] for name in passing)


def test_verify_summary_names_an_entry_point_passing_without_the_patch_unexpectedly():
    rows = [("entry", "torch.export.export", True), ("entry", "torch.export.load", True)]
    text = " ".join(_report(rows, rows).format().split())
    assert "entry points: 0 of 2 fail" in text
    assert "1 pass, as expected: torch.export.load build" in text
    assert "1 pass, not known to build their graphs anew: torch.export.export" in text


def test_verify_report_wraps_a_long_check_name_and_detail_within_100_columns():
    name = "TestExportNodeNames.test_" + "x" * 110
    rows = [("test", name, True), ("case", "c", True, "long detail " * 30)]
    text = _report(rows, [("test", name, False, "E " * 80), ("case", "c", False, "d")]).format()
    assert [line for line in text.splitlines() if len(line) > 100 and "x" * 100 not in line] == []
    assert "without it, 2 checks:" in text and _summary_counts(text) == 2


def test_verdict_is_pass(report):
    assert report.problems == []
    assert report.ok


def test_the_package_stands_down_on_the_patched_torch(report):
    """The patched torch keeps the user's names in forward_arg_names and legalizes them in
    module() itself: is_affected() must say no there (so the hook and repair change nothing),
    and yes on the torch as released."""
    assert checks(report.patched, "detect")["is_affected() is False"].ok is True
    assert checks(report.baseline, "detect")["is_affected() is False"].ok is False


def test_verify_leaves_the_installed_torch_as_released(report):
    assert {rel: sha256(SITE / rel) for rel in PATCH.pristine} == PATCH.pristine


# --- apply / revert on a throw-away copy --------------------------------------


@pytest.fixture
def site_copy(tmp_path):
    """A site-packages-like directory holding copies of the files the patch changes."""
    site = tmp_path / "site-packages"
    for rel in [*PATCH.pristine, "torch/version.py"]:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SITE / rel, site / rel)
    return site


def hashes(site: Path) -> dict:
    return {rel: sha256(site / rel) for rel in PATCH.pristine}


def test_apply_writes_the_patched_files_and_keeps_a_backup(site_copy):
    out = io.StringIO()
    assert install.apply(site_copy, out=out) == 0
    for rel in PATCH.pristine:
        assert (site_copy / rel).read_text(encoding="utf-8") == patched_text(rel)
        assert sha256(site_copy / install.BACKUP_DIR / rel) == PATCH.pristine[rel]
    assert f"patched {len(PATCH.pristine)} files" in out.getvalue()


def test_apply_warns_that_uninstalling_the_package_does_not_revert_torch(site_copy):
    out = io.StringIO()
    install.apply(site_copy, out=out)
    assert "`pip uninstall torch-export-names` does not revert torch" in out.getvalue()
    assert "torch-export-names patch revert" in out.getvalue()


def test_applied_tells_a_patched_torch_from_a_stock_one(site_copy):
    assert install.applied(site_copy) is None
    install.apply(site_copy, out=io.StringIO())
    assert install.applied(site_copy)["patch"] == PATCH.path.name
    install.revert(site_copy, out=io.StringIO())
    assert install.applied(site_copy) is None


def test_doctor_reports_a_patched_torch(site_copy, monkeypatch):
    from torch_export_names.tools import doctor

    install.apply(site_copy, out=io.StringIO())
    monkeypatch.setattr(doctor, "patch_applied", lambda: install.applied(site_copy))
    monkeypatch.setattr(doctor, "CASES", ())
    report = doctor.collect()
    assert report["torch_patched"] == PATCH.path.name
    assert f"patched by `patch apply` ({PATCH.path.name})" in doctor.format_report(report)


def test_revert_restores_the_release_files(site_copy):
    install.apply(site_copy, out=io.StringIO())
    assert install.revert(site_copy, out=io.StringIO()) == 0
    assert hashes(site_copy) == PATCH.pristine
    assert not (site_copy / install.BACKUP_DIR).exists()


def test_apply_twice_changes_nothing_the_second_time(site_copy):
    install.apply(site_copy, out=io.StringIO())
    applied = hashes(site_copy)
    out = io.StringIO()
    assert install.apply(site_copy, out=out) == 0
    assert "already patched" in out.getvalue()
    assert hashes(site_copy) == applied


def test_apply_refuses_a_file_that_is_not_the_release_and_changes_nothing(site_copy):
    rel = "torch/fx/node.py"
    with open(site_copy / rel, "a", encoding="utf-8") as f:
        f.write("# local change\n")
    before = hashes(site_copy)
    with pytest.raises(install.Refused, match=r"not the torch .* release's.*torch/fx/node\.py"):
        install.apply(site_copy, out=io.StringIO())
    assert hashes(site_copy) == before
    assert not (site_copy / install.BACKUP_DIR).exists()


def test_apply_refuses_a_torch_version_without_a_patch(site_copy):
    (site_copy / "torch/version.py").write_text("__version__ = '2.12.0+cpu'\n")
    with pytest.raises(install.Refused, match=r"no patch for torch 2\.12\.0\+cpu"):
        install.apply(site_copy, out=io.StringIO())
    assert hashes(site_copy) == PATCH.pristine


def test_apply_dry_run_prints_the_diff_and_changes_nothing(site_copy):
    out = io.StringIO()
    assert install.apply(site_copy, dry_run=True, out=out) == 0
    assert PATCH.torch_diff_text() in out.getvalue()
    assert "test/export/" not in out.getvalue()
    assert hashes(site_copy) == PATCH.pristine
    assert not (site_copy / install.BACKUP_DIR).exists()


def test_revert_refuses_files_changed_after_apply(site_copy):
    install.apply(site_copy, out=io.StringIO())
    (site_copy / "torch/fx/graph.py").write_text("# replaced\n")
    with pytest.raises(install.Refused, match=r"changed since `apply`.*torch/fx/graph\.py"):
        install.revert(site_copy, out=io.StringIO())
    assert (site_copy / install.BACKUP_DIR).exists()


def test_revert_without_apply_refuses(site_copy):
    with pytest.raises(install.Refused, match="nothing to revert"):
        install.revert(site_copy, out=io.StringIO())


def patch_cli(site: Path, *args: str) -> subprocess.CompletedProcess:
    """``torch-export-names patch ARGS --target SITE`` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "torch_export_names", "patch", *args, "--target", str(site)],
        capture_output=True,
        text=True,
    )


def test_cli_apply_and_revert_on_a_target(site_copy):
    def run(*args):
        return patch_cli(site_copy, *args)

    applied = run("apply")
    assert applied.returncode == 0, applied.stderr
    assert run("revert").returncode == 0
    assert hashes(site_copy) == PATCH.pristine
    refused = run("revert")
    assert refused.returncode == 2
    assert "nothing to revert" in refused.stderr


# --- status, and verify on a torch that is not stock ---------------------------


def torch_with(tmp_path: Path, texts: dict) -> Path:
    """A whole torch (an overlay of the installed one) whose files ``texts`` names
    (torch/... path -> text) are replaced: what verify and status see as installed."""
    root = overlay.build(SITE, list(texts), tmp_path / "site")
    for rel, text in texts.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def patched_torch(tmp_path_factory):
    return torch_with(tmp_path_factory.mktemp("patched"), {rel: patched_text(rel) for rel in PATCH.pristine})


@pytest.fixture(scope="module")
def report_on_patched_torch(patched_torch):
    return verify(site=patched_torch)


def test_reverse_undoes_the_patch_on_each_file():
    for change in PATCH.torch_files:
        release = (SITE / change.path).read_text(encoding="utf-8")
        assert diff.apply_file(diff.apply_file(release, change), diff.reverse(change)) == release
        with pytest.raises(diff.PatchError):  # the release's file is not a patched one
            diff.apply_file(release, diff.reverse(change))


def test_status_of_the_torch_as_released_is_stock():
    state = status.status(SITE)
    assert state.files == dict.fromkeys(PATCH.pristine, status.STOCK)
    assert state.state == status.STOCK and state.backup is None


def test_status_of_a_patched_torch_is_patched_for_every_file(patched_torch):
    state = status.status(patched_torch)
    assert state.files == dict.fromkeys(PATCH.pristine, status.PATCHED)
    assert state.state == status.PATCHED


def test_status_names_a_file_modified_by_hand(tmp_path):
    edited = next(iter(PATCH.pristine))
    site = torch_with(tmp_path, {edited: (SITE / edited).read_text(encoding="utf-8") + "# a local edit\n"})
    state = status.status(site)
    assert state.files[edited] == status.MODIFIED
    assert {s for rel, s in state.files.items() if rel != edited} == {status.STOCK}
    assert state.state == status.MODIFIED
    assert f"{edited} is neither the release's file nor the patched one" in state.format()


def test_status_of_a_half_patched_torch_is_modified_otherwise(tmp_path):
    first = next(iter(PATCH.pristine))
    state = status.status(torch_with(tmp_path, {first: patched_text(first)}))
    assert state.files[first] == status.PATCHED
    assert state.state == status.MODIFIED
    assert "some files carry the patch and some do not" in state.format()


def test_status_after_apply_is_patched_and_names_the_backup(site_copy):
    install.apply(site_copy, out=io.StringIO())
    state = status.status(site_copy)
    assert state.state == status.PATCHED
    assert state.backup == site_copy / install.BACKUP_DIR
    install.revert(site_copy, out=io.StringIO())
    assert status.status(site_copy).state == status.STOCK


def test_cli_status_exits_0_for_stock_and_patched_and_1_for_modified(site_copy):
    def run(*args):
        return patch_cli(site_copy, *args)

    stock = run("status")
    assert stock.returncode == 0, stock.stderr
    assert stock.stdout.splitlines()[-1].startswith("stock: ")
    assert run("apply").returncode == 0
    patched = run("status", "--json")
    assert patched.returncode == 0, patched.stderr
    assert json.loads(patched.stdout)["state"] == "patched"
    assert run("revert").returncode == 0
    edited = next(iter(PATCH.pristine))
    with open(site_copy / edited, "a", encoding="utf-8") as f:
        f.write("# a local edit\n")
    modified = run("status")
    assert modified.returncode == 1
    assert f"{edited}" in modified.stdout and "modified otherwise" in modified.stdout


def test_verify_on_a_patched_torch_runs_its_checks_on_that_torch(patched_torch, report_on_patched_torch):
    report = report_on_patched_torch
    assert report.installed == status.PATCHED
    assert report.patched.torch["fx_graph_file"].startswith(str(patched_torch))
    assert report.patched.torch["records_assigned_names"] is True
    # the run without the patch imported an overlay with the patch undone
    assert "torch-export-names-verify-" in report.baseline.torch["fx_graph_file"]
    assert report.baseline.torch["records_assigned_names"] is False
    assert report.problems == []
    assert "already carries the patch" in report.format()


def test_verify_gives_the_same_outcomes_on_a_patched_torch_as_on_the_release(report, report_on_patched_torch):
    def outcomes(run):
        return {(c.kind, c.name): c.ok for c in run.checks}

    assert outcomes(report_on_patched_torch.patched) == outcomes(report.patched)
    assert outcomes(report_on_patched_torch.baseline) == outcomes(report.baseline)


def test_verify_leaves_a_patched_torch_as_it_was(patched_torch, report_on_patched_torch):
    assert status.status(patched_torch).state == status.PATCHED


def test_verify_refuses_a_torch_modified_otherwise_naming_the_file(tmp_path):
    edited = next(iter(PATCH.pristine))
    site = torch_with(tmp_path, {edited: (SITE / edited).read_text(encoding="utf-8") + "# a local edit\n"})
    with pytest.raises(VerifyError, match=f"{edited}: modified otherwise"):
        verify(site=site)


def test_cli_list_names_the_patch_of_every_release():
    r = subprocess.run(
        [sys.executable, "-m", "torch_export_names", "patch", "list"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"patches in {store.data_dir()}:",
        *(f"  torch {v}: torch-{v}.patch" for v in store.available()),
    ]


# --- the patch file itself -----------------------------------------------------


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
def test_gnu_patch_applies_it_to_site_packages_as_the_readme_says(site_copy):
    subprocess.run(
        ["patch", "-p1", "--batch", "--forward", "-d", str(site_copy), "-i", str(PATCH.path)],
        check=True,
        capture_output=True,
        text=True,
    )
    for rel in PATCH.pristine:
        assert (site_copy / rel).read_text(encoding="utf-8") == patched_text(rel)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_apply_applies_it_at_the_root_of_a_checkout(site_copy):
    # A stand-in checkout: the release's files at their repository paths.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(site_copy), *args], check=True, capture_output=True, text=True, env=env
        )

    git("init", "-q")
    git("apply", "--check", str(PATCH.path))
    git("apply", str(PATCH.path))
    for rel in PATCH.pristine:
        assert (site_copy / rel).read_text(encoding="utf-8") == patched_text(rel)
    assert (site_copy / "test/export/test_export_node_names.py").is_file()


def test_every_shipped_patch_lists_the_release_hash_of_each_file_it_changes():
    for version in store.available():
        patch = store.load(version)
        assert set(patch.pristine) == {f.path for f in patch.torch_files}
        assert list(patch.test_files) == ["test/export/test_export_node_names.py"]


@pytest.mark.skipif(not REPO_PATCHES.is_dir(), reason="not a source tree")
def test_every_patch_carries_the_current_test_file():
    source = (REPO_PATCHES / "test_export_node_names.py").read_text(encoding="utf-8")
    for version in store.available():
        assert store.load(version).test_files["test/export/test_export_node_names.py"] == source, (
            f"torch-{version}.patch is stale: run patches/make_patches.py"
        )


@pytest.mark.skipif(not REPO_PATCHES.is_dir(), reason="not a source tree")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_make_patches_regenerates_the_shipped_patch_from_this_torch(tmp_path, capsys, monkeypatch):
    import importlib.util

    monkeypatch.syspath_prepend(str(REPO_PATCHES))  # make_patches imports the recipe beside it
    monkeypatch.delitem(sys.modules, "recipe", raising=False)
    spec = importlib.util.spec_from_file_location("make_patches", REPO_PATCHES / "make_patches.py")
    make_patches = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_patches", make_patches)  # for its dataclasses
    spec.loader.exec_module(make_patches)
    recipe = sys.modules["recipe"]
    make_patches.OUT = tmp_path  # write there, not into the package
    outcomes = make_patches.make(PATCH.version, SITE)
    for suffix in (".patch", ".sha256"):
        name = f"torch-{PATCH.version}{suffix}"
        assert (tmp_path / name).read_bytes() == (store.data_dir() / name).read_bytes(), name
    # the report names every edit, applied or not applicable with its reason
    report = capsys.readouterr().out
    assert len(outcomes) == len(recipe.EDITS)
    for o in outcomes:
        assert f"#{o.number} " in report
        assert ("not applicable: " in o.describe()) == (o.alt is None)


@pytest.mark.skipif(not REPO_PATCHES.is_dir(), reason="not a source tree")
def test_the_built_package_carries_the_patches_as_files(tmp_path, monkeypatch):
    repo = REPO_PATCHES.parent
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    data = tmp_path / "torch_export_names" / "tools" / "torch_patch" / "data"
    shipped = sorted(p.name for p in data.iterdir())
    expected = sorted(p.name for p in store.data_dir().iterdir() if p.suffix in (".patch", ".sha256"))
    assert shipped == expected and not any(p.is_symlink() for p in [data, *data.iterdir()])
    monkeypatch.setattr(store, "_PACKAGED", data)
    assert store.data_dir() == data
    from torch_export_names._bootstrap import pth_line

    assert (tmp_path / "torch_export_names.pth").read_text() == pth_line()
