"""torch-export-names patch list | status | verify | apply | revert (see the package docstring)."""

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
    target_help = "the directory holding torch/ (default: site-packages of the torch this python imports)"
    sub.add_parser("list", help="the torch versions with a patch, and where the patches are")
    st = sub.add_parser(
        "status",
        help="which patch the installed torch carries: per file stock, patched or modified otherwise "
        "(exit 0 when all files are stock or all patched, 1 otherwise)",
    )
    st.add_argument("--target", metavar="DIR", help=target_help)
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    v = sub.add_parser(
        "verify",
        help="run the reproductions and the patch's tests on the torch with the patch and on the "
        "torch without it (the installed one is either; an overlay of it is the other)",
    )
    v.add_argument("--target", metavar="DIR", help=target_help)
    v.add_argument("--no-baseline", action="store_true", help="skip the run against the unpatched torch")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--keep", action="store_true", help="keep the overlay directory")
    for name, text in (
        ("apply", "patch the installed torch in place (refuses files that are not the release's)"),
        ("revert", "restore the files `apply` replaced"),
    ):
        a = sub.add_parser(name, help=text)
        a.add_argument("--target", metavar="DIR", help=target_help)
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
    from . import install, status, store
    from .verify import VerifyError, verify

    try:
        if args.command in ("status", "verify"):
            site = install.site_of(args.target)
            if args.command == "status":
                state = status.status(site)
                print(json.dumps(state.to_json(), indent=1) if args.json else state.format())
                return 0 if state.state in (status.STOCK, status.PATCHED) else 1
            report = verify(site=site, baseline=not args.no_baseline, keep=args.keep)
            print(json.dumps(report.to_json(), indent=1) if args.json else report.format())
            return 0 if report.ok else 1
        return getattr(install, args.command)(args.target, dry_run=args.dry_run)
    except store.NoPatch as e:
        print(f"{prog} {args.command}: {e}", file=sys.stderr)
        return 2
    except (install.Refused, VerifyError) as e:
        print(f"{prog} {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
