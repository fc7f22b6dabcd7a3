"""Command line.

torch-export-names doctor [--json]
torch-export-names patch list | status | verify | apply | revert   (the torch patches)
torch-export-names run script.py [args...]     (also a folder or zip with __main__.py)
torch-export-names run -m module [args...]
torch-export-names run --audit [--json FILE] [--no-hook] script.py|-m module [args...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import runpy
import sys
import zipfile
from typing import Callable, ContextManager, Iterator

__all__ = ["main"]

_PROG = "torch-export-names"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG,
        description="Keep torch.export node names recorded and legal (pytorch/pytorch#202927).",
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("doctor", help="report whether this torch is affected, with reproductions")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    sub.add_parser(
        "patch", help="the upstream-style torch patches: list, status, verify, apply, revert", add_help=False
    )
    sub.add_parser(
        "run",
        help="run a script, folder, zip or -m module with the hook installed, as python would",
        add_help=False,
    )
    return p


_RUN_HELP = f"""usage: {_PROG} run script.py|folder|file.zip [args...]
       {_PROG} run -m module [args...]
       {_PROG} run --audit [--json FILE] [--no-hook] script.py|-m module [args...]

Run the program as `python` would (same sys.argv, sys.path[0], __file__, exit
status), with the export hook installed first. TORCH_EXPORT_NAMES=1 is set for
it, so the Python subprocesses it starts are repaired too.

--audit      record every node creation on a graph holding unrecorded or illegal
             names, and placeholders sharing a target; print a table on stderr
             at exit (this process only, not its subprocesses)
--json FILE  with --audit: also write the report as JSON to FILE
--no-hook    with --audit: do not install the hook (see where the program is exposed)
"""


def _fail(message: str, status: int) -> int:
    print(f"{_PROG} run: {message}", file=sys.stderr)
    return status


def _module_error(name: str) -> str | None:
    """Why ``python -m name`` would refuse to start, or None; imports parent packages only."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as e:
        return f"error while finding module specification for {name!r} ({type(e).__name__}: {e})"
    if spec is None:
        return f"no module named {name!r}"
    if spec.submodule_search_locations is not None:  # a package: runs its __main__
        try:
            main = importlib.util.find_spec(f"{name}.__main__")
        except ImportError as e:
            return f"error while finding module specification for {name + '.__main__'!r} ({e})"
        if main is None:
            return (
                f"no module named {name + '.__main__'!r}; {name!r} is a package and cannot be "
                "directly executed"
            )
    return None


def _start_hook() -> None:
    from ._bootstrap import ENV_VAR
    from .hook import _install_for

    os.environ[ENV_VAR] = "1"
    _install_for("torch-export-names run")


def _audit_options(argv: list[str]):
    """Leading ``--audit``, ``--json FILE``, ``--no-hook`` -> (audit, json path, hook, rest) or an error."""
    audit, json_path, hook, argv = False, None, True, list(argv)
    while argv[:1] in (["--audit"], ["--json"], ["--no-hook"]):
        option = argv.pop(0)
        if option == "--audit":
            audit = True
        elif option == "--no-hook":
            hook = False
        elif not argv:
            return "--json needs a FILE"
        else:
            json_path = argv.pop(0)
    if (json_path is not None or not hook) and not audit:
        return "--json and --no-hook go with --audit"
    return audit, json_path, hook, argv


def run(argv: list[str]) -> int:
    """``run``, with ``--audit [--json FILE] [--no-hook]`` before the program if asked."""
    options = _audit_options(argv)
    if isinstance(options, str):
        return _fail(options, 2)
    audit, json_path, hook, argv = options
    if not audit:
        return _run(argv)
    import json

    from .audit import AuditReport, audited

    reports: list[AuditReport] = []

    @contextlib.contextmanager
    def audit_the_program() -> Iterator[None]:
        # Opened when the program starts, after the hook is in place: the report says the
        # hook state the program ran under.
        with audited() as report:
            reports.append(report)
            yield

    try:
        return _run(argv, hook=hook, around=audit_the_program)
    finally:  # also when the program exits or raises
        for report in reports:
            print(report.format_table(), file=sys.stderr)
            if json_path is not None:
                with open(json_path, "w") as f:
                    json.dump(report.to_json(), f, indent=1)


def _run(
    argv: list[str],
    *,
    hook: bool = True,
    around: Callable[[], ContextManager[None]] = contextlib.nullcontext,
) -> int:
    """Run a program as ``python`` would, with the hook installed first.

    ``sys.path[0]`` is what ``python`` puts there (the script's folder, the
    folder or zip itself, or the working folder for ``-m``), ``__file__`` is
    absolute, the exit status is the program's. TORCH_EXPORT_NAMES=1 is set
    for the program, so the subprocesses it starts are covered too (through
    the installed .pth file). The program runs inside ``around()``.
    """
    if argv[:1] in (["-h"], ["--help"]):
        print(_RUN_HELP, end="")
        return 0
    if not argv or argv == ["-m"]:
        print(_RUN_HELP, end="", file=sys.stderr)
        return 2
    if argv[0] == "-m":
        name, rest = argv[1], argv[2:]
        # python -m puts the working folder first; a console script has its bin folder there.
        sys.path[0] = os.getcwd()
        error = _module_error(name)
        if error:
            return _fail(error, 1)
        if hook:
            _start_hook()
        sys.argv = [name, *rest]
        with around():
            runpy.run_module(name, run_name="__main__", alter_sys=True)
        return 0
    target, rest = argv[0], argv[1:]
    path = os.path.abspath(target)
    if not os.path.exists(path):
        return _fail(f"can't open file {path!r}: no such file or directory", 2)
    is_dir, is_zip = os.path.isdir(path), zipfile.is_zipfile(path)
    if is_dir or is_zip:
        if is_zip:
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
        else:
            names = set(os.listdir(path))
        if not names & {"__main__.py", "__main__.pyc"}:
            return _fail(f"can't find '__main__' module in {path!r}", 1)
    if hook:
        _start_hook()
    sys.argv = [target, *rest]
    if not (is_dir or is_zip):
        sys.path[0] = os.path.dirname(path)
    else:
        # A folder or zip: runpy puts it first on sys.path itself, as python does.
        del sys.path[0]
    with around():
        runpy.run_path(path, run_name="__main__")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run(argv[1:])
    if argv[:1] == ["patch"]:
        from ._torch_patch.__main__ import main as patch_main

        return patch_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "doctor":
        from . import _doctor

        return _doctor.main(json_output=args.json)
    raise AssertionError(args.command)
