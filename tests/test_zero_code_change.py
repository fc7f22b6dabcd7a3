"""`python -m torch_export_names run ...` and TORCH_EXPORT_NAMES=1 cover unchanged user code."""

import inspect
import os
import subprocess
import sys
import sysconfig
import textwrap
import warnings
from pathlib import Path

import pytest

from torch_export_names._bootstrap import ENV_VAR

from helpers import not_reproduced
from models import CollidingInputs

USER_CODE = (
    textwrap.dedent(
        """
    import sys
    import torch
    from torch.export import export
    """
    )
    + "\n"
    + inspect.getsource(CollidingInputs)
    + textwrap.dedent(
        """
    ep = export(CollidingInputs(), (torch.randn(2, 3), torch.randn(2, 3)))
    g = ep.graph
    x = next(n for n in g.nodes if n.op == "placeholder")
    with g.inserting_before(list(g.nodes)[-1]):  # the output node
        g.create_node("call_function", torch.ops.aten.mul.Tensor, (x, x), name="mul")
    g.lint()  # Node redefined name mul_1! unless the hook repaired the program
    print("linted", sys.argv[1:])
    """
    )
)

PTH = Path(sysconfig.get_paths()["purelib"]) / "torch_export_names.pth"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env.update(extra)
    return env


def _python(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def user_script(tmp_path):
    (tmp_path / "user_model.py").write_text(USER_CODE)
    return tmp_path


def test_user_code_fails_without_the_hook(user_script):
    r = _python("user_model.py", cwd=user_script)
    if r.returncode == 0:
        not_reproduced("runs the user code without the hook: it no longer collides")
    assert "Node redefined name mul_1!" in r.stderr


def test_run_script(user_script):
    r = _python("-m", "torch_export_names", "run", "user_model.py", "a", "--b", cwd=user_script)
    assert r.returncode == 0, r.stderr
    assert "linted ['a', '--b']" in r.stdout


def test_run_module(user_script):
    path = os.pathsep.join(filter(None, [str(user_script), os.environ.get("PYTHONPATH")]))
    r = _python(
        "-m", "torch_export_names", "run", "-m", "user_model", "c", cwd=user_script, env=_env(PYTHONPATH=path)
    )
    assert r.returncode == 0, r.stderr
    assert "linted ['c']" in r.stdout


def test_run_passes_on_the_exit_status(tmp_path):
    (tmp_path / "exits.py").write_text("import sys; sys.exit(7)\n")
    assert _python("-m", "torch_export_names", "run", "exits.py", cwd=tmp_path).returncode == 7


def test_run_names_a_missing_script_as_python_does(tmp_path):
    r = _python("-m", "torch_export_names", "run", "nope.py", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, _python("nope.py", cwd=tmp_path).stderr)
    assert f"can't open file {str(tmp_path / 'nope.py')!r}" in r.stderr


# The .pth file's job, done by hand: it imports the bootstrap at start-up when the variable is set.
EARLY_INSTALL = textwrap.dedent(
    """
    import torch_export_names._bootstrap  # what torch_export_names.pth does under TORCH_EXPORT_NAMES=1
    import torch_export_names
    torch_export_names.install()  # imports torch.export, which fires the bootstrap's install too
    from torch.export.exported_program import ExportedProgram
    init = ExportedProgram.__dict__["__init__"]
    from torch_export_names._patching import original_of
    inner = original_of(init)
    assert inner is not None and original_of(inner) is None, "wrapped twice"
    torch_export_names.uninstall()
    assert not torch_export_names.is_installed()
    assert ExportedProgram.__dict__["__init__"] is inner, "uninstall() left a wrapper in place"
    print("one wrapper, removed")
    """
)


def test_env_var_and_an_early_install_wrap_once_and_uninstall_completely(tmp_path):
    r = _python("-c", EARLY_INSTALL, cwd=tmp_path, env=_env(**{ENV_VAR: "1"}))
    assert r.returncode == 0, r.stderr
    assert "one wrapper, removed" in r.stdout


STATUS = (
    "import torch.export, torch_export_names.hook as h; s = h.status(); print(s.installed, list(s.sources))"
)


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on", " On "])
def test_env_var_on_spellings(value):
    from torch_export_names._bootstrap import enabled

    assert enabled({ENV_VAR: value}) is True


@pytest.mark.parametrize("value", ["", "0", "false", "False", "NO", "off", " off "])
def test_env_var_off_spellings(value):
    from torch_export_names._bootstrap import enabled

    assert enabled({ENV_VAR: value}) is False


def test_env_var_other_values_warn_once_and_leave_the_hook_off():
    from torch_export_names import TorchExportNamesWarning
    from torch_export_names._bootstrap import enabled

    with pytest.warns(TorchExportNamesWarning, match="TORCH_EXPORT_NAMES='maybe' is not understood"):
        assert enabled({ENV_VAR: "maybe"}) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert enabled({ENV_VAR: "maybe"}) is False


def _run_pth(tmp_path, line: str, **env):
    """Start a Python whose site directory holds ``line`` as torch_export_names.pth, where
    torch_export_names cannot be imported (-S: not even from this venv; no PYTHONPATH either)."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "torch_export_names.pth").write_text(line)
    code = f"import site; site.addsitedir({str(site_dir)!r}); print('started')"
    clean = {k: v for k, v in _env(**env).items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean,
    )


def test_a_broken_install_never_breaks_python_start_up(tmp_path):
    """The package half-uninstalled (the .pth left behind): Python starts, and one line says why
    the hook is missing, instead of a traceback."""
    from torch_export_names._bootstrap import pth_line

    r = _run_pth(tmp_path, pth_line(), **{ENV_VAR: "1"})
    assert r.returncode == 0 and r.stdout == "started\n", r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(
        "torch-export-names: TORCH_EXPORT_NAMES is set but the export hook could not "
        "be loaded (ModuleNotFoundError"
    ), r.stderr


def test_a_broken_install_is_silent_when_the_hook_is_not_asked_for(tmp_path):
    from torch_export_names._bootstrap import pth_line

    r = _run_pth(tmp_path, pth_line(), **{ENV_VAR: "0"})
    assert r.returncode == 0 and r.stdout == "started\n" and r.stderr == "", r.stderr


def test_the_installed_pth_is_the_one_setup_writes():
    from torch_export_names._bootstrap import pth_line

    if not PTH.exists():
        pytest.skip(f"{PTH} is not there: the package is not installed in this environment")
    assert PTH.read_text() == pth_line()


needs_pth = pytest.mark.skipif(
    not PTH.exists(),
    reason=f"{PTH} is not there: install the package (not editable) to test TORCH_EXPORT_NAMES",
)


@needs_pth
def test_env_var_installs_the_hook(user_script):
    r = _python("user_model.py", "d", cwd=user_script, env=_env(**{ENV_VAR: "1"}))
    assert r.returncode == 0, r.stderr
    assert "linted ['d']" in r.stdout


@needs_pth
def test_run_covers_the_python_subprocesses_of_the_program(user_script):
    """run sets TORCH_EXPORT_NAMES=1; the .pth file installs the hook in each child Python."""
    (user_script / "parent.py").write_text(
        "import subprocess, sys\n"
        "sys.exit(subprocess.run([sys.executable, 'user_model.py', 'child']).returncode)\n"
    )
    r = _python("-m", "torch_export_names", "run", "parent.py", cwd=user_script)
    assert r.returncode == 0, r.stderr
    assert "linted ['child']" in r.stdout


@needs_pth
@pytest.mark.parametrize("value,active", [("false", False), ("off", False), ("TRUE", True), ("bogus", False)])
def test_env_var_through_the_pth_file(tmp_path, value, active):
    r = _python("-c", STATUS, cwd=tmp_path, env=_env(**{ENV_VAR: value}))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (f"True ['{ENV_VAR}']" if active else "False []")
    assert ("is not understood" in r.stderr) == (value == "bogus")


@needs_pth
def test_without_env_var_startup_imports_neither_torch_nor_the_package(tmp_path):
    probe = (
        "import sys; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('torch', 'torch_export_names')))"
    )
    assert _python("-c", probe, cwd=tmp_path).stdout.strip() == "[]"
    with_var = _python("-c", probe, cwd=tmp_path, env=_env(**{ENV_VAR: "1"})).stdout
    assert "torch_export_names._bootstrap" in with_var and "'torch'" not in with_var
