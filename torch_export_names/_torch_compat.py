"""What differs between the supported torch releases (2.4 - 2.15), detected by feature.

Every difference of public or semi-public torch API the package meets is
handled here, by looking for the thing itself, never by ``torch.__version__``.
(torch.fx's private name-space state has its own module, ``_fx_namespace``.)
"""

from __future__ import annotations

import torch.fx

__all__ = ["forward_arg_names", "output_node"]


def forward_arg_names(ep, entry) -> list[str] | None:
    """The parameter names ``ep.module()`` gives the ``forward`` of ``entry`` (a
    ``ModuleCallEntry`` of ``ep.module_call_graph``), None where torch keeps none.

    ``ModuleCallSignature.forward_arg_names`` where torch has it; before that
    (torch 2.4, 2.5) the top-level names are in ``ep.graph_module.meta``, and
    submodules have none.
    """
    sig = entry.signature
    if sig is None:
        return None
    if hasattr(sig, "forward_arg_names"):
        return sig.forward_arg_names
    if not entry.fqn:
        return ep.graph_module.meta.get("forward_arg_names")
    return None


def output_node(graph: torch.fx.Graph) -> torch.fx.Node:
    """The graph's output node (``Graph.output_node()`` exists only from torch 2.6)."""
    for node in reversed(graph.nodes):
        if node.op == "output":
            return node
    raise ValueError("graph has no output node")
