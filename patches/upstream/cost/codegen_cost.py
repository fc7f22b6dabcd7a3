"""PR B's cost: recompile() of a graph with 3,000 inputs primals_1 ... primals_3000.

    python codegen_cost.py [--rounds 7]             # stock torch
    PYTHONPATH=OVERLAY python codegen_cost.py       # torch with PR B (an overlay of the wheel)

The graph is what AOTAutograd hands a backend: placeholders primals_1 ... primals_3000 (every
parameter has a numeric suffix) summed by 2,999 aten.add nodes, then one mul by math.inf (so
the code writes the global inf). A second graph is the same with its last input renamed inf,
which PR B must keep apart from the global. Prints one JSON line with the best process CPU
time of ``GraphModule.recompile()`` for each (``recompile_ms``, ``recompile_inf_ms``). Run it
on stock torch and with PR B, in separate processes, interleaved, and compare the minima.

    PYTHONPATH=OVERLAY python codegen_cost.py --stock-graph-py PRISTINE/torch/fx/graph.py

times both in one process instead: the release's own ``CodeGen._gen_python_code`` (executed
from the pristine ``graph.py`` given) and PR B's, swapped in turn round by round, so that a
loaded machine slows both alike (``ab_recompile_ms``, ``ab_ratio``: PR B's best over stock's).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch
import torch.fx


def make(n: int = 3000, last: str | None = None) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    inputs = [graph.placeholder(f"primals_{i + 1}") for i in range(n)]
    if last is not None:
        inputs[-1].target = inputs[-1].name = last
    total = inputs[0]
    for x in inputs[1:]:
        total = graph.call_function(torch.ops.aten.add.Tensor, (total, x))
    graph.output((graph.call_function(torch.ops.aten.mul.Tensor, (total, math.inf)),))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def best(gm: torch.fx.GraphModule, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(3):
            gm.recompile()
        times.append((time.process_time() - start) / 3)
    return min(times)


def stock_gen_python_code(pristine: str):
    """The release's own CodeGen._gen_python_code, executed from its pristine torch/fx/graph.py
    in a copy of the running module's namespace."""
    import torch.fx.graph as fx_graph

    namespace = dict(vars(fx_graph))
    with open(pristine) as f:
        exec(compile(f.read(), pristine, "exec"), namespace)  # noqa: S102 - torch's own source
    return namespace["CodeGen"]._gen_python_code


def ab(gm: torch.fx.GraphModule, pristine: str, rounds: int) -> dict:
    from torch.fx.graph import CodeGen

    functions = {"stock": stock_gen_python_code(pristine), "patched": CodeGen._gen_python_code}
    times: dict[str, list[float]] = {"stock": [], "patched": []}
    try:
        for _ in range(rounds):
            for label, function in functions.items():
                CodeGen._gen_python_code = function
                times[label].append(best(gm, 1))
    finally:
        CodeGen._gen_python_code = functions["patched"]
    stock, patched = min(times["stock"]), min(times["patched"])
    return {
        "ab_recompile_ms": {"stock": round(stock * 1e3, 2), "patched": round(patched * 1e3, 2)},
        "ab_ratio": round(patched / stock, 3),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--stock-graph-py", help="the release's pristine torch/fx/graph.py: A/B in one process")
    args = p.parse_args()
    plain, inf = make(), make(last="inf")
    result = {"torch": torch.__version__, "torch_file": torch.__file__, "nodes": len(plain.graph.nodes)}
    if args.stock_graph_py:
        result.update(ab(plain, args.stock_graph_py, args.rounds))
    else:
        result["recompile_ms"] = round(best(plain, args.rounds) * 1e3, 2)
        result["recompile_inf_ms"] = round(best(inf, args.rounds) * 1e3, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
