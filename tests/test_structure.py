"""The package's shape: no import cycle (counting imports inside functions too), in the package
and in the benchmarks; the runtime (what ``install``, ``repair`` and the ExecuTorch adapter load)
imports nothing of the tooling (``torch_export_names.tools``: the command line, doctor, the torch
patches); in the package, torch's version is only reported (support is detected by feature) and
every warning is a TorchExportNamesWarning."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> dict[str, Path]:
    base = ROOT / package
    found = {}
    for path in base.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``name`` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            # "from . import x" names a submodule; "import a.b" imports a and a.b
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


@pytest.mark.parametrize("package", ["torch_export_names", "benchmarks"])
def test_no_import_cycle(package):
    known = _modules(package)
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    # Importing "pkg.sub" runs "pkg/__init__.py" first: that edge is not written in the source.
    for name in known:
        parent = name.rpartition(".")[0]
        if parent in known and parent in graph[name]:
            graph[name].discard(parent)  # a submodule naming its own package: always loaded first
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


TOOLING = "torch_export_names.tools"


def _is_tooling(module: str) -> bool:
    """The command line and what only it uses; ``python -m torch_export_names`` is its entry."""
    return module in (TOOLING, "torch_export_names.__main__") or module.startswith(TOOLING + ".")


def test_the_runtime_imports_nothing_of_the_tooling():
    known = _modules("torch_export_names")
    assert any(map(_is_tooling, known)) and not all(map(_is_tooling, known)), "the split is out of date"
    edges = [
        f"{name} -> {target}"
        for name, path in sorted(known.items())
        if not _is_tooling(name)
        for target in sorted(_imports(name, path, known))
        if _is_tooling(target)
    ]
    assert edges == []


def test_install_repair_and_a_repaired_program_load_no_tooling():
    code = """
import sys, torch, torch_export_names
torch_export_names.install()

class M(torch.nn.Module):
    def forward(self, x, mul):
        return x * mul

x = torch.ones(2)
ep = torch.export.export(M(), (x, x))
torch_export_names.repair(ep)
torch.testing.assert_close(ep.module()(x, x), x * x)
print(sorted(m for m in sys.modules if m.startswith("torch_export_names.")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out)
    assert "torch_export_names.passes" in loaded, loaded  # the check sees the runtime load
    assert [m for m in loaded if _is_tooling(m)] == []


def _package_trees() -> list[tuple[str, ast.Module]]:
    paths = sorted(_modules("torch_export_names").values())
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text())) for p in paths]


def _is_torch_version(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "__version__"
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
    )


def _reported(tree: ast.Module) -> set[int]:
    """The expressions of ``tree`` that only report a value: in an f-string or as a dict value
    (a report), or the argument of ``release_of`` (which picks the patch file of a release)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue):
            found.add(id(node.value))
        elif isinstance(node, ast.Dict):
            found.update(id(v) for v in node.values)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "release_of":
            found.update(id(a) for a in node.args)
    return found


def test_the_torch_version_is_reported_never_branched_on():
    """The README: every supported torch is detected by feature, not by version."""
    misused = []
    for path, tree in _package_trees():
        reported = _reported(tree)
        misused += [
            f"{path}:{n.lineno}" for n in ast.walk(tree) if _is_torch_version(n) and id(n) not in reported
        ]
    assert misused == []


def _warning_categories(tree: ast.Module) -> list[tuple[int, str | None]]:
    """``(line, category name)`` of each ``warnings.warn(...)`` call in ``tree``."""
    found = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "warn"
            and getattr(func.value, "id", "") == "warnings"
        ):
            category = node.args[1] if len(node.args) > 1 else None
            category = category or next((k.value for k in node.keywords if k.arg == "category"), None)
            found.append((node.lineno, getattr(category, "id", None)))
    return found


def test_every_warning_the_package_emits_is_a_torch_export_names_warning():
    calls = [
        (path, line, name) for path, tree in _package_trees() for line, name in _warning_categories(tree)
    ]
    assert calls, "found no warnings.warn call: the check is out of date"
    assert [c for c in calls if c[2] != "TorchExportNamesWarning"] == []
