"""What differs between the supported torch releases (2.4 - 2.15), detected by feature.

Every difference of public or semi-public torch API the package meets is
handled here, by looking for the thing itself, never by ``torch.__version__``.
(torch.fx's private name-space state has its own module, ``_fx_namespace``.)
"""

from __future__ import annotations

import ast
import re

import torch.fx

__all__ = [
    "forward_arg_names",
    "guard_arg_names",
    "module_legalizes_arg_names",
    "output_node",
    "rename_in_guards",
    "set_example_inputs",
    "set_forward_arg_names",
    "spec_children",
]


def spec_children(spec) -> list:
    """A pytree TreeSpec's children: ``child(i)`` on newer torch, ``children_specs`` on older."""
    if hasattr(spec, "child"):
        return [spec.child(i) for i in range(spec.num_children)]
    return list(spec.children_specs)


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


def module_legalizes_arg_names() -> bool:
    """Whether this torch's ``ExportedProgram.module()`` makes its ``forward``'s argument names
    legal itself (the upstream fix, pytorch/pytorch#202927, and the patches in ``patches/``:
    ``torch.export._unlift._legal_forward_arg_names``). Such a torch keeps the user's names in
    ``forward_arg_names`` on purpose, so they are not the generated code's parameters."""
    try:
        from torch.export import _unlift
    except ImportError:
        return False
    return callable(getattr(_unlift, "_legal_forward_arg_names", None))


def set_forward_arg_names(ep, entry, names: list[str]) -> None:
    """Store ``names`` where ``forward_arg_names(ep, entry)`` found them."""
    sig = entry.signature
    if hasattr(sig, "forward_arg_names"):
        sig.forward_arg_names = names
    elif not entry.fqn and "forward_arg_names" in ep.graph_module.meta:
        ep.graph_module.meta["forward_arg_names"] = names
    else:
        raise ValueError(f"torch keeps no forward argument names for {entry.fqn or 'the program'!r}")


def set_example_inputs(ep, example_inputs) -> None:
    """``ep.example_inputs = ...``; torch before 2.5 has no setter, only ``_example_inputs``."""
    prop = getattr(type(ep), "example_inputs", None)
    if isinstance(prop, property) and prop.fset is None:
        ep._example_inputs = example_inputs
    else:
        ep.example_inputs = example_inputs


def output_node(graph: torch.fx.Graph) -> torch.fx.Node:
    """The graph's output node (``Graph.output_node()`` exists only from torch 2.6)."""
    for node in reversed(graph.nodes):
        if node.op == "output":
            return node
    raise ValueError("graph has no output node")


_GUARD_ARG = re.compile(r"""\bL\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]""")


def _guards(ep) -> list[str]:
    """``ep``'s shape guards as code, where this torch keeps them (``ep._guards_code``).

    Those releases keep them as Python expressions over the program's arguments
    (``L['x'].size()[0] <= 8``), and ``ep.module()`` turns them into checks by
    matching ``L['x']`` against the parameter names of its ``forward``. Releases
    without ``_guards_code`` check inputs by position and keep no names.
    """
    guards = getattr(ep, "_guards_code", None)
    return guards if isinstance(guards, list) else []


def guard_arg_names(ep) -> set[str]:
    """The argument names ``ep``'s guards refer to (the ``x`` of ``L['x']``)."""
    return {ast.literal_eval(m) for g in _guards(ep) for m in _GUARD_ARG.findall(g)}


def rename_in_guards(ep, renames: dict[str, str]) -> None:
    """Make ``ep``'s guards refer to argument ``old`` as ``new``, for each pair of ``renames``."""
    guards = _guards(ep)
    if not renames or not guards:
        return
    subs = {f"L[{old!r}]": f"L[{new!r}]" for old, new in renames.items()}

    def sub(m: re.Match) -> str:
        return subs.get(f"L[{ast.literal_eval(m.group(1))!r}]", m.group(0))

    ep._guards_code = [_GUARD_ARG.sub(sub, g) for g in guards]
