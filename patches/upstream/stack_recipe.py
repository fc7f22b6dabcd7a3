"""The upstream stack, commit by commit: what each commit changes (make_stack.py applies it).

Each commit is a list of edits. An int is that edit of patches/recipe.py (the
recipe of the release patches), in its 2.15.0 form; a (path, old, new) tuple replaces
``old`` (whole lines, exactly once) by ``new`` in the file as the commits before left
it. The three commits together give the torch files of torch-2.15.0.patch (the package's release patch)
(``make_stack.py --check``); the release patches' own test file is not part of the
stack: its tests are hunks in PyTorch's test files here.
"""

from __future__ import annotations

import dataclasses

import recipe  # patches/recipe.py: the release patches' edits and the paragraphs shared here
import stack_tests


@dataclasses.dataclass(frozen=True)
class Commit:
    message: str
    edits: tuple


_UTILS = "torch/_export/utils.py"

# commit 1: the same names, recorded
_HOO_LOOP_RECORDED = """\
        for i, node in enumerate(subgraph.graph.nodes):
            if i < len(hoo_phs):  # placeholder, retain name
                name_map[node.name] = hoo_phs[i].name
                node._assign_name(hoo_phs[i].name)
                node.target = node.name
                _build_cache(node.name, find_available, used_names)
            else:  # non-placeholder, check for collisions
                node._assign_name(
                    _rename_without_collisions(
                        name_map, find_available, used_names, node.name, node.name
                    )
                )
"""

MESSAGE_1 = (
    """\
[fx] Record the node names torch.export assigns (Node._assign_name)

Summary:
"""
    + recipe.RECORDING_BUG
    + """
Passes that copy nodes or name new nodes after an op (ExecuTorch's
Qualcomm decompositions of scaled_dot_product_attention and roll, for
example) hit this on ordinary models; backends work around it by writing
the namespace's private state.

Add one helper, Node._assign_name(name): it sets the name and records it
through the new _Namespace._record_name, which keeps _used_names,
_obj_to_name and _base_count consistent (create_name stays O(1): the
per-base counter is raised to the recorded suffix). Unlike Node._rename
it does not make the name unique: these callers compute unique names
for a whole graph and pass through a transient duplicate while renaming
(placeholder naming names the input "mul" while the op is still "mul",
then renames the op "mul_1"). Every site above now uses it instead of
assigning node.name; the audit (every ".name =" under torch/export and
torch/_export) found no other node-name site: the rest name signature
specs or serialized schema entries, not FX nodes.

Part of #202927

User-visible change:
None in the names export prints: every node gets the name it got
before, in every graph (no expected output changes). What changes is
that names are recorded, so a node created afterwards by create_node
(graph.call_function(...), node_copy, a pass) no longer gets a name that
is already taken. Such a node may get a higher suffix than before where
the old counter lagged behind the assigned names; before, that was
exactly the case where it could collide.

Test Plan:
python -m pytest test/test_fx.py -k test_node_assign_name
python -m pytest test/export/test_export.py -k "records or recorded"
python -m pytest test/export/test_export.py

The new tests export models whose names collide (an input called mul,
parameters, buffers and constants, a cond branch, run_decompositions,
torch.export.load of an input called input, module()'s unlift,
_copy_graph_module_and_signature) and check, for every graph and
subgraph, that each node name is recorded and that create_node asked
for any of those names hands out a new one; the graph then lints. They
are TestExport methods, so test_export.py's strict, serdes,
retraceability and decomposition variants pick them up (those variants
were not run for this description). Every other test of test_export.py
has the same outcome with and without this commit.

Alternatives considered:
Instructions counted with callgrind, switched on only around the call
(patches/upstream/CHECK.md of torch-export-names has the commands):
torch.export.export (non-strict) of a 1-layer Llama decoder (116 nodes)
takes 731.8M instructions on stock 2.15.0 (3 runs, spread 0.09%); per
call, over 10,000 calls on one graph, a plain `node.name = x` costs
10.9k, and:
- Record in Node.__setattr__ whenever "name" is set: +9.8k per name
  set; export sets 116 names: about 1.14M, 0.16% of export, plus a
  test on every attribute write of every Node (not in that figure).
  Measured on the whole export: +0.55M (+0.08%, inside the spread).
  Every graph in torch pays it, not only torch.export's, and a write
  that fx itself makes (Node._rename) would record twice.
- Re-sync the namespace once at the end of placeholder_naming_pass
  (record every node of every graph): +9.8k per node, all 116 nodes:
  about 1.14M, 0.16%; measured on the whole export: +1.21M (+0.17%).
  The other renaming sites (run_decompositions, load, module(), strict
  export's constants) need their own re-sync, and a site added later
  silently misses it.
- This helper: +10.2k per call against a plain assignment; export calls
  it once per node of the program (116 on 1 layer, 395 on 4 layers):
  about 1.18M and 4.02M, 0.16% of export. Measured on the whole
  export: +0.29M (+0.04%, inside the spread).
The three cost the same to within the noise; the helper is chosen
because the recording sits where the name is assigned, in one method
to delete once names are assigned through the namespace.

Why this can land alone:
It changes no visible name, no golden and no API; it only makes names
that torch.export already assigns known to the graph that holds them.
The two commits that follow (parameters of fx's generated code, HOP
subgraph placeholders) are independent of each other.
"""
)

