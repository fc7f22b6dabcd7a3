"""A copy of a graph, and a re-trace of an exported graph, keep the names of what they copy.

torch copies nodes through ``Graph.node_copy`` (``copy.deepcopy`` of a graph, ``graph_copy``,
``legalize_graph`` of ExecuTorch's partitioning, ...), which names the copy through
``_Namespace.create_name``, and ``ExportPass`` (the base of ExecuTorch's edge passes, with a copy
in ExecuTorch, and of ``ExportedProgram._transform_do_not_use``) re-traces an exported graph
creating each placeholder the same way. ``create_name`` refuses a name that is a
builtin or a global of fx's code (``input``, ``inf``), so the copy's placeholder becomes
``input_1`` while the program's signature, copied or updated by position, still names ``input``
as the user input a mutation writes to. ``ep.module()`` of such a program then raises ``Could
not find input in either buffer or input nodes`` and an edge program fails validation
(``SpecViolationError``), on stock torch too.

Invariant restored: a node of the copy (a placeholder of the re-trace) has the name of the node
it copies, recorded in its graph's name space, whenever no other node of that graph has it.
Such a placeholder is safe to keep: the code-generator guard (``codegen_guard``) keeps the
parameters of fx's code apart from its globals; ``repair`` still renames a name that cannot be a
parameter at all (a keyword, ``self``).

These are patches of the export hook (``hook._make_patches``), bypassed while ``suspended()``.
"""

from __future__ import annotations

import sys
from typing import Any

from . import _fx_namespace as ns
from . import _suspension
from ._patching import Patch, wrapping

__all__ = ["EXPORT_PASS_BASES", "export_pass_patches", "patches"]


def _node_copy(original, graph, node, *args, **kwargs):
    """``torch.fx.Graph.node_copy``: torch's copy, named as the node it copies if that is free."""
    copied = original(graph, node, *args, **kwargs)
    name = getattr(node, "name", None)
    if isinstance(name, str) and copied.name != name:
        _take(copied, name)
    return copied


def _placeholder(original, export_pass, name, arg, meta):
    """``ExportPass.placeholder``: torch's placeholder, named ``name`` when that name is free."""
    value = original(export_pass, name, arg, meta)
    node = getattr(getattr(value, "proxy_or_node", None), "node", None)
    if isinstance(name, str) and node is not None and node.name != name:
        _take(node, name)
    return value


def _take(node, name: str) -> None:
    try:
        ns.take_name(node.graph, node, name)
    except ns.PrivateStateMissing:
        pass  # the copy stays as torch made it (repair warns about the missing state)


# ExportPass's base class in torch, and ExecuTorch's own copy of it (its edge passes), by module.
EXPORT_PASS_BASES = {
    "torch._export.pass_base": "_ExportPassBaseDeprecatedDoNotUse",
    "executorch.exir.pass_base": "_ExportPassBase",
}


def patches() -> list[Patch]:
    """The patches for what is imported now: ``Graph.node_copy`` (``copy.deepcopy``,
    ``graph_copy``, ``legalize_graph``, ... copy through it) and the ExportPass bases of
    ``EXPORT_PASS_BASES`` already imported. Nothing is imported here: the hook may be installed
    while torch itself is still being imported (``TORCH_EXPORT_NAMES``); a base imported later is
    patched then (``hook._installed``)."""
    import torch.fx

    node_copy = Patch(torch.fx.Graph, "node_copy", wrapping(_node_copy, bypassed=_suspension.is_suspended))
    return [node_copy, *(p for module in EXPORT_PASS_BASES for p in export_pass_patches(module))]


def export_pass_patches(module: str) -> list[Patch]:
    """The ``placeholder`` patch of the ExportPass base class in ``module`` if it is imported and
    has the method this patch wraps (looked up, not assumed)."""
    cls: Any = getattr(sys.modules.get(module), EXPORT_PASS_BASES[module], None)
    if not isinstance(cls, type) or not callable(cls.__dict__.get("placeholder")):
        return []
    return [Patch(cls, "placeholder", wrapping(_placeholder, bypassed=_suspension.is_suspended))]
