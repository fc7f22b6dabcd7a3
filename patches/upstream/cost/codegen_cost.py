"""What Graph._keep_parameter_names (commit 2) adds to a code generation, on a few-thousand-node graph.

PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=<overlay with the patched torch/fx/graph.py> python codegen_cost.py

One process, process CPU time, best of many. "stock" is Graph._python_code with the helper replaced
by a pass-through (torch's own code generation plus one call). A symbolic_trace of 1,000 x
relu(x + b) * 2 (3,003 nodes) with parameters named (x, y): no parameter can collide, the common
case; (x, input): a builtin name, so the generated code is checked (nothing clashes); (x, inf):
collides, so the code is generated twice and edited. For (x, y) the helper's own work is also timed
alone (generate() returning a ready PythonCode), since it is far below the run-to-run spread of a
whole recompile() on a shared machine.
"""

import math
import time
import timeit

import torch
import torch.fx
import torch.fx.graph as fx_graph

CURRENT = fx_graph.Graph._keep_parameter_names


def stock(self, namespace, generate, *args, **kwargs):
    return generate(*args, **kwargs)


def make(names, n=1000):
    class M(torch.nn.Module):
        def forward(self, a, b):
            x = a
            for _ in range(n):
                x = torch.relu(x + b) * 2
            return x * math.inf if names[1] == "inf" else x

    gm = torch.fx.symbolic_trace(M())
    for node, name in zip(gm.graph.find_nodes(op="placeholder"), names):
        node.target = node.name = name
    gm.recompile()
    return gm


def best(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number


def recompile(gm, helper):
    fx_graph.Graph._keep_parameter_names = helper
    try:
        return best(gm.recompile, 3)
    finally:
        fx_graph.Graph._keep_parameter_names = CURRENT


print(f"torch {torch.__version__}")
for names in [("x", "y"), ("x", "input"), ("x", "inf")]:
    gm = make(names)
    times = {"stock": [], "current": []}
    for _ in range(3):  # interleaved
        times["stock"].append(recompile(gm, stock))
        times["current"].append(recompile(gm, CURRENT))
    s, c = min(times["stock"]), min(times["current"])
    print(
        f"parameters {', '.join(names)}: {len(gm.graph.nodes)} nodes; recompile() stock {s * 1e3:.1f} ms, "
        f"with the helper {c * 1e3:.1f} ms: {c / s:.3f}x"
    )
    if names == ("x", "y"):
        graph, namespace = gm.graph, fx_graph._Namespace()
        code = graph._python_code(root_module="self", namespace=namespace)
        own = best(lambda: CURRENT(graph, namespace, lambda: code), 200)
        print(
            f"  the helper's own work: {own * 1e6:.1f} us per code generation, {own / s * 100:.3f}% of stock's"
        )
