"""The code-generator guard: no parameter of fx's generated code shadows a name its body uses.

torch.fx writes each placeholder's *target* as a parameter of the ``forward`` it generates (and,
for ``ep.module()``, each of the user's argument names, ``_PyTreeInfo.orig_args``), while the body
refers to the globals the generator writes by bare names (``inf``, ``nan``, ``device(...)``,
``torch.ops...``, ``getattr(...)``, ``slice(...)``, ``fx_pytree``, ``pytree``, builtins the graph
calls) and to node values by locals from a fresh name space. A parameter called ``inf`` therefore
turns every later literal ``inf`` into the argument, and a parameter called ``input_1`` is
overwritten by the local ``input_1 = input`` of a placeholder called ``input``
(pytorch/pytorch#202927). Renaming the parameter would fix the numbers but change how the program
is called, so the guard keeps every parameter and renames what the body calls by its name:

1. Nothing changes unless a parameter could collide (``_may_collide``: a builtin, keyword or
   registered global of fx's code, a name with a numeric suffix, a target unlike its node's
   name). Then the code is generated as torch generates it, and kept unless a parameter is also
   a global the code registered or writes out, or a local another node was given.
2. Otherwise the code is generated again with those parameters under fresh names, so that every
   use of the name in the body means the global or the other local, never the parameter
   (``ast`` reads them off exactly). If there is none, torch's own code is kept.
3. Otherwise those uses get fresh names (a global is bound to its object under the new name, as
   ``add_global`` binds any global) and the parameters get their names back.

The generated source is byte-identical to torch's whenever no parameter collides. The guard
wraps ``Graph._python_code`` (every code generator goes through it) through the package's one
patching primitive; ``install()`` puts it in place, ``uninstall()`` takes it off, and
``hook.suspended()`` bypasses it in one thread (to measure stock torch).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator

from . import _suspension
from ._after_import import after_import
from ._patching import Patch

if TYPE_CHECKING:
    import torch.fx

# Importing this module imports nothing of torch: the package puts the guard in place when
# torch.fx.graph is imported (``activate``). What it needs of torch is imported where used.

__all__ = ["activate", "install", "is_installed", "keep_parameters", "refresh", "suspended", "uninstall"]

_lock = threading.RLock()
# Graph -> whether its latest code came through the guard (``refresh`` recompiles the others).
_generated: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_patch: Patch | None = None  # in place while not None


def _param_sources(graph: torch.fx.Graph) -> tuple[dict[str, list[torch.fx.Node]], list[str]]:
    """The parameter names of ``graph``'s generated ``forward``: ``{name: placeholders whose
    target it is}`` and the code generator's own (``_PyTreeInfo.orig_args``)."""
    from . import _fx_namespace as _ns

    by_name: dict[str, list[torch.fx.Node]] = {}
    for node in _ns.placeholders(graph):
        if isinstance(node.target, str):
            by_name.setdefault(node.target.lstrip("*"), []).append(node)
    info = getattr(graph._codegen, "pytree_info", None)
    orig_args = list(getattr(info, "orig_args", None) or ())
    return by_name, orig_args


def _may_collide(name: str, nodes: list[torch.fx.Node]) -> bool:
    """Whether a parameter ``name`` can be a name the body uses for something else.

    The body's globals are registered or written names (``_illegal_names``, ``codegen_names``) or
    take a free name of the generator's name space; its locals are node names, suffixed or
    legalized by that name space. A parameter can only meet one of them if it is such a name, has
    a numeric suffix, or is not its placeholder's own name.
    """
    from . import _fx_namespace as _ns
    from ._codegen_rule import codegen_names

    return (
        name in _ns.refused_names()
        or name in codegen_names()
        or _ns.split_suffix(name)[1] is not None
        or any(node.name != name for node in nodes)
    )


