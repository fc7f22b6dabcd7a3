"""The command line: run the corpus, or part of it, and write the report.

python -m tests.differential --jobs 2 --out docs/reports/differential.md  # the whole corpus: an hour
python -m tests.differential --ci --models nn/Linear  # a subset, report on stdout
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .corpus import FAMILIES, ci_subset, corpus
from .report import EXPLANATIONS, environment, from_json, markdown, to_json
from .runner import EntryResult, run_all


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Differential test against stock torch: real models exported with and without "
        "the export hook."
    )
    p.add_argument("--out", type=Path, help="write the markdown report here (default: stdout)")
    p.add_argument("--json", type=Path, help="also write the results as JSON (for --merge)")
    p.add_argument(
        "--merge",
        type=Path,
        nargs="*",
        default=[],
        help="start from these JSON results (a later file's model replaces an earlier's) and run "
        "only what --models/--family/--ci select, replacing those",
    )
    p.add_argument("--ci", action="store_true", help="only the CI subset")
    p.add_argument("--models", nargs="*", help="only these entries (names as in the report)")
    p.add_argument("--family", choices=FAMILIES, action="append")
    p.add_argument("--quick", action="store_true", help="what the pytest subset does (see run_entry)")
    p.add_argument(
        "--note",
        action="append",
        default=[],
        help="a paragraph for the report's header (e.g. how merged results were produced)",
    )
    p.add_argument("--command", help="the command to name in the report (default: this one)")
    p.add_argument(
        "--not-run",
        action="store_true",
        help="list the corpus's models that no result covers as skipped (not run)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="models run in parallel, each in a fresh process (torch threads split between them)",
    )
    args = p.parse_args(argv)
    entries = ci_subset() if args.ci else corpus()
    if args.models is not None:
        unknown = set(args.models) - {e.name for e in entries}
        if unknown:
            p.error(f"unknown models: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.name in args.models]
    if args.family:
        entries = [e for e in entries if e.family in args.family]
    merged: dict[str, EntryResult] = {}
    for path in args.merge:
        for d in json.loads(path.read_text())["results"]:
            merged[d["name"]] = from_json(d)
    order = {e.name: i for i, e in enumerate(corpus())}
    command = args.command or "python -m tests.differential " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    env = environment()
    start = time.perf_counter()
    done: dict[str, EntryResult] = dict(merged)

    def write(final: bool) -> str:
        missing = (
            [
                EntryResult(e.name, e.family, skipped="not run for this report (out of time)")
                for e in corpus()
                if e.name not in done
            ]
            if args.not_run
            else []
        )
        results = sorted([*done.values(), *missing], key=lambda r: order.get(r.name, len(order)))
        md = markdown(
            results, env, EXPLANATIONS, command.strip(), time.perf_counter() - start if entries else None
        )
        if args.note:
            md = md.replace("\n## Environment", "\n" + "\n\n".join(args.note) + "\n\n## Environment", 1)
        if not final:
            total = len(set(merged) | {e.name for e in entries})
            md = md.replace(
                "\n## Environment",
                f"\n**Incomplete: {len(done)} of {total} models so far.**\n\n## Environment",
                1,
            )
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(md)
        if args.json:
            args.json.write_text(
                json.dumps({"environment": env, "results": [to_json(r) for r in results]}, indent=1)
            )
        return md

    for i, r in enumerate(run_all([e.name for e in entries], args.quick, args.jobs), 1):
        done[r.name] = r
        bad = [d for d in r.differences if not d.allowed]
        status = f"skipped: {r.skipped}" if r.skipped else (f"{len(bad)} differences" if bad else "same")
        print(f"[{i}/{len(entries)}] {r.name}: {status} ({r.seconds:.0f} s)", file=sys.stderr, flush=True)
        for d in bad:
            print(f"    {d}", file=sys.stderr, flush=True)
        if args.out or args.json:
            write(final=False)
    md = write(final=True)
    if not args.out:
        print(md)
    return 1 if any(not d.allowed for r in done.values() for d in r.differences) else 0


if __name__ == "__main__":
    sys.exit(main())