MESSAGE_2 = (
    """\
[fx] Keep parameters of the generated code from shadowing the names its body uses

Summary:
A parameter of the code torch.fx generates can shadow a global or a
local of that code, and the graph module then computes something else
than the graph:

"""
    + recipe.SHADOWING_EXAMPLE
    + "\n"
    + recipe.SHADOWING_CAUSE
    + "\n"
    + recipe.SHADOWING_FIX
    + """
Part of #202927

User-visible change:
Only the generated code of graphs with such a parameter: the body's
other uses of the name get a suffixed name (inf_2 above), and the
graph module computes what the graph says. No node name, placeholder,
input spec, signature or keyword changes; nothing else in
torch.export changes. Code of every other graph is byte-identical
(test_codegen_unchanged_when_no_parameter_collides).

Test Plan:
python -m pytest test/test_fx.py -k "codegen_parameter_named or codegen_unchanged"
python -m pytest test/export/test_export.py -k "named_inf or \\
  codegen_global or named_round or reexport_of_module"

Alternatives considered:
- Rename the argument at export (inf -> inf_1): fixes the numbers but
  changes the calling convention: module() no longer takes inf=...,
  the dynamic_shapes dict written for the model no longer fits a
  re-export, the guards (L['inf']) need rewriting, and a program saved
  by an older torch keeps the old name. It does nothing for
  symbolic_trace.
- Give every global the generated code writes a name no parameter
  takes, through add_global: the literals (repr of inf, nan, devices,
  slice, Ellipsis, range; getattr; torch.ops qualified names; fx_pytree
  and pytree) are written in many places, and a new one would reopen
  the bug. Reading the uses off the generated code covers them all.
Cost: nothing is done unless some parameter could collide: its name is
a builtin or a registered global of the generated code (inf, nan,
device, torch, ...), has a numeric suffix, or is not its placeholder's
own name. For every other graph the helper costs a few membership tests
per parameter: on a 3,003-node graph with parameters x and y, 3 us per
code generation against 50 ms for recompile() (0.006%). A parameter
that could collide costs a copy of the namespace and a check of the
generated code (an input called input: recompile() 1.02x); one that
does collide, a second generation and an ast parse (inf: 2.7x).
Measured on torch 2.15.0 (patches/upstream/cost/codegen_cost.py of
torch-export-names).

Why this can land alone:
It does not depend on commit 1 or 3 (its tests included) and changes
only torch/fx/graph.py.
"""
)

