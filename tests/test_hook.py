"""install()/uninstall(): every program a public torch.export entry point returns is repaired."""

import io
import logging
import math
import random
import re
import threading
import warnings

import pytest
import torch

# Imported before install(), as ExecuTorch and most user code do.
from torch.export import export as early_export
from torch.export.exported_program import ExportedProgram

import torch_export_names
import torch_export_names._hops
import torch_export_names.passes
from torch_export_names import find_unrecorded_names, install, installed, is_installed, uninstall
from torch_export_names._patching import original_of
from torch_export_names.passes import _graph_modules

from helpers import add_named_node, lint_all, not_reproduced, torch_api, torch_known_affected
from models import CollidingInputs, CondMulInput, CondT1Input

ORIGINAL_INIT = ExportedProgram.__dict__["__init__"]
ARGS = (torch.randn(2, 3), torch.randn(2, 3))


def _saved_and_loaded():
    buf = io.BytesIO()
    torch.export.save(torch.export.export(CollidingInputs(), ARGS), buf)
    buf.seek(0)
    return torch.export.load(buf)


# Public producers of ExportedProgram (torch 2.13.0 to 2.15.0), and of
# GraphModules that torch.export names nodes in.
ENTRY_POINTS = {
    "export": lambda: torch.export.export(CollidingInputs(), ARGS),
    "export_strict": lambda: torch.export.export(CollidingInputs(), ARGS, strict=True),
    "export_imported_early": lambda: early_export(CollidingInputs(), ARGS),
    "run_decompositions": lambda: torch.export.export(CollidingInputs(), ARGS).run_decompositions(),
    "load": _saved_and_loaded,
    "draft_export": lambda: torch_api("torch.export", "draft_export")(CollidingInputs(), ARGS),
    "move_to_device_pass": lambda: torch_api("torch.export.passes", "move_to_device_pass")(
        torch.export.export(CollidingInputs(), ARGS), "cpu"
    ),
    "module": lambda: torch.export.export(CollidingInputs(), ARGS).module(),
    "module_cond_branch": lambda: torch.export.export(CondMulInput(), ARGS).module(),
}
# Where the node-adding step adds its node: the top-level graph unless named here.
STEP_GRAPH = {"module_cond_branch": "true_graph_0"}
# Entry points whose result has no colliding name even on an affected torch (the README's table):
# load rebuilds the program from its serialized form, and module() rebuilds the top-level graph,
# both recording every name. The hook still runs on them (test_entry_point_is_repaired_with_hook).
NO_COLLISION = {"load", "module"}


def _collides(obj, path="") -> bool:
    """Add a node asking for ``mul``, as a pass would; does the graph still lint?"""
    gm = obj.graph_module if isinstance(obj, ExportedProgram) else obj
    graph = gm.get_submodule(path).graph
    node = add_named_node(graph, "mul")
    try:
        graph.lint()
        return False
    except RuntimeError as e:
        assert re.search("Node redefined name", str(e)), e
        return True
    finally:
        graph.erase_node(node)


@pytest.fixture(autouse=True)
def _no_hook_left_behind():
    uninstall()
    yield
    uninstall()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


@pytest.mark.parametrize("entry", [e for e in ENTRY_POINTS if e not in NO_COLLISION])
def test_entry_point_collides_without_hook(entry):
    obj = ENTRY_POINTS[entry]()
    if not _collides(obj, STEP_GRAPH.get(entry, "")):
        not_reproduced(f"leaves no colliding name after {entry} (unrecorded: {find_unrecorded_names(obj)})")


@pytest.mark.parametrize("entry", [e for e in ENTRY_POINTS if e in NO_COLLISION])
def test_entry_point_without_collision_needs_no_hook(entry):
    """What the README's table says of these entry points; were one to collide, the table is wrong."""
    obj = ENTRY_POINTS[entry]()
    assert not _collides(obj, STEP_GRAPH.get(entry, ""))
    lint_all(obj)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_entry_point_is_repaired_with_hook(entry):
    with installed():
        obj = ENTRY_POINTS[entry]()
    assert find_unrecorded_names(obj) == []
    assert not _collides(obj, STEP_GRAPH.get(entry, ""))
    lint_all(obj)


