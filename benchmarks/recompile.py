"""What the code-generator guard costs per ``GraphModule.recompile()``, as a ratio to torch's own.

``python -m benchmarks.recompile [--nodes N] [--layers L] [--reps R] [--out DIR]``

Each program is recompiled with the guard (``codegen_guard``) and with torch's own
``Graph._python_code`` (the guard taken off around the call), in rotation, and the ratio of the
medians is reported, from one run:

- ``llama``: ``ep.module()`` of the Llama decoder of ``--layers`` layers (the pytree code
  generator, a few hundred placeholders of parameters and buffers).
- ``synthetic``: a GraphModule of ``--nodes`` nodes (a chain of add/mul/relu/sub reading a node
  halfway back), one placeholder.
- ``AOT-style``: ``--inputs`` placeholders ``primals_1`` ... (numeric suffixes: every one is a
  name another node could be given), summed with aten ops.

Each in three forms: (a) as built; (b) its first input called like a global of fx's code that
the body never writes (the code must stay torch's, at torch's cost); (c) its first input called
``torch``, which every qualified op name reads (a real collision: the body is rewritten).
"""

from __future__ import annotations

import argparse
import json
import operator
import platform
import re
from pathlib import Path

import torch
import torch.fx

from benchmarks.models import build_llama, export_llama
from benchmarks.timing import fmt_time, loadavg, ratio, run_interleaved, summarize
from torch_export_names import codegen_guard, hook

_OPS = (operator.add, operator.mul, torch.relu, operator.sub)


def synthetic_module(n_nodes: int) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    nodes = [graph.placeholder("x")]
    for i in range(1, n_nodes - 1):
        target = _OPS[i % len(_OPS)]
        args = (nodes[-1],) if target is torch.relu else (nodes[-1], nodes[i // 2])
        nodes.append(graph.call_function(target, args))
    graph.output(nodes[-1])
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _stock_code(gm: torch.fx.GraphModule) -> str:
    with hook.suspended():
        gm.recompile()
    return gm.code


def measure(name: str, gm: torch.fx.GraphModule, reps: int) -> dict:
    """Stock: torch's own ``Graph._python_code`` (the guard taken off before each call, outside
    the timed region); guard: the guard in place."""
    guarded_code = (gm.recompile(), gm.code)[1]
    stock_code = _stock_code(gm)
    try:
        seconds, _ = run_interleaved(
            {"stock": gm.recompile, "guard": gm.recompile},
            reps=reps,
            setup={"stock": codegen_guard.uninstall, "guard": codegen_guard.install},
        )
    finally:
        codegen_guard.install()
    stock, guard = summarize(seconds["stock"]), summarize(seconds["guard"])
    return {
        "program": name,
        "nodes": len(gm.graph.nodes),
        "identical_code": guarded_code == stock_code,
        "stock": stock,
        "guard": guard,
        "ratio": ratio(guard, stock),
    }


def aot_module(n_inputs: int) -> torch.fx.GraphModule:
    """An AOTAutograd-style graph: ``primals_1`` ... ``primals_N`` summed with aten ops."""
    graph = torch.fx.Graph()
    inputs = [graph.placeholder(f"primals_{i}") for i in range(1, n_inputs + 1)]
    total = inputs[0]
    for node in inputs[1:]:
        total = graph.call_function(torch.ops.aten.add.Tensor, (total, node))
    graph.output((total,))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def with_first_input_called(gm: torch.fx.GraphModule, name: str) -> torch.fx.GraphModule:
    """``gm`` with its first placeholder's target (and pytree argument name) ``name``: the
    parameter of its ``forward`` (the benchmark's own module; no program is changed)."""
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    info = getattr(gm.graph._codegen, "pytree_info", None)
    if info is not None and info.orig_args:
        gm.graph._codegen.pytree_info = info._replace(
            orig_args=[name if a == first.target else a for a in info.orig_args]
        )
    first.target = name
    gm.recompile()
    return gm


def unread_global(gm: torch.fx.GraphModule) -> str:
    """A global of fx's code that ``gm``'s body never writes (inf, nan, device): case (b)."""
    return next(n for n in ("inf", "nan", "device") if not re.search(rf"(?<![\w.]){n}(?!\w)", gm.code))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.recompile", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--layers", type=int, default=16, help="Llama decoder layers (default 16)")
    parser.add_argument("--nodes", type=int, default=20_000, help="synthetic graph nodes (default 20k)")
    parser.add_argument("--inputs", type=int, default=3_000, help="primals_N inputs of the AOT graph (3000)")
    parser.add_argument("--reps", type=int, default=7, help="recompiles of each, in rotation (default 7)")
    parser.add_argument("--out", type=Path, default=None, help="write recompile.json and .md there")
    args = parser.parse_args(argv)
    if not codegen_guard.is_installed():
        parser.error("the code-generator guard is not in place (importing torch_export_names puts it there)")

    model, inputs = build_llama(args.layers)
    programs = {
        f"llama {args.layers} layers, ep.module()": lambda: export_llama(model, inputs).module(),
        f"synthetic, {args.nodes} nodes": lambda: synthetic_module(args.nodes),
        f"AOT-style, {args.inputs} primals_N inputs": lambda: aot_module(args.inputs),
    }
    rows = []
    for program, make in programs.items():
        plain = make()
        rows.append(measure(f"{program}: (a) no input named like a global", plain, args.reps))
        unread = unread_global(plain)
        rows.append(
            measure(
                f"{program}: (b) an input called {unread}, never read as the global",
                with_first_input_called(make(), unread),
                args.reps,
            )
        )
        rows.append(
            measure(
                f"{program}: (c) an input called torch, which every op reads",
                with_first_input_called(make(), "torch"),
                args.reps,
            )
        )

    result = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "loadavg": loadavg(),
        "rows": rows,
    }
    lines = [
        "| program | nodes | stock recompile | with the guard | ratio | code identical |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | {r['nodes']} | {fmt_time(r['stock']['median_s'])} | "
            f"{fmt_time(r['guard']['median_s'])} | {r['ratio']:.3f} | {r['identical_code']} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "recompile.json").write_text(json.dumps(result, indent=1) + "\n")
        header = (
            "# Code-generator guard: cost per recompile\n\n"
            f"torch {result['torch']}, Python {result['python']}, load {result['loadavg']}. "
            "Medians of interleaved runs, one run; regenerate with "
            "`python -m benchmarks.recompile --out benchmarks/results`.\n\n"
        )
        (args.out / "recompile.md").write_text(header + table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