MESSAGE_3 = """\
[export] Name while_loop, scan and autocast subgraph placeholders after their operands

Summary:
_name_hoo_subgraph_placeholders names the placeholders of cond,
map_impl and wrap_with_set_grad_enabled subgraphs after the operands
they receive; those of wrap_with_autocast, while_loop (cond_fn and
body_fn) and scan were left as arg0_1, arg1_1, ... Passes that map
subgraph placeholders to the HOP's operands by name then fail
(ExecuTorch's DecomposeWrapWithAutocast: KeyError: 'arg0_1'), and the
printed program does not say which operand a placeholder is.

Name them too. Two fixes come with it: an operand passed twice (a
while_loop carrying (y, y)) gives the second placeholder a suffixed
name (clone, clone_1) instead of a duplicate name in one graph, and
only placeholders take operand names (a subgraph with fewer
placeholders than operands no longer renames its first ops).

User-visible change:
Printed exported programs name the placeholders of these subgraphs
after their operands: a while_loop body that took arg0_1, arg1_1 now
takes it, x; colliding subgraph ops are re-suffixed as for cond. The
expected outputs that print such subgraphs are updated here:
- test_control_flow.py, TestControlFlowTraced:
  test_while_loop_op_int_carry_export (it_1, x_1 -> it_1, x),
  test_while_loop_op_constant_and_symint_output_export
  (u0_1, x_1 -> item, sin), test_while_loop_op_pytree_int_carry_export
  (arg0_1, arg5_1 -> sym_size_int_1, sin);
- test_passes.py, TestPasses: test_predispatch_autocast (sum_1 ->
  getitem, add_1 -> getitem_1) and test_move_device_submod (arg0_1 -> x;
  CUDA only: not run for this description).
The documentation pages of torch.while_loop and torch.scan
(docs/source/higher_order_ops/) print such programs from code cells
that run when the docs are built: they change with no edit here.

Test Plan:
python -m pytest test/export/test_export.py -k "take_operand_names or operand_passed_twice"
python -m pytest test/functorch/test_control_flow.py -k \\
  "while_loop_op_int_carry_export or \\
  while_loop_op_constant_and_symint_output_export or \\
  while_loop_op_pytree_int_carry_export"
python -m pytest test/export/test_passes.py -k "predispatch_autocast or move_device_submod"

Alternatives considered:
- Leave the placeholders as they are and have passes map subgraph
  placeholders to operands by position. Passes already written against
  cond's naming (by name) would still fail for these HOPs.
Cost: no work per name beyond commit 1's (whose description has its
measured cost).

Why this can land alone:
It needs only commit 1 (Node._assign_name); commit 2 is independent of
it. It is the only commit of the stack that changes printed names.

Fixes #202927
"""

COMMITS = [
    Commit(
        MESSAGE_1,
        (
            0,  # _Namespace._record_name
            1,  # Node._assign_name
            (_UTILS, recipe.HOO_LOOP_STOCK, _HOO_LOOP_RECORDED),
            *range(6, 17),  # placeholder naming, run_decompositions, _trace, unlift, ...
            *stack_tests.COMMIT_1,
        ),
    ),
    Commit(
        MESSAGE_2,
        (2, 3, *stack_tests.COMMIT_2),  # Graph._keep_parameter_names, _python_code
    ),
    Commit(
        MESSAGE_3,
        (
            4,  # the wrap_with_autocast, while_loop and scan branches
            (_UTILS, _HOO_LOOP_RECORDED, recipe.HOO_LOOP_OPERANDS),
            *stack_tests.COMMIT_3,
        ),
    ),
]


def touched_paths() -> list[str]:
    paths = set()
    for commit in COMMITS:
        for edit in commit.edits:
            paths.add(recipe.EDITS[edit].alts[0].path if isinstance(edit, int) else edit[0])
    return sorted(paths)
