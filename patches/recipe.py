# ruff: noqa: E501 - torch source lines, quoted as the releases have them
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
Record the name in Node.__setattr__ when a str name changes on a node
the namespace knows, through _Namespace._rename_object. That method
now returns early for a name already in use (create_name handed it
out, as in Node._rename, which still records as before and so still
raises for a node the namespace does not know), and otherwise raises
the per-base suffix counter to the recorded suffix, so that create_name
does not walk the suffixes one by one. Names are not made unique there:
placeholder naming names an input mul while an op is still mul, then
renames the op mul_1.
"""

HOP_NAMING = """\
_name_hoo_subgraph_placeholders names the placeholders of a HOP's
subgraphs after the operands they receive, but only for cond, map_impl
and wrap_with_set_grad_enabled, each in a branch of its own. Subgraphs
of wrap_with_autocast, while_loop, while_loop_stack_output, scan,
associative_scan, hints_wrapper and switch keep arg0_1, arg1_1, ..., so
the printed program does not say which operand a placeholder is, and
passes that map subgraph placeholders to operands by name fail
(ExecuTorch's DecomposeWrapWithAutocast: KeyError: 'arg0_1').

Replace the branches with one table, _HOP_SUBGRAPH_OPERANDS: for each
HOP, a function of its node's args giving its subgraphs and the
operands their placeholders receive. A node is looked up only if its
target is the registered HOP of that name, and one whose args fit no
entry (another layout) is left as it is instead of failing the export.
The comment above the table says why the other HOPs are not in it. An
operand passed twice (a while_loop carrying (y, y); associative_scan's
combine_fn, which takes two elements of each xs) gives the second
placeholder a suffixed name instead of a duplicate, and only
placeholders take operand names. An operand that is not a node (a
Python scalar, which the subgraph may carry as a SymInt that changes
from one iteration to the next) has no name to give: its placeholder
keeps the name tracing gave it.
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
CodeGen._gen_python_code now reserves the parameters' names in the
code's namespace before it adds any global, and writes every global it
refers to under the name add_global returns: the inf/nan reprs, the
torch. of qualified names, dtypes and other torch reprs, device(...),
the getattr/slice/range/Ellipsis/complex it writes out, fx_pytree and
pytree in the pytree code generator, next/iter in the boxed one, and
the profiler's locals. A placeholder named like its parameter keeps
that name as its local. Where no parameter takes such a name the code
is byte for byte what it was, and it is generated once, in one pass
over the nodes:

    def forward(self, inf):
        inf_2 = inf
        mul = inf_2 * inf_1        # inf_1 is math.inf
        add = mul + inf_2

No node, argument, input spec or signature is renamed: module() still
takes an input called inf by position and by keyword. Pickling and
to_folder bind a builtin the code names otherwise
(graph_module._renamed_builtin).
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
    """``rename_object`` that leaves a name create_name handed out (or one recorded before) as it
    is, and raises the per-base counter to the suffix of a name it records for the first time."""
    head, tail = rename_object.split("        self._used_names.add(name)\n")
    return (
        head
        + _ALREADY_USED
        + "        self._used_names.add(name)\n"
        + tail
        + _BASE_COUNT.replace("REGEX", regex)
    )


_ALREADY_USED = """\
        if name in self._used_names:
            return  # handed out by create_name or recorded before: counted then
"""


# Node.__setattr__ records every new name of a node the namespace knows (a node's first name is
# recorded by Graph.create_node; Node._rename still records its own, now a no-op second time).
SETATTR_STOCK = "        object.__setattr__(self, name, value)\n"
SETATTR_RECORDING = """\
        # A new name is recorded, so that create_name never hands it out again
        record = (
            name == "name"
            and isinstance(value, str)
            and value != getattr(self, "name", value)
        )
        object.__setattr__(self, name, value)
        if record:
            namespace = getattr(self.graph, "_graph_namespace", None)
            if namespace is not None and self in namespace._obj_to_name:
                namespace._rename_object(self, value)
"""

# --- Part 2: the code generator keeps its parameters apart from every other name it writes
# (torch/fx/graph.py, torch/fx/graph_module.py). Each pair is (stock lines, fixed lines).
_FX = "torch/fx/graph.py"
_FX_MODULE = "torch/fx/graph_module.py"

CODEGEN_FORMAT_TARGET = (
    """\
def _format_target(base: str, target: str) -> str:
    elems = target.split(".")
    r = base
    for e in elems:
        if not e.isidentifier():
            r = f'getattr({r}, "{e}")'
""",
    """\
def _format_target(base: str, target: str, getattr_name: str = "getattr") -> str:
    elems = target.split(".")
    r = base
    for e in elems:
        if not e.isidentifier():
            r = f'{getattr_name}({r}, "{e}")'
""",
)

CODEGEN_RESERVE = (
    """\
        def add_global(name_hint: str, obj: Any) -> str:
""",
    """\
        # The parameters of the generated function are written as the graph
        # names them (callers may pass them by keyword), not through
        # `namespace`. Reserve their names before anything else is named, so
        # that no global or local of the body takes one; a placeholder named
        # like its parameter keeps that name as its local.
        pytree_info = getattr(self, "pytree_info", None)
        parameters = [root_module, "self", *getattr(pytree_info, "orig_args", ())]
        own_names: dict[Node, str] = {}
        for node in nodes:
            if node.op == "placeholder" and isinstance(node.target, str):
                name = node.target.replace("*", "")
                parameters.append(name)
                if name == node.name and name not in _illegal_names:
                    own_names[node] = name
        for name in parameters:
            if not name.isascii():  # Python compiles an identifier in NFKC
                import unicodedata

                name = unicodedata.normalize("NFKC", name)
            namespace._used_names.add(name)
        for node, name in own_names.items():
            if name.isascii() and name.isidentifier():  # create_name would keep it
                namespace._obj_to_name.setdefault(node, name)
        # The names under which the code refers to the globals it writes
        # itself: their own, unless a parameter has it.
        global_names: dict[str, str] = {}

        def add_global(name_hint: str, obj: Any) -> str:
""",
)

# releases before 2.13 declare add_global without a return type
CODEGEN_RESERVE_UNTYPED = tuple(
    t.replace("def add_global(name_hint: str, obj: Any) -> str:", "def add_global(name_hint: str, obj: Any):")
    for t in CODEGEN_RESERVE
)

# releases before 2.7 ask the namespace (_Namespace._is_illegal_name), not _illegal_names
CODEGEN_RESERVE_NAMESPACE_CHECK = tuple(
    t.replace("name not in _illegal_names", "not namespace._is_illegal_name(name, node)")
    for t in CODEGEN_RESERVE_UNTYPED
)


def _has_illegal_names(s: Sources) -> bool:
    return s.has(_FX, r"^_illegal_names = ")


CODEGEN_QUALIFIED = (
    """\
                # fully qualified name.
                return _get_qualified_name(obj)
""",
    """\
                # fully qualified name.
                qualified_name = _get_qualified_name(obj)
                torch_name = global_names.get("torch", "torch")
                if torch_name != "torch" and qualified_name.startswith("torch."):
                    return torch_name + qualified_name[len("torch") :]
                return qualified_name
""",
)

CODEGEN_PREFILL = (
    """\
        for name, (_, obj) in _custom_builtins.items():
            add_global(name, obj)
""",
    """\
        for name, (_, obj) in _custom_builtins.items():
            global_names[name] = add_global(name, obj)
        # Builtins the code writes out itself
        for name in ("getattr", "slice", "range", "Ellipsis", "complex", "next", "iter"):
            global_names[name] = (
                add_global(name, getattr(builtins, name))
                if name in namespace._used_names
                else name
            )
        renamed = any(name != value for name, value in global_names.items())
        getattr_name = global_names["getattr"]

        def literal(arg: object) -> str:
            \"\"\"repr(arg), naming the globals it refers to as this code does.\"\"\"
            text = repr(arg)
            if not renamed:
                return text
            if isinstance(arg, (float, complex)):
                return re.sub(r"\\b(inf|nan)\\b", lambda m: global_names[m[0]], text)
            if isinstance(arg, torch.device):
                return global_names["device"] + text[len("device") :]
            if isinstance(arg, range):
                return global_names["range"] + text[len("range") :]
            if arg is Ellipsis:
                return global_names["Ellipsis"]
            if text.startswith("torch."):  # dtype, layout, memory_format, Size, ...
                return global_names["torch"] + text[len("torch") :]
            return text
""",
)

# 2.4.1 and 2.5.1 write tuples, lists and slices with repr() too
CODEGEN_PREFILL_CONTAINERS = (
    CODEGEN_PREFILL[0],
    CODEGEN_PREFILL[1].replace(
        """            if text.startswith("torch."):""",
        """            if type(arg) is tuple:  # this release writes containers with repr()
                if len(arg) == 1:
                    return f"({literal(arg[0])},)"
                return "(" + ", ".join(map(literal, arg)) + ")"
            if type(arg) is list:
                return "[" + ", ".join(map(literal, arg)) + "]"
            if isinstance(arg, slice):
                parts = (literal(arg.start), literal(arg.stop), literal(arg.step))
                return f"{global_names['slice']}({', '.join(parts)})"
            if text.startswith("torch."):""",
    ),
)


def _recurses_containers(s: Sources) -> bool:
    return s.has(_FX, r"^            elif isinstance\(arg, tuple\):")


CODEGEN_LITERALS = [
    (
        '                return f"torch.Tensor(size={size}, dtype={dtype})"\n',
        "                return f\"{global_names['torch']}.Tensor(size={size}, dtype={dtype})\"\n",
    ),
    (
        '                return f"slice({_get_repr(arg.start)}, {_get_repr(arg.stop)}, {_get_repr(arg.step)})"\n',
        "                return f\"{global_names['slice']}({_get_repr(arg.start)}, {_get_repr(arg.stop)}, {_get_repr(arg.step)})\"\n",
    ),
    ("                return blue(repr(arg))\n", "                return blue(literal(arg))\n"),
]
CODEGEN_COMPLEX = (
    '                    return f"complex({_get_repr(arg.real)}, {_get_repr(arg.imag)})"\n',
    "                    return f\"{global_names['complex']}({_get_repr(arg.real)}, {_get_repr(arg.imag)})\"\n",
)
CODEGEN_GETATTR = [
    (
        '                    f"{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.target)}"\n',
        '                    f"{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.target, getattr_name)}"\n',
    ),
    ('                    global_name == "getattr"\n', "                    global_name == getattr_name\n"),
    (
        '                        f"{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.args[1])}"\n',
        '                        f"{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.args[1], getattr_name)}"\n',
    ),
    (
        '                    f"{_format_target(root_module, node.target)}({_format_args(node.args, node.kwargs)})"\n',
        '                    f"{_format_target(root_module, node.target, getattr_name)}({_format_args(node.args, node.kwargs)})"\n',
    ),
    (
        '                    f"{repr(node)}{maybe_type_annotation} = {_format_target(root_module, node.target)}"\n',
        '                    f"{repr(node)}{maybe_type_annotation} = {_format_target(root_module, node.target, getattr_name)}"\n',
    ),
]
CODEGEN_RECORD_FUNC = [
    (
        """\
        if record_func:
            body.append(
                "_rf = torch._C._profiler._RecordFunctionFast('## ENTER_GRAPH_PLACEHOLDER_KEY ##'); _rf.__enter__()\\n"
            )
""",
        """\
        torch_name = global_names["torch"]
        if record_func:
            rf = namespace.create_name("_rf", None)
            body.append(
                f"{rf} = {torch_name}._C._profiler._RecordFunctionFast('## ENTER_GRAPH_PLACEHOLDER_KEY ##'); {rf}.__enter__()\\n"
            )
""",
    ),
    (
        """\
                body.append(
                    f"_rf_{node.name} = torch._C._profiler._RecordFunctionFast('## {i} ##'); _rf_{node.name}.__enter__()\\n"
                )
""",
        """\
                rf_node = namespace.create_name(f"_rf_{node.name}", None)
                body.append(
                    f"{rf_node} = {torch_name}._C._profiler._RecordFunctionFast('## {i} ##'); {rf_node}.__enter__()\\n"
                )
""",
    ),
    (
        '                body.append(f"_rf_{node.name}.__exit__(None, None, None)\\n")\n',
        '                body.append(f"{rf_node}.__exit__(None, None, None)\\n")\n',
    ),
    (
        '            body.append("_rf.__exit__(None, None, None)\\n")\n',
        '            body.append(f"{rf}.__exit__(None, None, None)\\n")\n',
    ),
]
CODEGEN_PASS_NAMES = [
    (
        """\
                        repr_fn=_get_repr,
                    )
""",
        """\
                        repr_fn=_get_repr,
                        global_names=global_names,
                    )
""",
    ),
    (
        """\
            maybe_return_annotation[0],
            expanded_def=expanded_def,
        )
""",
        """\
            maybe_return_annotation[0],
            expanded_def=expanded_def,
            global_names=global_names,
        )
""",
    ),
]
CODEGEN_BOXED = (
    """\
        expanded_def: bool = False,
    ) -> str:
        \"\"\"
        Generate function definition for boxed calling convention.

        Instead of taking individual arguments, the generated function takes
        a single 'args_list' parameter, extracts placeholder values from it,
        and clears the list.
        \"\"\"
        # Generate the function signature with args_list parameter
        fn_def = f"def {self._func_name}(self, args_list){maybe_return_annotation}:"

        if free_vars:
            # This is horribly manual but we don't get the "raw" free vars
            # without a bigger refactor.
            placeholder_vars = [
                v.split(":")[0].split("=")[0].strip() for v in free_vars if v != "self"
            ]

            if placeholder_vars:
                fn_def += "\\n    args_iter = iter(args_list)"
                for var in placeholder_vars:
                    fn_def += f"\\n    {var} = next(args_iter)"
                fn_def += "\\n    args_list.clear()"
""",
    """\
        expanded_def: bool = False,
        global_names: dict[str, str] | None = None,
    ) -> str:
        \"\"\"
        Generate function definition for boxed calling convention.

        Instead of taking individual arguments, the generated function takes
        a single 'args_list' parameter, extracts placeholder values from it,
        and clears the list.
        \"\"\"
        # This is horribly manual but we don't get the "raw" free vars
        # without a bigger refactor.
        placeholder_vars = [
            v.split(":")[0].split("=")[0].strip() for v in free_vars if v != "self"
        ]
        # no placeholder may take the names of the list and its iterator
        args_list, args_iter = "args_list", "args_iter"
        while args_list in placeholder_vars:
            args_list += "_"
        while args_iter in placeholder_vars:
            args_iter += "_"
        names = global_names or {}
        # Generate the function signature with args_list parameter
        fn_def = f"def {self._func_name}(self, {args_list}){maybe_return_annotation}:"

        if placeholder_vars:
            fn_def += f"\\n    {args_iter} = {names.get('iter', 'iter')}({args_list})"
            for var in placeholder_vars:
                fn_def += f"\\n    {var} = {names.get('next', 'next')}({args_iter})"
            fn_def += f"\\n    {args_list}.clear()"
""",
)
CODEGEN_PYTREE = [
    (
        """\
    def gen_var_bindings(
        self, fn_args: list[str], free_vars: list[str], expanded_def: bool
    ) -> str:
        in_spec = self.pytree_info.in_spec
""",
        """\
    def gen_var_bindings(
        self,
        fn_args: list[str],
        free_vars: list[str],
        expanded_def: bool,
        global_names: dict[str, str] | None = None,
    ) -> str:
        fx_pytree_name = (global_names or {}).get("fx_pytree", "fx_pytree")
        in_spec = self.pytree_info.in_spec
""",
    ),
    (
        '    {", ".join(without_annotation)}, = fx_pytree.tree_flatten_spec({fn_signature})"""\n',
        '    {", ".join(without_annotation)}, = {fx_pytree_name}.tree_flatten_spec({fn_signature})"""\n',
    ),
    (
        """\
        expanded_def: bool = False,
    ) -> str:
        # Given a user function/model:
""",
        """\
        expanded_def: bool = False,
        global_names: dict[str, str] | None = None,
    ) -> str:
        # Given a user function/model:
""",
    ),
    (
        "            fn_definition += self.gen_var_bindings(fn_args, free_vars, expanded_def)\n",
        """\
            fn_definition += self._call_method_with_signature_check(
                self.gen_var_bindings,
                fn_args,
                free_vars,
                expanded_def,
                global_names=global_names,
            )
""",
    ),
    (
        """\
        repr_fn: Callable[[object], str] | None = None,
    ) -> str:
        if repr_fn is None:
            repr_fn = repr
        if self.pytree_info and self.pytree_info.out_spec:
""",
        """\
        repr_fn: Callable[[object], str] | None = None,
        global_names: dict[str, str] | None = None,
    ) -> str:
        if repr_fn is None:
            repr_fn = repr
        pytree_name = (global_names or {}).get("pytree", "pytree")
        if self.pytree_info and self.pytree_info.out_spec:
""",
    ),
    (
        '                        "return pytree.tree_unflatten(",\n',
        '                        f"return {pytree_name}.tree_unflatten(",\n',
    ),
    (
        '                return f"return pytree.tree_unflatten({repr_fn(output_args)}, self._out_spec)"\n',
        '                return f"return {pytree_name}.tree_unflatten({repr_fn(output_args)}, self._out_spec)"\n',
    ),
]
# torch/fx/graph_module.py: pickling and to_folder bind a registered builtin that the code
# names otherwise
CODEGEN_IMPORT_STATEMENT = (
    """\
    if name in _custom_builtins:
        return _custom_builtins[name].import_str
""",
    """\
    if name in _custom_builtins:
        return _custom_builtins[name].import_str
    renamed = _renamed_builtin(name, obj)
    if renamed is not None:
        return renamed
""",
)
CODEGEN_RENAMED_BUILTIN = (
    "def _format_import_block(globals: dict[str, Any], importer: Importer) -> str:\n",
    '''\
def _renamed_builtin(name: str, obj: object) -> str | None:
    """How to bind the global ``name`` of generated code that is a registered
    or Python builtin under another name (a parameter of the code has the
    builtin's own name); None if ``obj`` is no such builtin."""
    for builtin_name, (import_str, builtin_obj) in _custom_builtins.items():
        if obj is builtin_obj and name != builtin_name:
            return f"{import_str}\\n{name} = {builtin_name}"
    base = name.rpartition("_")[0]
    if base and getattr(builtins, base, None) is obj:
        return f"{name} = {base}"
    return None


def _format_import_block(globals: dict[str, Any], importer: Importer) -> str:
''',
)
CODEGEN_TO_FOLDER = (
    '        custom_builtins = "\\n".join([v.import_str for v in _custom_builtins.values()])\n',
    """\
        custom_builtins = "\\n".join([v.import_str for v in _custom_builtins.values()])
        for name, obj in self.graph.python_code("self").globals.items():
            renamed = _renamed_builtin(name, obj)
            if renamed is not None:
                custom_builtins += f"\\n{renamed}"
""",
)
CODEGEN_MODULE_IMPORT = (
    "import base64\nimport contextlib\n",
    "import base64\nimport builtins\nimport contextlib\n",
)


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
            name = node.target._name
            subgraphs_and_operands = _HOP_SUBGRAPH_OPERANDS.get(name)
            if (
                subgraphs_and_operands is None
                or torch._ops._higher_order_ops.get(name) is not node.target
            ):
                continue
            try:
                subgraphs, operands = subgraphs_and_operands(*node._args)
            except (TypeError, ValueError):  # a layout the table does not know
                continue
            for subgraph in subgraphs:
                subgraph_ph_tuples.append((getattr(gm, subgraph.target), operands))
"""
_HOO_DEF = "def _name_hoo_subgraph_placeholders(gm: torch.fx.GraphModule) -> None:\n"
_HOP_TABLE_HEAD = """\
# For each higher-order op whose subgraphs receive its operands as their
# placeholders, in order: a function of the op node's args that returns
# (the subgraphs, the operands). Not listed: invoke_subgraph and
# invoke_quant_packed (a subgraph is shared by every call, so one call's
# operands cannot name it), flex_attention (its subgraphs take scalars it
# makes), run_const_graph (lifted constants), strict_mode,
# tag_activation_checkpoint and local_map_hop (not tried).
_HOP_SUBGRAPH_OPERANDS: "dict[str, Callable[..., Any]]" = {
"""


def _hop_layouts() -> dict[str, tuple[tuple[str, str, str], ...]]:
    """torch_export_names/_hops.py's HOP_LAYOUTS, read without importing the package (or torch):
    the one description that the package's table and torch's table are both made from."""
    import ast

    path = Path(__file__).resolve().parent.parent / "torch_export_names" / "_hops.py"
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "HOP_LAYOUTS":
            assert node.value is not None
            return ast.literal_eval(node.value)
    raise SystemExit(f"{path}: no HOP_LAYOUTS")


def _hop_entry(name: str, layout: int = 0) -> str:
    params, subgraphs, operands = _hop_layouts()[name][layout]
    subgraphs, operands = (f"({t})" if "," in t else f"({t},)" for t in (subgraphs, operands))
    return f'    "{name}": lambda {params}: (\n        {subgraphs},\n        {operands},\n    ),\n'


# the table's keys: (HOP, its layout in HOP_LAYOUTS)
_HOP_ENTRIES = {
    "cond": ("cond", 0),
    "wrap_with_set_grad_enabled": ("wrap_with_set_grad_enabled", 0),
    "map_impl": ("map_impl", 0),
    "wrap_with_autocast": ("wrap_with_autocast", 0),
    "while_loop": ("while_loop", 0),
    "while_loop_stack_output": ("while_loop_stack_output", 0),
    "scan": ("scan", 0),
    "scan dim reverse": ("scan", 1),
    "associative_scan": ("associative_scan", 0),
    "associative_scan dim": ("associative_scan", 1),
    "hints_wrapper": ("hints_wrapper", 0),
    "switch": ("switch", 0),
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
    if s.has("torch/_higher_order_ops/switch.py", r"super\(\).__call__\(index, branches, operands\)"):
        keys.append("switch")
    else:
        notes.append("switch")
    return keys, notes


def _hop_table(s: Sources) -> str:
    keys, _ = _hop_entries(s)
    keys = ["cond", "wrap_with_set_grad_enabled", "map_impl", *keys]
    return _HOP_TABLE_HEAD + "".join(_hop_entry(*_HOP_ENTRIES[k]) for k in keys) + "}\n\n\n" + _HOO_DEF


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


# --- Part 2 in releases before 2.13 (their own signatures and quoting)
_SIG_OLD = "        self, free_vars, maybe_return_annotation, *, expanded_def: bool = False\n    ):\n"
_SIG_NEW = """\
        self,
        free_vars,
        maybe_return_annotation,
        *,
        expanded_def: bool = False,
        global_names=None,
    ):
"""
_BOXED_HEAD_OLD = "        expanded_def: bool = False,\n    ) -> str:\n"
_BOXED_HEAD_NEW = "        expanded_def: bool = False,\n        global_names: dict[str, str] | None = None,\n    ) -> str:\n"
CODEGEN_BOXED_UNTYPED = (
    _SIG_OLD + CODEGEN_BOXED[0].removeprefix(_BOXED_HEAD_OLD),
    _SIG_NEW + CODEGEN_BOXED[1].removeprefix(_BOXED_HEAD_NEW),
)
CODEGEN_BINDINGS_UNTYPED = (
    """\
    def gen_var_bindings(self, fn_args, free_vars, expanded_def) -> str:
        in_spec = self.pytree_info.in_spec
""",
    """\
    def gen_var_bindings(
        self, fn_args, free_vars, expanded_def, global_names=None
    ) -> str:
        fx_pytree_name = (global_names or {}).get("fx_pytree", "fx_pytree")
        in_spec = self.pytree_info.in_spec
""",
)
CODEGEN_PYTREE_DEF_UNTYPED = (
    _SIG_OLD + "        # Given a user function/model:\n",
    _SIG_NEW + "        # Given a user function/model:\n",
)
# 2.9.1 writes the bindings in gen_fn_def itself
CODEGEN_PYTREE_DEF_BINDINGS = (
    _SIG_OLD + "        # Given a user function/model:\n",
    _SIG_NEW
    + '        fx_pytree_name = (global_names or {}).get("fx_pytree", "fx_pytree")\n'
    + "        # Given a user function/model:\n",
)
CODEGEN_PYTREE_OUTPUT_REPR_FN = (
    """\
        self, output_args, *, descs: Any | None = None, repr_fn: Any | None = None
    ):
        if repr_fn is None:
            repr_fn = repr
        if self.pytree_info and self.pytree_info.out_spec:
