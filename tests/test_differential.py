"""Real models exported on stock torch and under the hook must behave the same (tests/differential/).

The CI subset of the corpus (``Entry.ci``), run quick (``run_entry(quick=True)``); the whole corpus
runs with ``python -m tests.differential --out docs/reports/differential.md``. Each model is compared once
(cached) and each check is its own test: ``test_hook_behaves_as_stock[<model>-<check>]``.
"""

import contextlib
import functools
import os

import pytest
import torch

import _torchvision_shim
import differential
from helpers import not_reproduced

# An installed torchvision must be importable before anything imports transformers, which imports
# it whenever it is installed (tests/_torchvision_shim.py says why it may not be).
_torchvision_shim.import_torchvision_if_installed()

CI = differential.ci_subset()


@functools.cache
def _results() -> dict:
    """Every runnable CI model compared once, two at a time in worker processes (most of an
    export is single-threaded Python; 2 workers take about half the time of one on 2 cores)."""
    names = [e.name for e in CI if not differential.missing_requirement(e)]
    jobs = min(2, os.cpu_count() or 1)
    return {r.name: r for r in differential.run_all(names, quick=True, jobs=jobs, fresh=False)}


def _result(name: str) -> differential.EntryResult:
    return _results()[name]


def _skip_if_missing(e: differential.Entry) -> None:
    reason = differential.missing_requirement(e)
    if reason:
        pytest.skip(reason)


@pytest.mark.slow  # the first of these compares all 31 models
@pytest.mark.parametrize("check", list(differential.CHECKS))
@pytest.mark.parametrize("entry", CI, ids=str)
def test_hook_behaves_as_stock(entry, check):
    _skip_if_missing(entry)
    result = _result(entry.name)
    harness = [d for d in result.differences if d.check == "harness"]
    assert not harness, "the comparison itself failed:\n" + "\n".join(result.notes)
    bad = result.failed_checks(check)
    assert not bad, "\n".join(map(str, bad))
    compared = [v for (_, c), v in result.checks.items() if c == check and not v.startswith("n/a")]
    both_fail = [n for n in result.notes if "export fails on stock torch and under the hook" in n]
    if (
        not compared
        and both_fail
        and all(v.startswith("n/a") for (_, c), v in result.checks.items() if c != "export")
    ):
        # This torch cannot export the model at all (torch 2.9.1: the RNNs' _flat_weights), hook
        # or not: nothing to compare, and the export check above saw the same failure on both.
        pytest.skip(f"torch {torch.__version__} cannot export {entry.name}: {both_fail[0][:200]}")
    assert compared, f"{check} was never compared: {result.checks} {result.notes}"


def test_the_ci_subset_is_mixed():
    families = [e.family for e in CI]
    assert len(CI) >= 25
    assert {"torchvision", "timm", "nn", "names", "hf"} <= set(families)
    assert len({e.name for e in differential.corpus()}) == len(differential.corpus()) >= 100


# The comparison itself: it must see a difference when there is one, and allow only stock's bugs.


class _InfArgument(torch.nn.Module):
    """An input called ``inf``: stock torch's ep.module() reads it as fx's global ``inf``."""

    def forward(self, inf):
        return inf * float("inf") + inf


def _entry(module_factory, label="harness-check"):
    def build():
        return differential.Built(module_factory(), lambda k: (torch.ones(2 + k, 3),), ({0: "AUTO"},))

    return differential.Entry(f"test/{label}", "nn", build)


def _skip_without_dim_auto():
    if not hasattr(torch.export, "Dim") or not hasattr(torch.export.Dim, "AUTO"):
        pytest.skip(f"torch {torch.__version__} has no torch.export.Dim.AUTO")


def test_a_hook_that_changes_outputs_is_caught(monkeypatch):
    _skip_without_dim_auto()
    original = torch.export.ExportedProgram.module

    @contextlib.contextmanager
    def doubling_hook():
        def module(self, *args, **kwargs):
            gm = original(self, *args, **kwargs)
            gm.register_forward_hook(lambda m, inputs, out: out * 2)
            return gm

        with monkeypatch.context() as m:
            m.setattr(torch.export.ExportedProgram, "module", module)
            yield

    monkeypatch.setattr(differential.runner, "_hooked", doubling_hook)
    result = differential.run_entry(_entry(lambda: torch.nn.Linear(3, 2)), variants=("static",), quick=True)
    bad = {d.check for d in result.differences if not d.allowed}
    assert {"outputs", "decompositions", "save/load"} <= bad, result.differences


def test_a_hook_that_warns_is_caught(monkeypatch):
    _skip_without_dim_auto()
    import warnings

    @contextlib.contextmanager
    def warning_hook():
        warnings.warn("a new warning", UserWarning)
        yield

    monkeypatch.setattr(differential.runner, "_hooked", warning_hook)
    result = differential.run_entry(_entry(lambda: torch.nn.ReLU()), variants=("kwargs",), quick=True)
    assert [d.check for d in result.differences] == ["warnings"]
    assert "a new warning" in result.differences[0].hook and not result.differences[0].allowed


def test_a_difference_is_allowed_only_where_stock_computes_wrongly():
    _skip_without_dim_auto()
    result = differential.run_entry(_entry(_InfArgument, "inf-argument"), variants=("static",), quick=True)
    if not result.differences:
        not_reproduced("computes an input called inf correctly")
    assert all(d.allowed for d in result.differences), result.differences
    checks = {d.check for d in result.differences}
    assert "outputs" in checks and "signature" not in checks, result.differences


class _Renamed(torch.nn.Module):
    """What renaming the argument (the package's former design) gives: right numbers, another
    signature."""

    def forward(self, inf_1):
        return inf_1 * float("inf") + inf_1


def test_a_signature_difference_is_never_allowed(monkeypatch):
    # even where stock computes wrong numbers and the hook's are right
    _skip_without_dim_auto()

    @contextlib.contextmanager
    def renaming_hook():
        with monkeypatch.context() as m:
            m.setattr(torch.export.ExportedProgram, "module", lambda self, *a, **k: _Renamed())
            yield

    monkeypatch.setattr(differential.runner, "_hooked", renaming_hook)
    result = differential.run_entry(_entry(_InfArgument, "inf-renamed"), variants=("static",), quick=True)
    if not any(d.check == "outputs" for d in result.differences):
        not_reproduced("computes an input called inf correctly")
    allowed = {d.check for d in result.differences if d.allowed}
    refused = {d.check for d in result.differences if not d.allowed}
    assert "outputs" in allowed and "signature" in refused, result.differences
