#!/usr/bin/env python3
"""Regenerate patches/torch-<version>.patch and .sha256 from pristine installed torch.

    python patches/make_patches.py 2.13.0=/path/to/site-packages [2.14.1=...] ...

For each version: copies the files the fix touches out of that site-packages
into a scratch git repository at their torch repository paths (torch/fx/graph.py,
...), commits them as they are, applies EDITS below (each ``old`` text must
occur exactly as often as stated, or generation stops), adds
patches/test_export_node_names.py as test/export/test_export_node_names.py,
commits with MESSAGE, and writes ``git format-patch`` output. Author and dates
are fixed, so the same inputs give byte-identical patches. The .sha256 file
lists the pristine files in ``sha256sum`` format, relative to site-packages
(``sha256sum -c`` works from there); ``python -m torch_export_names.patches
apply`` refuses files that do not match it.

A maintainer's tool, not part of the installed package: it needs the pristine
torch of each version (one virtual environment per release).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST_SOURCE = HERE / "test_export_node_names.py"
TEST_PATH = "test/export/test_export_node_names.py"

SUBJECT = (
    "[export] Record the node names torch.export assigns and keep them legal; "
    "name autocast, while_loop and scan subgraph placeholders"
)

MESSAGE = f"""{SUBJECT}

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

