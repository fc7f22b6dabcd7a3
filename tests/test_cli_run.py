"""`torch-export-names run` is `python` with TORCH_EXPORT_NAMES=1: the same sys.argv, sys.path[0],
__file__, stack, exit status, signals and errors, nothing of torch imported before the program,
through the console script too; and it refuses to run where the .pth file would not arm the hook."""

import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from torch_export_names._bootstrap import AUDIT_VAR, ENV_VAR, PTH, pth_line
from torch_export_names.tools.cli import pth_problem

ROOT = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = Path(sys.executable).parent / "torch-export-names"
needs_console_script = pytest.mark.skipif(
    not CONSOLE_SCRIPT.exists(), reason=f"{CONSOLE_SCRIPT} is not there: install the package to test it"
)
needs_pth = pytest.mark.skipif(
    pth_problem() is not None, reason=f"run refuses in this environment: {pth_problem()}"
)

# What a program sees of how it was started: one "key value" line each.
PROBE = textwrap.dedent(
    """
    import os, sys
    frames, f = 0, sys._getframe()
    while f is not None:
        frames, f = frames + 1, f.f_back
    print("argv", sys.argv)
    print("path0", sys.path[0])
    print("file", __file__)
    print("name", __name__)
    print("frames", frames)
    print("torch", sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
    print("dev", sys.flags.dev_mode)
    """
)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in (ENV_VAR, AUDIT_VAR)}
    env.update(extra)
    return env


def _python(*argv, cwd, env=None):
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300
    )


def _run(*argv, cwd, console=False, options=(), env=None):
    cmd = [str(CONSOLE_SCRIPT)] if console else [sys.executable, *options, "-m", "torch_export_names"]
    return subprocess.run(
        [*cmd, "run", *argv], cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300
    )


def _seen(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


@pytest.fixture
def programs(tmp_path):
    """A script in a sub-folder, a folder and a zip with __main__.py, a module."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.py").write_text(PROBE)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_text(PROBE)
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as z:
        z.writestr("__main__.py", PROBE)
    (tmp_path / "mymodel.py").write_text(PROBE)
    return tmp_path


PROGRAMS = {
    "script": ("sub/prog.py", "a", "--b"),
    "folder": ("app", "x"),
    "folder/": ("app/", "x"),
    "zip": ("app.zip",),
    "module": ("-m", "mymodel", "c", "-d"),
}


@needs_pth
@pytest.mark.parametrize("console", [False, pytest.param(True, marks=needs_console_script)])
@pytest.mark.parametrize("program", PROGRAMS)
def test_the_program_sees_what_python_gives_it_and_no_torch(programs, program, console):
    """sys.argv (argv[0] as given), sys.path[0], __file__, __name__ and the stack depth are
    python's own; sys.modules holds nothing of torch when the program starts."""
    argv = PROGRAMS[program]
    plain = _python(*argv, cwd=programs)
    run = _run(*argv, cwd=programs, console=console)
    assert plain.returncode == run.returncode == 0, run.stderr
    assert _seen(run.stdout) == _seen(plain.stdout)
    assert _seen(run.stdout)["torch"] == "[]"
    if program == "script":
        assert _seen(run.stdout)["frames"] == "1"  # python's runpy runs folders, zips, modules


@needs_pth
def test_the_program_runs_with_the_variable_set_and_the_hook_installed(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import os, torch.export, torch_export_names.hook as hook\n"
        "print(os.environ['TORCH_EXPORT_NAMES'], hook.status().installed, list(hook.status().sources))\n"
    )
    r = _run("prog.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1 True ['TORCH_EXPORT_NAMES']"


@needs_pth
def test_interpreter_options_go_to_the_program(programs):
    r = _run("sub/prog.py", cwd=programs, options=("-X", "dev"))
    assert r.returncode == 0, r.stderr
    assert _seen(r.stdout)["dev"] == "True"


@needs_pth
@pytest.mark.parametrize(
    "argv",
    [("nope.py",), ("empty",), ("-m", "no_such_module_here"), ("-m", "pkg")],
    ids=["missing file", "folder without __main__", "missing module", "package without __main__"],
)
def test_a_program_python_cannot_start_fails_as_python_fails(tmp_path, argv):
    (tmp_path / "empty").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    plain, run = _python(*argv, cwd=tmp_path), _run(*argv, cwd=tmp_path)
    assert plain.returncode != 0
    assert (run.returncode, run.stderr) == (plain.returncode, plain.stderr)


@needs_pth
def test_exit_status_traceback_and_signals_are_the_programs(tmp_path):
    (tmp_path / "boom.py").write_text("raise SystemExit(4)\n")
    assert _run("boom.py", cwd=tmp_path).returncode == 4
    (tmp_path / "err.py").write_text("raise ValueError('from the program')\n")
    r = _run("err.py", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr == _python("err.py", cwd=tmp_path).stderr
    (tmp_path / "killed.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    if hasattr(signal, "SIGKILL"):  # POSIX: the process dies of the signal itself
        assert _run("killed.py", cwd=tmp_path).returncode == -signal.SIGTERM


def test_run_refuses_where_site_packages_are_not_read(tmp_path):
    """python -S reads no .pth file: run says so and does not start the program unprotected."""
    (tmp_path / "prog.py").write_text("print('ran')\n")
    env = _env(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    r = _run("prog.py", cwd=tmp_path, options=("-S",), env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("torch-export-names run: python runs with -S (no site module)"), r.stderr
    assert "Not running the program without the hook." in r.stderr


def test_pth_problem_names_a_missing_or_stale_pth_file(tmp_path):
    site = tmp_path / "site-packages"
    site.mkdir()
    assert f"{PTH} is in none of this python's site directories ({site})" in pth_problem([str(site)])
    (site / PTH).write_text("import os\n")
    assert "is not the one this version of the package writes; reinstall" in pth_problem([str(site)])
    (site / PTH).write_text(pth_line())
    assert pth_problem([str(site)]) is None


def test_run_help_exits_0_and_no_arguments_exits_2(tmp_path):
    r = _run("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("usage: torch-export-names run")
    r = _run(cwd=tmp_path)
    assert r.returncode == 2
    assert "usage: torch-export-names run" in r.stderr
