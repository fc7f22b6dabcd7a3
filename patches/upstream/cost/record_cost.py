"""Commit 1's two ways of recording node names, timed against stock torch in one run.

    python record_cost.py SITE stock=- sites=PATCH setattr=PATCH [--rounds 5]

SITE: site-packages holding a pristine torch. Each ``label=PATCH`` is a configuration: the
``torch/`` part of PATCH (a ``git format-patch`` file) applied to a throw-away overlay of SITE
(``-``: SITE itself). Every configuration runs in its own process, the processes interleaved
round by round, and reports the best per-call process CPU time of:

- export: ``torch.export.export`` (non-strict) of a 40-layer MLP whose input is called ``mul``
  (241 nodes; export assigns a name to every node of the program);
- create_node: ``Graph.call_function`` of a relu into a graph, per node (10,000 nodes);
- rename: ``node.name = name`` on a node of a graph, per assignment (10,000 nodes);
- setattr: ``node.target = target`` (another attribute through ``Node.__setattr__``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import torch

def best(fn, number, repeat):
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn(number)
        times.append((time.process_time() - start) / number)
    return min(times)

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(40))

    def forward(self, mul):
        for layer in self.layers:
            mul = torch.relu(layer(mul)) * 2
        return mul

model, args = MLP(), (torch.randn(2, 8),)

def export(number):
    for _ in range(number):
        torch.export.export(model, args)

N = 10_000

def create(number):
    for _ in range(number):
        g = torch.fx.Graph()
        x = g.placeholder("x")
        for _ in range(N):
            g.call_function(torch.relu, (x,))

g = torch.fx.Graph()
x = g.placeholder("x")
nodes = [g.call_function(torch.relu, (x,)) for _ in range(N)]
names = [n.name for n in nodes]

def rename(number):
    for _ in range(number):
        for node, name in zip(nodes, names):
            node.name = name

def setattr_(number):
    for _ in range(number):
        for node in nodes:
            node.target = torch.relu

export(2)
out = {
    "torch": torch.__file__,
    "nodes": len(torch.export.export(model, args).graph.nodes),
    "export": best(export, 3, 3),
    "create_node": best(create, 1, 5) / N,
    "rename": best(rename, 5, 5) / N,
    "setattr": best(setattr_, 5, 5) / N,
}
json.dump(out, sys.stdout)
"""


def overlay_with(site: Path, patch: Path, root: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from torch_export_names.tools.torch_patch import diff, overlay

    changes = [f for f in diff.parse(patch.read_text()) if f.path.startswith("torch/")]
    overlay.build(site, [f.path for f in changes], root)
    for f in changes:
        (root / f.path).write_text(diff.apply_file((site / f.path).read_text(), f))
    return root


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("site", type=Path)
    p.add_argument("configs", nargs="+")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for config in args.configs:
            label, patch = config.split("=", 1)
            paths[label] = [] if patch == "-" else [overlay_with(args.site, Path(patch), Path(tmp) / label)]
        results: dict[str, list[dict]] = {label: [] for label in paths}
        for _ in range(args.rounds):
            for label, pythonpath in paths.items():
                env = {
                    **os.environ,
                    "PYTHONDONTWRITEBYTECODE": "1",
                    "PYTHONPATH": os.pathsep.join(map(str, pythonpath)),
                }
                done = subprocess.run(
                    [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
                )
                results[label].append(json.loads(done.stdout))
    keys = ("export", "create_node", "rename", "setattr")
    scale = {"export": 1e3, "create_node": 1e6, "rename": 1e6, "setattr": 1e6}
    unit = {"export": "ms", "create_node": "us", "rename": "us", "setattr": "us"}
    base = next(iter(results))
    best = {label: {k: min(r[k] for r in runs) for k in keys} for label, runs in results.items()}
    print(
        f"torch: {results[base][0]['torch']}; exported program: {results[base][0]['nodes']} nodes; {args.rounds} rounds"
    )
    print("| config | " + " | ".join(f"{k} ({unit[k]})" for k in keys) + " |")
    print("| --- |" + " --- |" * len(keys))
    for label, b in best.items():
        cells = []
        for k in keys:
            v = b[k] * scale[k]
            ratio = b[k] / best[base][k]
            cells.append(f"{v:.3f}" + ("" if label == base else f" ({ratio:.3f}x)"))
        print(f"| {label} | " + " | ".join(cells) + " |")
    spread = {k: max(r[k] for r in results[base]) / best[base][k] - 1 for k in keys}
    print("stock spread (worst/best - 1): " + ", ".join(f"{k} {v:.1%}" for k, v in spread.items()))


if __name__ == "__main__":
    main()
