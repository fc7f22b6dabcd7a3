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


# --- opt-in markers: "slow" (a minute or more) and "network" (reads PyPI) tests are deselected
# unless --slow / --network is given, or a -m expression names the marker. The README's test
# command (scripts/test.sh, which CI runs) passes both: it installs from the package index anyway.

OPT_IN = {
    "slow": "also run the tests marked slow (a minute or more each); CI runs them",
    "network": "also run the tests marked network (they read torch's wheel on PyPI); CI runs them",
}
_DESELECTED = pytest.StashKey[dict]()


def _hint(marker: str) -> str:
    return f"run with --{marker} to include them (CI does)"


def pytest_addoption(parser):
    for marker, text in OPT_IN.items():
        parser.addoption(f"--{marker}", action="store_true", default=False, help=text)


def _selected(config, marker: str) -> bool:
    return config.getoption(f"--{marker}") or marker in (config.getoption("markexpr") or "")


def pytest_report_header(config):
    lines = [f"hypothesis profile: {config.getoption('hypothesis_profile', None) or HYPOTHESIS_PROFILE}"]
    lines += [f"{m} tests: deselected; {_hint(m)}" for m in OPT_IN if not _selected(config, m)]
    return lines


def pytest_collection_modifyitems(config, items):
    counts = {}
    for marker in OPT_IN:
        if _selected(config, marker):
            continue
        out = [item for item in items if item.get_closest_marker(marker)]
        if out:
            items[:] = [item for item in items if not item.get_closest_marker(marker)]
            config.hook.pytest_deselected(items=out)
            counts[marker] = len(out)
    config.stash[_DESELECTED] = counts


def pytest_terminal_summary(terminalreporter, config):
    for marker, count in config.stash.get(_DESELECTED, {}).items():
        tests = "test" if count == 1 else "tests"
        terminalreporter.write_line(f"{count} {marker} {tests} deselected; {_hint(marker)}", yellow=True)
