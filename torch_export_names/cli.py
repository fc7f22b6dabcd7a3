"""Command line: ``torch-export-names doctor [--json]``."""

from __future__ import annotations

import argparse

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torch-export-names",
        description="Keep torch.export node names recorded (pytorch/pytorch#202927).",
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("doctor", help="report whether this torch is affected, with reproductions")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "doctor":
        from . import doctor

        return doctor.main(json_output=args.json)
    raise AssertionError(args.command)
