"""Group the failures of a pytest junit report by root cause (issue 13 survey).

    python scripts/survey_failures.py junit.xml [--markdown] [--probe probe.log]

Each failing or erroring test is matched against CAUSES (the first pattern
found in its message or traceback wins); unmatched ones are listed under
"unclassified" with their message, to be read by hand. With the output of
survey_probe.py saying ``torch.fx.graph:_illegal_names`` is missing, the
FOLLOW_ONS patterns apply too: every pass of the package then gives up
(warns, returns 0 or []), and tests that expected it to act fail in many ways.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

# (regex on message + traceback, one-line root cause)
CAUSES = [
    (r"teardown with \"assert <function ExportedProgram.__init__",
     "teardown: the hook was left installed by the test's own failure (follow-on, not a cause)"),
    (r"no attribute 'forward_arg_names'",
     "`ModuleCallSignature.forward_arg_names` missing (torch keeps the names in "
     "`ep.graph_module.meta[\"forward_arg_names\"]`); `passes._snapshot_program`/"
     "`find_illegal_names`/`_legalize_forward_arg_names` read it unguarded, so the hook "
     "raises AttributeError from every export"),
    (r"_illegal_names is missing",
     "`torch.fx.graph._illegal_names` missing (torch checks `_Namespace._is_illegal_name`: "
     "keywords, builtins, `_custom_builtins`); every pass raises/no-ops"),
    (r"output_node",
     "`Graph.output_node()` missing (tests/conftest.py `add_named_node`, user scripts in tests)"),
    (r"cannot import name '_name_regex'",
     "`torch.fx.graph._name_regex` missing (test imports it; torch has "
     "`_Namespace()._name_suffix_regex`)"),
    (r"no attribute 'draft_export'", "`torch.export.draft_export` missing"),
    (r"No module named 'torch.export.passes'",
     "`torch.export.passes` (`move_to_device_pass`) missing: test_hook.py does not collect"),
    (r"No module named 'torch._higher_order_ops.scan'",
     "`torch._higher_order_ops.scan` missing: test_propagate_subgraph_names.py does not collect"),
    (r"_enter_autocast is missing val field",
     "autocast regions not exportable (no `wrap_with_autocast` HOP; verifier rejects "
     "`_enter_autocast`): test fixture fails"),
    (r"assert \['mul', 'x'\] == \['x', 'mul'\]",
     "cond branch placeholders come in a different order (`mul, x`, not `x, mul`)"),
    (r"JSONDecodeError",
     "`doctor --json` crashed before printing (follow-on of the cause above it)"),
    (r"no attribute 'child'",
     "`TreeSpec.child()` missing (pytree API of this torch: `children_specs`); "
     "`passes._is_args_kwargs_spec` calls it while legalizing `forward` argument names, so "
     "`repair` raises for any program with an illegal input name"),
    (r"placeholder movedim = movedim\(\)",
     "scan's `xs` operand is a `movedim` node in this torch, so the propagated placeholder is "
     "`movedim`, not `xs` (expected-output test; naming behaviour differs)"),
    (r"Higher order ops do not support aliasing",
     "this torch refuses to export a `while_loop` carrying the same tensor twice "
     "(`Input-to-input aliasing detected`): the `WhileSameOperandTwice` model cannot be exported"),
    (r"assert_close\(ep\.module\(\)\(\*args\), model\(\*args\)\)",
     "`torch.export` of a `while_loop` carrying the same tensor twice computes something "
     "else than eager already before any renaming (torch bug in this release)"),
]


FOLLOW_ONS_TREESPEC = [
    (r"Outcome\(case='torch-(inf|device)-input', repaired=False|"
     r"Tensor-likes are not close|DID NOT WARN|assert \['nonetype', 'device'\] == \[\]",
     "follow-on of `TreeSpec.child` missing: `repair` raised, so the hook logged it and left "
     "the program as torch built it (or the expected rename warning never came)"),
]


FOLLOW_ON = (
    "follow-on of `_illegal_names` missing: `repair`/`reserve_node_names`/"
    "`propagate_subgraph_names` gave up (returned 0, renamed nothing, never reached the "
    "test's injected failure or expected warning), so the test's expectation is not met"
)
FOLLOW_ONS = [
    (r"Tensor-likes are not close|'Tensor' object (is not callable|has no attribute)|"
     r"\['inf', 'device'\] == \['inf_1', 'device_1'\]|\['arg0_1', 'arg1_1'\] == \['it', 'inf_1'\]|"
     r"assert 'mul' not in \{",
     "the stock-torch bug shows through `repair` (wrong `module()` result, names unchanged, "
     "`mul` handed out again): `repair` was a no-op because `torch.fx.graph._illegal_names` "
     "is missing (it warned PrivateStateMissing)"),
    (r"find_unrecorded_names\(|assert 0 == (50|3|1000)|recorded \[0, 0, 0\]",
     "`find_unrecorded_names`/`reserve_node_names` silently return []/0 "
     "(follow-on of `_illegal_names` missing: `_checked_graphs` gives up)"),
    (r"DID NOT WARN|TorchExportNamesWarning not triggered|assert 0 > 0|AssertionError: 0 != \d|"
     r"'arg0_1' != |placeholder arg0_1|'repair failed|Node redefined name|"
     r"\['x', 'nan'\] == \['x', 'nan_1'\]|is ORIGINAL_INIT", FOLLOW_ON),
]


def classify(text: str, follow_ons: bool = False) -> str | None:
    extra = FOLLOW_ONS if follow_ons else FOLLOW_ONS_TREESPEC
    for pattern, cause in CAUSES + extra:
        if re.search(pattern, text):
            return cause
    return None


def _test_id(classname: str, name: str) -> str:
    """pytest's node id from junit's classname/name (``tests.test_x.Class`` + ``test_y``)."""
    if not classname:  # a module that failed to import: name is its dotted path
        return name.replace(".", "/") + ".py (collection)"
    parts = classname.split(".")
    cls = [p for p in parts if p[:1].isupper()]
    mod = [p for p in parts if not p[:1].isupper()]
    return "::".join(["/".join(mod) + ".py", *cls, name])


def main(path: str, markdown: bool, probe: str | None) -> int:
    follow_ons = bool(probe) and "NO   torch.fx.graph:_illegal_names" in open(probe).read()
    by_cause: dict[str, list[str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        for kind in ("failure", "error"):
            el = case.find(kind)
            if el is None:
                continue
            msg = el.get("message") or ""
            text = msg + "\n" + (el.text or "")
            test = _test_id(case.get("classname") or "", case.get("name") or "")
            cause = classify(text, follow_ons)
            if cause is None:
                cause = "unclassified: " + re.sub(r"\s+", " ", msg)[:200]
            by_cause.setdefault(cause, []).append(f"{test}" + (" [error]" if kind == "error" else ""))
    for cause, tests in by_cause.items():
        if markdown:
            print(f"- **{cause}** ({len(tests)}): " + ", ".join(f"`{t}`" for t in tests))
        else:
            print(f"{len(tests):3} {cause}")
            for t in tests:
                print(f"      {t}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    probe = args[args.index("--probe") + 1] if "--probe" in args else None
    sys.exit(main(args[0], "--markdown" in args, probe))
