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
    "parameters from shadowing its globals; name HOP subgraph placeholders after "
    "their operands"
)

# Paragraphs the release patches' message shares with the upstream stack's descriptions
# (patches/upstream/stack_recipe.py), so that one fix of the prose fixes both.
RECORDING_BUG = """\
torch.fx records a node's name in its graph's namespace when the node
is created and when Node._rename renames it, but not when code assigns
node.name directly. torch.export does that after tracing (placeholder
naming, HOP subgraph placeholders, run_decompositions, strict export's
constants, torch.export.load, the unlift of ExportedProgram.module()),
and so do inductor's pattern matcher, the HOP partitioner, compiled
autograd and others. A later create_node can then hand out one of those
names again, and the graph no longer lints:

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

RECORDING_FIX = """\
Record the name in Node.__setattr__ whenever a node the namespace knows
gets a new one, through _Namespace._rename_object, which now also raises
the per-base suffix counter to a recorded suffix (so create_name stays
O(1)). Node._rename leaves the recording to it. Names are not made
unique there: callers that rename many nodes at once still pass through
transient duplicates (placeholder naming names an input mul while an op
is still mul, then renames the op mul_1).
"""

HOP_NAMING = """\
_name_hoo_subgraph_placeholders names the placeholders of a HOP's
subgraphs after the operands they receive, but only for cond, map_impl
and wrap_with_set_grad_enabled, each in a branch of its own. Subgraphs
of wrap_with_autocast, while_loop, while_loop_stack_output, scan,
associative_scan and hints_wrapper keep arg0_1, arg1_1, ..., so the
printed program does not say which operand a placeholder is, and passes
that map subgraph placeholders to operands by name fail (ExecuTorch's
DecomposeWrapWithAutocast: KeyError: 'arg0_1').

Replace the branches with one table, _HOP_SUBGRAPH_OPERANDS: for each
HOP, a function of its node's args giving its subgraphs and the
operands their placeholders receive. invoke_subgraph is not in it: its
subgraph is shared by every call of the same function, so one call's
operands cannot name it. An operand passed twice (a while_loop carrying
(y, y); associative_scan's combine_fn, which takes two elements of each
xs) gives the second placeholder a suffixed name instead of a duplicate,
and only placeholders take operand names. An operand that is not a node
(a Python scalar, which the subgraph may carry as a SymInt that changes
from one iteration to the next) has no name to give: its placeholder
keeps the name tracing gave it, the user's variable name where dynamo
saw one.
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
global of the generated code, or a local that another node is given
before the parameter is read), the code is generated again with those parameters under fresh names, every
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

{RECORDING_FIX}
A name torch.export keeps can also change what module() computes:

{SHADOWING_EXAMPLE}
{SHADOWING_CAUSE}
{SHADOWING_FIX}
{HOP_NAMING}
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
    new: str | Callable[[Sources], str]  # a function: the text depends on the release's features
    when: Feature | None = None  # only on a release with this feature
    count: int = 1
    note: str | Callable[[Sources], str] = ""  # why this release needs this form (its message says so)

    def resolved(self, s: Sources) -> Alt:
        """This alternative with ``new`` and ``note`` as they are for the release ``s``."""
        new = self.new(s) if callable(self.new) else self.new
        note = self.note(s) if callable(self.note) else self.note
        return dataclasses.replace(self, new=new, note=note)


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
    "torch.fx.graph has no _name_regex in this release: _rename_object parses "
    "suffixes with _Namespace._name_suffix_regex."
)

# _Namespace._rename_object as releases ship it: it records a node's new name (Node._rename;
# with the fix, every assignment of node.name).
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
# ... and what the fix adds to it: the per-base counter follows a recorded suffix, so that
# create_name stays O(1) after a name such as mul_7 is recorded.
_BASE_COUNT = """\
        match = REGEX.match(name)
        if match is not None and match.group(2) is not None:
            base, num = match.group(1), int(match.group(2))
            if num > self._base_count.get(base, 0):
                self._base_count[base] = num
"""


