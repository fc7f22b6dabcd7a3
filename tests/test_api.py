"""The public API at the package root."""

import importlib
import importlib.util
import inspect
import math
import subprocess
import sys
import warnings

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

import torch_export_names
from torch_export_names import RepairReport, find_illegal_names, find_unrecorded_names, repair

from models import MulInput


def test_root_names_are_the_functions_not_their_modules():
    for sub in ("passes", "hook", "_detect", "tools.doctor", "tools.cases", "tools.cli"):
        importlib.import_module(f"torch_export_names.{sub}")  # binds submodules on the package
    for name in torch_export_names.__all__:
        obj = getattr(torch_export_names, name)
        assert not inspect.ismodule(obj), name


def test_unknown_name_is_an_attribute_error():
    try:
        torch_export_names.no_such_thing
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_does_not_import_torch():
    code = "import sys, torch_export_names; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_is_affected_matches_what_export_leaves():
    import torch

    from torch_export_names import find_unrecorded_names, is_affected

    class M(torch.nn.Module):
        def forward(self, mul):
            return mul * 2

    ep = torch.export.export(M(), (torch.ones(2),))
    assert is_affected() == bool(find_unrecorded_names(ep))


def _readme() -> str:
    import pathlib

    return (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_package_attribute_the_readme_uses_resolves_as_written():
    """``torch_export_names.hook.status()`` in the README works after a plain import
    (modules run with ``python -m`` or imported with ``from ... import`` are modules)."""
    import re

    code = (
        "import sys, torch_export_names as t\n"
        "for path in sys.argv[1:]:\n"
        "    obj = t\n"
        "    for part in path.split('.'):\n"
        "        obj = getattr(obj, part)\n"
    )
    text = _readme()
    modules = set(re.findall(r"(?:-m|from|import) (torch_export_names(?:\.\w+)+)", text))
    paths = {
        m.removeprefix("torch_export_names.")
        for m in re.findall(r"torch_export_names(?:\.\w+)+", text)
        if m not in modules and not m.endswith(".pth")
    }
    assert paths, "the README names no attribute of the package: the pattern is out of date"
    done = subprocess.run([sys.executable, "-c", code, *sorted(paths)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for module in sorted(modules):  # exists as written (torch_export_names.executorch needs ExecuTorch)
        assert importlib.util.find_spec(module) is not None, module


def test_every_name_in_the_readme_api_table_is_exported():
    import re

    table = _readme().split("### API", 1)[1].split("\n\n", 2)[1]
    names = {n for row in table.splitlines()[2:] for n in re.findall(r"`(\w+)[(`]", row.split("|")[1])}
    assert names and names <= set(torch_export_names.__all__), names - set(torch_export_names.__all__)


class WhileInfOperand(torch.nn.Module):
    """torch leaves ``it`` and ``inf`` unrecorded, ``inf`` illegal, and the loop's four subgraph
    placeholders as ``arg0_1``, ``arg1_1``: work for each part of ``repair``."""

    def forward(self, it, inf):
        return while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * math.inf - 1), (it, inf))


def _subgraph_placeholder_names(ep) -> list[str]:
    return [
        n.name for _, m in ep.graph_module.named_children() for n in m.graph.nodes if n.op == "placeholder"
    ]


def test_repair_reports_the_names_it_recorded_propagated_and_legalized():
    ep = torch.export.export(WhileInfOperand(), (torch.tensor(0), torch.randn(3)))
    # A placeholder Python cannot bind (no export writes one; a pass could): legalize's work.
    ph = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == "it")
    ph.name = ph.target = "lambda"
    next(s for s in ep.graph_signature.input_specs if s.arg.name == "it").arg.name = "lambda"
    unrecorded = find_unrecorded_names(ep)
    illegal_nodes = find_illegal_names(ep)
    before = _subgraph_placeholder_names(ep)
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch_export_names.TorchExportNamesWarning)
        report = repair(ep)
    renamed = sum(a != b for a, b in zip(before, _subgraph_placeholder_names(ep)))
    assert isinstance(report, RepairReport) and report._fields == ("recorded", "propagated", "legalized")
    assert report == (len(unrecorded), renamed, len(illegal_nodes))
    assert report.recorded > 0 and report.propagated > 0 and report.legalized > 0  # each part did work


@pytest.mark.parametrize("kind", ["exported_program", "graph_module", "graph"])
def test_repair_accepts_a_program_a_graph_module_or_a_graph(kind):
    ep = torch.export.export(MulInput(), (torch.ones(2),))
    assert find_unrecorded_names(ep) or not torch_export_names.is_affected()
    repair({"exported_program": ep, "graph_module": ep.graph_module, "graph": ep.graph}[kind])
    assert find_unrecorded_names(ep) == []


def test_is_affected_exports_a_small_model_once_per_process(monkeypatch):
    from torch_export_names._detect import is_affected

    exported = []
    real_export = torch.export.export

    def counting_export(model, *args, **kwargs):
        exported.append(type(model).__name__)
        return real_export(model, *args, **kwargs)

    monkeypatch.setattr(torch.export, "export", counting_export)
    is_affected.cache_clear()
    try:
        answers = [is_affected() for _ in range(3)]
    finally:
        is_affected.cache_clear()
    assert answers[1:] == answers[:1] * 2
    assert exported == ["_ProbeModel"]


def _written_signature(func) -> str:
    """``func``'s signature as the README's API table writes it: no annotations but the return's."""
    sig = inspect.signature(func)
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    return f"({', '.join(parts)})"


def test_the_readme_api_table_gives_each_functions_signature():
    import re

    table = _readme().split("### API", 1)[1].split("\n\n", 2)[1]
    written = re.findall(
        r"`(\w+)(\([^`]*\))(?: -> ([^`]+))?`", "\n".join(r.split("|")[1] for r in table.splitlines()[2:])
    )
    functions = [(n, p, r) for n, p, r in written if not inspect.isclass(getattr(torch_export_names, n))]
    assert len(functions) >= 10, written
    for name, params, returns in functions:
        func = getattr(torch_export_names, name)
        assert params == _written_signature(func), name
        if returns:
            assert returns == inspect.signature(func).return_annotation, name


def test_the_names_for_type_checkers_are_the_lazy_table():
    """``__init__`` lists the public API once, in ``_EXPORTS`` (``__all__`` and ``__getattr__``
    come from it); its ``TYPE_CHECKING`` imports, which give type checkers the same names, must
    not drift from it."""
    import ast

    tree = ast.parse(inspect.getsource(torch_export_names))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    imported = {
        (node.module.lstrip("."), alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {(module, name) for name, module in torch_export_names._EXPORTS.items()}