""",
    """\
        self,
        output_args,
        *,
        descs: Any | None = None,
        repr_fn: Any | None = None,
        global_names: dict[str, str] | None = None,
    ):
        if repr_fn is None:
            repr_fn = repr
        pytree_name = (global_names or {}).get("pytree", "pytree")
        if self.pytree_info and self.pytree_info.out_spec:
""",
)
CODEGEN_PYTREE_OUTPUT_DESCS = (
    """\
    def generate_output(self, output_args, *, descs: Optional[Any] = None):
        if self.pytree_info and self.pytree_info.out_spec:
""",
    """\
    def generate_output(
        self,
        output_args,
        *,
        descs: Optional[Any] = None,
        global_names=None,
    ):
        pytree_name = (global_names or {}).get("pytree", "pytree")
        if self.pytree_info and self.pytree_info.out_spec:
""",
)
CODEGEN_PYTREE_UNFLATTEN_DESCS = (
    '                        output_args, descs, "return pytree.tree_unflatten("\n',
    '                        output_args, descs, f"return {pytree_name}.tree_unflatten("\n',
)
CODEGEN_PYTREE_UNFLATTEN_REPR = (
    '                    f"return pytree.tree_unflatten({repr(output_args)}, self._out_spec)"\n',
    '                    f"return {pytree_name}.tree_unflatten({repr(output_args)}, self._out_spec)"\n',
)
CODEGEN_OUTPUT_CALL_DESCS = (
    """\
                        descs=desc if expanded_def else None,
                    )
