"""Keep the parameters of fx's generated code apart from every other name its body uses.

torch.fx writes each placeholder's *target* as a parameter of the ``forward`` it generates (and,
for the pytree code generator, each of the user's argument names, ``_PyTreeInfo.orig_args``),
while the body refers to node values by locals of a fresh name space and to the code's globals by
bare names: registered ones (``inf``, ``nan``, ``device``, ``torch``, ``NoneType``, ``pytree``,
``fx_pytree``: ``torch.fx.graph._custom_builtins``), the ``torch.`` of qualified names, builtins
written out (``getattr(...)``, ``slice(...)``, ``Ellipsis``) and whatever ``add_global`` hands out.
A parameter ``inf`` therefore turns every later literal ``inf`` into the argument, and a parameter
``input_1`` is overwritten by the local ``input_1 = input`` of a placeholder ``input``
(pytorch/pytorch#202927). Renaming the parameter would change how the program is called, so this
module keeps every parameter and gives the *other* uses of its name another spelling.

Why it is exact without touching the graph: in the code torch generates, a parameter's own name
appears only in the prologue (``gen_fn_def``'s lines) and in its placeholder's binding line
(``inf_1 = inf``); the body otherwise names the placeholder by its local. So every other
occurrence of the name in the body is something else. ``keep_parameters`` works from torch's own
output and the name space torch used for it, and reads the graph without writing to it:

1. Nothing is done unless a parameter *could* meet another name (``_Parameters.suspects``: a name
   ``create_name`` refuses, a numeric suffix, a target that is not its placeholder's name, a
   name the code generator writes for itself). torch's code is then returned as it is.
2. Otherwise torch generates its code, and a parameter is *shadowing* only if the name space gave
   its name to something else (a local, a global) or the name occurs as a word in the body
   outside its binding line (``_shadowing``: a set lookup, then one C-speed regular-expression
   scan). None shadowing: torch's code, byte for byte.
3. A shadowing parameter's other uses are found by a scanner that skips strings, comments, attributes and
   keyword-argument names, and are redirected: a local of another node gets a fresh local name;
   a global becomes an expression that needs no new global (``__import__('math').inf``,
   ``__import__('torch').ops...``, ``__import__('builtins').getattr``), so pickling, ``to_folder``
   and torch.package, which can only import the code's globals by torch's own rules, keep
   working. Only an object no import reaches is bound under a fresh global name.
4. Where the prologue itself uses a shadowing parameter's name for something else (a parameter called
   ``fx_pytree`` in the pytree code generator, ``next`` in the boxed one) or the placeholder's
   own local is that name, the prologue cannot be told apart by position: the code is generated
   once more with the shadowing parameters under fresh names (placeholder stand-ins and a copy of the code
   generator: the graph is not written) and the fresh names are put back after the redirects.

Every fresh name is checked against every word of the code and every parameter. A name followed
by "." or "(" is replaced by a primary expression, which keeps the line's syntax; every other
rewritten line, and all code generated anew, is compiled before it is returned; any failure
returns torch's own code (the caller warns).
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import math
import re
import symtable
import unicodedata
from typing import Any, Callable, Iterable, NamedTuple

import torch
import torch.fx

from . import _fx_namespace as _ns
from ._codegen_rule import codegen_locals

__all__ = ["keep_parameters", "suspect_parameters"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Strings and comments (skipped), ANSI colour codes (print_readable(colored=True)), then the names
# asked for: not after "." (an attribute) nor inside a longer word.
_SKIP = (
    r"(?P<skip>\#[^\n]*|[rRbBuU]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\""
    r"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
)
_ANSI_BEFORE = re.compile(r"\x1b\[[0-9;]*m$")


def _word_starts_at(text: str, start: int) -> bool:
    """Whether a name found at ``text[start]`` is a whole name, not an attribute (after ".") nor the
    end of a longer one; a colour code (print_readable(colored=True)) may stand just before it.
    (Checked here rather than by a look-behind in the patterns: a pattern that starts with one
    scans about fifty times slower.)"""
    if start == 0:
        return True
    before = text[start - 1]
    if before == ".":
        return False
    if before.isalnum() or before == "_":
        return before == "m" and _ANSI_BEFORE.search(text, max(0, start - 12), start) is not None
    return True


def _nfkc(name: str) -> str:
    """``name`` as Python compiles an identifier (NFKC): ``ｉｎｆ`` is ``inf``."""
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


@functools.lru_cache(maxsize=256)
def _scanner(names: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"{_SKIP}|(?P<name>{alternatives})(?!\w)")


def _words(names: Iterable[str]) -> re.Pattern:
    """``names`` where they end a word (strings and comments included); ``_word_starts_at`` tells
    whether a match starts one."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})(?!\w)")


