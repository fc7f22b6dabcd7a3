"""Fixtures and hooks only: the helpers tests import are in helpers.py, the shared models in models.py."""

import os

import pytest
from hypothesis import settings

from torch_export_names import _warnings

# --- hypothesis profiles ------------------------------------------------------------------
# "ci": the same examples on every run (derandomize: a seed derived from each test), so a CI
# failure is reproducible and a green run does not hide a rare input that only another seed
# draws; print_blob prints what @reproduce_failure needs. "dev" (the default elsewhere):
# hypothesis's own random exploration with its example database, for finding new failures.
# CI=true loads "ci"; `--hypothesis-profile ci|dev` chooses either explicitly. A test's own
# @settings (max_examples=120, ...) wins over the profile's.
settings.register_profile("ci", derandomize=True, max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
HYPOTHESIS_PROFILE = "ci" if os.environ.get("CI", "").strip().lower() == "true" else "dev"
settings.load_profile(HYPOTHESIS_PROFILE)


@pytest.fixture
def without_hook():
    """The hook off for the test (it may be on for the whole run: TORCH_EXPORT_NAMES=1)."""
    import torch_export_names

    was_on = torch_export_names.is_installed()
    torch_export_names.uninstall()
    yield
    if was_on:
        torch_export_names.install()


@pytest.fixture(autouse=True)
def _fresh_warn_once():
    """Each test sees the package's warn-once state as a new process would."""
    saved = set(_warnings._warned)
    _warnings._warned.clear()
    yield
    _warnings._warned.clear()
    _warnings._warned.update(saved)


# --- slow tests: deselected unless --slow (CI passes it: the README's test command) ----------

SLOW_HINT = "run with --slow to include them (CI does)"
_SLOW_DESELECTED = pytest.StashKey[int]()


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (a minute or more each); CI runs them",
    )


def _slow_selected(config) -> bool:
    """--slow, or a -m expression that names the marker (``-m slow``, ``-m "not slow"``)."""
    return config.getoption("--slow") or "slow" in (config.getoption("markexpr") or "")


def pytest_report_header(config):
    lines = [f"hypothesis profile: {config.getoption('hypothesis_profile', None) or HYPOTHESIS_PROFILE}"]
    if not _slow_selected(config):
        lines.append(f"slow tests: deselected; {SLOW_HINT}")
    return lines


def pytest_collection_modifyitems(config, items):
    if _slow_selected(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=slow)
    config.stash[_SLOW_DESELECTED] = len(slow)


def pytest_terminal_summary(terminalreporter, config):
    count = config.stash.get(_SLOW_DESELECTED, 0)
    if count:
        tests = "test" if count == 1 else "tests"
        terminalreporter.write_line(f"{count} slow {tests} deselected; {SLOW_HINT}", yellow=True)