""",
    """\
                        descs=desc if expanded_def else None,
                        global_names=global_names,
                    )
""",
)
# releases before 2.13 have no "from __future__ import annotations" in graph_module.py
CODEGEN_IMPORT_BLOCK_UNTYPED = tuple(
    t.replace(
        "def _format_import_block(globals: dict[str, Any], importer: Importer) -> str:",
        "def _format_import_block(globals: dict[str, Any], importer: Importer):",
    ).replace(
        "def _renamed_builtin(name: str, obj: object) -> str | None:",
        "def _renamed_builtin(name: str, obj: object):",
    )
    for t in CODEGEN_RENAMED_BUILTIN
)
CODEGEN_IMPORT_BLOCK_DICT = tuple(
    t.replace("dict[str, Any]", "Dict[str, Any]") for t in CODEGEN_IMPORT_BLOCK_UNTYPED
)
# releases before 2.9 call gen_fn_def and generate_output directly: global_names is passed to
# the ones that take it (a code generator of another library may not)
CODEGEN_OUTPUT_CALL_DIRECT = (
    "                body.append(self.generate_output(node.args[0]))\n",
    """\
                output_kwargs = (
                    {"global_names": global_names}
                    if "global_names" in inspect.signature(self.generate_output).parameters
                    else {}
                )
                body.append(self.generate_output(node.args[0], **output_kwargs))
