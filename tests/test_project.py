"""What ships with the project: the install hints, no paths of one machine, an install that keeps
the user's torch, and the wheel's contents (its version, py.typed, the .pth file, the patches)."""

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked_files():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out.stdout.splitlines()]


# Absolute paths of one machine: home and work folders, interpreter installs.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home/\w+|Users/\w+|opt/pypi[\w-]*)/|\.pyenv/versions/")


def test_no_file_names_a_path_of_one_machine():
    hits = []
    for path in _tracked_files():
        # This file spells the pattern out; images and JSON results are data, not instructions.
        if path.suffix in (".png", ".json") or not path.is_file() or path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert hits == []


def test_executorch_import_error_says_where_the_package_comes_from(monkeypatch):
    monkeypatch.setitem(sys.modules, "executorch.backends.qualcomm.partition.qnn_partitioner", None)
    monkeypatch.delitem(sys.modules, "torch_export_names.executorch", raising=False)
    with pytest.raises(ImportError) as e:
        import torch_export_names.executorch  # noqa: F401
    message = str(e.value)
    assert "pip install executorch==1.5.1" in message
    assert "not published on the package index" in message
    assert "torch-export-names[executorch]'" not in message


@pytest.mark.slow
def test_installing_the_package_never_replaces_the_installed_torch(tmp_path):
    """A drop-in for pinned projects: `pip install .` beside this torch installs no other torch
    (CI also runs this beside the oldest supported release)."""
    import json

    import torch

    report = tmp_path / "report.json"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    planned = {
        i["metadata"]["name"].lower(): i["metadata"]["version"]
        for i in json.loads(report.read_text())["install"]
    }
    assert "torch" not in planned, f"pip would replace torch {torch.__version__} with {planned['torch']}"
    assert "torch-export-names" in planned


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_has_one_version_and_ships_py_typed(wheel):
    """setup.py reads the version from the package; the wheel marks the package as typed."""
    import torch_export_names

    assert wheel.name.split("-")[1] == torch_export_names.__version__
    assert "torch_export_names/py.typed" in zipfile.ZipFile(wheel).namelist()


def test_the_wheel_puts_the_pth_file_in_site_packages(wheel):
    """``pip install .`` installs the wheel: its root is site-packages."""
    from torch_export_names._bootstrap import pth_line

    assert zipfile.ZipFile(wheel).read("torch_export_names.pth").decode() == pth_line()
