"""Write the parts of the docs that restate the code or committed results, from them.

    python scripts/gen_docs.py            # rewrite every generated block in place
    python scripts/gen_docs.py --check    # exit 1 and print a diff if a committed block is stale

A generated block sits between two marker lines, and only its inside is written:

    <!-- generated: NAME (python scripts/gen_docs.py) -->
    ...
    <!-- end generated -->

The blocks (``BLOCKS``), each written from one source:

- ``api-table`` (README.md): the public API, ``torch_export_names.__all__`` in its order, one row per
  name: its signature and the first paragraph of its docstring;
- ``api`` (docs/reference.md): each public name's whole docstring;
- ``cli`` (docs/reference.md): ``torch-export-names --help`` and every subcommand's, from the
  argparse parser in torch_export_names/tools/cli.py, 100 columns wide;
- ``releases`` (README.md): the supported releases, ``VERSIONS`` of scripts/releases.sh;
- ``cost`` (README.md): the range of repair's and the hook's share of the time measured in every
  committed result under benchmarks/results/.

Needs torch (the API's docstrings are read from the imported package) and ruff (the docstrings'
code examples are written as ``ruff format`` leaves them), not the package installed: the
repository root is put on ``sys.path``. CI runs ``--check`` after mypy (.ci/run).
The CLI help is argparse's formatting, which may change between Python minor versions; the
committed text is that of the Python CI runs.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

COMMAND = "python scripts/gen_docs.py"
BEGIN = re.compile(r"^<!-- generated: ([\w-]+) .*-->$", re.M)
END = "<!-- end generated -->"
WIDTH = 100  # the columns of the CLI help and of the lines written into the README


# --- the API, from the docstrings ---------------------------------------------------------------


def _public() -> list[tuple[str, object]]:
    import torch_export_names

    return [(name, getattr(torch_export_names, name)) for name in torch_export_names.__all__]


def _annotation(a: object) -> str:
    return a if isinstance(a, str) else inspect.formatannotation(a)


def signature(name: str, obj: object) -> str:
    """``name(params) -> returns`` as the docs write it: parameters without annotations, the return
    annotation kept; a class as it is called (``RepairNamesPass()``), an exception bare."""
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return name
        if hasattr(obj, "_fields"):  # a NamedTuple: its fields
            return f"{name}({', '.join(obj._fields)})"
        sig = inspect.signature(obj)
        returns = None
    else:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
        returns = sig.return_annotation
    parts: list[str] = []
    star = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    text = f"{name}({', '.join(parts)})"
    if returns is not None and returns is not inspect.Signature.empty:
        text += f" -> {_annotation(returns)}"
    return text


def _doc(obj: object) -> str:
    doc = inspect.getdoc(obj)
    if not doc:
        raise SystemExit(f"gen_docs: {obj!r} has no docstring; every public name needs one")
    return doc


def _markdown_inline(text: str) -> str:
    """reStructuredText's ````code```` as Markdown's ```code```."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


def _paragraphs(doc: str) -> Iterator[tuple[bool, str]]:
    """``(is_code, text)`` per paragraph of a docstring; an indented paragraph is code."""
    for block in re.split(r"\n\s*\n", doc.strip()):
        lines = block.splitlines()
        if all(line.startswith("    ") or not line.strip() for line in lines):
            yield True, textwrap.dedent(block)
        else:
            yield False, " ".join(line.strip() for line in lines)


def api_table() -> str:
    rows = [
        "### API (all importable from `torch_export_names`)",
        "",
        "| name | what it does |",
        "| --- | --- |",
    ]
    for name, obj in _public():
        summary = next(text for is_code, text in _paragraphs(_doc(obj)) if not is_code)
        summary = _markdown_inline(summary).replace("|", "\\|")
        rows.append(f"| [`{signature(name, obj)}`](docs/reference.md#{_anchor(name)}) | {summary} |")
    rows += ["", "Each name links to its whole docstring in [docs/reference.md](docs/reference.md#api)."]
    return "\n".join(rows)


def _anchor(name: str) -> str:
    """GitHub's anchor for a heading that is ``name`` in backticks."""
    return name.lower()