def _has_word(pattern: re.Pattern, text: str) -> bool:
    return any(_word_starts_at(text, m.start()) for m in pattern.finditer(text))


# (code generator class, without pytree_info) -> the names its gen_fn_def writes besides the
# parameters, for torch's own code generators (_fx_namespace.stateless_codegens).
_PROLOGUE_NAMES: dict[tuple[type, bool], frozenset[str]] = {}


class _Param(NamedTuple):
    name: str  # as written in the generated code
    key: str  # as Python compiles it
    nodes: tuple[torch.fx.Node, ...]  # the placeholders whose target it is


class _Parameters:
    """The names a graph's generated ``forward`` binds for its inputs, read without writing."""

    def __init__(self, graph: torch.fx.Graph) -> None:
        self.graph = graph
        by_name: dict[str, list[torch.fx.Node]] = {}
        for node in _ns.placeholders(graph):
            if isinstance(node.target, str):
                by_name.setdefault(node.target.lstrip("*"), []).append(node)
        info = getattr(_ns.codegen_of(graph), "pytree_info", None)
        self.orig_args: list[str] = list(getattr(info, "orig_args", None) or ())
        if self.orig_args:
            by_name = {**by_name, **{a: by_name.get(a, []) for a in self.orig_args if a not in by_name}}
        self.nodes = by_name  # name -> its placeholders (none: a pytree argument only)
        self.names = [n for n in by_name if n.isidentifier()]

    @functools.cached_property
    def keys(self) -> set[str]:
        """Every parameter's name as Python compiles it."""
        return {_nfkc(n) for n in self.names}

    def param(self, name: str) -> _Param:
        return _Param(name, _nfkc(name), tuple(self.nodes[name]))

    def suspects(self) -> list[_Param]:
        """The parameters that could meet another name of the code (module docstring, step 1),
        a parameter with a numeric suffix included."""
        suspects, suffixed = self.suspects_before()
        return suspects + [self.param(n) for n in suffixed]

    def suspects_before(self) -> tuple[list[_Param], list[str]]:
        """``suspects()`` before the code is generated, in two parts: the suspects, and
        those suspect only for their numeric suffix (``primals_1``: a name the code generator's
        name space could give another node or global), which ``suffixed_suspects`` settles from
        the generated code's name space at the cost of a dict lookup each."""
        refused = _ns.refused_names()
        own, prefixes = codegen_locals()
        suspects: list[_Param] = []
        suffixed: list[str] = []
        rest: list[str] = []
        for name in self.names:
            if name == "self":  # the generator's own first parameter: nothing else can be it
                continue
            nodes = self.nodes[name]
            if (
                not name.isascii()
                or name in refused
                or name in own
                or len(nodes) != 1
                or nodes[0].name != name
                or (prefixes and name.startswith(prefixes))
            ):
                suspects.append(self.param(name))
            elif name.rpartition("_")[2].isdigit():  # a numeric suffix (split_suffix, inlined)
                suffixed.append(name)
            else:
                rest.append(name)
        if rest:
            prologue = self.prologue_names()
            suspects += [self.param(n) for n in rest if prologue is None or n in prologue]
        return suspects, suffixed

    def suffixed_suspects(self, suffixed: list[str], namespace) -> list[_Param]:
        """Those of ``suffixed`` whose placeholder the generated code's name space did not give
        their own name: only then can another node or global have it (names there are unique)."""
        local = _ns.names_by_object(namespace).get
        return [self.param(n) for n in suffixed if local(self.nodes[n][0]) != n]

    def prologue_names(self) -> frozenset[str] | None:
        """The names ``gen_fn_def`` writes besides the parameters (``fx_pytree``, ``next``, ...),
        read from the code generator of this graph (a copy, given fresh names); None if unknown."""
        if not hasattr(self, "_prologue"):
            codegen = _ns.codegen_of(self.graph)
            # torch's own code generators write the same names whatever the parameters: read once
            key = (type(codegen), getattr(codegen, "pytree_info", None) is None)
            names: frozenset[str] | None = _PROLOGUE_NAMES.get(key)
            if names is None or key[0] not in _ns.stateless_codegens():
                names = self._read_prologue_names()
                if key[0] in _ns.stateless_codegens() and names is not None:
                    _PROLOGUE_NAMES[key] = names
            self._prologue = names
        return self._prologue

    def _read_prologue_names(self) -> frozenset[str] | None:
        try:
            codegen = _with_orig_args(_ns.codegen_of(self.graph), lambda a: f"__tenp_{a}")
            targets = [f"__tenp_{n}" for n in self.names if self.nodes[n]]
            prologue = codegen.gen_fn_def(targets, "")
            table = symtable.symtable(f"{prologue}\n    pass\n", "<prologue>", "exec")
            fn = table.get_children()[0]
            return frozenset(n for n in fn.get_identifiers() if not n.startswith("__tenp_"))
        except Exception:  # noqa: BLE001 - a code generator this module does not know
            return None


