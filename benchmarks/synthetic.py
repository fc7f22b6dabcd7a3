"""Scaling of ``repair`` alone on generated torch.fx graphs, up to millions of nodes.

The graphs are built directly (no export): a chain of ``add``/``mul``/``relu``/``sub``
calls, each also reading a node halfway back (a tree of data dependencies). Every node is
created under one name and then renamed by assigning ``node.name``, which is what
torch.export does, so its new name is unrecorded. Two states of the same graph are timed:

- ``all``: every name unrecorded, each with a numeric suffix (the worst case for
  ``repair``: every name is new and its suffix parsed);
- ``export``: one name in ``EXPORT_LIKE_EVERY`` unrecorded, the rest recorded, as
  torch.export leaves the Llama graphs (16-18% of their names unrecorded).

The graphs are bare ``torch.fx.Graph`` objects: wrapping a million nodes in a GraphModule
would spend most of the run generating and compiling its ``forward``. On a bare Graph
``repair`` records names only; the HOP-subgraph scan it also runs on a GraphModule is
measured on the Llama graphs. One graph grows through the sizes (smallest first), so
building costs the largest size once; it is frozen for the garbage collector once built
(it lives to the end of the run).
"""

from __future__ import annotations

import gc
import math
import operator

import numpy as np
import torch
import torch.fx

from benchmarks.methods import Unrepaired, run_repair, upstream_top_level_loop
from benchmarks.timing import run_interleaved, summarize
from torch_export_names import _fx_namespace

_OPS = ((operator.add, "add"), (operator.mul, "mul"), (torch.relu, "relu"), (operator.sub, "sub"))
EXPORT_LIKE_EVERY = 6


