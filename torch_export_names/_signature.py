"""Carry argument renames into everything of an ExportedProgram that names an argument.

A placeholder of an exported program's top-level graph is an argument of the program: its
graph signature, its module call signatures, the ``forward`` that ``ep.module()`` generates
(``forward_arg_names``), the input spec of a call made by keyword, its example inputs and its
guards (``ep._guards_code``, ``L['name']``) all name it. ``passes`` renames nodes; this module
makes the rest of the program follow, and keeps ``ep.module()``'s parameters legal.
"""

from __future__ import annotations

from . import _torch_compat as _compat
from ._codegen_rule import candidates, shadows
from ._fx_namespace import legal_names
from ._warnings import warn_once

__all__ = ["legalize_forward_arg_names", "reconcile_guards", "rename_in_program", "warn_renamed_args"]


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


def _is_args_kwargs_spec(spec) -> bool:
    if spec is None or spec.type is not tuple:
        return False
    children = _compat.spec_children(spec)
    return len(children) == 2 and children[0].type is tuple and children[1].type is dict


def _rename_kwargs_in_spec(spec, renames: dict[str, str]):
    """``spec`` of ``(args, kwargs)`` with the kwargs keys in ``renames`` renamed (order kept)."""
    from torch.utils import _pytree as pytree

    args, kwargs = pytree.tree_unflatten(list(range(spec.num_leaves)), spec)
    return pytree.tree_structure((args, {renames.get(k, k): v for k, v in kwargs.items()}))


def legalize_forward_arg_names(ep) -> dict[str, str]:
    """Give ``ep.module()``'s generated ``forward`` parameter names that shadow nothing.

    torch builds that ``forward`` from ``forward_arg_names``, the user's own
    argument names; one called ``inf`` would read the argument wherever the
    graph means ``float("inf")``, and a keyword argument's key that is not an
    identifier (``my-input``) makes the code invalid. Everything that names a
    renamed argument follows: an argument passed by keyword at export time is
    renamed in the call's input spec and example inputs, so ``ep.module()``
    accepts it by its new keyword, and the program's guards (``ep._guards_code``,
    which refer to arguments as ``L['name']``) name it by its new name.
    Returns ``{old: new}`` for the arguments renamed.

    Only the top-level entry of ``ep.module_call_graph`` can hold such names:
    torch gives every submodule's signature ``forward_arg_names=None`` ("we only
    propagate forward_arg_names for the top level module", torch/export/_trace.py;
    so does ``collect_tracepoints_pass``), and ``unflatten`` / ``swap`` name a
    submodule's arguments through ``create_name``. The top-level entry comes
    first, so the other entries (one per submodule call, 263 in a 16-layer
    decoder) are not read.
    """
    entries = ep.module_call_graph
    if not entries or _compat.module_legalizes_arg_names():  # a fixed torch's module() does it
        return {}
    entry = entries[0]
    if entry.fqn:  # not torch's layout (the top level first): look for it
        entry = next((e for e in entries if not e.fqn), None)
        if entry is None:
            return {}
    sig = entry.signature
    names = _compat.forward_arg_names(ep, entry)
    if not names:
        return {}
    if candidates().isdisjoint(names) and all(map(str.isidentifier, names)):
        return {}  # the common case: no name is one that can shadow
    graph = ep.graph
    if not any(shadows(n, graph) for n in names):
        return {}
    legal = legal_names(names, graph)
    renames = {old: new for old, new in zip(names, legal) if old != new}
    _compat.set_forward_arg_names(ep, entry, legal)
    if _is_args_kwargs_spec(sig.in_spec) and any(
        k in renames for k in _compat.spec_children(sig.in_spec)[1].context
    ):
        sig.in_spec = _rename_kwargs_in_spec(sig.in_spec, renames)
        if ep.example_inputs is not None:
            args, kwargs = ep.example_inputs
            _compat.set_example_inputs(ep, (args, {renames.get(k, k): v for k, v in kwargs.items()}))
    return renames


def reconcile_guards(ep) -> None:
    """Make ``ep``'s guards name the arguments its ``forward`` has.

    A guard that still names an argument by the name it had before ``repair``
    renamed it (``L['inf']`` when ``ep.module()`` takes ``inf_1``) breaks
    ``ep.module()`` with ``NameError: name 'L' is not defined``. torch writes
    such guards whenever it builds a program from one whose argument was renamed:
    at export, ``run_decompositions`` (the guards come from the shape
    environment, which keeps the user's names) and ``torch.export.load`` of a
    program saved without the package. Each such name is the argument whose
    new name ``legal_names`` gives it in its position; a name that fits no
    argument, or more than one, is left as it is.
    """
    guarded = _compat.guard_arg_names(ep)
    if not guarded:
        return
    entry = next((e for e in ep.module_call_graph if not e.fqn), None)
    names = _compat.forward_arg_names(ep, entry) if entry is not None else None
    if not names:
        return
    graph = ep.graph
    renames = {}
    for old in guarded.difference(names):
        if not shadows(old, graph):
            continue
        fits = [
            new
            for i, new in enumerate(names)
            if new not in guarded and legal_names([*names[:i], old, *names[i + 1 :]], graph)[i] == new
        ]
        if len(fits) == 1:
            renames[old] = fits[0]
    _compat.rename_in_guards(ep, renames)


def warn_renamed_args(renames: dict[str, str]) -> None:
    """One warning per renamed argument; called once the whole repair has succeeded."""
    for old, new in renames.items():
        warn_once(
            f"renamed-arg-{old}",
            f"torch_export_names: the exported program's argument {old!r} is renamed {new!r}: as a "
            f"parameter of the code torch.fx generates it would shadow the global {old!r} that "
            f"code uses (or is not a Python identifier), and change what ep.module() computes. "
            f"ep.module() takes it in the same position, or by keyword as {new}=...",
            stacklevel=6,
        )
