"""Run PyTorch's own test files against stock torch and every prefix of the stack.

The runs behind CHECK.md ("PyTorch's suites at every prefix"). Steps, each a subcommand:

  overlays SITE OUT      OUT/A, OUT/AB, OUT/ABC, OUT/C: throw-away views of SITE's torch with the
                         torch files of PR A, A+B, A+B+C and C alone applied (SITE is not written).
  stack-tests TESTS OUT  OUT/A, OUT/AB, OUT/ABC, OUT/C: copies of TESTS (a folder holding test/...)
                         with the same PRs' test hunks applied where they apply.
  accept TESTS REL...    rewrite TESTS/REL's inline expectations (expecttest) to what the torch
                         on PYTHONPATH prints; run it on stock torch to re-derive the goldens
                         (--failed-in TAG.PREFIX: only the tests that failed in that run).
  run TESTS TAG REL...   run TESTS/REL with pytest against stock and each overlay named by --prefixes, writing
                         RESULTS/<name>.<TAG>.<prefix>.xml and .log (--overlays, --results).
  sites DIR...           the renames rename_sites.py counted into each DIR (its SITES_DIR), summed
                         over processes and grouped by the file that made them: a Markdown table.
  summary RESULTS NAME.TAG...
                         a Markdown table, one row per suite: passed/failed/errors/skipped/xfailed
                         per prefix, and every test whose outcome differs from stock's.

TESTS are PyTorch test files at their repository paths (test/export/test_export.py, ...);
they are not part of this repository. The Python that runs them is this one, with pytest,
pytest-xdist, pytest-timeout, expecttest and hypothesis installed next to torch.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
_A, _B = sorted(HERE.parent.glob("000[12]-*.patch"))
(_C,) = sorted((HERE.parent / "hops").glob("0001-*.patch"))
# What each arrangement applies, in order: PR A, A then B, A, B then C, and C alone.
PREFIXES = {"A": [_A], "AB": [_A, _B], "ABC": [_A, _B, _C], "C": [_C]}
LABEL = {"stock": "stock", "A": "A", "AB": "A+B", "ABC": "A+B+C", "C": "C"}
TORCH_FILES = [
    "torch/fx/node.py",
    "torch/fx/graph.py",
    "torch/fx/graph_module.py",
    "torch/_export/utils.py",
]


def overlays(site: Path, out: Path) -> None:
    sys.path.insert(0, str(HERE.parents[2]))
    from torch_export_names.tools.torch_patch.overlay import build

    for name, stack in PREFIXES.items():
        root = out / name
        shutil.rmtree(root, ignore_errors=True)
        build(site, TORCH_FILES, root)
        for patch in stack:
            subprocess.run(["git", "apply", "--include=torch/*", str(patch)], cwd=root, check=True)
        print(f"{root}: torch with {LABEL[name]}")


def stack_tests(tests: Path, out: Path) -> None:
    for name, stack in PREFIXES.items():
        root = out / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(tests, root, ignore=shutil.ignore_patterns("__pycache__"))
        for patch in stack:
            # A hunk whose file is absent or differs (another version of the file) is left
            # out by name, and the run says so.
            check = subprocess.run(
                ["git", "apply", "--include=test/*", "--check", "-v", str(patch)],
                cwd=root,
                capture_output=True,
                text=True,
            )
            bad = sorted(
                {
                    m.group(1) or m.group(2)
                    for m in re.finditer(
                        r"(?m)^error: (?:patch failed: (.+):\d+|(.+): No such file or directory)$",
                        check.stderr,
                    )
                }
            )
            cmd = ["git", "apply"] + [f"--exclude={b}" for b in bad] + ["--include=test/*", str(patch)]
            subprocess.run(cmd, cwd=root, check=True)
            print(
                f"{root}: test hunks of {patch.parent.name}/{patch.name[:4]} applied"
                + (f", not to {', '.join(bad)}" if bad else "")
            )


def failed_ids(xml: Path) -> list[str]:
    """The pytest node ids (file::Class::test) of the tests that failed or errored in ``xml``."""
    ids = []
    for key, kind in outcomes(xml).items():
        if kind in ("failed", "error"):
            module, _, test = key.rpartition("::")
            file, _, cls = module.rpartition(".")
            ids.append(f"{Path(file).name}.py::{cls}::{test}")
    return ids


def _only(results: Path, rel: str, failed_in: str | None) -> list[str] | None:
    """The tests of REL that failed in RESULTS/<stem>.<failed_in>.xml (None: every test). An
    empty list is not passed on to pytest, which would then collect the whole directory."""
    return failed_ids(results / f"{Path(rel).stem}.{failed_in}.xml") if failed_in else None


def _pytest(
    tests: Path,
    rel: str,
    env_path: str,
    extra: list[str],
    junit: Path | None,
    log: Path,
    only: list[str] | None = None,
) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=env_path)
    env.pop("TORCH_EXPORT_NAMES", None)  # the package's hook stays out of these runs
    env.pop("TORCH_EXPORT_NAMES_AUDIT", None)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--timeout=600",
        "-rfE",
        *(only if only is not None else [Path(rel).name]),
        *extra,
    ]
    if junit is not None:
        cmd.append(f"--junitxml={junit}")
    start = time.monotonic()
    with open(log, "w") as fh:
        rc = subprocess.run(
            cmd, cwd=tests / Path(rel).parent, env=env, stdout=fh, stderr=subprocess.STDOUT
        ).returncode
    last = log.read_text().strip().splitlines()[-1:] or [""]
    return f"rc={rc} {time.monotonic() - start:.0f}s {last[0]}"


def accept(tests: Path, rels: list[str], results: Path, failed_in: str | None) -> None:
    os.environ["EXPECTTEST_ACCEPT"] = "1"
    for rel in rels:
        log = results / f"accept.{Path(rel).stem}.log"
        only = _only(results, rel, failed_in)
        if only == []:
            print(rel, f"nothing failed in {failed_in}: nothing to accept")
            continue
        # One process: expecttest rewrites the file in place.
        print(rel, _pytest(tests, rel, str(tests / "test"), ["-p", "no:xdist"], None, log, only))


def run(
    tests: Path,
    tag: str,
    rels: list[str],
    overlays_dir: Path,
    results: Path,
    prefixes: list[str],
    workers: int,
    failed_in: str | None,
    select: str | None = None,
) -> None:
    for rel in rels:
        only = _only(results, rel, failed_in)
        if only == []:
            print(rel, f"nothing failed in {failed_in}: nothing to run")
            continue
        for p in prefixes:
            path = str(tests / "test") if p == "stock" else f"{overlays_dir / p}{os.pathsep}{tests / 'test'}"
            stem = f"{Path(rel).stem}.{tag}.{p}"
            extra = ["-n", str(workers)] if workers > 1 else []
            extra += ["-k", select] if select else []
            log = results / f"{stem}.log"
            print(stem, _pytest(tests, rel, path, extra, results / f"{stem}.xml", log, only))


def outcomes(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        key = f"{tc.get('classname')}::{tc.get('name')}"
        kind = "passed"
        for child in tc:
            if child.tag in ("failure", "error"):
                kind = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped":
                kind = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        if out.get(key, "passed") == "passed":  # a teardown error keeps the worse outcome
            out[key] = kind
    return out


def failure_messages(path: Path) -> dict[str, str]:
    """test -> the message it failed with, without what differs only by where torch was loaded
    from (an overlay's or the site's path) or by an object's address."""
    out: dict[str, str] = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        for child in tc:
            if child.tag in ("failure", "error"):
                text = child.text or child.get("message") or ""
                text = re.sub(r"\S*/(?:site-packages|overlays/\w+)/", "<torch>/", text)
                out[f"{tc.get('classname')}::{tc.get('name')}"] = re.sub(r"0x[0-9a-f]+", "0x", text)
    return out