""",
)
CODEGEN_FN_DEF_CALL_DIRECT = (
    "        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])\n",
    """\
        fn_def_kwargs = (
            {"global_names": global_names}
            if "global_names" in inspect.signature(self.gen_fn_def).parameters
            else {}
        )
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0], **fn_def_kwargs)
""",
)
CODEGEN_PYTREE_DEF_PLAIN = (
    "    def gen_fn_def(self, free_vars, maybe_return_annotation):\n",
    """\
    def gen_fn_def(self, free_vars, maybe_return_annotation, global_names=None):
        fx_pytree_name = (global_names or {}).get("fx_pytree", "fx_pytree")
""",
)
CODEGEN_PYTREE_BINDING_QUOTES = (
    '    {\', \'.join(without_annotation)}, = fx_pytree.tree_flatten_spec({fn_signature})"""\n',
    '    {\', \'.join(without_annotation)}, = {fx_pytree_name}.tree_flatten_spec({fn_signature})"""\n',
)
CODEGEN_PYTREE_OUTPUT_PLAIN = (
    """\
    def generate_output(self, output_args):
        if self.pytree_info and self.pytree_info.out_spec:
""",
    """\
    def generate_output(self, output_args, global_names=None):
        pytree_name = (global_names or {}).get("pytree", "pytree")
        if self.pytree_info and self.pytree_info.out_spec:
""",
)
CODEGEN_PYTREE_UNFLATTEN_PLAIN = (
    '            return f"return pytree.tree_unflatten({repr(output_args)}, self._out_spec)"\n',
    '            return f"return {pytree_name}.tree_unflatten({repr(output_args)}, self._out_spec)"\n',
)
CODEGEN_PYTREE_UNFLATTEN_QUOTES = (
    "            return f'return pytree.tree_unflatten({repr(output_args)}, self._out_spec)'\n",
    "            return f'return {pytree_name}.tree_unflatten({repr(output_args)}, self._out_spec)'\n",
)
# 2.4.1 and 2.5.1: single quotes, and fewer literals
CODEGEN_FORMAT_TARGET_QUOTES = tuple(
    t.replace('target.split(".")', "target.split('.')") for t in CODEGEN_FORMAT_TARGET
)
CODEGEN_LITERAL_PLAIN = ("            return repr(arg)\n", "            return literal(arg)\n")
CODEGEN_GETATTR_QUOTES = [
    (
        "                    f'{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.target)}'\n",
        "                    f'{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.target, getattr_name)}'\n",
    ),
    (
        "                if global_name == 'getattr' and \\\n",
        "                if global_name == getattr_name and \\\n",
    ),
    (
        "                    body.append(f'{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.args[1])}')\n",
        "                    body.append(f'{repr(node)}{maybe_type_annotation} = {_format_target(_get_repr(node.args[0]), node.args[1], getattr_name)}')\n",
    ),
    (
        "                            f'{_format_target(root_module, node.target)}({_format_args(node.args, node.kwargs)})')\n",
        "                            f'{_format_target(root_module, node.target, getattr_name)}({_format_args(node.args, node.kwargs)})')\n",
    ),
    (
        "                body.append(f'{repr(node)}{maybe_type_annotation} = {_format_target(root_module, node.target)}')\n",
        "                body.append(f'{repr(node)}{maybe_type_annotation} = {_format_target(root_module, node.target, getattr_name)}')\n",
    ),
]
_NO_TENSOR_REPR = (
    "this release writes a tensor argument with repr()",
    lambda s: not s.has(_FX, r'return f"torch\.Tensor\(size='),
)
_NO_SLICE = ("this release writes a slice with repr()", lambda s: not s.has(_FX, r'return f"slice\('))


