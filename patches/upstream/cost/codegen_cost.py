"""PR B's cost: recompile() of a graph with 3,000 inputs primals_1 ... primals_3000.

    python codegen_cost.py [--rounds 7]             # stock torch
    PYTHONPATH=OVERLAY python codegen_cost.py       # torch with PR B (an overlay of the wheel)

The graph is what AOTAutograd hands a backend: placeholders primals_1 ... primals_3000 (every
parameter has a numeric suffix) summed by 2,999 aten.add nodes, then one mul by math.inf (so
the code writes the global inf). A second graph is the same with its last input renamed inf,
which PR B must keep apart from the global. Prints one JSON line with the best process CPU
time of ``GraphModule.recompile()`` for each (``recompile_ms``, ``recompile_inf_ms``). Run it
on stock torch and with PR B, in separate processes, interleaved, and compare the minima.
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


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    rounds = p.parse_args().rounds
    plain, inf = make(), make(last="inf")
    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "torch_file": torch.__file__,
                "nodes": len(plain.graph.nodes),
                "recompile_ms": round(best(plain, rounds) * 1e3, 2),
                "recompile_inf_ms": round(best(inf, rounds) * 1e3, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