def _risky_parameters(graph: torch.fx.Graph) -> tuple[dict[str, list[torch.fx.Node]], list[str]]:
    """``graph``'s parameters by name (``_param_sources``) and those that may collide
    (``_may_collide``), in the order the generated function takes them."""
    by_name, orig_args = _param_sources(graph)
    names = dict.fromkeys([*by_name, *orig_args])
    return by_name, [name for name in names if _may_collide(name, by_name.get(name, []))]


def _suspects(code, namespace, names: list[str], by_name: dict[str, list[torch.fx.Node]]) -> list[str]:
    """The parameters of ``names`` that torch's ``code`` may use as something else: a global it
    registered or writes out, or a name its name space gave to another node."""
    from . import _fx_namespace as _ns
    from ._codegen_rule import codegen_names

    return [
        name
        for name in names
        if name in code.globals
        or name in codegen_names()
        or (
            _ns.is_used(namespace, name)
            and all(_ns.name_of(namespace, node) != name for node in by_name.get(name, ()))
        )
    ]


@contextlib.contextmanager
def _parameters_renamed(graph: torch.fx.Graph, fresh: dict[str, str]) -> Iterator[None]:
    """Generate ``graph``'s code with the parameters in ``fresh`` under their fresh names."""
    from . import _fx_namespace as _ns

    nodes = [
        n for n in _ns.placeholders(graph) if isinstance(n.target, str) and n.target.lstrip("*") in fresh
    ]
    targets: list[str] = [str(n.target) for n in nodes]
    codegen: Any = graph._codegen
    info = getattr(codegen, "pytree_info", None)
    try:
        for node, target in zip(nodes, targets):
            name = target.lstrip("*")
            node.target = target[: len(target) - len(name)] + fresh[name]
        if info is not None and getattr(info, "orig_args", None):
            codegen.pytree_info = info._replace(orig_args=[fresh.get(a, a) for a in info.orig_args])
        yield
    finally:
        for node, target in zip(nodes, targets):
            node.target = target
        if info is not None:
            codegen.pytree_info = info


def _function(src: str) -> ast.FunctionDef:
    """The function fx generated (the module may also hold ``wrap(...)`` statements)."""
    return next(s for s in ast.parse(src).body if isinstance(s, ast.FunctionDef))


def _uses(fn: ast.FunctionDef, names: set[str]) -> dict[str, list[ast.Name]]:
    """Every ``Name`` of ``fn``'s body (what runs in its scope) called one of ``names``."""
    found: dict[str, list[ast.Name]] = {}
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id in names:
                found.setdefault(node.id, []).append(node)
    return found


def _replace(src: str, edits: list[tuple[int, int, int | None, str]]) -> str:
    """``src`` with each ``(line, start, end, text)`` edit made (ast positions: 1-based lines,
    UTF-8 byte columns)."""
    lines = src.split("\n")
    for lineno, start, end, text in sorted(edits, reverse=True):
        raw = lines[lineno - 1].encode()
        lines[lineno - 1] = (raw[:start] + text.encode() + raw[end:]).decode()
    return "\n".join(lines)


def keep_parameters(graph: torch.fx.Graph, namespace, generate: Callable[[], Any]):
    """``generate()`` (torch's code generator for ``graph`` in ``namespace``), with every
    parameter of the generated function keeping its name and no use in its body meaning the
    parameter unless it is one (see the module docstring). Returns the ``PythonCode``."""
    from . import _fx_namespace as _ns

    try:
        by_name, risky = _risky_parameters(graph)
    except Exception as e:  # noqa: BLE001 - e.g. PrivateStateMissing: torch's code generator as it is
        _warn_failed("could not read the parameters of fx's code", e)
        return generate()
    if not risky:
        return generate()
    before = _ns.namespace_snapshot(namespace)
    code = generate()
    suspects = _suspects(code, namespace, risky, by_name)
    if not suspects:
        return code
    after = _ns.namespace_snapshot(namespace)
    try:
        regenerated = _regenerate(graph, namespace, generate, suspects, before)
    except Exception as e:  # noqa: BLE001 - never worse than torch: its own code stands
        _warn_failed(f"could not keep the parameters {suspects} apart from the names fx's code uses", e)
        regenerated = None
    if regenerated is not None:
        return regenerated
    _ns.namespace_restore(namespace, after)  # the name space as torch's own code left it
    return code