Backends work around it by writing the namespace's private state
(ExecuTorch's Qualcomm and Samsung pass managers).

The same direct assignment also skips the namespace's legality check:
create_name never hands out a keyword, a builtin or a global of the code
torch.fx generates (torch.fx.graph._illegal_names: inf, nan, device,
torch, pytree, fx_pytree, NoneType, ...). An input called inf becomes a
parameter of the generated forward and shadows the global inf, so
ExportedProgram.module() silently computes the wrong result:

    class M(torch.nn.Module):
        def forward(self, inf):
            return inf * float("inf") + inf

    x = torch.tensor([2.0, -3.0])
    torch.export.export(M(), (x,)).module()(x)  # [6., 6.], eager: [inf, -inf]

An input called nan is wrong the same way; device, torch, pytree and
fx_pytree make module() crash; inside a cond branch (whose placeholders
take the operands' names) the same happens.

_rename_without_collisions, which computes every name placeholder
naming and HOP subgraph naming assign, now suffixes a name that
create_name would refuse as it suffixes a taken one (inf -> inf_1); the
graph signature follows through name_map as before.
_get_forward_arg_names gives the parameters of module()'s generated
forward the same treatment, and _get_input_paths binds example kwargs
whose name changed by position. Calls by position are unchanged; a
keyword argument renamed this way (an input passed as inf=...) is no
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

AUTHOR = ("torch-export-names", "torch-export-names@users.noreply.github.com")
DATE = "2026-11-01T00:00:00+00:00"

# (repository path, old text, new text, expected number of occurrences)
EDITS: list[tuple[str, str, str, int]] = [
    (
        "torch/fx/graph.py",
        '''\
    def _rename_object(self, obj: object, name: str) -> None:
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)
''',
        '''\
    def _rename_object(self, obj: object, name: str) -> None:
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)

    def _record_name(self, obj: object, name: str) -> None:
        """Record ``name``, which the caller has already given to ``obj``.

        ``create_name`` will not hand ``name`` out again, and the per-base
        suffix counter is raised to ``name``'s suffix so that ``create_name``
        stays O(1). Unlike ``_rename_object``, ``obj`` need not be associated
        yet and ``name`` is not checked: callers that rename many objects at
        once may pass through a transient duplicate.
        """
        self._obj_to_name[obj] = name
        self._used_names.add(name)
        match = _name_regex.match(name)
        if match is not None and match.group(2) is not None:
            base, num = match.group(1), int(match.group(2))
            if num > self._base_count.get(base, 0):
                self._base_count[base] = num
''',
        1,
    ),
    (
        "torch/fx/node.py",
        '''\
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)
''',
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
        1,
    ),
    (
        "torch/_export/utils.py",
        '''\
    new_name = name
    if new_name in used_names:
        new_name = f"{key}_{find_available[key] + 1}"
''',
        '''\
    new_name = name
    # A name create_name refuses (a keyword, a builtin or a global of the code
    # torch.fx generates: inf, nan, device, torch, ...) would shadow that global
    # in the generated forward: suffix it as if it were taken.
    if new_name in used_names or new_name in torch.fx.graph._illegal_names:
        new_name = f"{key}_{find_available[key] + 1}"
''',
        1,
    ),
    (
        "torch/export/_trace.py",
        '''\
    # order of kwargs matters for input spec
    if kwargs:
        names.extend(kwargs.keys())

    return names
''',
        '''\
    # order of kwargs matters for input spec
    if kwargs:
        names.extend(kwargs.keys())

    # These become the parameters of the forward that ExportedProgram.module()
    # generates; one that create_name would refuse (inf, nan, device, torch, a
    # builtin) would shadow the global of that name in the generated code.
    illegal = torch.fx.graph._illegal_names
    namespace = torch.fx.graph._Namespace()
    namespace._used_names.update(n for n in names if n not in illegal)
    return [n if n not in illegal else namespace.create_name(n, None) for n in names]
''',
        1,
    ),
    (
        "torch/export/_unlift.py",
        '''\
    args, kwargs = example_inputs
    binded = signature.bind(*args, **kwargs)
''',
        '''\
    args, kwargs = example_inputs
    params = list(signature.parameters)
    if kwargs and len(params) == len(args) + len(kwargs):
        # forward_arg_names end with the kwargs in order; some may have been
        # renamed to legal names (_get_forward_arg_names)
        kwargs = dict(zip(params[len(args) :], kwargs.values()))
    binded = signature.bind(*args, **kwargs)
''',
        1,
    ),
    (
        "torch/_export/utils.py",
        '''\
            elif node.target._name == "map_impl":
                body_graph, array, args = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, body_graph.target), array + args)
                )
''',
        '''\
            elif node.target._name == "map_impl":
                body_graph, array, args = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, body_graph.target), array + args)
                )
            elif node.target._name == "wrap_with_autocast":
                # (device_type, dtype, enabled, cache_enabled, body, *operands)
                subgraph, phs = node._args[4], node._args[5:]
                subgraph_ph_tuples.append((getattr(gm, subgraph.target), phs))
            elif node.target._name == "while_loop":
                cond_graph, body_graph, carried, additional = node._args
                phs = (*carried, *additional)
                subgraph_ph_tuples.append((getattr(gm, cond_graph.target), phs))
                subgraph_ph_tuples.append((getattr(gm, body_graph.target), phs))
            elif node.target._name == "scan":
                # combine_fn(*init, *xs[i], *additional_inputs)
                combine_graph, init, xs, additional = node._args
                subgraph_ph_tuples.append(
                    (getattr(gm, combine_graph.target), (*init, *xs, *additional))
                )
''',
        1,
    ),
    (
        "torch/_export/utils.py",
        '''\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs):  # placeholder, retain name
                name_map[node.name] = hoo_phs[i].name
                node.name = node.target = hoo_phs[i].name
                _build_cache(node.name, find_available, used_names)
            else:  # non-placeholder, check for collisions
                node.name = _rename_without_collisions(
                    name_map, find_available, used_names, node.name, node.name
                )
''',
        '''\
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
''',
        1,
    ),
    (
        "torch/_export/utils.py",
        '''\
            node.name = node.target = name_map[node.name]
''',
        '''\
            node._assign_name(name_map[node.name])
            node.target = node.name
''',
        1,
    ),
    (
        "torch/_export/utils.py",
        '''\
        elif node.name in name_map:
            node.name = name_map[node.name]
''',
        '''\
        elif node.name in name_map:
            node._assign_name(name_map[node.name])
''',
        1,
    ),
    (
        "torch/export/exported_program.py",
        '''\
        new_ph.name = new_ph.target = old_ph.name
''',
        '''\
        new_ph._assign_name(old_ph.name)
        new_ph.target = old_ph.name
''',
        1,
    ),
    (
        "torch/export/exported_program.py",
        '''\
        node.name = _rename_without_collisions(
            name_map, find_available, used_names, node.name, node.name
        )
''',
        '''\
        node._assign_name(
            _rename_without_collisions(
                name_map, find_available, used_names, node.name, node.name
            )
        )
''',
        1,
    ),
    (
        "torch/export/exported_program.py",
        '''\
        if name is not None:
            output.name = name
''',
        '''\
        if name is not None:
            output._assign_name(name)
''',
        1,
    ),
    (
        "torch/export/_trace.py",
        '''\
                node.name = node.target = buffer_to_constant[node.name]
''',
        '''\
                node._assign_name(buffer_to_constant[node.name])
                node.target = node.name
''',
        1,
    ),
    (
        "torch/export/_unlift.py",
        '''\
        new_output.name = output_node.name
''',
        '''\
        new_output._assign_name(output_node.name)
''',
        1,
    ),
    (
        "torch/export/experimental/__init__.py",
        '''\
            new_node.name = old_node.name
''',
        '''\
            new_node._assign_name(old_node.name)
''',
        1,
    ),
    (
        "torch/_export/serde/serialize.py",
        '''\
                    placeholder_node.name = node_name
''',
        '''\
                    placeholder_node._assign_name(node_name)
''',
        1,
    ),
    (
        "torch/_export/serde/serialize.py",
        '''\
                placeholder_node.name = node_name
''',
        '''\
                placeholder_node._assign_name(node_name)
''',
        1,
    ),
    (
        "torch/_export/serde/serialize.py",
        '''\
        # overwrite name
        fx_node.name = name
''',
        '''\
        # overwrite name
        fx_node._assign_name(name)
''',
        1,
    ),
]

FILES = sorted({path for path, *_ in EDITS})


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_DATE": DATE,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin, check=True, capture_output=True, text=True, env=env,
    ).stdout


def _count(text: str, old: str) -> int:
    # Whole lines only: "x.name = y" must not match inside "xx.name = y".
    return len(re.findall("(?m)^" + re.escape(old), text))


def _edit(path: str, text: str) -> str:
    for edit_path, old, new, expected in EDITS:
        if edit_path != path:
            continue
        found = _count(text, old)
        if found != expected:
            raise SystemExit(
                f"{path}: expected {expected} occurrence(s) of\n{old}found {found}; "
                "this torch's source differs from what the recipe knows"
            )
        text = re.sub("(?m)^" + re.escape(old), lambda _m, new=new: new, text)
    return text


def make(version: str, site: Path) -> None:
    version_py = (site / "torch" / "version.py").read_text()
    installed = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", version_py).group(1)
    if installed.split("+")[0] != version:
        raise SystemExit(f"{site} holds torch {installed}, not {version}")
    with tempfile.TemporaryDirectory(prefix=f"torch-{version}-") as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q", "-b", "main")
        for path in FILES:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(site / path, repo / path)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"torch {version} release files")
        for path in FILES:
            (repo / path).write_text(_edit(path, (repo / path).read_text()))
        (repo / TEST_PATH).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TEST_SOURCE, repo / TEST_PATH)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-F", "-", stdin=MESSAGE)
        patch = _git(repo, "format-patch", "-1", "--stdout", "--no-signature", "--stat=80")
    (HERE / f"torch-{version}.patch").write_text(patch)
    lines = [
        f"{hashlib.sha256((site / p).read_bytes()).hexdigest()}  {p}\n" for p in FILES
    ]
    (HERE / f"torch-{version}.sha256").write_text("".join(lines))
    print(f"patches/torch-{version}.patch: {len(FILES)} torch files + {TEST_PATH}")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for arg in argv:
        version, sep, site = arg.partition("=")
        if not sep:
            raise SystemExit(f"expected VERSION=SITE_PACKAGES, got {arg!r}")
        make(version, Path(site))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
