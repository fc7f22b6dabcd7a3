"""Command line.

    torch-export-names doctor [--json]
    torch-export-names run script.py [args...]
    torch-export-names run -m module [args...]
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys

__all__ = ["main"]

_USAGE = __doc__.split("\n\n", 1)[1]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torch-export-names",
        description="Keep torch.export node names recorded (pytorch/pytorch#202927).",
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("doctor", help="report whether this torch is affected, with reproductions")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    sub.add_parser(
        "run",
        help="run a script (or -m module) with the hook installed, like `coverage run`",
        add_help=False,
    )
    return p


def run(argv: list[str]) -> int:
    """Run a program as ``python`` would, with the hook installed first.

    TORCH_EXPORT_NAMES=1 is set for the program, so the subprocesses it starts
    are covered too (through the installed .pth file).
    """
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(f"usage:\n{_USAGE}", file=sys.stderr)
        return 2
    from ._bootstrap import ENV_VAR
    from .hook import install

    os.environ[ENV_VAR] = "1"
    install()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        if not os.path.isfile(script):
            print(f"torch-export-names run: no such file: {script!r}", file=sys.stderr)
            return 2
        sys.argv = [script, *argv[1:]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "doctor":
        from . import doctor

        return doctor.main(json_output=args.json)
    raise AssertionError(args.command)