def _with_base_count(rename_object: str, regex: str) -> str:
    return rename_object + _BASE_COUNT.replace("REGEX", regex)


# Node.__setattr__ records every new name (a node's first name is recorded by
# Graph.create_node), so Node._rename no longer records its own.
SETATTR_STOCK = "        object.__setattr__(self, name, value)\n"
SETATTR_RECORDING = """\
        object.__setattr__(self, name, value)
        if name == "name":
            # Record the new name, so that create_name never hands it out again.
            namespace = getattr(self.graph, "_graph_namespace", None)
            if namespace is not None and self in namespace._obj_to_name:
                namespace._rename_object(self, value)
"""
RENAME_STOCK = """\
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)
"""
RENAME_RECORDED_BY_SETATTR = """\
        self.name = name  # __setattr__ records it
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

        def assigned_before_read(name: str) -> bool:
            # A local called ``name`` overwrites the parameter only if another
            # node's assignment to it runs before a placeholder reads the
            # parameter. pytree_info.orig_args are read in the first statement.
            pending = set(placeholders.get(name, ()))
            if not pending or name not in namespace._used_names:
                return False
            assigned = False
            for node in self.nodes:
                if node in pending:
                    if assigned:
                        return True
                    pending.discard(node)
                    if not pending:
                        return False
                elif namespace._obj_to_name.get(node) == name:
                    assigned = True
            return False

        clashing = [
            name
            for name in names
            if name in code.globals
            or name in ("getattr", "slice", "Ellipsis", "range")
            or assigned_before_read(name)
        ]
        if not clashing:
            return code

        import ast

        namespace._obj_to_name, namespace._used_names, namespace._base_count = saved
        fresh = {
            name: namespace.create_name(f"{name}_param", None) for name in clashing
        }
        renamed = [
            (n, str(n.target)) for name in clashing for n in placeholders.get(name, ())
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

# _name_hoo_subgraph_placeholders (torch/_export/utils.py; torch/export/exported_program.py in
# 2.4.1): one table says, for every HOP whose subgraphs receive its operands, which subgraphs and
# which operands; it replaces the cond / wrap_with_set_grad_enabled / map_impl branches.
_HOO_CHAIN_STOCK = """\
            # HOO subgraphs have varying input schemas, so we enumerate them there
            if node.target._name == "cond":
                _, true_graph, false_graph, cond_args = node._args
                subgraph_ph_tuples.append((getattr(gm, true_graph.target), cond_args))
                subgraph_ph_tuples.append((getattr(gm, false_graph.target), cond_args))
            elif node.target._name == "wrap_with_set_grad_enabled":
                subgraph, phs = node._args[1], node._args[2:]
                subgraph_ph_tuples.append((getattr(gm, subgraph.target), phs))
            elif node.target._name == "map_impl":
                body_graph, array, args = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, body_graph.target), array + args)
                )
"""
_HOO_CHAIN_TABLE = """\
            # HOO subgraphs have varying input schemas: the table gives each
            # one's subgraphs and the operands their placeholders receive
            subgraphs_and_operands = _HOP_SUBGRAPH_OPERANDS.get(node.target._name)
            if subgraphs_and_operands is not None:
                subgraphs, operands = subgraphs_and_operands(*node._args)
                for subgraph in subgraphs:
                    subgraph_ph_tuples.append((getattr(gm, subgraph.target), operands))
