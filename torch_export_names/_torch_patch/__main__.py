"""torch-export-names patch list | verify | apply | revert (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torch-export-names patch",
        description="Upstream-style torch patches for pytorch/pytorch#202927.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the torch versions with a patch, and where the patches are")
    v = sub.add_parser(
        "verify",
        help="run the reproductions and the patch's tests against a throw-away patched "
        "overlay of the installed torch (and, for contrast, against the unpatched one)",
    )
    v.add_argument("--no-baseline", action="store_true", help="skip the run against the unpatched torch")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--keep", action="store_true", help="keep the overlay directory")
    for name, text in (
        ("apply", "patch the installed torch in place (refuses files that are not the release's)"),
        ("revert", "restore the files `apply` replaced"),
    ):
        a = sub.add_parser(name, help=text)
        a.add_argument(
            "--target",
            metavar="DIR",
            help="the directory holding torch/ (default: site-packages of the torch this python imports)",
        )
        a.add_argument("--dry-run", action="store_true", help="show the diff, change nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    prog = "torch-export-names patch"
    if args.command == "list":
        from . import store

        print(f"patches in {store.data_dir()}:")
        for version in store.available():
            print(f"  torch {version}: {store.load(version).path.name}")
        return 0
    if args.command == "verify":
        from . import store
        from .verify import VerifyError, verify

        try:
            report = verify(baseline=not args.no_baseline, keep=args.keep)
        except store.NoPatch as e:
            print(f"{prog} verify: {e}", file=sys.stderr)
            return 2
        except VerifyError as e:
            print(f"{prog} verify: error: {e}", file=sys.stderr)
            return 2
        print(json.dumps(report.to_json(), indent=1) if args.json else report.format())
        return 0 if report.ok else 1
    from . import install

    try:
        return getattr(install, args.command)(args.target, dry_run=args.dry_run)
    except install.Refused as e:
        print(f"{prog} {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
