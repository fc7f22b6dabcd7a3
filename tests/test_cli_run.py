"""`torch-export-names run` starts a program as `python` would, through the console script too."""

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from torch_export_names._bootstrap import ENV_VAR

CONSOLE_SCRIPT = Path(sys.executable).parent / "torch-export-names"
needs_console_script = pytest.mark.skipif(
    not CONSOLE_SCRIPT.exists(), reason=f"{CONSOLE_SCRIPT} is not there: install the package to test it"
)

# What a program sees of how it was started, plus whether the hook is on.
PROBE = textwrap.dedent(
    """
    import os, sys
    import torch_export_names.hook as hook
    print("file", __file__)
    print("path0", sys.path[0])
    print("argv", sys.argv[1:])
    print("hook", hook.status().active, os.environ.get("TORCH_EXPORT_NAMES"))
    """
)


def _env():
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    return env


def _run(*argv, cwd, console=False):
    cmd = [str(CONSOLE_SCRIPT)] if console else [sys.executable, "-m", "torch_export_names"]
    return subprocess.run(
        [*cmd, "run", *argv], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300
    )


def _seen(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


@needs_console_script
def test_console_script_runs_a_module_from_the_working_folder(tmp_path):
    (tmp_path / "mymodel.py").write_text(PROBE)
    r = _run("-m", "mymodel", "a", cwd=tmp_path, console=True)
    assert r.returncode == 0, r.stderr
    seen = _seen(r.stdout)
    assert seen["path0"] == str(tmp_path)
    assert seen["file"] == str(tmp_path / "mymodel.py")
    assert seen["argv"] == "['a']"
    assert seen["hook"] == "True 1"


@pytest.mark.parametrize("console", [False, pytest.param(True, marks=needs_console_script)])
def test_script_gets_an_absolute_file_and_its_folder_first_on_the_path(tmp_path, console):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.py").write_text(PROBE)
    r = _run("sub/prog.py", "--x", cwd=tmp_path, console=console)
    assert r.returncode == 0, r.stderr
    seen = _seen(r.stdout)
    assert seen["file"] == str(tmp_path / "sub" / "prog.py")
    assert seen["path0"] == str(tmp_path / "sub")
    assert seen["argv"] == "['--x']"


def test_folder_with_main_runs_like_python(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_text(PROBE)
    r = _run("app", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    seen = _seen(r.stdout)
    assert seen["path0"] == str(tmp_path / "app")
    assert seen["argv"] == "['b']"
    assert seen["hook"] == "True 1"


def test_zip_with_main_runs_like_python(tmp_path):
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as z:
        z.writestr("__main__.py", PROBE)
    r = _run("app.zip", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _seen(r.stdout)["path0"] == str(tmp_path / "app.zip")


def test_folder_without_main_is_a_one_line_error(tmp_path):
    (tmp_path / "empty").mkdir()
    r = _run("empty", cwd=tmp_path)
    assert r.returncode == 1
    expected = f"torch-export-names run: can't find '__main__' module in {str(tmp_path / 'empty')!r}"
    assert r.stderr.strip() == expected


def test_missing_module_is_a_one_line_error(tmp_path):
    r = _run("-m", "no_such_module_here", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip() == "torch-export-names run: no module named 'no_such_module_here'"


def test_package_without_main_is_a_one_line_error(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    r = _run("-m", "pkg", cwd=tmp_path)
    assert r.returncode == 1
    assert "'pkg' is a package and cannot be directly executed" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_program_exit_status_and_traceback_are_its_own(tmp_path):
    (tmp_path / "boom.py").write_text("raise SystemExit(4)\n")
    assert _run("boom.py", cwd=tmp_path).returncode == 4
    (tmp_path / "err.py").write_text("raise ValueError('from the program')\n")
    r = _run("err.py", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().endswith("ValueError: from the program")


def test_run_help_exits_0_and_no_arguments_exits_2(tmp_path):
    r = _run("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("usage: torch-export-names run")
    r = _run(cwd=tmp_path)
    assert r.returncode == 2
    assert "usage: torch-export-names run" in r.stderr
