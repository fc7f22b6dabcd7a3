"""The upstream changes (patches/upstream/000*.patch and hops/000*.patch) on torch 2.15.0's files.

The #202927 stack is two ``git format-patch`` commits against v2.15.0 (PR A, PR B); the HOP
naming (PR C) is a series of its own in hops/. Its torch files come from
``release_files`` (the installed torch if it is 2.15.0, else read from the 2.15.0 wheel on PyPI,
checked against the release's torch-2.15.0.sha256: marker ``network``, run with ``--network``).
PyTorch's test files, which the stack also changes, are not in a wheel, so only the ``torch/``
part of each commit is applied here (patches/upstream/CHECK.md has the runs of PyTorch's
tests). The printed-program comparison needs torch 2.15.0 itself: it runs in the version matrix
(scripts/matrix.sh) and skips elsewhere.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from release_files import Unavailable, release_files

from torch_export_names.tools.torch_patch import diff, overlay, store

STACK_DIR = Path(__file__).resolve().parents[1] / "patches" / "upstream"
STACK = sorted(STACK_DIR.glob("000*.patch"))
HOPS = sorted((STACK_DIR / "hops").glob("000*.patch"))
RELEASE = store.load("2.15.0")

pytestmark = [
    pytest.mark.skipif(not STACK, reason="not a source tree (patches/upstream/ holds the stack)"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def torch_changes(patch: Path) -> list[diff.FileDiff]:
    return [f for f in diff.parse(patch.read_text(encoding="utf-8")) if f.path.startswith("torch/")]


def stack_paths() -> list[str]:
    return sorted({f.path for patch in [*STACK, *HOPS] for f in torch_changes(patch)})


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A git repository holding torch 2.15.0's files that the stack or the release patch change."""
    repo = tmp_path_factory.mktemp("v2.15.0")
    try:
        release_files("2.15.0", sorted(set(stack_paths()) | set(RELEASE.pristine)), repo)
    except Unavailable as e:  # the test asked for the network (marker network): a failure, not a skip
        pytest.fail(str(e))
    git(repo, "init", "-q")
    return repo


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env)


def apply(repo: Path, patch: Path, *, check: bool = False) -> None:
    done = git(repo, "apply", *(["--check"] if check else []), "--include=torch/*", str(patch))
    assert done.returncode == 0, f"{patch.name}: {done.stderr}"


def files(repo: Path) -> dict[str, str]:
    return {path: (repo / path).read_text(encoding="utf-8") for path in stack_paths()}


def test_the_stack_is_two_commits_and_the_hop_naming_one_of_its_own():
    assert [p.name[:4] for p in STACK] == ["0001", "0002"]
    assert [p.name[:4] for p in HOPS] == ["0001"]

    def subject(p: Path) -> str:
        return p.read_text(encoding="utf-8").split("Subject: ", 1)[1].split("\n", 1)[0]

    assert [subject(p).split("]", 1)[0] for p in STACK] == ["[PATCH 1/2", "[PATCH 2/2"]
    assert subject(HOPS[0]).startswith("[PATCH] [export] Name HOP subgraph placeholders")
    fixes = [p.name for p in [*STACK, *HOPS] if "\nFixes #202927\n" in p.read_text(encoding="utf-8")]
    assert fixes == [STACK[1].name]  # the code generator's fix closes the issue


@pytest.mark.network
def test_each_commit_applies_to_the_release_after_the_ones_before(release, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(release, repo)
    for patch in STACK:
        apply(repo, patch, check=True)
        apply(repo, patch)


@pytest.mark.network
def test_the_stack_and_the_hop_naming_give_the_torch_files_of_the_release_patch(release, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(release, repo)
    for patch in [*STACK, *HOPS]:
        apply(repo, patch)
    assert set(stack_paths()) == set(RELEASE.pristine)
    expected = {
        f.path: diff.apply_file((release / f.path).read_text(encoding="utf-8"), f)
        for f in RELEASE.torch_files
    }
    assert files(repo) == expected


@pytest.mark.network
def test_the_hop_naming_applies_on_the_release_alone(release, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(release, repo)
    apply(repo, HOPS[0], check=True)


# --- commit 1 on torch 2.15.0 itself ---------------------------------------------------------

_PRINT = r"""
import logging, sys, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
import torch
from torch._export.db.examples import all_examples
from torch_export_names.tools.cases import CASES, executorch_missing
from torch_export_names.passes import find_unrecorded_names

out, unrecorded = [], {}
models = [(f"exportdb {name}", case.model, case.example_args, case.example_kwargs, case.dynamic_shapes)
          for name, case in sorted(all_examples().items())]
for case in CASES:
    if not (case.needs_executorch and executorch_missing()):
        model, args = case.make()
        models.append((f"case {case.name}", model, args, {}, None))
for name, model, args, kwargs, dynamic_shapes in models:
    try:
        ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
        text = str(ep) + "\n--- run_decompositions\n" + str(ep.run_decompositions())
        unrecorded[name] = find_unrecorded_names(ep, strict=True)
    except Exception as e:
        text = f"failed: {type(e).__name__}"
    out.append(f"===== {name}\n{text}")
import json, os
printed = "\n".join(out).replace(os.path.dirname(torch.__file__), "<torch>")  # stack-trace comments
json.dump({"torch": torch.__file__, "printed": printed, "unrecorded": unrecorded}, sys.stdout)
"""


def exports(pythonpath: list[Path]) -> dict:
    import json

    env = {k: v for k, v in os.environ.items() if k != "TORCH_EXPORT_NAMES"}
    env["PYTHONPATH"] = os.pathsep.join(map(str, [*pythonpath, Path(__file__).resolve().parents[1]]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _PRINT], capture_output=True, text=True, env=env, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def stock_and_commit_1(tmp_path_factory):
    if torch.__version__.split("+")[0] != "2.15.0":
        pytest.skip(
            f"needs torch 2.15.0 installed (this is {torch.__version__}); scripts/matrix.sh runs it there"
        )
    site = store.installed_site()
    changes = torch_changes(STACK[0])
    root = overlay.build(site, [f.path for f in changes], tmp_path_factory.mktemp("commit1") / "site")
    for f in changes:
        (root / f.path).write_text(
            diff.apply_file((site / f.path).read_text(encoding="utf-8"), f), encoding="utf-8"
        )
    return exports([]), exports([root]), root


@pytest.mark.slow  # two processes export the 36 ExportDB examples and the harness models
def test_commit_1_prints_every_program_as_stock_torch_does(stock_and_commit_1):
    stock, commit_1, root = stock_and_commit_1
    assert commit_1["torch"].startswith(str(root)) and not stock["torch"].startswith(str(root))
    assert commit_1["printed"] == stock["printed"]


@pytest.mark.slow
def test_commit_1_leaves_no_name_unrecorded_where_stock_torch_does(stock_and_commit_1):
    stock, commit_1, _ = stock_and_commit_1
    assert any(stock["unrecorded"].values()), "stock torch 2.15.0 leaves every name recorded here"
    assert {name: names for name, names in commit_1["unrecorded"].items() if names} == {}
