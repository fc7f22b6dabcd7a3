"""What the code-generator guard costs per ``GraphModule.recompile()``, as a ratio to torch's own.

``python -m benchmarks.recompile [--nodes N] [--layers L] [--reps R] [--out DIR]``

Each program is recompiled with the guard (``codegen_guard``) and with torch's own
``Graph._python_code`` (the guard taken off around the call), in rotation, and the ratio of the
medians is reported, from one run:

- ``llama``: ``ep.module()`` of the Llama decoder of ``--layers`` layers (the pytree code
  generator, a few hundred placeholders of parameters and buffers); no parameter collides.
- ``synthetic``: a GraphModule of ``--nodes`` nodes (a chain of add/mul/relu/sub reading a node
  halfway back), one placeholder; no parameter collides.
- ``colliding``: the Llama module again, with its input called ``torch`` (the guard's slow path:
  torch's code generated, then again with the parameter under a fresh name, then every use of
  the global renamed).
"""

from __future__ import annotations

import argparse
import json
import operator
import platform
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.recompile", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--layers", type=int, default=16, help="Llama decoder layers (default 16)")
    parser.add_argument("--nodes", type=int, default=1_000_000, help="synthetic graph nodes (default 1M)")
    parser.add_argument("--reps", type=int, default=7, help="recompiles of each, in rotation (default 7)")
    parser.add_argument("--out", type=Path, default=None, help="write recompile.json and .md there")
    args = parser.parse_args(argv)
    if not codegen_guard.is_installed():
        parser.error("the code-generator guard is not in place (importing torch_export_names puts it there)")

    model, inputs = build_llama(args.layers)
    llama = export_llama(model, inputs).module()
    rows = [measure(f"llama {args.layers} layers, ep.module()", llama, args.reps)]
    # The guard's slow path: the input called ``torch``, which every qualified op name reads.
    colliding = export_llama(model, inputs).module()
    first = next(n for n in colliding.graph.nodes if n.op == "placeholder")
    info = colliding.graph._codegen.pytree_info
    colliding.graph._codegen.pytree_info = info._replace(
        orig_args=["torch" if a == first.target else a for a in info.orig_args]
    )
    first.target = "torch"
    rows.append(measure(f"llama {args.layers} layers, its input called torch", colliding, args.reps))
    rows.append(
        measure(f"synthetic, {args.nodes} nodes", synthetic_module(args.nodes), max(3, args.reps // 2))
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