class GrowingGraph:
    """A torch.fx Graph that ``grow_to(n)`` extends to ``n`` nodes, all names unrecorded."""

    def __init__(self):
        self.graph = torch.fx.Graph()
        x = self.graph.placeholder("pre_0")
        x.name = x.target = "tokens"
        self.nodes = [x]

    def __len__(self) -> int:
        return len(self.nodes)

    def grow_to(self, n: int) -> None:
        graph, nodes = self.graph, self.nodes
        enabled = gc.isenabled()
        gc.disable()  # a million small objects: the cyclic collector would dominate
        try:
            for i in range(len(nodes), n):
                target, op_name = _OPS[i % len(_OPS)]
                args = (nodes[-1],) if target is torch.relu else (nodes[-1], nodes[i // 2])
                node = graph.create_node("call_function", target, args, name=f"pre_{i}")
                node.name = f"{op_name}_{i}"  # as torch.export renames: not recorded
                nodes.append(node)
        finally:
            if enabled:
                gc.enable()

    def record_all_but_every(self, k: int) -> None:
        """Record every name except those of nodes ``0, k, 2k, ...``."""
        for i, node in enumerate(self.nodes):
            if i % k:
                _fx_namespace.record(self.graph, node)


class HashTableFloor:
    """Reference: the set/dict work of recording every name, on plain containers (no torch.fx).

    For each node: ``obj_to_name[node] = name`` unless already so, and
    ``used.add(name)`` unless present, starting from containers that hold the
    creation-time names (as the graph's name space does). It shows how this
    machine's CPython hash tables alone scale from in-cache to out-of-cache sizes.
    """

    def __init__(self, nodes):
        self.nodes = nodes
        self.initial = {f"pre_{i}" for i in range(len(nodes))}

    def setup(self) -> None:
        self.used, self.obj_to_name = set(self.initial), {}

    def run(self) -> None:
        used, obj_to_name = self.used, self.obj_to_name
        for node in self.nodes:
            name = node.name
            if obj_to_name.get(node) != name:
                obj_to_name[node] = name
            if name in used:
                continue
            used.add(name)


class _GraphHolder:
    """What the upstream loop expects (``.graph``), around a bare Graph."""

    def __init__(self, graph):
        self.graph = graph


def reps_for(n: int, reps: int) -> int:
    """Repetitions at size ``n``: ``reps`` from 300k nodes up, three times that below (cheap, noisier)."""
    return reps if n >= 300_000 else 3 * reps


def scaling_run(sizes: list[int], *, reps: int, progress=None) -> dict:
    """Median ``repair`` time per size in both states (and the upstream loop's), and the fits."""
    if not sizes or min(sizes) < EXPORT_LIKE_EVERY:
        raise ValueError(f"synthetic sizes must be >= {EXPORT_LIKE_EVERY} nodes, got {sizes}")
    grown = GrowingGraph()
    holder = _GraphHolder(grown.graph)
    points = []
    for n in sorted(set(sizes)):
        grown.grow_to(n)
        all_unrecorded = Unrepaired(grown.graph)
        grown.record_all_but_every(EXPORT_LIKE_EVERY)
        export_like = Unrepaired(grown.graph)
        expected_export = len(range(0, n, EXPORT_LIKE_EVERY))
        floor = HashTableFloor(grown.nodes)
        gc.collect()
        gc.freeze()
        n_reps = reps_for(n, reps)
        seconds, results = run_interleaved(
            {
                "repair": lambda: run_repair(grown.graph),
                "repair_export_like": lambda: run_repair(grown.graph),
                "top_level_loop": lambda: upstream_top_level_loop(holder),
                "hash_table_floor": floor.run,
            },
            reps=n_reps,
            setup={
                "repair": all_unrecorded.reset,
                "repair_export_like": export_like.reset,
                "top_level_loop": all_unrecorded.reset,
                "hash_table_floor": floor.setup,
            },
        )
        del floor
        if set(results["repair"]) != {n} or set(results["repair_export_like"]) != {expected_export}:
            raise AssertionError(
                f"repetitions should record {n} and {expected_export} names, recorded "
                f"{results['repair']} and {results['repair_export_like']}"
            )
        all_unrecorded.reset()  # every name unrecorded again before the graph grows
        point = {"nodes": n, "reps": n_reps, "unrecorded_all": n, "unrecorded_export_like": expected_export}
        for key, t in seconds.items():
            point[key] = summarize(t)
            point[f"{key}_ns_per_node"] = point[key]["median_s"] / n * 1e9
        points.append(point)
        if progress is not None:
            progress.step(
                f"synthetic {n:,} nodes: repair {point['repair']['median_s'] * 1e3:.1f} ms (all unrecorded), "
                f"{point['repair_export_like']['median_s'] * 1e3:.1f} ms (1 in {EXPORT_LIKE_EVERY})"
            )
    return {
        "graph": "bare torch.fx.Graph, chain/tree of add/mul/relu/sub, names assigned directly",
        "export_like_every": EXPORT_LIKE_EVERY,
        "points": points,
        "fit": fit_linear(points, "repair"),
        "fit_export_like": fit_linear(points, "repair_export_like"),
        "fit_top_level_loop": fit_linear(points, "top_level_loop"),
        "fit_hash_table_floor": fit_linear(points, "hash_table_floor"),
    }


def fit_linear(points: list[dict], key: str) -> dict:
    """Least-squares ``time = a + b * nodes`` on the medians of ``key``, and the log-log exponent.

    Linear scaling shows as an exponent near 1, R^2 near 1 and a per-node time
    that does not grow with size.
    """
    n = np.array([p["nodes"] for p in points], dtype=float)
    t = np.array([p[key]["median_s"] for p in points])
    out: dict = {"series": key, "model": "time_s = intercept_s + slope_s_per_node * nodes"}
    if len(points) >= 2:
        slope, intercept = np.polyfit(n, t, 1)
        pred = intercept + slope * n
        ss_res = float(np.sum((t - pred) ** 2))
        ss_tot = float(np.sum((t - t.mean()) ** 2))
        exponent, _ = np.polyfit(np.log(n), np.log(t), 1)
        out.update(
            slope_ns_per_node=float(slope) * 1e9,
            intercept_s=float(intercept),
            r_squared=1.0 - ss_res / ss_tot if ss_tot > 0 else math.nan,
            loglog_exponent=float(exponent),
        )
    first, last = points[0], points[-1]
    out.update(
        per_node_small_nodes=first["nodes"],
        per_node_large_nodes=last["nodes"],
        per_node_ratio_large_to_small=last[f"{key}_ns_per_node"] / first[f"{key}_ns_per_node"],
    )
    return out