def _with_orig_args(codegen, rename: Callable[[str], str]):
    """A shallow copy of ``codegen`` whose pytree argument names are ``rename``d (the graph's own
    code generator is not touched)."""
    copied = copy.copy(codegen)
    info = getattr(codegen, "pytree_info", None)
    if info is not None and getattr(info, "orig_args", None):
        copied.pytree_info = info._replace(orig_args=[rename(a) for a in info.orig_args])
    return copied


def suspect_parameters(graph: torch.fx.Graph) -> list[str]:
    """The parameters of ``graph``'s generated code that could meet another name of it."""
    return [p.name for p in _Parameters(graph).suspects()]


class _Code(NamedTuple):
    """torch's generated code and where its parts are."""

    lines: list[str]
    body: int  # index of the first body line (after gen_fn_def's lines); -1 if unknown
    body_text: str  # those lines, joined


def _split(code) -> _Code:
    lines = code.src.split("\n")
    def_line = next(i for i, line in enumerate(lines) if line.startswith("def "))
    lineno_map = getattr(code, "_lineno_map", None)
    body = def_line + min(lineno_map) if lineno_map else -1
    return _Code(lines, body, "\n".join(lines[body:]) if body >= 0 else "")


def keep_parameters(graph: torch.fx.Graph, namespace, generate: Callable[[], Any], regenerate) -> Any:
    """torch's ``PythonCode`` for ``graph`` (``generate()``, in ``namespace``), with no parameter
    of the generated function shadowing another name of it (module docstring).

    ``regenerate(nodes, codegen)`` generates again from a node sequence and a code generator in
    the same name space (step 4). Raises if the rewrite fails; the caller then keeps torch's code.
    """
    params = _Parameters(graph)
    suspects, suffixed = params.suspects_before()
    if not suspects and not suffixed:
        return generate()
    before = _ns.namespace_state(namespace)
    code = generate()
    suspects += params.suffixed_suspects(suffixed, namespace)
    if not suspects:
        return code
    split = _split(code)
    prologue = params.prologue_names()
    shadowing = _shadowing(code, split, namespace, suspects, prologue)
    if not shadowing:
        return code
    if (
        split.body < 0
        or prologue is None
        or any(p.key in prologue or p.key in _own_locals(namespace, p) for p in shadowing)
    ):
        return _regenerated(graph, params, shadowing, namespace, before, code, regenerate)
    return _redirected(code, split, namespace, params, shadowing)


def _own_locals(namespace, p: _Param) -> set[str | None]:
    """The locals the code generator's name space gave ``p``'s placeholders."""
    return {_ns.name_of(namespace, n) for n in p.nodes}


