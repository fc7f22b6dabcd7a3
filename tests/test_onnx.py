"""``torch.onnx.export(..., dynamo=True)`` under the hook keeps stock torch's promises (tests/onnx_corpus.py).

The CI subset of the corpus is exported in a stock process (no package) and in one started with
``TORCH_EXPORT_NAMES=1``, once per module; each configuration and promise is its own test,
``test_hook_as_stock[<configuration>-<check>]``. The whole corpus, with the table and the export
time ratio: ``python tests/onnx_corpus.py --full``.
"""

import functools
import inspect
import sysconfig
from pathlib import Path

import pytest
import torch

import onnx_corpus

PTH = Path(sysconfig.get_paths()["purelib"]) / "torch_export_names.pth"


def _missing() -> str | None:
    if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        return f"torch {torch.__version__}'s torch.onnx.export has no dynamo=True"
    return onnx_corpus.missing_requirements()


needs_exporter = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
needs_pth = pytest.mark.skipif(
    not PTH.exists(), reason=f"{PTH} is not there: install the package to test TORCH_EXPORT_NAMES=1"
)
CI = onnx_corpus.configs(full=False)


@functools.cache
def _run(tmp: Path) -> tuple[dict, dict]:
    names = [c.name for c in CI if not onnx_corpus.missing(c.model.requires)]
    rows, facts = onnx_corpus.run(names, tmp, rounds=1, parallel=True)
    return {r.config.name: r for r in rows}, facts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("onnx"))


def _params() -> list:
    """(configuration, check) pairs; the checks a known issue breaks are non-strict xfails."""
    params = []
    for c in CI:
        for check in onnx_corpus.CHECKS:
            known = check in c.model.known_checks
            marks = [pytest.mark.xfail(strict=False, reason=str(c.model.known_issue))] if known else []
            params.append(pytest.param(c, check, id=f"{c}-{check}", marks=marks))
    return params


@pytest.mark.slow  # the first of these runs both processes over the subset (about a minute)
@needs_exporter
@needs_pth
@pytest.mark.parametrize("config,check", _params())
def test_hook_as_stock(corpus, config, check):
    reason = onnx_corpus.missing(config.model.requires)
    if reason:
        pytest.skip(reason)
    problem = corpus[0][config.name].problems[check]
    assert problem is None, f"{onnx_corpus.CHECKS[check]}: {problem}"


@pytest.mark.slow
@needs_exporter
@needs_pth
def test_the_two_processes_are_stock_and_hooked(corpus):
    facts = corpus[1]
    assert facts["stock"] == {"package_loaded": False, "hook_installed": False}, facts
    assert facts["hook"]["hook_installed"], f"TORCH_EXPORT_NAMES=1 did not install the hook: {facts}"


@pytest.mark.slow
@needs_exporter
@needs_pth
def test_the_promises_are_not_vacuous(corpus):
    """Stock exports each plain model and onnxruntime computes eager's outputs, so that the bytes and
    outputs checks compare something."""
    plain = [r for r in corpus[0].values() if r.config.model.collides is None]
    assert plain and all(r.stock["exported"] and r.stock["outputs"] == "equal" for r in plain), [
        (str(r.config), r.stock) for r in plain
    ]


@pytest.mark.slow
@needs_exporter
@needs_pth
def test_what_the_hook_exports_computes_eager_outputs(corpus):
    """Beyond stock's promises: every program the hook exports computes eager's outputs in
    onnxruntime (the names programs stock fails on included)."""
    rows = corpus[0].values()
    wrong = [
        (str(r.config), r.hook["outputs"])
        for r in rows
        if r.hook["exported"] and r.hook["outputs"] != "equal"
    ]
    assert not wrong, wrong


def test_the_ci_subset_is_mixed():
    names = [str(c) for c in CI]
    assert any(n.startswith("nn/") for n in names) and any(n.startswith("names/") for n in names)
    assert any(c.model.collides is None for c in CI) and any(c.model.collides for c in CI)
    full = onnx_corpus.configs()
    assert len({c.name for c in full}) == len(full) > len(CI)


# The comparison itself: it must see a broken promise where there is one.

_PLAIN = onnx_corpus.Config(onnx_corpus.models()[0], "static")
_EXPORTED = {"exported": True, "seconds": 1.0, "outputs": "equal"}
_FAILED = {"exported": False, "seconds": 1.0, "error": "SyntaxError: duplicate argument 'inf'"}


def test_compare_sees_a_hook_that_fails_where_stock_exports():
    problems = onnx_corpus.compare(_PLAIN, _EXPORTED, _FAILED, None)
    assert problems["exports"] and "duplicate argument" in problems["exports"]
    assert problems["failure"] and problems["outputs"] and problems["bytes"]


def test_compare_sees_wrong_outputs_and_other_bytes():
    wrong = dict(_EXPORTED, outputs="output 0: max abs difference 1.0")
    problems = onnx_corpus.compare(_PLAIN, _EXPORTED, wrong, False)
    assert problems["exports"] is None and problems["outputs"] and problems["bytes"]


def test_compare_sees_a_hook_that_fails_otherwise_than_stock():
    other = dict(_FAILED, error="TypeError: too many positional arguments")
    problems = onnx_corpus.compare(_PLAIN, other, _FAILED, None)
    assert problems["failure"] and "too many positional" in problems["failure"]
    assert not any(v for k, v in problems.items() if k != "failure")


def test_compare_holds_the_hook_to_nothing_stock_does_not_do():
    assert not any(onnx_corpus.compare(_PLAIN, _FAILED, _FAILED, None).values())
    assert not any(onnx_corpus.compare(_PLAIN, _EXPORTED, _EXPORTED, True).values())
    stock_wrong = dict(_EXPORTED, outputs="output 0: max abs difference 1.0")
    assert not any(onnx_corpus.compare(_PLAIN, stock_wrong, _EXPORTED, True).values())


def test_compare_allows_other_bytes_only_where_a_name_collides():
    colliding = next(c for c in onnx_corpus.configs() if c.model.collides)
    assert onnx_corpus.compare(colliding, _EXPORTED, _EXPORTED, False)["bytes"] is None
    assert onnx_corpus.compare(_PLAIN, _EXPORTED, _EXPORTED, False)["bytes"]
