"""The README's Quick start is what CI runs; docs/development.md's layout diagram matches the files."""

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
    assert "pytest" in commands[1]


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