def _shadowing(
    code, split: _Code, namespace, suspects: list[_Param], prologue: frozenset[str] | None
) -> list[_Param]:
    """The suspects whose name the code may use for something else (step 2)."""
    found: list[_Param] = []
    to_scan: list[_Param] = []
    own, prefixes = codegen_locals()
    for p in suspects:
        if prologue is None or p.key in prologue:
            found.append(p)  # gen_fn_def's lines use the name too
        elif p.key in _own_locals(namespace, p):  # no other local or registered global has it:
            if p.key in own or p.key.startswith(prefixes):  # only one the generator writes itself
                to_scan.append(p)
        elif _ns.is_used(namespace, p.key) and p.key not in code.globals:
            if not _read_before_stored(split, namespace, p):
                found.append(p)  # the local of another node, stored before the parameter is read
        else:  # a global, registered or written out: does the body read it?
            to_scan.append(p)
    if to_scan:
        if split.body < 0:
            return found + to_scan
        bindings = _binding_lines(namespace, to_scan)
        wanted = {p.key for p in to_scan}
        body = split.body_text
        hits: set[str] = set()
        present = {name for name in wanted if name in body}  # a substring test first: C speed
        for m in _words(present).finditer(body) if present else ():  # stops once all are seen
            name = m.group()
            if name in hits or not _word_starts_at(body, m.start()):
                continue
            if not _is_binding(body, m.start(), m.end(), bindings):
                hits.add(name)
                if hits == present:
                    break
        found += [p for p in to_scan if p.key in hits]
    return found


def _read_before_stored(split: _Code, namespace, p: _Param) -> bool:
    """Whether every read of parameter ``p`` (its binding lines) comes before any other line that
    uses its name: then another node's local of that name takes it only once the parameter is
    read, as Python runs the lines in order, and torch's code is right."""
    if split.body < 0:
        return False
    bindings = _binding_lines(namespace, [p])
    pattern = _words([p.key])
    pending = len(bindings)
    for line in split.lines[split.body :]:
        stripped = line.strip()
        if stripped in bindings:
            pending -= 1
            continue
        if _has_word(pattern, line):
            return False
        if not pending:
            return True
    return pending == 0


def _binding_lines(namespace, params: Iterable[_Param]) -> dict[str, str]:
    """``{"local = name": key}``: the lines where a placeholder's local takes its parameter
    (stripped); there the parameter is the right-hand side."""
    return {
        f"{_ns.name_of(namespace, n)} = {str(n.target).replace('*', '')}": p.key
        for p in params
        for n in p.nodes
        if _ns.name_of(namespace, n) not in (None, p.name)
    }


def _redirected(code, split: _Code, namespace, params: _Parameters, shadowing):
    """Step 3: every use of a shadowing parameter's name in the body but its binding line, redirected."""
    body_start = split.body
    text = split.body_text
    spellings = _Spellings(code, namespace, params, {p.key for p in shadowing})
    unsafe: set[int] = set()
    bindings = _binding_lines(namespace, shadowing)
    new_body = _rewrite(text, {p.key for p in shadowing}, spellings, bindings, unsafe)
    if new_body is None:
        return code
    src = "\n".join([*split.lines[:body_start], new_body])
    if unsafe:
        new_lines = new_body.split("\n")
        _compile_lines(src, [new_lines[i] for i in sorted(unsafe)])
    code.src = src
    spellings.bind(code.globals)
    return code


def _compile_lines(src: str, lines: list[str]) -> None:
    """Raise SyntaxError unless the rewritten ``lines`` compile: each line of fx's body is a
    statement of its own, so they are compiled together as a function body, and only if that
    fails (a statement over several lines) is the whole source compiled."""
    body = "\n".join("    " + _ANSI.sub("", line).strip() for line in lines)
    try:
        compile(f"def _():\n{body}\n", "<torch_export_names: rewritten lines>", "exec")
    except SyntaxError:
        _compile_check(src)


