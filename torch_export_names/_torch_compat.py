"""What differs between the supported torch releases (2.4 - 2.15), detected by feature.

Every difference of public or semi-public torch API the package meets is
handled here, by looking for the thing itself, never by ``torch.__version__``.
(torch.fx's private name-space state has its own module, ``_fx_namespace``.)
"""

from __future__ import annotations

import torch.fx

__all__ = ["output_node"]


def output_node(graph: torch.fx.Graph) -> torch.fx.Node:
    """The graph's output node (``Graph.output_node()`` exists only from torch 2.6)."""
    for node in reversed(graph.nodes):
        if node.op == "output":
            return node
    raise ValueError("graph has no output node")
