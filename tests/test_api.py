"""The public API at the package root."""

import importlib
import inspect
import subprocess
import sys

import torch_export_names


def test_root_names_are_the_functions_not_their_modules():
    for sub in ("passes", "hook", "detect", "doctor", "cases", "cli"):
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
