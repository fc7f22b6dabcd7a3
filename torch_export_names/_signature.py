"""Carry placeholder renames into the signatures of an ExportedProgram.

A placeholder of an exported program's top-level graph is an input of the program: its graph
signature and its module call signatures name it. ``passes`` renames a placeholder only where
its name cannot be a parameter of fx's generated code; this module makes those follow. The
user's argument names (``forward_arg_names``, the keys of a call made by keyword, the guards)
are never changed.
"""

from __future__ import annotations

__all__ = ["Unreadable", "rename_in_program", "restore", "snapshot"]


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


class Unreadable(RuntimeError):
    """This torch's ExportedProgram is not what the package knows how to read."""


def snapshot(ep):
    """The names in ``ep``'s signatures that a rename changes, for ``restore``; raises
    ``Unreadable`` if this torch's program does not have them where the package looks."""
    try:
        return _snapshot(ep)
    except Exception as e:
        raise Unreadable(f"{type(e).__name__}: {e}") from e


def _snapshot(ep):
    sig = ep.graph_signature
    named = [s.arg for s in (*sig.input_specs, *sig.output_specs) if hasattr(s.arg, "name")]
    entries = [e for e in ep.module_call_graph if e.signature is not None]
    named += [a for e in entries for a in (*e.signature.inputs, *e.signature.outputs) if hasattr(a, "name")]
    return [(a, a.name) for a in named], [(s, s.target) for s in sig.output_specs]


def restore(ep, snap) -> None:
    """Put back what ``snapshot`` saw."""
    args, outputs = snap
    for arg, name in args:
        arg.name = name
    for spec, target in outputs:
        spec.target = target
