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
    "[export] Record the node names torch.export assigns and keep them legal; "
    "name autocast, while_loop and scan subgraph placeholders"
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

An input called nan is wrong the same way; device, torch, pytree and
fx_pytree make module() crash; inside a cond branch (whose placeholders
take the operands' names) the same happens.
"""

SHADOWING_RULE = """\
Add torch.fx.graph._shadows_generated_code(name): whether a node or
parameter of that name changes what the generated code means or makes
it invalid. It is true for a name that is not an identifier, a keyword,
__debug__, self (the forward's first parameter), a custom builtin other
than NoneType (which only appears in annotations of locals, never
evaluated; read from _custom_builtins when called, so one registered
later counts too), and getattr, slice and Ellipsis, which the code
generator writes out itself. _rename_without_collisions, which computes
every name placeholder naming and HOP subgraph naming assign, suffixes
such a name as it suffixes a taken one (inf -> inf_1); the graph
signature follows through name_map as before. Every other name,
builtins such as input included, is kept as torch names it today.
"""

MESSAGE = f"""{SUBJECT}

{RECORDING_BUG}
Backends work around it by writing the namespace's private state
(ExecuTorch's Qualcomm and Samsung pass managers).

The same direct assignment also skips the namespace's legality check.
Most of what create_name refuses is harmless in a name torch.export
keeps (a builtin: the argument of nn.Sequential, nn.Linear and
nn.Conv2d is called input, and stays input), but a name the generated
code reads as a global is not: inf, nan, device, torch, pytree,
fx_pytree. An input called inf becomes a parameter of the generated
forward and shadows the global inf, so ExportedProgram.module()
silently computes the wrong result:

{SHADOWING_EXAMPLE}
{SHADOWING_RULE}
The parameters of the forward module() generates are the user's
argument names (forward_arg_names, still recorded as the user wrote
them): _get_codegen, and _swap for its placeholders, take them through
the new _legal_forward_arg_names, which replaces the ones that shadow
(inf -> inf_1). The program's guards name the arguments as the shape
environment knows them (L['inf']); module() now rewrites them to the
forward's parameter names before it turns them into the guards
function (otherwise, with dynamic shapes, module() would raise
NameError: name 'L' is not defined). _get_input_paths binds example
kwargs whose name changed by position. Calls by position are unchanged;
a keyword argument renamed this way (an input passed as inf=...) is no
longer accepted by keyword by module(), which fails loudly instead of
computing a wrong result.

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
def _typing_list(s: Sources, path: str) -> bool:
    """Whether ``path`` annotates with ``typing.List`` (a release that still supports Python 3.8)."""
    return s.has(path, r"^from typing import .*\bList\b")


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
_OLD_RENAME = (
    "_rename_without_collisions is the older (name_map, orig_name, name, "
    "is_placeholder) helper here (it searches name_map.values()); the "
    "legality check goes into its collision test."
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

_SHADOWS_GENERATED_CODE = '''\
def _shadows_generated_code(name: str) -> bool:
    """Whether a node, or a parameter of the ``forward`` torch.fx generates, called
    ``name`` would change what the generated code means or make it invalid.

    For names ``_Namespace.create_name`` did not hand out, such as the user's
    argument names that torch.export keeps. True when ``name``:

    - is not a valid parameter name: not an identifier, a keyword, or
      ``__debug__``;
    - is ``self``, the first parameter of the generated ``forward``;
    - is a global the generated code reads when it runs: a custom builtin
      registered above (``inf``, ``nan``, ``torch``, ``device``, ``pytree``,
      ``fx_pytree``, or one registered later) other than ``NoneType``, which
      appears only in annotations of local variables (never evaluated); or a
      builtin the code generator writes out itself: ``getattr`` (attribute
      paths that are not identifiers), ``slice`` and ``Ellipsis`` (in argument
      reprs).

    Every other builtin (``input``, ``type``, ``id``, ...) is read only by code
    that calls it, which a graph from torch.export does not, so a name that
    shadows it changes nothing; ``create_name`` refuses those names anyway for
    the names it makes up.
    """
    if not name.isidentifier() or keyword.iskeyword(name):
        return True
    if name in ("__debug__", "self", "getattr", "slice", "Ellipsis"):
        return True
    return name in _custom_builtins and name != "NoneType"


'''

_LEGAL_FORWARD_ARG_NAMES = '''\
def _legal_forward_arg_names(names: list[str]) -> list[str]:
    """The user's argument names (forward_arg_names) as parameters of the forward
    that module() generates: a name that would shadow a global of the generated
    code or is not a valid parameter (torch.fx.graph._shadows_generated_code:
    inf, torch, self, a keyword, ...) is replaced as create_name replaces it
    (inf -> inf_1); every other name, builtins such as input included, is kept.
    """
    namespace = torch.fx.graph._Namespace()
    namespace._used_names.update([*names, "self"])
    return [
        namespace.create_name(name, None)
        if torch.fx.graph._shadows_generated_code(name)
        else name
        for name in names
    ]


'''

_GUARDS_RENAME = """\
        # ep._guards_code names the user's arguments (L['inf']); the forward
        # takes some of them under other names (_legal_forward_arg_names)
        ep_guards_code = ep._guards_code
        params = SIGNATURE.parameters
        for name, param in zip(forward_arg_names or (), params):
            if name != param:
                ep_guards_code = [
                    g.replace(f"L['{name}']", f"L['{param}']") for g in ep_guards_code
                ]
"""

_KWARGS_REBIND = """\
    args, kwargs = example_inputs
    params = list(signature.parameters)
    if kwargs and len(params) == len(args) + len(kwargs):
        # forward_arg_names end with the kwargs in order; some may have been
        # renamed (_legal_forward_arg_names)
        kwargs = dict(zip(params[len(args) :], kwargs.values()))
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
_OLD_COLLISION_TEST = """\
    if name in name_map.values():
        # non-placeholder nodes may be suffixed with the count
"""
_OLD_COLLISION_TEST_NEW = """\
    # A name that would change what the code torch.fx generates means (inf,
    # torch, device, self, a keyword, ...) is suffixed as if it were taken.
    if name in name_map.values() or torch.fx.graph._shadows_generated_code(name):
        # non-placeholder nodes may be suffixed with the count
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
        "torch/fx/graph.py: new _shadows_generated_code",
        (
            Alt(
                "torch/fx/graph.py",
                "def _is_magic(x: str) -> bool:\n",
                _SHADOWS_GENERATED_CODE + "def _is_magic(x: str) -> bool:\n",
            ),
        ),
    ),
    Edit(
        "_rename_without_collisions: suffix a name that shadows generated code like a taken one",
        (
            Alt(
                _UTILS,
                """\
    new_name = name
    if new_name in used_names:
        new_name = f"{key}_{find_available[key] + 1}"
""",
                """\
    new_name = name
    # A name that would change what the code torch.fx generates means (inf,
    # torch, device, self, a keyword, ...) is suffixed as if it were taken.
    if new_name in used_names or torch.fx.graph._shadows_generated_code(new_name):
        new_name = f"{key}_{find_available[key] + 1}"
""",
            ),
            *(
                Alt(path, _OLD_COLLISION_TEST, _OLD_COLLISION_TEST_NEW, note=_OLD_RENAME)
                for path in (_UTILS, _EP)
            ),
        ),
    ),
    Edit(
        "_unlift: new _legal_forward_arg_names",
        (
            Alt(
                "torch/export/_unlift.py",
                "def _get_codegen(\n",
                _LEGAL_FORWARD_ARG_NAMES + "def _get_codegen(\n",
                when=lambda s: not _typing_list(s, "torch/export/_unlift.py"),
            ),
            Alt(
                "torch/export/_unlift.py",
                "def _get_codegen(\n",
                _LEGAL_FORWARD_ARG_NAMES.replace("list[str]", "List[str]") + "def _get_codegen(\n",
                when=lambda s: _typing_list(s, "torch/export/_unlift.py"),
                note="torch/export/_unlift.py annotates with typing.List in this release "
                "(list[str] needs Python 3.9).",
            ),
        ),
    ),
    Edit(
        "_unlift._get_codegen: module()'s forward takes legal parameter names",
        (
            Alt(
                "torch/export/_unlift.py",
                """\
    if forward_arg_names:
        names = forward_arg_names
""",
                """\
    if forward_arg_names:
        names = _legal_forward_arg_names(forward_arg_names)
""",
            ),
        ),
    ),
    Edit(
        "_unlift: guards name the forward's parameters",
        (
            Alt(
                "torch/export/_unlift.py",
                "        ep_guards_code = _force_ep_signature_match(ep._guards_code, input_paths)\n",
                _GUARDS_RENAME.replace("SIGNATURE", "sig")
                + "        ep_guards_code = _force_ep_signature_match(ep_guards_code, input_paths)\n",
            ),
            Alt(
                "torch/export/_unlift.py",
                "        guards_code.extend(ep._guards_code)\n",
                _GUARDS_RENAME.replace("SIGNATURE", "inspect.signature(unlift_gm.forward)")
                + "        guards_code.extend(ep_guards_code)\n",
            ),
        ),
        na=(
            "module() turns no guards code of the exported program into code "
            "(no _guards_code in torch/export/_unlift.py)",
            lambda s: not s.has("torch/export/_unlift.py", r"_guards_code"),
        ),
    ),
    Edit(
        "_swap: placeholders of the swapped module take legal names",
        (
            Alt(
                "torch/export/_swap.py",
                """\
    for arg in forward_arg_names:
        with gm.graph.inserting_before(old_placeholders[0]):
""",
                """\
    from torch.export._unlift import _legal_forward_arg_names

    for arg in _legal_forward_arg_names(forward_arg_names):
        with gm.graph.inserting_before(old_placeholders[0]):
""",
            ),
        ),
        na=(
            "torch/export/_swap.py (module swapping) does not exist in this release",
            lambda s: s.text("torch/export/_swap.py") is None,
        ),
    ),
    Edit(
        "_unlift._get_input_paths: bind renamed kwargs by position",
        (
            Alt(
                "torch/export/_unlift.py",
                """\
    args, kwargs = example_inputs
    binded = signature.bind(*args, **kwargs)
""",
                """\
    args, kwargs = example_inputs
    params = list(signature.parameters)
    if kwargs and len(params) == len(args) + len(kwargs):
        # forward_arg_names end with the kwargs in order; some may have been
        # renamed (_legal_forward_arg_names)
        kwargs = dict(zip(params[len(args) :], kwargs.values()))
    binded = signature.bind(*args, **kwargs)
""",
            ),
            Alt(
                "torch/export/_unlift.py",
                "    args, kwargs = example_inputs\n    ctx = signature.bind(*args, **kwargs).arguments\n",
                _KWARGS_REBIND + "    ctx = signature.bind(*args, **kwargs).arguments\n",
            ),
        ),
        na=(
            "module() does not bind example inputs to its forward's signature "
            "(no signature.bind in torch/export/_unlift.py): nothing to re-bind",
            lambda s: not s.has("torch/export/_unlift.py", r"signature\.bind\("),
        ),
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
            *(Alt(path, _OLD_HOO_LOOP, _OLD_HOO_LOOP_NEW, note=_OLD_RENAME) for path in (_UTILS, _EP)),
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
                note=_OLD_RENAME,
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