def _rewrite(
    text: str,
    names: set[str],
    spellings,
    bindings: dict[str, str] | None = None,
    unsafe: set[int] | None = None,
) -> str | None:
    """``text`` with every use of ``names`` as a name (not a string, comment, attribute or keyword
    argument, nor a parameter on its binding line) spelled as ``spellings`` says; None if none."""
    out: list[str] = []
    last = 0
    changed = False
    line_no, counted = 0, 0  # the line of ``counted``: for ``unsafe``, the numbers of checked lines
    for m in _scanner(tuple(sorted(names))).finditer(text):
        if m.group("skip") is not None:
            continue
        start, end = m.span("name")
        if not _word_starts_at(text, start):
            continue
        # A name before "." or "(" is read (the common case: torch.ops..., getattr(...)), and a
        # primary expression in its place keeps the line's syntax; only otherwise can it be a
        # binding's right-hand side or a keyword argument's name, and the line is checked.
        if text[end : end + 1] not in (".", "("):
            if bindings and _is_binding(text, start, end, bindings):
                continue
            if _is_keyword_argument(text, start, end):
                continue
            if unsafe is not None:
                line_no += text.count("\n", counted, start)
                counted = start
                unsafe.add(line_no)
        out += [text[last:start], spellings.of(_nfkc(m.group("name")))]
        last = end
        changed = True
    if not changed:
        return None
    out.append(text[last:])
    return "".join(out)


def _is_binding(text: str, start: int, end: int, bindings: dict[str, str]) -> bool:
    """Whether the name at ``text[start:end]`` is the parameter on its own binding line."""
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[end:line_end].strip():
        return False
    line = text[text.rfind("\n", 0, start) + 1 : line_end].strip()
    return bindings.get(line) == _nfkc(text[start:end])