def _warn_failed(what: str, e: Exception) -> None:
    from ._warnings import warn_once

    warn_once(
        "codegen-guard",
        f"torch_export_names: the code-generator guard {what} ({type(e).__name__}: {e}); the code is "
        "torch's own.",
    )


def _regenerate(graph, namespace, generate, suspects: list[str], before):
    """The code of ``graph`` with ``suspects`` kept as parameters and every other use of their
    names renamed, or None if no such use exists (torch's code is right)."""
    from . import _fx_namespace as _ns

    _ns.namespace_restore(namespace, before)
    fresh = {name: _ns.fresh_in(namespace, f"{name}_param") for name in suspects}
    with _parameters_renamed(graph, fresh):
        code = generate()
    fn = _function(code.src)
    uses = _uses(fn, set(suspects))
    if not uses:  # every suspect was only its own parameter
        return None
    edits: list[tuple[int, int, int | None, str]] = []
    for name, found in uses.items():
        alias = _ns.fresh_in(namespace, name)
        if not any(isinstance(n.ctx, ast.Store) for n in found):  # a global: bind it under the alias
            if name in code.globals:
                code.globals[alias] = code.globals[name]
            elif name in builtins.__dict__:
                code.globals[alias] = builtins.__dict__[name]
        edits += [(n.lineno, n.col_offset, n.end_col_offset, alias) for n in found]
    back = {new: old for old, new in fresh.items()}
    edits += [(n.lineno, n.col_offset, n.end_col_offset, back[n.id]) for n in _names(_uses(fn, set(back)))]
    args = fn.args
    edits += [
        (a.lineno, a.col_offset, a.col_offset + len(a.arg.encode()), back[a.arg])
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None and a.arg in back
    ]
    code.src = _replace(code.src, edits)
    return code


def _names(uses: dict[str, list[ast.Name]]) -> list[ast.Name]:
    return [n for found in uses.values() for n in found]


def refresh(module: torch.fx.GraphModule) -> bool:
    """Recompile ``module`` if a parameter of its code may collide and the code did not come
    through the guard (generated before the package was imported, or while suspended). Returns
    whether it recompiled. ``repair`` calls it on every graph module of a program."""
    if not is_installed() or _suspension.active() or _generated.get(module.graph, False):
        return False
    if not _risky_parameters(module.graph)[1]:
        return False
    module.recompile()
    return True


def _wrapper(patch: Patch):
    """``make`` of the ``Graph._python_code`` patch."""
    original = patch.original

    @functools.wraps(original)
    def _python_code(self, root_module, namespace, *args, **kwargs):
        def generate():
            return original(self, root_module, namespace, *args, **kwargs)

        guarded = patch.is_live(_python_code) and not _suspension.active()
        code = keep_parameters(self, namespace, generate) if guarded else generate()
        _generated[self] = guarded
        return code

    return _python_code


def install() -> None:
    """Put the guard on ``torch.fx.Graph._python_code``. Idempotent, thread-safe."""
    global _patch
    with _lock:
        if _patch is None:
            graph_module: Any = sys.modules.get("torch.fx.graph")
            if graph_module is None:
                import torch.fx.graph as graph_module
            patch = Patch(graph_module.Graph, "_python_code", _wrapper)
            patch.apply()
            _patch = patch


def activate() -> None:
    """``install()`` once ``torch.fx.graph`` is imported (now, if it is): what importing the
    package does, without importing torch."""
    after_import("torch.fx.graph", install)


def uninstall() -> None:
    """Take the guard off: ``Graph._python_code`` is torch's function again. Idempotent."""
    global _patch
    with _lock:
        if _patch is not None:
            _patch.remove()
            _patch = None


def is_installed() -> bool:
    with _lock:
        return _patch is not None


suspended = _suspension.suspended  # code generated in this thread inside the block is torch's own
