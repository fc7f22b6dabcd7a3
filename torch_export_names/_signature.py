"""Carry placeholder renames into the signatures of an ExportedProgram.

A placeholder of an exported program's top-level graph is an input of the program: its graph
signature and its module call signatures name it. ``passes`` renames a placeholder only where
its name cannot be a parameter of fx's generated code; this module makes those follow. The
user's argument names (``forward_arg_names``, the keys of a call made by keyword, the guards)
are never changed.
"""

from __future__ import annotations

__all__ = ["rename_in_program"]


def rename_in_program(ep, renames: dict[str, str]) -> None:
    """Carry top-level placeholder/output renames into ``ep``'s signatures.

    The graph signature (input and output specs, and the input a user-input
    mutation writes to) and every module call signature refer to nodes by name.
    """
    from torch.export.graph_signature import OutputKind

    sig = ep.graph_signature
    for old, new in renames.items():
        sig.replace_all_uses(old, new)
    for spec in sig.output_specs:
        if spec.kind == OutputKind.USER_INPUT_MUTATION and spec.target in renames:
            spec.target = renames[spec.target]
    for entry in ep.module_call_graph:
        if entry.signature is None:
            continue
        for arg in (*entry.signature.inputs, *entry.signature.outputs):
            if getattr(arg, "name", None) in renames:
                arg.name = renames[arg.name]
