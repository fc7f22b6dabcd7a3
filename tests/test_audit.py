"""torch_export_names.audit: records risky node creations, changes nothing, fully reversible."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import expecttest
import pytest
import torch
import torch.fx

import torch_export_names
from torch_export_names import _fx_namespace
from torch_export_names._bootstrap import ENV_VAR
from torch_export_names._torch_compat import output_node
from torch_export_names.audit import PATCHED, AuditEvent, AuditReport, Site, audited, is_installed

from helpers import add_named_node
from models import MulInput

ROOT = Path(__file__).resolve().parent.parent


class AddInfInput(torch.nn.Module):
    def forward(self, x, inf):
        return x + inf


def _methods():
    return {name: torch.fx.Graph.__dict__[name] for name in PATCHED}


def _mul_export():
    return torch.export.export(MulInput(), (torch.ones(2),))


def test_importing_the_module_patches_nothing_and_imports_no_torch():
    code = (
        "import sys, torch_export_names\n"
        "a = torch_export_names.audit  # an attribute of the package, loaded on first use\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert not a.is_installed()\n"
        "import torch.fx\n"
        "methods = [torch.fx.Graph.__dict__[n] for n in a.PATCHED]\n"
        "assert not any(hasattr(m, '__torch_export_names_patch__') for m in methods)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_block_puts_back_the_original_function_objects():
    before = _methods()
    with audited():
        assert is_installed()
        assert all(_methods()[n] is not before[n] for n in PATCHED)
    assert not is_installed()
    assert _methods() == before and all(_methods()[n] is before[n] for n in PATCHED)


def test_block_puts_them_back_when_the_body_raises():
    before = _methods()
    with pytest.raises(KeyError), audited():
        raise KeyError("boom")
    assert all(_methods()[n] is before[n] for n in PATCHED)


def test_nested_blocks_share_the_patch_and_both_see_creations(without_hook):
    before = _methods()
    first, second = _mul_export(), _mul_export()
    with audited() as outer:
        with audited() as inner:
            add_named_node(first.graph, "mul")
        assert is_installed()  # the inner block closing leaves the outer one working
        add_named_node(second.graph, "mul")
    assert all(_methods()[n] is before[n] for n in PATCHED)
    assert len(inner.events) == 1 and len(outer.events) == 2


def test_records_a_creation_on_a_graph_with_unrecorded_names(without_hook):
    ep = _mul_export()
    assert [n.name for n in ep.graph.nodes] == ["mul", "mul_1", "output"]
    with audited() as report:
        add_named_node(ep.graph, "mul")
    (event,) = report.events
    assert event.kind == "at-risk" and event.api == "create_node"
    assert event.site == Site("helpers", "add_named_node", event.site.line)
    assert "mul_1" in event.unrecorded
    assert event.created == ("mul_1",) and event.duplicates == ("mul_1",)
    assert report.exposed and report.duplicates == ["mul_1"]


def test_names_the_first_frame_outside_torch_and_this_package(without_hook):
    ep = _mul_export()
    x = next(iter(ep.graph.nodes))
    with audited() as report:
        ep.graph.call_function(torch.ops.aten.neg.default, (x,))  # through Graph.call_function
    (event,) = report.events
    assert event.site.module == __name__
    assert event.site.function == "test_names_the_first_frame_outside_torch_and_this_package"


def test_records_nothing_after_the_hook_repaired_the_export():
    with torch_export_names.installed():
        ep = _mul_export()
    with audited() as report:
        add_named_node(ep.graph, "mul")
    assert report.events == [] and not report.exposed
    ep.graph.lint()


def test_observes_only_the_result_is_what_torch_gives(without_hook):
    ep, plain = _mul_export(), _mul_export()
    with audited():
        a = add_named_node(ep.graph, "mul")
    b = add_named_node(plain.graph, "mul")
    assert a.name == b.name == "mul_1"  # the duplicate happens all the same: the audit repairs nothing


def test_reports_illegal_names(without_hook):
    ep = torch.export.export(AddInfInput(), (torch.ones(2), torch.ones(2)))
    inf = next(n for n in ep.graph.nodes if n.name == "inf")
    inf.name = inf.target = "lambda"  # no Python parameter can be called that (a pass could write it)
    with audited() as report:
        add_named_node(ep.graph, "neg", torch.ops.aten.neg.default)
    (event,) = report.events
    assert event.illegal == ("lambda",) and event.illegal_count == 1


def test_reports_a_placeholder_sharing_another_ones_target():
    graph = torch.fx.Graph()
    graph.placeholder("x")
    with audited() as report:
        graph.create_node("placeholder", "x", name="x_copy")
    (event,) = report.events
    assert event.kind == "shared-target" and event.shared_target == "x"
    assert event.created == ("x_copy",) and event.sharing == ("x",) and event.duplicates == ()


def test_graph_copy_is_one_event_listing_every_copied_node(without_hook):
    ep = _mul_export()
    src = torch.fx.Graph()
    y = src.placeholder("y")
    src.output(src.create_node("call_function", torch.ops.aten.mul.Tensor, (y, y), name="mul"))
    target = ep.graph
    with audited() as report, target.inserting_before(output_node(target)):
        target.graph_copy(src, {y: next(iter(target.nodes))})
    (event,) = report.events
    assert event.api == "graph_copy" and event.created == ("mul_1",) and event.duplicates == ("mul_1",)


def test_a_failing_check_never_breaks_the_program(monkeypatch, without_hook):
    def broken(graph):
        raise _fx_namespace.PrivateStateMissing("no _graph_namespace")

    monkeypatch.setattr(_fx_namespace, "names_at_risk", broken)
    ep = _mul_export()
    with audited() as report:
        node = add_named_node(ep.graph, "mul")
    assert node.graph is ep.graph
    assert report.events == [] and report.errors == ["PrivateStateMissing: no _graph_namespace"]


def _synthetic_report():
    site = Site("my_pass", "run", 42)
    report = AuditReport(hook_at_start=False, hook_at_end=False)
    for created, dup in (("mul_1", ("mul_1",)), ("add", ())):
        event = AuditEvent("at-risk", site, "create_node", 1, (created,), ("mul_1",), 1, duplicates=dup)
        report.events.append(event)
    report.events.append(AuditEvent("at-risk", site, "node_copy", 1, ("neg",), ("inf",), 1, ("class",), 1))
    report.events.append(
        AuditEvent(
            "shared-target",
            Site("app", "main", 7),
            "create_node",
            2,
            ("c_1",),
            shared_target="c",
            sharing=("c",),
        )
    )
    return report


def test_table_format():
    expecttest.TestCase().assertExpectedInline(
        _synthetic_report().format_table(),
        """\
