"""The README: its Quick start is what CI runs, its Python examples run and print what they show,
the committed matrix covers the supported releases; docs/development.md's layout diagram matches
the files.

What the docs restate from the code or from committed results (the API table, the CLI help, the
release list, the cost figures) is written by scripts/gen_docs.py, whose --check CI runs; no test
here pins those sentences."""

import re
import subprocess
import sys
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


def test_every_file_the_readme_links_to_exists():
    links = [t for t in re.findall(r"\]\(([^)#]+)\)", README) if "://" not in t]
    assert links, "found no link in the README: the pattern is out of date"
    assert [t for t in links if not (ROOT / t).is_file()] == []


# --- the supported releases: scripts/releases.sh, scripts/matrix.sh, patches/, the compatibility report, CI


def supported_releases() -> list[str]:
    """The releases of the matrix: ``VERSIONS=(...)`` in scripts/releases.sh (the README's list is
    generated from it)."""
    found = re.search(r"^VERSIONS=\(([^)]*)\)$", (ROOT / "scripts" / "releases.sh").read_text(), re.M)
    assert found, "scripts/releases.sh has no VERSIONS=(...) line"
    return found.group(1).split()


def test_scripts_matrix_runs_the_suite_and_the_patch_check_on_every_release():
    matrix = (ROOT / "scripts" / "matrix.sh").read_text()
    assert ". scripts/releases.sh" in matrix and supported_releases()[0] == "2.4.1"
    assert "-m pytest tests --slow" in matrix and "-m torch_export_names patch verify" in matrix


def test_every_supported_release_has_a_patch():
    from torch_export_names.tools.torch_patch import store

    assert store.available() == supported_releases()


def compatibility_rows() -> dict[str, list[str]]:
    """docs/reports/compatibility.md's table: release -> its cells, by the column headings."""
    lines = (ROOT / "docs" / "reports" / "compatibility.md").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| torch | suite at |"))
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
    assert list(rows) == supported_releases()
    assert {v: r["hook needed on stock torch"] for v, r in rows.items()} == dict.fromkeys(rows, "yes")


def test_pip_install_kept_the_torch_of_every_release_in_the_compatibility_matrix():
    rows = compatibility_rows()
    assert list(rows) == supported_releases()
    kept = {v: r["`pip install .` keeps this torch"] for v, r in rows.items()}
    assert [v for v, cell in kept.items() if not cell.startswith(f"yes (`{v}+")] == []


def test_ci_runs_the_suite_on_the_pinned_torch_and_on_2_4_1():
    ci = (ROOT / ".ci" / "run").read_text()
    pinned = re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M).group(1)
    assert pinned == "2.13.0" and quick_start_commands()[1] in ci.splitlines()  # test.sh: -c constraints.txt
    assert re.search(r"^OLDEST=(\S+)$", ci, re.M).group(1) == "2.4.1"
    assert '"$old/bin/pip" install -q "torch==$OLDEST"' in ci
    assert '"$old/bin/python" -m pytest tests -m "not slow"' in ci  # the fast tier


# --- the README's Python examples --------------------------------------------------------------


def _python_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.+?)\n```", README, flags=re.S)
    assert blocks, "the README has no Python example"
    return blocks


def _shown_output(block: str) -> list[str]:
    """What a block says it prints: the text after ``# -> `` on each line, in order."""
    return re.findall(r"#\s*->\s*(.*?)\s*$", block, flags=re.M)


def _pinned_torch() -> str:
    return re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M).group(1)


def test_the_readme_python_examples_run_and_print_what_they_show():
    """Every ```python block of the README, run as written in a fresh interpreter, prints each
    ``# -> ...`` of its lines, in order (exactly on the pinned torch, whose output the README
    shows; one line per print on the others)."""
    import torch

    for block in _python_blocks():
        shown = _shown_output(block)
        assert shown, f"this README example shows no output (# -> ...):\n{block}"
        out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, check=False)
        assert out.returncode == 0, f"{block}\n{out.stderr}"
        if torch.__version__.split("+")[0] == _pinned_torch():
            assert out.stdout.splitlines() == shown
        else:
            assert len(out.stdout.splitlines()) == len(shown), out.stdout


def test_what_the_readme_says_stock_torch_computes():
    """The example's claim about stock torch, checked with the package out of the way."""
    import torch

    from torch_export_names.hook import suspended

    block = _python_blocks()[0]
    claim = re.search(r"stock torch, without this package, computes (tensor\(.+?\)) here", block)
    assert claim, "the README example no longer says what stock torch computes"
    namespace: dict = {}
    exec(block.split("# 1.", 1)[0], namespace)  # the imports, the model and its arguments
    model, args = namespace["model"], namespace["args"]
    with suspended():
        stock = torch.export.export(model, args).module()(*args)
    assert str(stock) == claim.group(1)
    assert not torch.equal(stock, model(*args))