def _ruff_formatted(code: str) -> str:
    """``code`` as ``ruff format`` writes it: ruff formats the Python blocks of Markdown files too,
    and CI checks them (``ruff format --check .``)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", "docstring.py", "-"],
        input=code,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"gen_docs: ruff format failed on a docstring example:\n{code}\n{done.stderr}")
    return done.stdout.rstrip()


def api_reference() -> str:
    out: list[str] = []
    for name, obj in _public():
        out += [f"### `{name}`", "", f"`{signature(name, obj)}`", ""]
        for is_code, text in _paragraphs(_doc(obj)):
            out += (
                ["```python", _ruff_formatted(text), "```", ""] if is_code else [_markdown_inline(text), ""]
            )
    return "\n".join(out).rstrip()


# --- the command line, from argparse ------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def cli_help() -> str:
    os.environ["COLUMNS"] = str(WIDTH)  # argparse reads the width when it formats
    os.environ["NO_COLOR"] = "1"  # Python 3.14's argparse colours help for a terminal
    from torch_export_names.tools import cli

    out: list[str] = []
    for path, parser in _commands(cli._parser()):
        command = " ".join(["torch-export-names", *path])
        out += [
            f"### `{command}`",
            "",
            "```text",
            f"$ {command} --help",
            parser.format_help().rstrip(),
            "```",
            "",
        ]
    return "\n".join(out).rstrip()


# --- figures from committed files ---------------------------------------------------------------


def releases() -> list[str]:
    text = (ROOT / "scripts" / "releases.sh").read_text()
    found = re.search(r"^VERSIONS=\(([^)]*)\)$", text, re.M)
    if not found:
        raise SystemExit("gen_docs: scripts/releases.sh has no VERSIONS=(...) line")
    return found.group(1).split()


def releases_line() -> str:
    versions = releases()
    return textwrap.fill(
        f"The {len(versions)} releases of the matrix (`VERSIONS` in `scripts/releases.sh`): "
        + ", ".join(versions)
        + ".",
        width=WIDTH,
    )


def _committed_results() -> list[dict]:
    """Every committed timing result (instructions-*.json count instructions, not time)."""
    results = ROOT / "benchmarks" / "results"
    paths = [p for p in sorted(results.rglob("*.json")) if not p.name.startswith("instructions-")]
    return [json.loads(p.read_text()) for p in paths]


def repair_shares() -> list[float]:
    """repair's time over torch.export's, in every committed result (Llama decoders, HF models)."""
    shares = []
    for result in _committed_results():
        shares += [r["ratios"]["repair_to_export"] for r in result.get("llama", [])]
        shares += [r["repair_over_export"] for r in result.get("rows", []) if "repair_over_export" in r]
    return shares


def hook_shares() -> list[float]:
    """The hook's time over an ExecuTorch lowering's, in every committed result."""
    shares = []
    for result in _committed_results():
        shares += [e["hook_time_to_run"] for e in result.get("end_to_end", [])]
        shares += [
            r["lowering_hook_time"]["median_s"] / r["lowering_on"]["median_s"]
            for r in result.get("rows", [])
            if "lowering_hook_time" in r
        ]
    return shares


def _percent_range(shares: list[float]) -> str:
    """The lowest and highest share as percentages rounded to one significant figure: 0.002-0.03%."""
    if not shares:
        raise SystemExit("gen_docs: no committed benchmark result under benchmarks/results/")
    return f"{min(shares) * 100:.1g}-{max(shares) * 100:.1g}%"


def cost_line() -> str:
    return textwrap.fill(
        f"- [benchmarks/README.md](benchmarks/README.md): what the repair and the hook cost, measured: "
        f"`repair` takes {_percent_range(repair_shares())} of `torch.export`'s time, the hook "
        f"{_percent_range(hook_shares())} of an ExecuTorch lowering (the range over every committed "
        f"result in `benchmarks/results/`).",
        width=WIDTH,
        subsequent_indent="  ",
    )


# --- the blocks ---------------------------------------------------------------------------------

BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "api-table": ("README.md", api_table),
    "releases": ("README.md", releases_line),
    "cost": ("README.md", cost_line),
    "api": ("docs/reference.md", api_reference),
    "cli": ("docs/reference.md", cli_help),
}


def render(path: str, text: str) -> str:
    """``text`` with the inside of each generated block rewritten."""
    out, pos = [], 0
    for begin in BEGIN.finditer(text):
        name = begin.group(1)
        if name not in BLOCKS or BLOCKS[name][0] != path:
            raise SystemExit(f"gen_docs: {path} has a block {name!r} that {COMMAND} does not write there")
        end = text.find("\n" + END, begin.end())
        if end < 0:
            raise SystemExit(f"gen_docs: {path}: block {name!r} has no {END!r} line")
        out += [text[pos : begin.end()], "\n", BLOCKS[name][1](), "\n"]
        pos = end + 1
    return "".join(out) + text[pos:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff if stale")
    args = p.parse_args(argv)
    stale = False
    for path in sorted({path for path, _ in BLOCKS.values()}):
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        missing = [
            n
            for n, (p_, _) in BLOCKS.items()
            if p_ == path and not re.search(rf"^<!-- generated: {re.escape(n)} ", text, re.M)
        ]
        if missing:
            raise SystemExit(f"gen_docs: {path} has no block {', '.join(missing)}")
        new = render(path, text)
        if new == text:
            continue
        stale = True
        if args.check:
            sys.stdout.writelines(
                difflib.unified_diff(
                    text.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
                )
            )
        else:
            file.write_text(new, encoding="utf-8")
            print(f"gen_docs: rewrote {path}")
    if args.check and stale:
        print(f"\ngen_docs: the docs above are stale; run `{COMMAND}` and commit the result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
