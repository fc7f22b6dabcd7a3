"""PR A's cost: node-name writes per export x the cost of one write, on the torch this runs on.

    python write_cost.py [--rounds 7]               # stock torch
    PYTHONPATH=OVERLAY python write_cost.py         # torch with PR A (an overlay of the wheel)

Prints one JSON line:

- ``writes``: how many times ``Node.__setattr__`` is called with ``name`` during one
  ``torch.export.export`` (non-strict) of a 40-layer MLP whose input is called ``mul``
  (counted in a separate, untimed export);
- ``new_name_us``: best per-write process CPU time of ``node.name = <a name not yet used>``
  on a node of a 10,000-node graph (the case PR A records);
- ``same_name_us``: the same for a write of the node's current name (PR A skips it);
- ``export_ms``: best process CPU time of the export itself.

Run it on stock torch and with PR A, in separate processes; PR A's cost per export is
``writes x (new_name_us(PR A) - new_name_us(stock))``, compared with ``export_ms``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.fx  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(40))

    def forward(self, mul: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            mul = torch.relu(layer(mul)) * 2
        return mul


def best(fn, number: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn(number)
        times.append((time.process_time() - start) / number)
    return min(times)


def count_writes(model, args) -> int:
    writes = 0
    original = torch.fx.Node.__setattr__

    def counting(self, name, value):
        nonlocal writes
        writes += name == "name"
        original(self, name, value)

    torch.fx.Node.__setattr__ = counting
    try:
        torch.export.export(model, args)
    finally:
        torch.fx.Node.__setattr__ = original
    return writes


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    rounds = p.parse_args().rounds
    model, args = MLP(), (torch.randn(2, 8),)
    torch.export.export(model, args)  # warm up
    writes = count_writes(model, args)

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    for _ in range(10_000):
        x = graph.call_function(torch.relu, (x,))
    node = x
    fresh = iter(f"renamed_{i}" for i in range(10**8))

    def new_names(number: int) -> None:
        for _ in range(number):
            node.name = next(fresh)

    def same_name(number: int) -> None:
        name = node.name
        for _ in range(number):
            node.name = name

    def export(number: int) -> None:
        for _ in range(number):
            torch.export.export(model, args)

    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "torch_file": torch.__file__,
                "writes": writes,
                "new_name_us": round(best(new_names, 20_000, rounds) * 1e6, 3),
                "same_name_us": round(best(same_name, 20_000, rounds) * 1e6, 3),
                "export_ms": round(best(export, 1, rounds) * 1e3, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
