"""Fixtures and hooks only: the helpers tests import are in helpers.py, the shared models in models.py."""

import pytest

from torch_export_names import _warnings


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
