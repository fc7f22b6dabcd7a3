"""The recipe of the release patches: the edits make_patches.py applies to each torch, and
the commit message of the patch.

One ``Edit`` per site of the fix. Its alternatives are tried in order: the first
whose ``when`` holds for the release (a feature of its pristine sources, never
its version number) and whose ``old`` text occurs exactly ``count`` times
(whole lines) in ``path`` is applied. An edit none of whose alternatives
matches stops generation, unless its ``na`` condition holds: the release does
not have that site at all, and the edit is reported as not applicable (and
named in that release's commit message) with its reason.

patches/upstream/stack_recipe.py splits the same edits (by their number in
``EDITS``) into the three commits of the upstream stack.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Callable

SUBJECT = (
    "[export] Record the node names torch.export assigns; keep fx's generated "
    "parameters from shadowing its globals; name autocast, while_loop and scan "
    "subgraph placeholders"
)

# Paragraphs the release patches' message shares with the upstream stack's descriptions
# (patches/upstream/stack_recipe.py), so that one fix of the prose fixes both.
RECORDING_BUG = """\
torch.export renames nodes after tracing by assigning node.name
directly: placeholder_naming_pass (_assign_new_node_names),
_name_hoo_subgraph_placeholders, the run_decompositions path
(_decompose_and_get_gm_with_new_signature_constants),
_rename_constants_nodes (strict export), the deserializer
(torch.export.load), the unlift done by ExportedProgram.module()
(_insert_copy_for_mutations) and _copy_graph_module_and_signature. None
of these names reach the graph's namespace, so a later create_node can
hand one of them out again and the graph no longer lints:

    class M(torch.nn.Module):
        def forward(self, mul):
            return mul * 2  # exported as mul_1: the input is "mul"

    ep = torch.export.export(M(), (torch.randn(3),))
    g = ep.graph
    x = next(iter(g.nodes))
    with g.inserting_before(g.output_node()):
        g.create_node("call_function", torch.ops.aten.mul.Tensor,
                      (x, x), name="mul")
    g.lint()  # RuntimeError: Node redefined name mul_1!
"""

SHADOWING_EXAMPLE = """\
    class M(torch.nn.Module):
        def forward(self, inf):
            return inf * float("inf") + inf

    x = torch.tensor([2.0, -3.0])
    torch.export.export(M(), (x,)).module()(x)  # [6., 6.], eager: [inf, -inf]
    torch.fx.symbolic_trace(M())(x)             # the same