"""
_HOO_DEF = "def _name_hoo_subgraph_placeholders(gm: torch.fx.GraphModule) -> None:\n"
_HOP_TABLE_HEAD = """\
# For each higher-order op whose subgraphs receive its operands as their
# placeholders, in order: a function of the op node's args that returns
# (the subgraphs, the operands). invoke_subgraph is not listed: its subgraph
# is shared by every call of the same function, so one call's operands
# cannot name it.
_HOP_SUBGRAPH_OPERANDS: "dict[str, Callable[..., Any]]" = {
    "cond": lambda pred, true_fn, false_fn, operands: (
        (true_fn, false_fn),
        operands,
    ),
    "wrap_with_set_grad_enabled": lambda enabled, body, *operands: (
        (body,),
        operands,
    ),
    "map_impl": lambda body, xs, args: ((body,), (*xs, *args)),
"""
_HOP_ENTRIES = {
    "wrap_with_autocast": """\
    "wrap_with_autocast": lambda device, dtype, enabled, cache, body, *operands: (
        (body,),
        operands,
    ),
""",
    "while_loop": """\
    "while_loop": lambda cond_fn, body_fn, carried, additional: (
        (cond_fn, body_fn),
        (*carried, *additional),
    ),
""",
    "while_loop_stack_output": """\
    "while_loop_stack_output": lambda cond_fn, body_fn, carried, additional: (
        (cond_fn, body_fn),
        (*carried, *additional),
    ),
""",
    "scan": """\
    "scan": lambda combine_fn, init, xs, additional: (
        (combine_fn,),
        (*init, *xs, *additional),
    ),
""",
    "scan dim reverse": """\
    "scan": lambda combine_fn, init, xs, dim, reverse, additional: (
        (combine_fn,),
        (*init, *xs, *additional),
    ),
""",
    # combine_fn takes two elements of each xs, then the additional inputs
    "associative_scan": """\
    "associative_scan": lambda combine_fn, xs, additional: (
        (combine_fn,),
        (*xs, *xs, *additional),
    ),
""",
    "associative_scan dim": """\
    "associative_scan": lambda combine_fn, xs, dim: ((combine_fn,), (*xs, *xs)),
""",
    "hints_wrapper": """\
    "hints_wrapper": lambda body, args, kwargs: ((body,), args),
""",
}

_WHILE_LOOP = "torch/_higher_order_ops/while_loop.py"
_ASSOCIATIVE_SCAN = "torch/_higher_order_ops/associative_scan.py"


def _associative_scan_layout(s: Sources) -> str | None:
    if s.has(_ASSOCIATIVE_SCAN, r"super\(\).__call__\(combine_fn, xs, additional_inputs\)"):
        return "associative_scan"
    if s.has(_ASSOCIATIVE_SCAN, r"def __call__\(self, combine_fn, (input|xs), dim\)") or s.has(
        _ASSOCIATIVE_SCAN, r"^    args = \(combine_graph, input, dim\)$"
    ):
        return "associative_scan dim"
    return None


def _hop_entries(s: Sources) -> tuple[list[str], list[str]]:
    """The table entries for the HOPs this release has, and notes on the ones it lacks."""
    keys, notes = [], []
    if _has_autocast_hop(s):
        keys.append("wrap_with_autocast")
    else:
        notes.append("wrap_with_autocast")
    keys.append("while_loop")
    if s.has(_WHILE_LOOP, r"^while_loop_stack_output_op = |^while_loop_stack_output = "):
        keys.append("while_loop_stack_output")
    else:
        notes.append("while_loop_stack_output")
    layout = _scan_layout(s)
    if layout == "init, xs, additional":
        keys.append("scan")
    elif layout == "init, xs, dim, reverse, additional":
        keys.append("scan dim reverse")
    elif layout is None:
        notes.append("scan")
    else:
        raise SystemExit(f"{s.site}: scan takes its arguments in a form the recipe does not know")
    assoc = _associative_scan_layout(s)
    if assoc is not None:
        keys.append(assoc)
    else:
        notes.append("associative_scan")
    if s.has("torch/_higher_order_ops/hints_wrap.py", r"new_args: tuple = \(body_graph, flat_args, \{\}\)"):
        keys.append("hints_wrapper")
    else:
        notes.append("hints_wrapper")
    return keys, notes


def _hop_table(s: Sources) -> str:
    keys, _ = _hop_entries(s)
    return _HOP_TABLE_HEAD + "".join(_HOP_ENTRIES[k] for k in keys) + "}\n\n\n" + _HOO_DEF


def _hop_table_note(s: Sources) -> str:
    keys, missing = _hop_entries(s)
    notes = []
    if missing:
        notes.append(f"This release has no {', '.join(missing)} HOP: the table has no entry for it.")
    if "scan dim reverse" in keys:
        notes.append("scan takes (combine_fn, init, xs, dim, reverse, additional_inputs) in this release.")
    if "associative_scan dim" in keys:
        notes.append("associative_scan takes (combine_fn, xs, dim) in this release.")
    return " ".join(notes)


_IN_EXPORTED_PROGRAM = (
    "_name_hoo_subgraph_placeholders and _rename_without_collisions live in "
    "torch/export/exported_program.py in this release."
)


_UTILS = "torch/_export/utils.py"
_EP = "torch/export/exported_program.py"
# The subgraph-placeholder loop of _name_hoo_subgraph_placeholders (torch/_export/utils.py) as the
# newer releases ship it, and as the edit below leaves it (upstream/stack_recipe.py: commit 3).
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
                # an operand passed twice gets a suffixed second placeholder; one
                # that is not a node (a Python scalar) keeps the traced name
                node.name = node.target = _rename_without_collisions(
                    name_map,
                    find_available,
                    used_names,
                    node.name,
                    operand.name if isinstance(operand, torch.fx.Node) else node.name,
                    is_placeholder=True,
                )
            else:  # non-placeholder, check for collisions
                node.name = _rename_without_collisions(
                    name_map, find_available, used_names, node.name, node.name
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
                # an operand passed twice gets a suffixed second placeholder; one
                # that is not a node (a Python scalar) keeps the traced name
                node.name = node.target = _rename_without_collisions(
                    name_map,
                    node.name,
                    operand.name if isinstance(operand, torch.fx.Node) else node.name,
                    is_placeholder=True,
                )
            else:  # non-placeholder, check for collisions
                node.name = _rename_without_collisions(name_map, node.name, node.name)
"""


EDITS: list[Edit] = [
    Edit(
        "torch/fx/graph.py: _Namespace._rename_object raises the per-base counter",
        (
            Alt("torch/fx/graph.py", _RENAME_OBJECT, _with_base_count(_RENAME_OBJECT, "_name_regex")),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ANY,
                _with_base_count(_RENAME_OBJECT_ANY, "_name_regex"),
            ),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ASSERT,
                _with_base_count(_RENAME_OBJECT_ASSERT, "_name_regex"),
                when=_has_name_regex,
            ),
            Alt(
                "torch/fx/graph.py",
                _RENAME_OBJECT_ASSERT,
                _with_base_count(_RENAME_OBJECT_ASSERT, "self._name_suffix_regex"),
                when=lambda s: not _has_name_regex(s),
                note=_NO_NAME_REGEX,
            ),
        ),
    ),
    Edit(
        "torch/fx/node.py: Node._rename leaves the recording to __setattr__",
        (Alt("torch/fx/node.py", RENAME_STOCK, RENAME_RECORDED_BY_SETATTR),),
    ),
    Edit(
        "torch/fx/node.py: Node.__setattr__ records a new name",
        (Alt("torch/fx/node.py", SETATTR_STOCK, SETATTR_RECORDING),),
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
        "_name_hoo_subgraph_placeholders: the table of HOP subgraphs and their operands",
        tuple(
            Alt(path, _HOO_DEF, _hop_table, note=_hop_table_note)
            for path in ("torch/_export/utils.py", "torch/export/exported_program.py")
        ),
    ),
    Edit(
        "_name_hoo_subgraph_placeholders: HOP subgraphs found through the table",
        (
            Alt(_UTILS, _HOO_CHAIN_STOCK, _HOO_CHAIN_TABLE),
            Alt(_EP, _HOO_CHAIN_STOCK, _HOO_CHAIN_TABLE, note=_IN_EXPORTED_PROGRAM),
        ),
    ),
    Edit(
        "_name_hoo_subgraph_placeholders: name placeholders after their operands",
        (
            Alt(_UTILS, HOO_LOOP_STOCK, HOO_LOOP_OPERANDS),
            *(Alt(path, _OLD_HOO_LOOP, _OLD_HOO_LOOP_NEW) for path in (_UTILS, _EP)),
        ),
    ),
]