torch-export-names audit (hook off): 3 at-risk creation(s), 1 duplicate(s), 1 shared placeholder target(s)
kind           site (module:function:line)  api          count  created     duplicates  names at risk
at-risk        my_pass:run:42               create_node  2      mul_1, add  mul_1       mul_1
at-risk        my_pass:run:42               node_copy    1      neg                     inf, class (illegal)
shared-target  app:main:7                   create_node  1      c_1         target c""",
    )


def test_table_when_nothing_was_at_risk():
    assert AuditReport(hook_at_start=True, hook_at_end=True).format_table() == (
        "torch-export-names audit (hook on): 0 at-risk creation(s), 0 duplicate(s), "
        "0 shared placeholder target(s)"
    )


def test_json_is_serializable_and_groups_sites():
    data = json.loads(json.dumps(_synthetic_report().to_json()))
    assert data["exposed"] is True and len(data["events"]) == 4
    assert [
        (s["kind"], s["api"], s["creations"], s["duplicates"], s["shared_targets"], s["illegal"])
        for s in data["sites"]
    ] == [
        ("at-risk", "create_node", 2, ["mul_1"], [], []),
        ("at-risk", "node_copy", 1, [], [], ["class"]),
        ("shared-target", "create_node", 1, [], ["c"], []),
    ]
    assert data["events"][3]["sharing"] == ["c"]


# --- the CLI -----------------------------------------------------------------------

PROGRAM = textwrap.dedent(
    """
    import sys, torch

    class M(torch.nn.Module):
        def forward(self, mul):
            return mul * 2

    ep = torch.export.export(M(), (torch.ones(2),))
    x = next(iter(ep.graph.nodes))
    with ep.graph.inserting_before(list(ep.graph.nodes)[-1]):  # the output node
        ep.graph.create_node("call_function", torch.ops.aten.mul.Tensor, (x, x), name="mul")
    sys.exit(3)
    """
)
# The same program, ending otherwise: (the replacement of its last line, its exit status).
ENDINGS = {
    "sys.exit": ("sys.exit(3)", 3),
    "return": ("pass", 0),
    "exception": ("raise ValueError('from the program')", 1),
    "SIGTERM": ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -15),
}


def _cli(*argv, cwd):
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "torch_export_names", "run", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_audit_without_hook_reports_the_duplicate_and_keeps_the_exit_status(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    r = _cli("--audit", "--no-hook", "--json", "audit.json", "prog.py", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "(hook off): 1 at-risk creation(s), 1 duplicate(s)" in r.stderr
    assert "__main__:<module>:11" in r.stderr
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["exposed"] and data["events"][0]["duplicates"] == ["mul_1"]


def test_cli_audit_with_hook_finds_nothing_at_risk(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    r = _cli("--audit", "prog.py", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "torch-export-names audit (hook on): 0 at-risk creation(s)" in r.stderr, r.stderr


@pytest.mark.parametrize("no_hook", [True, False], ids=["hook off", "hook on"])
@pytest.mark.parametrize("ending", ENDINGS)
def test_cli_audit_report_is_complete_however_the_program_ends(tmp_path, ending, no_hook):
    """The report, table and JSON, is written when the program ends: with the hook state at
    the end, whether it returns, calls sys.exit, raises or is terminated; the exit status stays
    the program's."""
    if ending == "SIGTERM" and not hasattr(__import__("signal"), "SIGKILL"):
        pytest.skip("no POSIX signals here")
    last, status = ENDINGS[ending]
    (tmp_path / "prog.py").write_text(PROGRAM.replace("sys.exit(3)", last))
    r = _cli("--audit", *(["--no-hook"] if no_hook else []), "--json", "audit.json", "prog.py", cwd=tmp_path)
    assert r.returncode == status, r.stderr
    hook = "off" if no_hook else "on"
    assert f"torch-export-names audit (hook {hook}): {int(no_hook)} at-risk creation(s)" in r.stderr
    data = json.loads((tmp_path / "audit.json").read_text())
    assert (data["hook_at_start"], data["hook_at_end"]) == (not no_hook, not no_hook)
    assert data["torch"] == torch.__version__ and data["exposed"] is no_hook


def test_cli_audit_of_a_program_without_torch_imports_no_torch(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import sys; print(sorted(m for m in sys.modules if m.startswith('torch.')))\n"
    )
    r = _cli("--audit", "--json", "audit.json", "prog.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    assert "torch-export-names audit (hook off): 0 at-risk creation(s)" in r.stderr
    data = json.loads((tmp_path / "audit.json").read_text())
    assert (data["torch"], data["hook_at_end"], data["events"]) == (None, False, [])


def test_cli_audit_covers_the_program_not_its_subprocesses(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import os, subprocess, sys\n"
        "print(os.environ.get('TORCH_EXPORT_NAMES_AUDIT'), os.environ['TORCH_EXPORT_NAMES'])\n"
        "subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
    )
    r = _cli("--audit", "prog.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None 1"
    assert r.stderr.count("torch-export-names audit") == 1, r.stderr


def test_cli_json_without_audit_is_a_usage_error(tmp_path):
    r = _cli("--json", "x.json", "prog.py", cwd=tmp_path)
    assert r.returncode == 2 and "--json and --no-hook go with --audit" in r.stderr