def test_unflatten_is_repaired_with_hook():
    with installed():
        unflat = torch.export.unflatten(torch.export.export(CollidingInputs(), ARGS))
    gms = [m for m in unflat.modules() if isinstance(m, torch.fx.GraphModule)]
    assert all(find_unrecorded_names(m) == [] for m in gms)


def test_hook_computes_the_same():
    plain = torch.export.export(CollidingInputs(), ARGS).module()(*ARGS)
    with installed():
        hooked = torch.export.export(CollidingInputs(), ARGS).module()(*ARGS)
    torch.testing.assert_close(hooked, plain)


def test_uninstall_restores_the_original_object():
    install()
    assert is_installed()
    assert ExportedProgram.__dict__["__init__"] is not ORIGINAL_INIT
    uninstall()
    assert not is_installed()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def test_uninstall_under_another_wrapper_switches_the_hook_off_and_keeps_theirs():
    """Another tool wraps ExportedProgram.__init__ after install(): uninstall() must not drop
    their wrapper; ours stays beneath it, switched off, and goes once theirs is gone."""
    install()
    ours = ExportedProgram.__dict__["__init__"]
    seen = []

    def theirs(self, *args, **kwargs):
        ours(self, *args, **kwargs)
        seen.append(self)

    ExportedProgram.__init__ = theirs
    try:
        with pytest.warns(torch_export_names.TorchExportNamesWarning, match="was replaced again"):
            uninstall()
        assert not is_installed() and ExportedProgram.__dict__["__init__"] is theirs
        ep = torch.export.export(CollidingInputs(), ARGS)
        assert seen == [ep]
        if torch_known_affected() or torch_export_names.is_affected():  # else no live hook changes it
            assert find_unrecorded_names(ep), "the switched-off hook still repaired the program"
    finally:
        ExportedProgram.__init__ = ours  # they take theirs off
    install()  # our switched-off wrapper is taken out, not wrapped again
    assert original_of(ExportedProgram.__dict__["__init__"]) is ORIGINAL_INIT
    uninstall()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def test_install_twice_and_uninstall_without_install_are_harmless():
    uninstall()
    install()
    patched = ExportedProgram.__dict__["__init__"]
    install()
    assert ExportedProgram.__dict__["__init__"] is patched
    uninstall()
    uninstall()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def test_nested_installed_blocks_keep_the_outer_one():
    with installed():
        with installed():
            assert is_installed()
        assert is_installed()
        assert find_unrecorded_names(early_export(CollidingInputs(), ARGS)) == []
    assert not is_installed()


def _is_one_wrapper_around_the_original() -> bool:
    init = ExportedProgram.__dict__["__init__"]
    return original_of(init) is ORIGINAL_INIT


def test_install_and_installed_blocks_share_one_wrapper():
    install()
    with installed():
        install()
        with installed():
            assert _is_one_wrapper_around_the_original()
    assert _is_one_wrapper_around_the_original()
    uninstall()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def test_uninstall_inside_a_block_keeps_the_hook_until_the_block_closes():
    install()
    with installed():
        uninstall()
        assert is_installed()
        assert find_unrecorded_names(early_export(CollidingInputs(), ARGS)) == []
    assert not is_installed()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