_NO_DESCS = (
    "this release's pytree generate_output has no descs form",
    lambda s: not s.has(_FX, r'"return pytree\.tree_unflatten\("'),
)
CODEGEN_MODULE_IMPORT_NO_BASE64 = (
    "import contextlib\nimport copy\n",
    "import builtins\nimport contextlib\nimport copy\n",
)


def _has_gen_var_bindings(s: Sources) -> bool:
    return s.has(_FX, r"^    def gen_var_bindings\(")


_NO_RECORD_FUNC = ("this release has no record_func", lambda s: not s.has(_FX, r"_rf = torch\._C"))
_NO_BOXED = ("this release has no _BoxedCodeGen", lambda s: not s.has(_FX, r"^class _BoxedCodeGen"))
_NO_BINDINGS = (
    "this release writes the pytree bindings in gen_fn_def",
    lambda s: not _has_gen_var_bindings(s),
)


def _b(site: str, *pairs: tuple[str, str], path: str = _FX, **kw) -> Edit:
    """An edit of part 2; each pair (old, new) is an alternative, the first that fits is applied
    (a pair with a third item, a count, replaces that many occurrences)."""
    alts = tuple(Alt(path, p[0], p[1], count=p[2] if len(p) > 2 else 1) for p in pairs)  # type: ignore[misc]
    return Edit(f"{path}: {site}", alts, **kw)