def _is_keyword_argument(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` is the name of a keyword argument (``f(a, k = v)``)."""
    after = re.match(r"[ \t]*=(?!=)", text[end : end + 8])
    if after is None:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    before = _ANSI.sub("", text[line_start:start]).rstrip()
    if not before.endswith(("(", ",")):
        return False
    depth = 0
    for ch in before:
        depth += ch in "([{"
        depth -= ch in ")]}"
    return depth > 0


class _Spellings:
    """How a redirected name is written: a fresh local for another node's local; for a global, an
    expression that imports it (no new global, so every importer of the code's globals works);
    else the object bound under a fresh global name."""

    def __init__(self, code, namespace, params: _Parameters, names: set[str]) -> None:
        self.code = code
        self.namespace = namespace
        self.params = params
        self.taken = set(params.keys) | names
        self.words = code.src
        self.chosen: dict[str, str] = {}
        self.to_bind: dict[str, Any] = {}

    def of(self, name: str) -> str:
        if name not in self.chosen:
            self.chosen[name] = self._choose(name)
        return self.chosen[name]

    def _fresh(self, base: str) -> str:
        while True:
            candidate = self.namespace.create_name(base, None)
            if (
                candidate not in self.taken
                and candidate.isidentifier()
                and not _has_word(_words([candidate]), self.words)
            ):
                self.taken.add(candidate)
                return candidate
            base = candidate

    def _choose(self, name: str) -> str:
        if name in self.code.globals:
            obj = self.code.globals[name]
        elif name in _ns.custom_builtins():
            obj = _ns.custom_builtins()[name].obj
        elif name in builtins.__dict__:
            obj = builtins.__dict__[name]
        else:  # another node's local (or one the generator writes): a fresh local
            return self._fresh(name)
        expression = _import_expression(name, obj)
        if expression is not None and "__import__" not in self.params.keys and "type" not in self.params.keys:
            return expression
        alias = self._fresh(name)
        self.to_bind[alias] = obj
        return alias

    def bind(self, globals_: dict) -> None:
        globals_.update(self.to_bind)


def _import_expression(name: str, obj: Any) -> str | None:
    """An expression that evaluates to ``obj`` with builtins only, derived from how torch imports
    ``name`` (``_custom_builtins``' import statements) or where ``obj`` lives; None if none."""
    illegal_identifiers: list[str] = []
    custom = _ns.custom_builtins().get(name)
    if custom is not None and custom.obj is obj:
        illegal_identifiers.append(_from_import_statement(custom.import_str))
    if builtins.__dict__.get(name, None) is obj:
        illegal_identifiers.append(f"__import__('builtins').{name}")
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        illegal_identifiers.append(f"{_module_expression(module)}.{qualname}")
    for expression in illegal_identifiers:
        if expression and _evaluates_to(expression, obj):
            return expression
    return None


def _module_expression(module: str) -> str:
    return (
        f"__import__({module!r})" if "." not in module else f"__import__({module!r}, fromlist=['__name__'])"
    )


def _from_import_statement(statement: str) -> str:
    """``import torch`` -> ``__import__('torch')``; ``from math import inf`` ->
    ``__import__('math').inf``; ``NoneType = type(None)`` -> ``type(None)``."""
    (node,) = ast.parse(statement).body
    if isinstance(node, ast.Import) and len(node.names) == 1:
        return _module_expression(node.names[0].name)
    if isinstance(node, ast.ImportFrom) and node.module and len(node.names) == 1 and not node.level:
        return f"{_module_expression(node.module)}.{node.names[0].name}"
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return f"({ast.unparse(node.value)})"
    return ""


def _evaluates_to(expression: str, obj: Any) -> bool:
    try:
        value = eval(expression, {"__builtins__": builtins})  # noqa: S307 - our own expression
    except Exception:  # noqa: BLE001
        return False
    return value is obj or (
        isinstance(obj, float) and isinstance(value, float) and math.isnan(obj) and math.isnan(value)
    )


def _compile_check(src: str) -> None:
    """Raise SyntaxError unless ``src`` (colour codes removed) is valid Python."""
    compile(_ANSI.sub("", src), "<torch_export_names: rewritten fx code>", "exec")


class _Renamed:
    """A placeholder as the code generator sees it, with another target (the node is not touched)."""

    __slots__ = ("_node", "target")

    def __init__(self, node: torch.fx.Node, target: str) -> None:
        self._node = node
        self.target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)

    def __repr__(self) -> str:
        return repr(self._node)


def _regenerated(graph, params: _Parameters, shadowing: list[_Param], namespace, before, stock, regenerate):
    """Step 4: generate with the shadowing under fresh names, redirect every use of their names,
    then give the parameters their names back."""
    _ns.restore_namespace(namespace, before)
    keys = {p.key for p in shadowing}
    for key in keys:  # no local or registered global of this code may take a shadowing parameter's name
        _ns.reserve_name(namespace, key)
    taken = set(re.findall(r"\w+", stock.src)) | params.keys
    fresh: dict[str, str] = {}
    for p in shadowing:
        name = f"{p.key}_param"
        while name in taken or _ns.is_used(namespace, name):
            name += "_"
        taken.add(name)
        fresh[p.name] = name
    nodes: list[Any] = []
    for node in graph.nodes:
        target = node.target
        if node.op == "placeholder" and isinstance(target, str) and target.lstrip("*") in fresh:
            bare = target.lstrip("*")
            node = _Renamed(node, target[: len(target) - len(bare)] + fresh[bare])
        nodes.append(node)
    codegen = _with_orig_args(_ns.codegen_of(graph), lambda a: fresh.get(a, a))
    code = regenerate(nodes, codegen)
    spellings = _Spellings(code, namespace, params, keys)
    src = _rewrite(code.src, keys, spellings)
    if src is None:  # nothing but the parameters used the names: torch's code is right
        _ns.restore_namespace(namespace, before)
        return stock
    back = {new: old for old, new in fresh.items()}
    code.src = _words(back).sub(
        lambda m: back[m.group()] if _word_starts_at(m.string, m.start()) else m.group(), src
    )
    spellings.bind(code.globals)
    _compile_check(code.src)
    if _parameters_of(code.src) != _parameters_of(stock.src):
        raise AssertionError("the rewritten code would take other parameters than torch's")
    return code


def _parameters_of(src: str) -> list[str]:
    fn = symtable.symtable(_ANSI.sub("", src), "<fx code>", "exec").get_children()[0]
    assert isinstance(fn, symtable.Function)
    return list(fn.get_parameters())