@pytest.mark.parametrize("first_to_close", ["first_opened", "last_opened"])
def test_one_threads_block_closing_leaves_the_other_threads_hook(first_to_close):
    """Blocks in two threads; when one closes, exports still get repaired until the other does."""
    opened = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]

    def hold(i):
        with installed():
            opened[i].set()
            release[i].wait(60)

    threads = [threading.Thread(target=hold, args=(i,)) for i in range(2)]
    threads[0].start()
    assert opened[0].wait(60)
    threads[1].start()
    assert opened[1].wait(60)
    first = 0 if first_to_close == "first_opened" else 1
    release[first].set()
    threads[first].join(60)
    # The other thread's block is still open: the main thread's exports are repaired.
    assert is_installed()
    ep = early_export(CollidingInputs(), ARGS)
    assert find_unrecorded_names(ep) == []
    assert not _collides(ep)
    release[1 - first].set()
    threads[1 - first].join(60)
    assert not is_installed()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def test_strict_of_a_block_applies_to_its_own_thread_only(monkeypatch):
    _fail_midway(monkeypatch)
    errors = []

    def lenient_export():
        try:
            torch.export.export(CondT1Input(), (torch.randn(3, 3),))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with installed(strict=True):
        t = threading.Thread(target=lenient_export)
        t.start()
        t.join(120)
        with pytest.raises(RuntimeError, match="injected failure"):
            torch.export.export(CondT1Input(), (torch.randn(3, 3),))
    assert errors == []


def test_suspended_exports_are_as_torch_returns_them():
    from torch_export_names.hook import suspended

    with installed():
        with suspended():
            ep = early_export(CollidingInputs(), ARGS)
        assert is_installed()
    if not find_unrecorded_names(ep):
        not_reproduced("records export names; nothing to tell apart")
    assert _collides(ep)


def test_suspended_in_one_thread_leaves_the_other_threads_exports_repaired():
    from torch_export_names.hook import suspended

    inside, leave = threading.Event(), threading.Event()

    def hold_suspended():
        with suspended():
            inside.set()
            leave.wait(60)

    with installed():
        t = threading.Thread(target=hold_suspended)
        t.start()
        try:
            assert inside.wait(60)
            ep = early_export(CollidingInputs(), ARGS)  # this thread is not suspended
        finally:
            leave.set()
            t.join(60)
    assert find_unrecorded_names(ep) == []
    assert not _collides(ep)


def test_status_says_who_asked_for_the_hook():
    from torch_export_names.hook import status

    assert tuple(status())[:2] == (False, ())
    install()
    with installed():
        assert tuple(status())[:2] == (True, ("install()", "installed() block"))
    uninstall()
    with installed():
        assert tuple(status())[:2] == (True, ("installed() block",))
    assert tuple(status())[:2] == (False, ())


def test_is_affected_measures_stock_torch_with_the_hook_installed():
    from torch_export_names._detect import is_affected

    is_affected.cache_clear()
    plain = is_affected()
    is_affected.cache_clear()
    try:
        with installed():
            assert is_affected() == plain
    finally:
        is_affected.cache_clear()
    if not plain:
        not_reproduced("is not affected: both answers are False")


def test_install_uninstall_from_threads_while_exporting():
    """torch.export itself is not thread-safe, so only the main thread exports."""
    stop, errors = threading.Event(), []

    def toggle(seed):
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                (install if rng.random() < 0.5 else uninstall)()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=toggle, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            ep = early_export(CollidingInputs(), ARGS)
            lint_all(ep)
            torch.testing.assert_close(ep.module()(*ARGS), CollidingInputs()(*ARGS))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    uninstall()
    assert ExportedProgram.__dict__["__init__"] is ORIGINAL_INIT


def _as_torch_returned_it(ep):
    return [
        (path, [(n.name, n.target) for n in g.nodes], sorted(g._graph_namespace._used_names), mod.code)
        for path, mod, g in _graph_modules(ep)
    ]


def _fail_midway(monkeypatch):
    """Names are recorded, then the subgraph renaming raises."""

    def boom(graphs):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(torch_export_names._hops, "propagate", boom)


