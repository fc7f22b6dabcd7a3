"""The upstream changes, commit by commit: what each commit changes (make_stack.py applies it).

Two series against v2.15.0: the #202927 stack (``COMMITS``: PR A records names, PR B
fixes the code generator), and the HOP-naming PR on its own (``HOPS``: PR C), which does
not depend on the stack. Each commit is a list of edits. An int is that edit of patches/recipe.py (the
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


MESSAGE_1 = (
    """\
[fx] Record node names assigned through Node.__setattr__

"""
    + recipe.RECORDING_BUG
    + "\n"
    + recipe.RECORDING_FIX
    + """
Recording in __setattr__ rather than converting each assigning site
covers the sites outside torch.export too, and those added later. It
costs about 2 us per new name (202 writes in an export of a 241-node
program; the measurement is in the PR description).

Part of #202927

Test Plan:
python -m pytest test/test_fx.py -k test_assigned_node_name
python -m pytest test/export/test_export.py -k "records or recorded"
"""
)

MESSAGE_2 = (
    """\
[fx] Keep parameters of generated code apart from the globals it writes

"""
    + recipe.SHADOWING_EXAMPLE
    + "\n"
    + recipe.SHADOWING_CAUSE
    + "\n"
    + recipe.SHADOWING_FIX
    + """
Fixes #202927

Test Plan:
python -m pytest test/test_fx.py -k "codegen_parameter_named or codegen_unchanged or codegen_boxed"
python -m pytest test/export/test_export.py \\
  -k "named_inf or codegen_global or named_round or reexport_of_module"
"""
)

MESSAGE_3 = (
    """\
[export] Name HOP subgraph placeholders after their operands from one table

"""
    + recipe.HOP_NAMING
    + """
Printed programs with these subgraphs change; the expected outputs in
test_control_flow.py, test_passes.py and test_export.py (test_hints_wrapper)
are updated.

Related to #202927 (names, not the bug itself).

Test Plan:
python -m pytest test/export/test_export.py \\
  -k "subgraph_placeholder_names or operand or test_hints_wrapper"
python -m pytest test/functorch/test_control_flow.py -k "while_loop and export"
python -m pytest test/export/test_passes.py -k "predispatch_autocast or move_device_submod"
"""
)

COMMITS = [  # the #202927 stack: PR A, then PR B
    Commit(MESSAGE_1, (*recipe.PART_A, *stack_tests.COMMIT_1)),
    Commit(MESSAGE_2, (*recipe.PART_B, *stack_tests.COMMIT_2)),
]
HOPS = [  # PR C, a series of its own
    Commit(MESSAGE_3, (*recipe.PART_C, *stack_tests.COMMIT_3)),
]


def touched_paths() -> list[str]:
    paths = set()
    for commit in [*COMMITS, *HOPS]:
        for edit in commit.edits:
            paths.add(recipe.EDITS[edit].alts[0].path if isinstance(edit, int) else edit[0])
    return sorted(paths)
