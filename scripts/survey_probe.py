"""Probe one installed torch for what torch-export-names relies on (issue 13 survey).

    python scripts/survey_probe.py

Prints one line per feature (present or not) and the outcome of the two
pure-torch reproductions (unrecorded name -> "Node redefined name"; an input
called ``inf`` -> wrong result from ``ep.module()``), run without this package.
Uses only public torch APIs that exist since 2.4 for the reproductions.
"""

from __future__ import annotations

import importlib
import traceback

import torch
import torch.fx


def has(path: str) -> bool:
    mod, _, attr = path.rpartition(":")
    try:
        obj = importlib.import_module(mod)
    except Exception:
        return False
    for part in filter(None, attr.split(".")):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


FEATURES = [
    "torch.fx.graph:_illegal_names",
    "torch.fx.graph:_Namespace._is_illegal_name",
    "torch.fx.graph:_name_regex",
    "torch.fx.graph:_custom_builtins",
    "torch.fx.graph:Graph.output_node",
    "torch.fx.graph:Graph.find_nodes",
    "torch.export:draft_export",
    "torch.export.passes:move_to_device_pass",
    "torch.export:unflatten",
    "torch:cond",
    "torch._higher_order_ops.while_loop:while_loop",
    "torch._higher_order_ops.scan:scan",
    "torch._higher_order_ops.wrap:wrap_with_autocast",
    "torch._higher_order_ops.wrap:wrap_with_set_grad_enabled",
    "torch._higher_order_ops.map:map_impl",
    "torch.export.exported_program:ExportedProgram.example_inputs",
]


def main() -> None:
    print(f"torch {torch.__version__}")
    for f in FEATURES:
        print(f"{'yes' if has(f) else 'NO '}  {f}")
    import dataclasses

    from torch.export.exported_program import ModuleCallSignature

    fields = [f.name for f in dataclasses.fields(ModuleCallSignature)]
    print(f"     ModuleCallSignature fields: {fields}")
    ns = torch.fx.Graph()._graph_namespace
    print(f"     _Namespace attributes: {sorted(vars(ns))}")

    class M(torch.nn.Module):
        def forward(self, mul):
            return mul * 2

    ep = torch.export.export(M(), (torch.randn(3),))
    g = ep.graph
    used = g._graph_namespace._used_names
    print(f"repro1 nodes {[n.name for n in g.nodes]}; unrecorded "
          f"{[n.name for n in g.nodes if n.name not in used]}")
    x = next(n for n in g.nodes if n.op == "placeholder")
    out = next(n for n in g.nodes if n.op == "output")
    try:
        with g.inserting_before(out):
            n = g.create_node("call_function", torch.ops.aten.mul.Tensor, (x, x), name="mul")
        g.lint()
        print(f"repro1 no collision (new node {n.name})")
    except Exception as e:
        print(f"repro1 {type(e).__name__}: {e}")

    class Inf(torch.nn.Module):
        def forward(self, inf):
            return inf * float("inf") + inf

    t = torch.tensor([2.0, -3.0])
    try:
        got = torch.export.export(Inf(), (t,)).module()(t)
        print(f"repro2 module() {got.tolist()} eager {Inf()(t).tolist()}")
    except Exception as e:
        print(f"repro2 {type(e).__name__}: {e}")
        traceback.print_exc(limit=1)

    import torch_export_names

    try:
        print(f"is_affected() = {torch_export_names.is_affected()}")
    except Exception as e:
        print(f"is_affected() raised {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