def test_failing_repair_leaves_the_program_as_torch_returned_it(monkeypatch, caplog):
    expected = _as_torch_returned_it(torch.export.export(CondT1Input(), (torch.randn(3, 3),)))
    _fail_midway(monkeypatch)
    with installed(), caplog.at_level(logging.WARNING, logger="torch_export_names"):
        ep = torch.export.export(CondT1Input(), (torch.randn(3, 3),))
    assert _as_torch_returned_it(ep) == expected
    assert "repair failed (RuntimeError: injected failure)" in caplog.text


def test_failing_repair_raises_with_strict(monkeypatch):
    _fail_midway(monkeypatch)
    with installed(strict=True), pytest.raises(RuntimeError, match="injected failure"):
        torch.export.export(CondT1Input(), (torch.randn(3, 3),))


def test_failing_repair_raises_after_install_strict(monkeypatch):
    _fail_midway(monkeypatch)
    install(strict=True)
    try:
        with pytest.raises(RuntimeError, match="injected failure"):
            torch.export.export(CondT1Input(), (torch.randn(3, 3),))
    finally:
        uninstall()


class InfAndCondMulInput(torch.nn.Module):
    """An illegal input (``inf``), unrecorded names and cond branches: every part of repair."""

    def forward(self, x, inf, mul):
        branches = (lambda a, b: a * b * 2 + math.inf, lambda a, b: a - b)
        return torch.cond(x.sum() > 0, *branches, (x, mul)) + inf


def test_the_hook_applies_repair():
    """A program exported under the hook is the one ``repair`` makes of the stock export."""
    args = (torch.randn(3), torch.randn(3), torch.randn(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_export_names.TorchExportNamesWarning)  # inf -> inf_1
        with installed():
            hooked = torch.export.export(InfAndCondMulInput(), args)
        repaired = torch.export.export(InfAndCondMulInput(), args)
        assert find_unrecorded_names(repaired) or not torch_export_names.is_affected()
        torch_export_names.repair(repaired)
    assert _as_torch_returned_it(hooked) == _as_torch_returned_it(repaired)
    assert hooked.graph_signature.user_inputs == repaired.graph_signature.user_inputs


def test_logs_one_debug_line_per_repaired_program(caplog):
    with installed(), caplog.at_level(logging.DEBUG, logger="torch_export_names"):
        torch.export.export(CollidingInputs(), ARGS)
    lines = [r.getMessage() for r in caplog.records if "repaired an ExportedProgram" in r.getMessage()]
    assert lines, caplog.text
    recorded = int(re.search(r"recorded (\d+) names", lines[-1]).group(1))
    assert (recorded > 0) == torch_export_names.is_affected()


def _case_params():
    from torch_export_names.tools.cases import CASES, executorch_missing

    for case in CASES:
        skip = case.needs_executorch and executorch_missing()
        yield pytest.param(case, id=case.name, marks=[pytest.mark.skip(reason=str(skip))] if skip else [])


@pytest.mark.parametrize("case", _case_params())
def test_every_reproduction_passes_with_only_install_in_front(case):
    """Unchanged user code: no repair() call, only the hook."""
    from torch_export_names.tools.cases import run_case

    with installed():
        outcome = run_case(case, repaired=False)
    assert outcome.ok, outcome


def test_hook_leaves_a_program_it_cannot_read_as_torch_built_it(monkeypatch):
    """A torch whose ExportedProgram lacks what the hook reads: export still works, one warning."""
    from torch_export_names import TorchExportNamesWarning, _signature

    def unreadable(ep):
        raise AttributeError("'ModuleCallSignature' object has no attribute 'forward_arg_names'")

    monkeypatch.setattr(_signature, "_snapshot", unreadable)
    expected = _as_torch_returned_it(torch.export.export(CollidingInputs(), ARGS))
    with installed(), pytest.warns(TorchExportNamesWarning, match="cannot read this torch's ExportedProgram"):
        ep = torch.export.export(CollidingInputs(), ARGS)
    assert _as_torch_returned_it(ep) == expected