An input called nan is wrong the same way; device, torch, pytree and
fx_pytree make module() crash, and an input called round next to
round(x.shape[0] / 3) with dynamic shapes raises TypeError: 'Tensor'
object is not callable.
"""

SHADOWING_CAUSE = """\
torch.fx's code generator writes each placeholder's target (and, in
the pytree code generator that ExportedProgram.module() uses, each of
the user's argument names) as a parameter of the generated function,
outside the namespace that names everything else in it. Its body
refers to globals by bare names: inf, nan, device, torch, fx_pytree,
pytree, a function the graph calls, and getattr, slice, Ellipsis and
range, which it writes out itself. A parameter of such a name shadows
the global. The same happens with a local of the generated code: in
forward(self, input, input_1) the placeholder input gets the local
input_1 = input, which overwrites the second argument.
"""

SHADOWING_FIX = """\
Add Graph._keep_parameter_names, through which Graph._python_code now
generates the code. Every parameter keeps the name the graph gives it.
Where a parameter is also a name the body uses for something else (a
global of the generated code, or a local given to another node), the
code is generated again with those parameters under fresh names, every
use of the name in the body gets a fresh name from the code's namespace
(a global is bound to its object under it), and the parameters get
their names back:

    def forward(self, inf):
        inf_1 = inf
        mul = inf_1 * inf_2        # inf_2 is math.inf
        add = mul + inf_1

When no parameter collides, the generated code is exactly what it was,
and no name of any graph changes: an exported input called inf is
still inf, module() takes it by position and by keyword, and the
dynamic_shapes dict written for the model fits a re-export of
module(). Names Python cannot take as a parameter at all (a keyword or
a kwargs key that is not an identifier) are left as they are: the code
generator refuses them as before.
"""

MESSAGE = f"""{SUBJECT}

{RECORDING_BUG}
Backends work around it by writing the namespace's private state
(ExecuTorch's Qualcomm and Samsung pass managers).

A name torch.export keeps can also change what module() computes:

{SHADOWING_EXAMPLE}
{SHADOWING_CAUSE}
{SHADOWING_FIX}
Add one helper, Node._assign_name(name): it sets the name and records it
through the new _Namespace._record_name, which keeps _used_names,
_obj_to_name and _base_count consistent (create_name stays O(1)).
Unlike Node._rename it does not make the name unique: these callers
compute unique names for a whole graph and may pass through a transient
duplicate while renaming. Every site above now uses it instead of
assigning node.name.

_name_hoo_subgraph_placeholders now also names the placeholders of
wrap_with_autocast, while_loop (cond_fn and body_fn) and scan subgraphs
after the operands they receive, as it already does for cond, map_impl
and wrap_with_set_grad_enabled. They were left as arg0_1, ..., and
passes that map subgraph placeholders to operands by name failed
(ExecuTorch's DecomposeWrapWithAutocast: KeyError: 'arg0_1'). Two fixes
come with it: an operand passed twice (a while_loop carrying (y, y))
gives the second placeholder a suffixed name instead of a duplicate, and
only placeholders take operand names.

Fixes #202927

Test Plan:
python test/export/test_export_node_names.py
"""
MESSAGE_TAIL = "Fixes #202927\n"


class Sources:
    """The pristine files of one installed torch, read on demand (None: no such file)."""

    def __init__(self, site: Path):
        self.site = site
        self._texts: dict[str, str | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            file = self.site / path
            self._texts[path] = file.read_text() if file.is_file() else None
        return self._texts[path]

    def count(self, path: str, pattern: str) -> int:
        text = self.text(path)
        return 0 if text is None else len(re.findall(pattern, text, re.M))

    def has(self, path: str, pattern: str) -> bool:
        return self.count(path, pattern) > 0


Feature = Callable[[Sources], bool]


@dataclasses.dataclass(frozen=True)
class Alt:
    path: str
    old: str
    new: str
    when: Feature | None = None  # only on a release with this feature
    count: int = 1
    note: str = ""  # why this release needs this form (its commit message says so)


@dataclasses.dataclass(frozen=True)
class Edit:
    site: str  # what the edit changes, for the report
    alts: tuple[Alt, ...]
    na: tuple[str, Feature] | None = None  # (why not applicable, when it is not)


def occurrences(text: str, old: str) -> int:
    """How often ``old`` occurs in ``text`` as whole lines ("x.name = y" must not match
    inside "xx.name = y"): an alternative applies where this is its ``count``."""
    return len(re.findall("(?m)^" + re.escape(old), text))


def replace(text: str, old: str, new: str) -> str:
    """``text`` with each whole-line occurrence of ``old`` replaced by ``new``."""
    return re.sub("(?m)^" + re.escape(old), lambda _m: new, text)


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + ln if ln.strip() else ln for ln in text.splitlines(True))


# Features of a release, read from its sources.
def _has_name_regex(s: Sources) -> bool:
    return s.has("torch/fx/graph.py", r"^_name_regex = ")


def _has_autocast_hop(s: Sources) -> bool:
    return s.has("torch/_higher_order_ops/wrap.py", r"^wrap_with_autocast = ")


_SCAN = "torch/_higher_order_ops/scan.py"


def _scan_layout(s: Sources) -> str | None:
    """How this release's scan HOP takes its arguments (None: no scan HOP)."""
    if s.has(_SCAN, r"super\(\).__call__\(combine_fn, init, xs, additional_inputs[,)]"):
        return "init, xs, additional"
    if s.has(_SCAN, r"super\(\).__call__\(\s*combine_fn, init, xs, dim, reverse, additional_inputs"):
        return "init, xs, dim, reverse, additional"
    if s.text(_SCAN) is None:
        return None
    return "unknown"  # no alternative matches: generation stops


_NO_NAME_REGEX = (
    "torch.fx.graph has no _name_regex in this release: _record_name parses "
    "suffixes with _Namespace._name_suffix_regex."
)

_RECORD_NAME = '''
    def _record_name(self, obj: OBJ, name: str) -> None:
        """Record ``name``, which the caller has already given to ``obj``.

        ``create_name`` will not hand ``name`` out again, and the per-base
        suffix counter is raised to ``name``'s suffix so that ``create_name``
        stays O(1). Unlike ``_rename_object``, ``obj`` need not be associated
        yet and ``name`` is not checked: callers that rename many objects at
        once may pass through a transient duplicate.
        """
        self._obj_to_name[obj] = name
        self._used_names.add(name)
        match = REGEX.match(name)
        if match is not None and match.group(2) is not None:
            base, num = match.group(1), int(match.group(2))
            if num > self._base_count.get(base, 0):
                self._base_count[base] = num
'''


def _record_name(obj: str, regex: str) -> str:
    return _RECORD_NAME.replace("OBJ", obj).replace("REGEX", regex)


_RENAME_OBJECT = """\
    def _rename_object(self, obj: object, name: str) -> None:
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)
"""
_RENAME_OBJECT_ANY = """\
    def _rename_object(self, obj: Any, name: str):
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)
"""
_RENAME_OBJECT_ASSERT = """\
    def _rename_object(self, obj: Any, name: str):
        assert obj in self._obj_to_name
        self._obj_to_name[obj] = name
        self._used_names.add(name)
"""

# Graph._keep_parameter_names (torch/fx/graph.py): the code generator keeps every parameter's
# name and renames what the body calls by it; Graph._python_code goes through it.
KEEP_PARAMETER_NAMES = '''\
    def _keep_parameter_names(
        self,
        namespace: _Namespace,
        generate: Callable[..., PythonCode],
        *args: Any,
        **kwargs: Any,
    ) -> PythonCode:
        """Return ``generate(*args, **kwargs)``, the code of this graph, with every
        parameter named as the graph names it and no parameter shadowing a name
        that the body uses for something else.

        The parameters are the placeholders' targets (and, for ``_PyTreeCodeGen``,
        ``pytree_info.orig_args``). Callers may pass them by keyword, so they are
        written as they are, not through ``namespace``. The body refers to globals
        by name (``inf``, ``nan``, ``device``, ``torch``, a function the graph
        calls, and the builtins ``getattr``, ``slice``, ``Ellipsis`` and ``range``
        that the code generator writes out) and to nodes by the locals that
        ``namespace`` gives them. So a parameter called ``inf`` turns the constant
        ``inf`` into the argument, and in ``forward(self, input, input_1)`` the
        local ``input_1 = input`` overwrites the second argument. Where a
        parameter is such a name, the code is generated again with those
        parameters under fresh names, every use of their names in the body gets
        a fresh name from ``namespace`` (a global is bound to its object under
        it), and the parameters get their names back. When no parameter
        collides, the code is returned exactly as ``generate`` made it.

        Most graphs have no parameter that can collide, and for them this costs
        a few membership tests per parameter: the globals the body names are
        builtins, the registered ``_custom_builtins`` or names that ``namespace``
        hands out, and a local is a node's name from ``namespace``. A parameter
        can only be one of those if its name is a builtin or a registered global,
        has a numeric suffix, or is not its placeholder's own name; only then is
        the generated code checked.
        """
        placeholders: dict[str, list[Node]] = {}
        for node in self.find_nodes(op="placeholder"):
            if isinstance(node.target, str):
                placeholders.setdefault(node.target.lstrip("*"), []).append(node)
        info = getattr(self._codegen, "pytree_info", None)
        orig_args = list(info.orig_args) if info is not None else []
        names = list(dict.fromkeys([*placeholders, *orig_args]))

        def may_collide(name: str) -> bool:
            base, _, suffix = name.rpartition("_")
            return (
                name in _custom_builtins
                or name in builtins.__dict__
                or (base != "" and suffix.isdigit())
                or any(node.name != name for node in placeholders.get(name, ()))
            )

        if not any(may_collide(name) for name in names):
            return generate(*args, **kwargs)

        saved = (
            namespace._obj_to_name.copy(),
            namespace._used_names.copy(),
            namespace._base_count.copy(),
        )
        code = generate(*args, **kwargs)
        clashing = [
            name
            for name in names
            if name in code.globals
            or name in ("getattr", "slice", "Ellipsis", "range")
            or (
                name in namespace._used_names
                and all(
                    namespace._obj_to_name.get(node) != name
                    for node in placeholders.get(name, ())
                )
            )
        ]
        if not clashing:
            return code

        import ast

        namespace._obj_to_name, namespace._used_names, namespace._base_count = saved
        fresh = {
            name: namespace.create_name(f"{name}_param", None) for name in clashing
        }
        renamed = [
            (n, n.target) for name in clashing for n in placeholders.get(name, ())
        ]
        try:
            for node, target in renamed:
                stars = target[: len(target) - len(target.lstrip("*"))]
                # Not through Node.__setattr__: only the code generated here sees it.
                object.__setattr__(node, "target", stars + fresh[target.lstrip("*")])
            if info is not None:
                self._codegen.pytree_info = info._replace(  # type: ignore[attr-defined]
                    orig_args=[fresh.get(arg, arg) for arg in orig_args]
                )
            new_code = generate(*args, **kwargs)
        finally:
            for node, target in renamed:
                object.__setattr__(node, "target", target)
            if info is not None:
                self._codegen.pytree_info = info  # type: ignore[attr-defined]

        fn = next(
            s for s in ast.parse(new_code.src).body if isinstance(s, ast.FunctionDef)
        )
        uses: dict[str, list[ast.Name]] = {}
        for stmt in fn.body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name):
                    uses.setdefault(n.id, []).append(n)
        if not any(name in uses for name in clashing):
            return code  # each name is only ever the parameter
        params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        params += [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
        edits = []
        for name in clashing:
            if name in uses:
                alias = namespace.create_name(name, None)
                if not any(isinstance(n.ctx, ast.Store) for n in uses[name]):
                    new_code.globals[alias] = new_code.globals.get(
                        name, getattr(builtins, name, None)
                    )
                edits += [
                    (n.lineno, n.col_offset, n.end_col_offset, alias)
                    for n in uses[name]
                ]
            tmp = fresh[name]
            edits += [
                (n.lineno, n.col_offset, n.end_col_offset, name)
                for n in uses.get(tmp, ())
            ]
            edits += [
                (a.lineno, a.col_offset, a.col_offset + len(tmp.encode()), name)
                for a in params
                if a.arg == tmp
            ]
        lines = new_code.src.split("\\n")
        for lineno, start, end, text in sorted(edits, reverse=True):
            line = lines[lineno - 1].encode()
            lines[lineno - 1] = (line[:start] + text.encode() + line[end:]).decode()
        new_code.src = "\\n".join(lines)
        return new_code

'''

PYTHON_CODE_STOCK = "        return self._codegen._gen_python_code(\n"
PYTHON_CODE_KEEPING = """\
        return self._keep_parameter_names(
            namespace,
            self._codegen._gen_python_code,
"""

_MAP_IMPL = """\
            elif node.target._name == "map_impl":
                body_graph, array, args = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, body_graph.target), array + args)
                )
"""
_AUTOCAST_BRANCH = """\
            elif node.target._name == "wrap_with_autocast":
                # (device_type, dtype, enabled, cache_enabled, body, *operands)
                subgraph, phs = node._args[4], node._args[5:]
                subgraph_ph_tuples.append((getattr(gm, subgraph.target), phs))
"""
_WHILE_LOOP_BRANCH = """\
            elif node.target._name == "while_loop":
                cond_graph, body_graph, carried, additional = node._args
                phs = (*carried, *additional)
                subgraph_ph_tuples.append((getattr(gm, cond_graph.target), phs))
                subgraph_ph_tuples.append((getattr(gm, body_graph.target), phs))
"""
_SCAN_BRANCH = {
    "init, xs, additional": """\
            elif node.target._name == "scan":
                # combine_fn(*init, *xs[i], *additional_inputs)
                combine_graph, init, xs, additional = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, combine_graph.target), (*init, *xs, *additional))
                )
""",
    "init, xs, dim, reverse, additional": """\
            elif node.target._name == "scan":
                # combine_fn(*init, *xs[i], *additional_inputs)
                combine_graph, init, xs, _dim, _reverse, additional = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, combine_graph.target), (*init, *xs, *additional))
                )
""",
    None: "",
}


def _hop_branch_alts() -> list[Alt]:
    """The HOP branches of _name_hoo_subgraph_placeholders, for the HOPs a release has."""
    alts = []
    for path in ("torch/_export/utils.py", "torch/export/exported_program.py"):
        for autocast in (True, False):
            for layout, scan in _SCAN_BRANCH.items():
                notes = []
                if not autocast:
                    notes.append("This release has no wrap_with_autocast HOP: no branch for it.")
                if layout is None:
                    notes.append("This release has no scan HOP: no branch for it.")
                elif layout != "init, xs, additional":
                    notes.append(f"scan takes (combine_fn, {layout}_inputs) in this release.")
                if path != "torch/_export/utils.py":
                    notes.append(
                        "_name_hoo_subgraph_placeholders and _rename_without_collisions "
                        f"live in {path} in this release."
                    )

                def when(s, autocast=autocast, layout=layout):
                    return _has_autocast_hop(s) == autocast and _scan_layout(s) == layout

                new = _MAP_IMPL + (_AUTOCAST_BRANCH if autocast else "") + _WHILE_LOOP_BRANCH + scan
                alts.append(Alt(path, _MAP_IMPL, new, when=when, note=" ".join(notes)))
    return alts


_IN_METHOD = (
    "The run_decompositions renaming is done inside ExportedProgram.run_decompositions "
    "in this release (there is no _decompose_and_get_gm_with_new_signature_constants)."
)


def _assign_in(path_alts: list[tuple[str, int]], old: str, new: str, note: str = "") -> tuple[Alt, ...]:
    """The same edit at each (path, extra indentation) where releases have it; code
    indented one level deeper is the run_decompositions method of older releases."""
    return tuple(
        Alt(
            path,
            _indent(old, extra),
            _indent(new, extra),
            note=" ".join(filter(None, [note, _IN_METHOD if extra else ""])),
        )
        for path, extra in path_alts
    )


_UTILS = "torch/_export/utils.py"
_EP = "torch/export/exported_program.py"
# The subgraph-placeholder loop of _name_hoo_subgraph_placeholders (torch/_export/utils.py) as the
# newer releases ship it, and as the edit below leaves it; upstream/stack_recipe.py splits the
# change between commits 1 and 3.
HOO_LOOP_STOCK = """\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs):  # placeholder, retain name
                name_map[node.name] = hoo_phs[i].name
                node.name = node.target = hoo_phs[i].name
                _build_cache(node.name, find_available, used_names)
            else:  # non-placeholder, check for collisions
                node.name = _rename_without_collisions(
                    name_map, find_available, used_names, node.name, node.name
                )
"""
HOO_LOOP_OPERANDS = """\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs) and node.op == "placeholder":  # take operand name
                operand = hoo_phs[i]
                # an operand passed twice gets a suffixed second placeholder
                name = _rename_without_collisions(
                    name_map,
                    find_available,
                    used_names,
                    node.name,
                    operand.name if isinstance(operand, torch.fx.Node) else node.name,
                    is_placeholder=True,
                )
                node._assign_name(name)
                node.target = name
            else:  # non-placeholder, check for collisions
                node._assign_name(
                    _rename_without_collisions(
                        name_map, find_available, used_names, node.name, node.name
                    )
                )
"""
_OLD_HOO_LOOP = """\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs):  # placeholder, retain name
                name_map[node.name] = hoo_phs[i].name
                node.name = node.target = hoo_phs[i].name
            else:  # non-placeholder, check for collisions
                node.name = _rename_without_collisions(name_map, node.name, node.name)
"""
_OLD_HOO_LOOP_NEW = """\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs) and node.op == "placeholder":  # take operand name
                operand = hoo_phs[i]
                # an operand passed twice gets a suffixed second placeholder
                name = _rename_without_collisions(
                    name_map,
                    node.name,
                    operand.name if isinstance(operand, torch.fx.Node) else node.name,
                    is_placeholder=True,
                )
                node._assign_name(name)
                node.target = name
            else:  # non-placeholder, check for collisions
                node._assign_name(
                    _rename_without_collisions(name_map, node.name, node.name)
                )
"""
_RENAME_OBJECT_13 = """\
    def _rename_object(self, obj: object, name: str) -> None:
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)
"""

_NAME_ASSIGNMENT = r"^\s*[\w\[\]\.]+\.name = "


EDITS: list[Edit] = [
    Edit(
        "torch/fx/graph.py: new _Namespace._record_name",
        (
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_13,
                _RENAME_OBJECT_13 + _record_name("object", "_name_regex"),
            ),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ANY,
                _RENAME_OBJECT_ANY + _record_name("Any", "_name_regex"),
            ),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ASSERT,
                _RENAME_OBJECT_ASSERT + _record_name("Any", "_name_regex"),
                when=_has_name_regex,
            ),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ASSERT,
                _RENAME_OBJECT_ASSERT + _record_name("Any", "self._name_suffix_regex"),
                when=lambda s: not _has_name_regex(s),
                note=_NO_NAME_REGEX,
            ),
        ),
    ),
    Edit(
        "torch/fx/node.py: new Node._assign_name",
        (
            Alt(
                "torch/fx/node.py",
                """\
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)
""",
                '''\
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)

    def _assign_name(self, name: str) -> None:
        """Set this node's name to exactly ``name`` and record it in the graph's namespace.

        For passes that compute the names of many nodes at once, as torch.export
        does after tracing. Assigning ``node.name`` directly leaves ``name``
        unknown to the namespace, so a later ``create_node`` can hand it out
        again and the graph no longer lints. Unlike ``_rename``, ``name`` is not
        made unique: the caller guarantees that once it is done.
        """
        self.name = name
        self.graph._graph_namespace._record_name(self, name)
''',
            ),
        ),
    ),
    Edit(
        "torch/fx/graph.py: new Graph._keep_parameter_names",
        (
            Alt(
                "torch/fx/graph.py",
                "    def __str__(self) -> str:\n",
                KEEP_PARAMETER_NAMES + "    def __str__(self) -> str:\n",
            ),
        ),
    ),
    Edit(
        "torch/fx/graph.py: Graph._python_code generates through _keep_parameter_names",
        (Alt("torch/fx/graph.py", PYTHON_CODE_STOCK, PYTHON_CODE_KEEPING),),
    ),
    Edit(
        "_name_hoo_subgraph_placeholders: wrap_with_autocast, while_loop, scan branches",
        tuple(_hop_branch_alts()),
    ),
    Edit(
        "_name_hoo_subgraph_placeholders: name placeholders, record names",
        (
            Alt(
                _UTILS,
                HOO_LOOP_STOCK,
                HOO_LOOP_OPERANDS,
            ),
            *(Alt(path, _OLD_HOO_LOOP, _OLD_HOO_LOOP_NEW) for path in (_UTILS, _EP)),
        ),
    ),
    Edit(
        "_assign_new_node_names (placeholder_naming_pass): placeholders",
        (
            Alt(
                _UTILS,
                """\
            node.name = node.target = name_map[node.name]
""",
                """\
            node._assign_name(name_map[node.name])
            node.target = node.name
""",
            ),
        ),
    ),
    Edit(
        "_assign_new_node_names (placeholder_naming_pass): other nodes",
        (
            Alt(
                _UTILS,
                """\
        elif node.name in name_map:
            node.name = name_map[node.name]
""",
                """\
        elif node.name in name_map:
            node._assign_name(name_map[node.name])
""",
            ),
        ),
    ),
    Edit(
        "run_decompositions: placeholders",
        _assign_in(
            [(_EP, 0), (_EP, 4)],
            """\
        new_ph.name = new_ph.target = old_ph.name
""",
            """\
        new_ph._assign_name(old_ph.name)
        new_ph.target = old_ph.name
""",
        ),
    ),
    Edit(
        "run_decompositions: nodes colliding with placeholders",
        (
            Alt(
                _EP,
                """\
        node.name = _rename_without_collisions(
            name_map, find_available, used_names, node.name, node.name
        )
""",
                """\
        node._assign_name(
            _rename_without_collisions(
                name_map, find_available, used_names, node.name, node.name
            )
        )
""",
            ),
            *_assign_in(
                [(_EP, 0), (_EP, 4)],
                "        node.name = _rename_without_collisions(name_map, node.name, node.name)\n",
                "        node._assign_name(\n"
                "            _rename_without_collisions(name_map, node.name, node.name)\n"
                "        )\n",
            ),
        ),
    ),
    Edit(
        "run_decompositions: output-producing nodes",
        (
            Alt(
                _EP,
                """\
        if name is not None:
            output.name = name
""",
                """\
        if name is not None:
            output._assign_name(name)
""",
            ),
            Alt(
                _EP,
                "        if isinstance(new_outputs[i], torch.fx.Node):\n"
                "            new_outputs[i].name = name\n",
                "        if isinstance(new_outputs[i], torch.fx.Node):\n"
                "            new_outputs[i]._assign_name(name)\n",
            ),
        ),
        na=(
            "run_decompositions does not rename output-producing nodes in this release "
            "(no `.name = name` in torch/export/exported_program.py)",
            lambda s: not s.has(_EP, r"\.name = name$"),
        ),
    ),
    Edit(
        "_trace._rename_constants_nodes (strict export): lifted constants",
        (
            Alt(
                "torch/export/_trace.py",
                """\
                node.name = node.target = buffer_to_constant[node.name]
""",
                """\
                node._assign_name(buffer_to_constant[node.name])
                node.target = node.name
""",
            ),
        ),
    ),
    Edit(
        "_unlift._insert_copy_for_mutations (module()): the new output node",
        (
            Alt(
                "torch/export/_unlift.py",
                """\
        new_output.name = output_node.name
""",
                """\
        new_output._assign_name(output_node.name)
""",
            ),
        ),
        na=(
            "module()'s unlift creates its output node with graph.output(...) and never "
            "renames a node (no `.name =` in torch/export/_unlift.py)",
            lambda s: not s.has("torch/export/_unlift.py", _NAME_ASSIGNMENT),
        ),
    ),
    Edit(
        "experimental._copy_graph_module_and_signature: copied placeholders",
        (
            Alt(
                "torch/export/experimental/__init__.py",
                """\
            new_node.name = old_node.name
""",
                """\
            new_node._assign_name(old_node.name)
""",
            ),
        ),
        na=(
            "torch/export/experimental/ does not exist in this release",
            lambda s: s.text("torch/export/experimental/__init__.py") is None,
        ),
    ),
    Edit(
        "serde deserialize_graph: placeholders (second site)",
        (
            Alt(
                "torch/_export/serde/serialize.py",
                """\
                    placeholder_node.name = node_name
""",
                """\
                    placeholder_node._assign_name(node_name)
""",
            ),
        ),
        na=(
            "the deserializer names placeholders at one site only (the next edit)",
            lambda s: s.count("torch/_export/serde/serialize.py", r"^\s*placeholder_node\.name = ") == 1,
        ),
    ),
    Edit(
        "serde deserialize_graph: placeholders",
        (
            Alt(
                "torch/_export/serde/serialize.py",
                """\
                placeholder_node.name = node_name
""",
                """\
                placeholder_node._assign_name(node_name)
""",
            ),
        ),
    ),
    Edit(
        "serde sync_fx_node: every other loaded node",
        (
            Alt(
                "torch/_export/serde/serialize.py",
                """\
        # overwrite name
        fx_node.name = name
""",
                """\
        # overwrite name
        fx_node._assign_name(name)
""",
            ),
        ),
        na=(
            "the deserializer names these nodes through graph.create_node(..., name), "
            "which records them (no `fx_node.name =` in torch/_export/serde/serialize.py)",
            lambda s: not s.has("torch/_export/serde/serialize.py", r"^\s*fx_node\.name = "),
        ),
    ),
]
