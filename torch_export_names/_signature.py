"""Carry placeholder renames into the signatures of an ExportedProgram.

A placeholder of an exported program's top-level graph is an input of the program: its graph
signature and its module call signatures name it. ``passes`` renames a placeholder only where
its name cannot be a parameter of fx's generated code; this module makes those follow. The
user's argument names (``forward_arg_names``, the keys of a call made by keyword, the guards)
are kept, except one that no parameter can take (a ``**kwargs`` key such as ``my-input``):
``legalize_arguments`` renames it as ``create_name`` would, wherever the program keeps it.
"""

from __future__ import annotations

__all__ = ["Unreadable", "legalize_arguments", "rename_in_program", "restore", "snapshot"]


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
    """The names in ``ep``'s signatures that a rename changes (and the argument names, input
    spec and example inputs ``legalize_arguments`` changes), for ``restore``; raises
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
    names = _forward_arg_names(ep)
    root = _root_signature(ep)
    arguments = (
        names,
        list(names or ()),
        root,
        getattr(root, "in_spec", None),
        getattr(ep, "_example_inputs", None),
    )
    return [(a, a.name) for a in named], [(s, s.target) for s in sig.output_specs], arguments


def restore(ep, snap) -> None:
    """Put back what ``snapshot`` saw."""
    args, outputs, (names, saved_names, root, in_spec, example) = snap
    for arg, name in args:
        arg.name = name
    for spec, target in outputs:
        spec.target = target
    if names is not None:
        names[:] = saved_names
    if root is not None and in_spec is not None:
        root.in_spec = in_spec
    if hasattr(ep, "_example_inputs"):
        ep._example_inputs = example


def legalize_arguments(ep) -> dict[str, str]:
    """Rename every argument of ``ep.module()`` that no parameter can take (a ``**kwargs`` key
    such as ``my-input``) as ``create_name`` derives it (``my_input``), where the program keeps
    argument names: its ``forward_arg_names``, the keyword of its input spec (how a call by
    that keyword is flattened) and its example inputs (which ``ep.module()`` binds to that
    signature). Returns the renames; the module is then called by the new name."""
    from . import _fx_namespace

    names = _forward_arg_names(ep)
    if not names:
        return {}
    legal = _fx_namespace.legal_names(list(names))
    renames = {old: new for old, new in zip(names, legal) if old != new}
    if not renames:
        return {}
    names[:] = legal
    spec_owner = _root_signature(ep)
    in_spec = getattr(spec_owner, "in_spec", None)
    if in_spec is not None:
        spec_owner.in_spec = _renamed_kwargs_spec(in_spec, renames)
    example = getattr(ep, "_example_inputs", None)
    if isinstance(example, tuple) and len(example) == 2 and isinstance(example[1], dict):
        ep._example_inputs = (example[0], {renames.get(k, k): v for k, v in example[1].items()})
    return renames


def _root_signature(ep):
    entries = getattr(ep, "module_call_graph", None) or []
    return entries[0].signature if entries and entries[0].fqn == "" else None


def _forward_arg_names(ep) -> list[str] | None:
    """The list of ``ep.module()``'s argument names, where this torch keeps it (the root module
    call signature from torch 2.5; the graph module's meta on 2.4)."""
    names = getattr(_root_signature(ep), "forward_arg_names", None)
    if not isinstance(names, list):
        names = ep.graph_module.meta.get("forward_arg_names")
    return names if isinstance(names, list) else None


def _renamed_kwargs_spec(spec, renames: dict[str, str]):
    """``spec`` of ``(args, kwargs)`` with the keys of ``kwargs`` renamed (a spec of any other
    shape is returned as it is)."""
    from torch.utils import _pytree as pytree

    tree = pytree.tree_unflatten(list(range(spec.num_leaves)), spec)
    if not (isinstance(tree, tuple) and len(tree) == 2 and type(tree[1]) is dict):
        return spec
    args, kwargs = tree
    return pytree.tree_flatten((args, {renames.get(k, k): v for k, v in kwargs.items()}))[1]