_HAS_COMPLEX_LITERAL = (
    "complex numbers are written with repr() in this release",
    lambda s: not s.has(_FX, r'return f"complex\(\{_get_repr'),
)
PART_B_EDITS: list[Edit] = [
    _b(
        "_format_target writes getattr under the name it is given",
        CODEGEN_FORMAT_TARGET,
        CODEGEN_FORMAT_TARGET_QUOTES,
    ),
    Edit(
        f"{_FX}: _gen_python_code reserves the parameters' names first",
        (
            Alt(_FX, *CODEGEN_RESERVE),
            Alt(_FX, *CODEGEN_RESERVE_UNTYPED, when=_has_illegal_names),
            Alt(_FX, *CODEGEN_RESERVE_NAMESPACE_CHECK, when=lambda s: not _has_illegal_names(s)),
        ),
    ),
    _b("qualified torch names under torch's global name", CODEGEN_QUALIFIED),
    Edit(
        f"{_FX}: the globals the code writes itself, and literal()",
        (
            Alt(_FX, *CODEGEN_PREFILL, when=_recurses_containers),
            Alt(_FX, *CODEGEN_PREFILL_CONTAINERS, when=lambda s: not _recurses_containers(s)),
        ),
    ),
    _b("literal 0", CODEGEN_LITERALS[0], na=_NO_TENSOR_REPR),
    _b("literal 1", CODEGEN_LITERALS[1], na=_NO_SLICE),
    # the complex branch of newer releases writes a finite complex with repr() too
    _b("literal 2", CODEGEN_LITERALS[2], (*CODEGEN_LITERALS[2], 2), CODEGEN_LITERAL_PLAIN),
    _b("complex() under its global name", CODEGEN_COMPLEX, na=_HAS_COMPLEX_LITERAL),
    *(
        _b(f"getattr {i}", pair, quoted)
        for i, (pair, quoted) in enumerate(zip(CODEGEN_GETATTR, CODEGEN_GETATTR_QUOTES))
    ),
    *(_b(f"record_func {i}", pair, na=_NO_RECORD_FUNC) for i, pair in enumerate(CODEGEN_RECORD_FUNC)),
    _b(
        "global names to the code generator 0",
        CODEGEN_PASS_NAMES[0],
        CODEGEN_OUTPUT_CALL_DESCS,
        CODEGEN_OUTPUT_CALL_DIRECT,
    ),
    _b("global names to the code generator 1", CODEGEN_PASS_NAMES[1], CODEGEN_FN_DEF_CALL_DIRECT),
    _b("_BoxedCodeGen's own names", CODEGEN_BOXED, CODEGEN_BOXED_UNTYPED, na=_NO_BOXED),
    _b("_PyTreeCodeGen's globals 0", CODEGEN_PYTREE[0], CODEGEN_BINDINGS_UNTYPED, na=_NO_BINDINGS),
    _b("_PyTreeCodeGen's globals 1", CODEGEN_PYTREE[1], CODEGEN_PYTREE_BINDING_QUOTES),
    Edit(
        f"{_FX}: _PyTreeCodeGen's globals 2",
        (
            Alt(_FX, *CODEGEN_PYTREE[2]),
            Alt(_FX, *CODEGEN_PYTREE_DEF_UNTYPED, when=_has_gen_var_bindings),
            Alt(_FX, *CODEGEN_PYTREE_DEF_BINDINGS, when=lambda s: not _has_gen_var_bindings(s)),
            Alt(_FX, *CODEGEN_PYTREE_DEF_PLAIN),
        ),
    ),
    _b("_PyTreeCodeGen's globals 3", CODEGEN_PYTREE[3], na=_NO_BINDINGS),
    _b(
        "_PyTreeCodeGen's globals 4",
        CODEGEN_PYTREE[4],
        CODEGEN_PYTREE_OUTPUT_REPR_FN,
        CODEGEN_PYTREE_OUTPUT_DESCS,
        CODEGEN_PYTREE_OUTPUT_PLAIN,
    ),
    _b("_PyTreeCodeGen's globals 5", CODEGEN_PYTREE[5], CODEGEN_PYTREE_UNFLATTEN_DESCS, na=_NO_DESCS),
    _b(
        "_PyTreeCodeGen's globals 6",
        CODEGEN_PYTREE[6],
        CODEGEN_PYTREE_UNFLATTEN_REPR,
        CODEGEN_PYTREE_UNFLATTEN_PLAIN,
        CODEGEN_PYTREE_UNFLATTEN_QUOTES,
    ),
    _b("import builtins", CODEGEN_MODULE_IMPORT, CODEGEN_MODULE_IMPORT_NO_BASE64, path=_FX_MODULE),
    _b("pickling binds a renamed builtin", CODEGEN_IMPORT_STATEMENT, path=_FX_MODULE),
    _b(
        "_renamed_builtin",
        CODEGEN_RENAMED_BUILTIN,
        CODEGEN_IMPORT_BLOCK_UNTYPED,
        CODEGEN_IMPORT_BLOCK_DICT,
        path=_FX_MODULE,
    ),
    _b("to_folder binds a renamed builtin", CODEGEN_TO_FOLDER, path=_FX_MODULE),
]

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
        "torch/fx/node.py: Node.__setattr__ records a new name",
        (Alt("torch/fx/node.py", SETATTR_STOCK, SETATTR_RECORDING),),
    ),
    *PART_B_EDITS,
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

PART_A = [0, 1]
PART_B = list(range(2, 2 + len(PART_B_EDITS)))
PART_C = list(range(2 + len(PART_B_EDITS), len(EDITS)))
