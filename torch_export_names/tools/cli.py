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
import json
import os
import runpy
import sys
import zipfile
from typing import Callable, ContextManager, Iterator

__all__ = ["main"]

_PROG = "torch-export-names"


_TARGET_HELP = "the directory holding torch/ (default: site-packages of the torch this python imports)"


def _parser() -> argparse.ArgumentParser:
    """The whole command line: ``doctor``, ``patch <command>`` and ``run``, one parser."""
    p = argparse.ArgumentParser(
        prog=_PROG,
        description="Keep torch.export node names recorded and legal (pytorch/pytorch#202927).",
    )
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("doctor", help="report whether this torch is affected, with reproductions")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    d.set_defaults(handler=_doctor)

    patch = sub.add_parser(
        "patch",
        help="the upstream-style torch patches: list, status, verify, apply, revert",
        description="Upstream-style torch patches for pytorch/pytorch#202927.",
    )
    patch.set_defaults(handler=_patch)
    patch_sub = patch.add_subparsers(dest="patch_command", required=True)
    # --target, the same option on every command that reads or changes an installed torch
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--target", metavar="DIR", help=_TARGET_HELP)
    patch_sub.add_parser("list", help="the torch versions with a patch, and where the patches are")
    st = patch_sub.add_parser(
        "status",
        parents=[target],
        help="which patch the installed torch carries: per file stock, patched or modified otherwise "
        "(exit 0 when all files are stock or all patched, 1 otherwise)",
    )
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    v = patch_sub.add_parser(
        "verify",
        parents=[target],
        help="run the reproductions and the patch's tests on the torch with the patch and on the "
        "torch without it (the installed one is either; an overlay of it is the other)",
    )
    v.add_argument("--no-baseline", action="store_true", help="skip the run against the unpatched torch")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--keep", action="store_true", help="keep the overlay directory")
    for name, text in (
        ("apply", "patch the installed torch in place (refuses files that are not the release's)"),
        ("revert", "restore the files `apply` replaced"),
    ):
        a = patch_sub.add_parser(name, parents=[target], help=text)
        a.add_argument("--dry-run", action="store_true", help="show the diff, change nothing")

    r = sub.add_parser(
        "run",
        help="run a script, folder, zip or -m module with the hook installed, as python would",
        usage=f"{_PROG} run [--audit [--json FILE] [--no-hook]] (script.py|folder|zip|-m module) [args...]",
        description=_RUN_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument(
        "--audit",
        action="store_true",
        help="record every node creation on a graph holding unrecorded or illegal names, and "
        "placeholders sharing a target; print a table on stderr at exit (this process only, "
        "not its subprocesses)",
    )
    r.add_argument("--json", metavar="FILE", help="with --audit: also write the report as JSON to FILE")
    r.add_argument(
        "--no-hook",
        action="store_true",
        help="with --audit: do not install the hook (see where the program is exposed)",
    )
    r.add_argument(
        "-m", dest="module", nargs=argparse.REMAINDER, metavar="module", help="run a module as python -m does"
    )
    r.add_argument("program", nargs=argparse.REMAINDER, help="the script, folder or zip, then its arguments")
    r.set_defaults(handler=lambda args: run(args, r))
    return p


_RUN_DESCRIPTION = """\
Run the program as `python` would (same sys.argv, sys.path[0], __file__, exit
status), with the export hook installed first. TORCH_EXPORT_NAMES=1 is set for
it, so the Python subprocesses it starts are repaired too."""


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
    from .._bootstrap import ENV_VAR
    from ..hook import _install_for

    os.environ[ENV_VAR] = "1"
    _install_for("torch-export-names run")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``run``, with ``--audit [--json FILE] [--no-hook]`` before the program if asked."""
    if (args.json is not None or args.no_hook) and not args.audit:
        parser.error("--json and --no-hook go with --audit")
    if args.module is not None:
        if not args.module:
            parser.error("-m needs a module name")
        argv = ["-m", *args.module]
    elif args.program:
        argv = list(args.program)
    else:
        parser.error("give a program (script.py, folder or zip) or -m module")
    if not args.audit:
        return _run(argv)
    from ..audit import AuditReport, audited

    reports: list[AuditReport] = []

    @contextlib.contextmanager
    def audit_the_program() -> Iterator[None]:
        # Opened when the program starts, after the hook is in place: the report says the
        # hook state the program ran under.
        with audited() as report:
            reports.append(report)
            yield

    try:
        return _run(argv, hook=not args.no_hook, around=audit_the_program)
    finally:  # also when the program exits or raises
        for report in reports:
            print(report.format_table(), file=sys.stderr)
            if args.json is not None:
                with open(args.json, "w") as f:
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


def _doctor(args: argparse.Namespace) -> int:
    from . import doctor

    return doctor.main(json_output=args.json)


def _patch(args: argparse.Namespace) -> int:
    from .torch_patch import store

    command, prog = args.patch_command, f"{_PROG} patch"
    if command == "list":
        print(f"patches in {store.data_dir()}:")
        for version in store.available():
            print(f"  torch {version}: {store.load(version).path.name}")
        return 0
    from .torch_patch import install, status
    from .torch_patch.verify import VerifyError, verify

    try:
        if command in ("status", "verify"):
            site = install.site_of(args.target)
            if command == "status":
                state = status.status(site)
                print(json.dumps(state.to_json(), indent=1) if args.json else state.format())
                return 0 if state.state in (status.STOCK, status.PATCHED) else 1
            report = verify(site=site, baseline=not args.no_baseline, keep=args.keep)
            print(json.dumps(report.to_json(), indent=1) if args.json else report.format())
            return 0 if report.ok else 1
        return getattr(install, command)(args.target, dry_run=args.dry_run)
    except store.NoPatch as e:
        print(f"{prog} {command}: {e}", file=sys.stderr)
        return 2
    except (install.Refused, VerifyError) as e:
        print(f"{prog} {command}: error: {e}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    return args.handler(args)
