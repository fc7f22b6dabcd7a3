"""`pip install -e .` gets the .pth file too, so TORCH_EXPORT_NAMES=1 works for developers.

Slow (a fresh virtual environment with torch in it, about a minute); CI runs it.
"""

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from torch_export_names._bootstrap import ENV_VAR

from helpers import not_reproduced
from models import MulInput

REPO = Path(__file__).resolve().parents[1]
PINNED = re.search(r"^torch==(\S+)$", (REPO / "constraints.txt").read_text(), re.M).group(1)

USER_CODE = (
    textwrap.dedent(
        """
    import torch
    import torch_export_names
    """
    )
    + "\n"
    + inspect.getsource(MulInput)
    + textwrap.dedent(
        """
    ep = torch.export.export(MulInput(), (torch.randn(3),))
    g = ep.graph
    x = next(n for n in g.nodes if n.op == "placeholder")
    with g.inserting_before(list(g.nodes)[-1]):  # the output node
        g.create_node("call_function", torch.ops.aten.mul.Tensor, (x, x), name="mul")
    g.lint()  # Node redefined name mul_1! unless the hook repaired the program
    print("linted with", torch_export_names.__file__)
    """
    )
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        torch.__version__.split("+")[0] != PINNED,
        reason=f"installs torch {torch.__version__} into a fresh venv; only the pinned torch {PINNED} "
        "installs from this machine's disk (others are multi-GB downloads)",
    ),
]


def _sh(*cmd, env=None, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=cwd)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return r


@pytest.fixture(scope="module")
def editable_venv(tmp_path_factory):
    venv = tmp_path_factory.mktemp("editable") / "venv"
    _sh(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt")]
    _sh(*pip, f"torch=={PINNED}")
    _sh(*pip, "--no-deps", "-e", str(REPO))
    return python


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in (ENV_VAR, "PYTHONPATH")}
    env.update(extra)
    return env


def test_editable_install_has_the_pth_file(editable_venv):
    site = subprocess.run(
        [str(editable_venv), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    from torch_export_names._bootstrap import pth_line

    installed = (Path(site) / "torch_export_names.pth").read_text()
    assert installed == pth_line()


def test_editable_install_repairs_with_the_env_var(editable_venv, tmp_path):
    (tmp_path / "user_model.py").write_text(USER_CODE)
    r = subprocess.run(
        [str(editable_venv), "user_model.py"],
        cwd=tmp_path,
        env=_env(**{ENV_VAR: "1"}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert f"linted with {REPO / 'torch_export_names' / '__init__.py'}" in r.stdout


def test_editable_install_without_the_env_var_is_stock_torch(editable_venv, tmp_path):
    (tmp_path / "user_model.py").write_text(USER_CODE)
    r = subprocess.run(
        [str(editable_venv), "user_model.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode == 0:
        not_reproduced("runs the user code without the hook: it records export names")
    assert "Node redefined name mul_1!" in r.stderr