_BOILERPLATE = ("To execute this test", "python test/", "PYTORCH_PRINT_REPRO_ON_FAILURE")


def _first_error(text: str) -> str:
    """What was raised: pytest's "E ..." lines, without PyTorch's repro hint and with line
    numbers left out (a patched file's lines move)."""
    errors = [
        re.sub(r"line \d+", "line N", line[1:].strip())
        for line in text.splitlines()
        if line.startswith("E ") and not any(b in line for b in _BOILERPLATE)
    ]
    return " / ".join(e for e in errors if e)[:2000]


def summary(results: Path, names: list[str]) -> None:
    """One row per suite and arrangement: passed/failed/errors/skipped/xfailed per prefix, the
    tests whose outcome differs from stock's, and the tests failing on both whose error differs."""
    print("| suite, arrangement | stock | A | A+B | A+B+C | C | outcomes that differ from stock |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    notes = []
    for name_tag in names:
        cells, stock = [], None
        ndiff = []
        for p in ["stock", *PREFIXES]:
            f = results / f"{name_tag}.{p}.xml"
            if not f.exists():
                cells.append("not run")
                continue
            r = outcomes(f)
            c = Counter(r.values())
            cells.append(f"{c['passed']}/{c['failed']}/{c['error']}/{c['skipped']}/{c['xfailed']}")
            if stock is None:
                stock = r
                stock_errors = failure_messages(f)
                continue
            errors = failure_messages(f)
            for k in sorted(set(errors) & set(stock_errors)):
                if _first_error(errors[k]) != _first_error(stock_errors[k]):
                    notes.append(
                        f"- {name_tag}, {LABEL[p]}: `{k}` fails otherwise: stock "
                        f"`{_first_error(stock_errors[k])[:300]}`, here `{_first_error(errors[k])[:300]}`"
                    )
            diff = sorted(k for k in set(r) | set(stock) if r.get(k) != stock.get(k))
            new = [k for k in diff if k not in stock and r[k] == "passed"]  # tests a commit adds
            diff = [k for k in diff if k not in new]
            ndiff.append(f"{LABEL[p]}: {len(diff)}" + (f" (+{len(new)} added, passing)" if new else ""))
            notes += [
                f"- {name_tag}, {LABEL[p]}: `{k}`: stock {stock.get(k, 'absent')}, here {r.get(k, 'absent')}"
                for k in diff
            ]
        print(f"| {name_tag} | " + " | ".join(cells) + f" | {', '.join(ndiff)} |")
    print("\n".join([""] + notes) if notes else "")


def sites(dirs: list[Path]) -> None:
    print("| run | renames | by file (count) |")
    print("| --- | --- | --- |")
    for d in dirs:
        c: Counter[str] = Counter()
        for f in d.glob("sites.*.txt"):
            for line in f.read_text().splitlines():
                n, site = line.split("\t")
                site = re.sub(r":\d+", "", site)  # by file, not line
                c["the test file itself" if site.startswith("..") else f"`{site}`"] += int(n)
        cells = ", ".join(f"{k} ({v})" for k, v in c.most_common())
        print(f"| {d.name} | {sum(c.values())} | {cells} |")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("overlays")
    a.add_argument("site", type=Path)
    a.add_argument("out", type=Path)
    a = sub.add_parser("stack-tests")
    a.add_argument("tests", type=Path)
    a.add_argument("out", type=Path)
    a = sub.add_parser("accept")
    a.add_argument("tests", type=Path)
    a.add_argument("rel", nargs="+")
    a.add_argument("--results", type=Path, default=Path("results"))
    a.add_argument("--failed-in", help="only the tests that failed in RESULTS/<stem>.FAILED_IN.xml")
    a = sub.add_parser("run")
    a.add_argument("tests", type=Path)
    a.add_argument("tag")
    a.add_argument("rel", nargs="+")
    a.add_argument("--overlays", type=Path, default=Path("overlays"))
    a.add_argument("--results", type=Path, default=Path("results"))
    a.add_argument("--prefixes", default="stock,ABC")
    a.add_argument("-n", "--workers", type=int, default=2)
    a.add_argument("--failed-in", help="only the tests that failed in RESULTS/<stem>.FAILED_IN.xml")
    a.add_argument("-k", dest="select", help="pytest -k expression: only the tests it selects")
    a = sub.add_parser("sites")
    a.add_argument("dirs", type=Path, nargs="+")
    a = sub.add_parser("summary")
    a.add_argument("results", type=Path)
    a.add_argument("name_tag", nargs="+", help="e.g. test_export.stored")
    args = ap.parse_args(argv)
    if args.cmd == "overlays":
        overlays(args.site.resolve(), args.out.resolve())
    elif args.cmd == "stack-tests":
        stack_tests(args.tests.resolve(), args.out.resolve())
    elif args.cmd == "accept":
        args.results.mkdir(parents=True, exist_ok=True)
        accept(args.tests.resolve(), args.rel, args.results.resolve(), args.failed_in)
    elif args.cmd == "run":
        args.results.mkdir(parents=True, exist_ok=True)
        run(
            args.tests.resolve(),
            args.tag,
            args.rel,
            args.overlays.resolve(),
            args.results.resolve(),
            args.prefixes.split(","),
            args.workers,
            args.failed_in,
            args.select,
        )
    elif args.cmd == "sites":
        sites(args.dirs)
    else:
        summary(args.results, args.name_tag)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
