"""Command line.

torch-export-names doctor [--json]
torch-export-names patch list | status | verify | apply | revert   (the torch patches)
torch-export-names run script.py [args...]     (also a folder or zip with __main__.py)
torch-export-names run -m module [args...]
torch-export-names run --audit [--json FILE] [--no-hook] script.py|-m module [args...]

Every command's --help starts with what it does (``_command``). ``run`` imports nothing of
torch: it sets the variables and replaces itself with the interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["main", "pth_problem"]

_PROG = "torch-export-names"


_TARGET_HELP = "the directory holding torch/ (default: site-packages of the torch this python imports)"


def _command(parent, name: str, summary: str, details: str = "", **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with ``summary`` (also its line in the parent's
    list), then ``details`` as a paragraph of its own."""
    description = summary[0].upper() + summary[1:] + "."
    if details:
        description += "\n\n" + details
    return parent.add_parser(
        name,
        help=summary,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def _parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line: ``doctor``, ``patch <command>`` and ``run``, one parser."""
    p = argparse.ArgumentParser(
        prog=_PROG,
        description="Keep torch.export node names recorded and legal (pytorch/pytorch#202927).",
    )
    sub = p.add_subparsers(dest="command", required=True)

    d = _command(
        sub,
        "doctor",
        "report whether this torch is affected, with reproductions",
        "Prints versions, whether this torch is affected (or patched), whether the hook is\n"
        "installed and how it got there, each reproduction case run without and with the\n"
        "repair, and the next step for your situation: a report to paste into a bug.",
    )
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    d.set_defaults(handler=_doctor)

    patch = _command(
        sub,
        "patch",
        "the upstream-style torch patches: list, status, verify, apply, revert",
        "One patch per supported torch release fixes pytorch/pytorch#202927 in torch itself.",
    )
    patch.set_defaults(handler=_patch)
    patch_sub = patch.add_subparsers(dest="patch_command", required=True)
    # --target, the same option on every command that reads or changes an installed torch
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--target", metavar="DIR", help=_TARGET_HELP)
    _command(patch_sub, "list", "print the torch versions with a patch, and where the patch files are")
    st = _command(
        patch_sub,
        "status",
        "say which patch the installed torch carries: per file stock, patched or modified otherwise",
        "Exits 0 when all files are stock or all patched, 1 otherwise.",
        parents=[target],
    )
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    v = _command(
        patch_sub,
        "verify",
        "run the reproductions and the patch's tests on the torch with the patch and without it",
        "The installed torch is one of the two, a throw-away overlay of it the other; the\n"
        "installed torch is never changed. Passes when every check passes with the patch,\n"
        "every case and carried test fails without it and every guard passes in both.",
        parents=[target],
    )
    v.add_argument("--no-baseline", action="store_true", help="skip the run against the unpatched torch")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--keep", action="store_true", help="keep the overlay directory")
    for name, summary, details in (
        (
            "apply",
            "patch the installed torch in place",
            "Refuses unless every file the patch changes is the release's (by sha256); keeps a\n"
            "backup of each for `revert`.",
        ),
        ("revert", "restore the torch files `apply` replaced", "From the backups `apply` kept."),
    ):
        a = _command(patch_sub, name, summary, details, parents=[target])
        a.add_argument("--dry-run", action="store_true", help="show the diff, change nothing")

    r = _command(
        sub,
        "run",
        "run a script, folder, zip or -m module with the hook installed, exactly as python would",
        _RUN_DESCRIPTION,
        # two lines, as argparse wraps a usage it writes itself (at most 80 columns)
        usage=f"{_PROG} run [--audit [--json FILE] [--no-hook]]\n"
        + " " * len(f"usage: {_PROG} run ")
        + "(script.py|folder|zip|-m module) [args...]",
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
        help="with --audit: do not install the hook (see where the program is exposed); "
        "sets TORCH_EXPORT_NAMES=0",
    )
    r.add_argument(
        "-m", dest="module", nargs=argparse.REMAINDER, metavar="module", help="run a module as python -m does"
    )
    r.add_argument("program", nargs=argparse.REMAINDER, help="the script, folder or zip, then its arguments")
    r.set_defaults(handler=lambda args: run(args, r, argv))
    return p


_RUN_DESCRIPTION = """\
Sets TORCH_EXPORT_NAMES=1 and replaces this process with `python program [args...]`
(the same interpreter, with the same interpreter options), so the program is python's
in every respect: sys.argv, sys.path[0], __file__, the stack, the exit status and
signals. The installed torch_export_names.pth file installs the hook when the
program imports torch.export; run itself imports nothing of torch. The Python
subprocesses the program starts inherit the variable and are repaired too.

--audit travels by TORCH_EXPORT_NAMES_AUDIT (--json by TORCH_EXPORT_NAMES_AUDIT_JSON):
the report is printed when the program ends, however it ends (return, sys.exit, an
exception, SIGTERM, SIGHUP), but for os._exit and SIGKILL.

If the .pth file is not in effect for this interpreter (python -S, or the package
installed without it), run says so and exits 2 rather than run the program
unprotected."""


def _fail(message: str, status: int) -> int:
    print(f"{_PROG} run: {message}", file=sys.stderr)
    return status


def _interpreter_options(argv: list[str] | None) -> list[str]:
    """The options this interpreter was started with (``-X dev``, ``-S``, ``-W error``), as
    ``sys.orig_argv`` holds them before ``-m torch_export_names`` or the console script; []
    when ``main`` was called with its own ``argv``."""
    orig = list(getattr(sys, "orig_argv", []))
    tail = sys.argv[1:]
    if argv is not None or not orig or orig[len(orig) - len(tail) :] != tail:
        return []
    head = orig[1 : len(orig) - len(tail)]  # options, then -m NAME, -mNAME or the script
    if len(head) >= 2 and head[-2] == "-m":
        return head[:-2]
    return head[:-1]


def pth_problem(site_dirs: list[str] | None = None) -> str | None:
    """Why the installed ``torch_export_names.pth`` would not arm the hook (install it once the
    program imports torch.export) in a new Python started with this interpreter's options, or
    None when it would."""
    from .._bootstrap import PTH, pth_line

    if sys.flags.no_site:
        return (
            "python runs with -S (no site module), so site-packages' .pth files are not "
            f"read and {PTH} cannot install the hook"
        )
    if site_dirs is None:
        import site

        site_dirs = list(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            site_dirs.append(site.getusersitepackages())
    found = [os.path.join(d, PTH) for d in site_dirs if os.path.isfile(os.path.join(d, PTH))]
    if not found:
        return (
            f"{PTH} is in none of this python's site directories ({', '.join(site_dirs)}), so "
            "nothing would install the hook; install the package with pip (`pip install .` or "
            "`pip install -e .` write it)"
        )
    with open(found[0], encoding="utf-8") as f:
        if f.read() != pth_line():
            return (
                f"{found[0]} is not the one this version of the package writes; reinstall the "
                "package (`pip install .` or `pip install -e .`)"
            )
    return None


def run(args: argparse.Namespace, parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """``run``: set the variables, then become ``python [options] program [args...]``."""
    from .._bootstrap import AUDIT_JSON_VAR, AUDIT_VAR, ENV_VAR

    if (args.json is not None or args.no_hook) and not args.audit:
        parser.error("--json and --no-hook go with --audit")
    if args.module is not None:
        if not args.module:
            parser.error("-m needs a module name")
        program = ["-m", *args.module]
    elif args.program:
        program = list(args.program)
    else:
        parser.error("give a program (script.py, folder or zip) or -m module")
    if not sys.executable:
        return _fail("this Python does not know its interpreter (sys.executable is empty)", 2)
    problem = pth_problem()
    if problem:
        return _fail(f"{problem}. Not running the program without the hook.", 2)
    env = dict(os.environ)
    env[ENV_VAR] = "0" if args.no_hook else "1"
    if args.audit:
        env[AUDIT_VAR] = "1"
        if args.json is not None:
            env[AUDIT_JSON_VAR] = os.path.abspath(args.json)  # the program may change folder
        else:
            env.pop(AUDIT_JSON_VAR, None)
    command = [sys.executable, *_interpreter_options(argv), *program]
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt" or not hasattr(os, "execve"):
        # No exec that keeps this process (Windows' starts another one): wait, pass the status on.
        import subprocess

        return subprocess.call(command, env=env)
    os.execve(sys.executable, command, env)
    return 1  # not reached


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
    args = _parser(argv).parse_args(sys.argv[1:] if argv is None else argv)
    return args.handler(args)
