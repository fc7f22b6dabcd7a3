"""What ``verify`` runs in its subprocess, against whichever torch that process imports.

    python -m torch_export_names.tools.torch_patch._child --out RESULT.json
        [--expect-torch-under DIR] [--tests TEST_FILE ...]

Checks, each reported as pass, fail or skip, with the hook NOT installed and the
package's code-generator guard (``codegen_guard``, which importing the package puts
in place) taken off, so that torch's own code generator is what runs:

- ``case``: every reproduction in ``torch_export_names.tools.cases.CASES``, run with
  ``repaired=False``; it passes only if ``find_unrecorded_names`` of the
  model's export is ``[]`` and ``run_case`` succeeds.
- ``entry``: every public torch.export entry point leaves no unrecorded name
  (skipped, with the reason, where this torch lacks it: draft_export,
  move_to_device_pass).
- ``guard``: programs torch without the patch handles, which the patch must
  handle the same way: an ``nn.Sequential`` (its argument is ``input``)
  exported with dynamic shapes and an argument called ``input``; each passes
  if it runs and matches eager, and its detail records what the caller sees
  (``forward``'s signature, node names, what a keyword call does), which
  ``verify`` compares between the two runs.
- ``test``: every test in the given torch-style test files (unittest); those
  of the classes in ``GUARD_TEST_CLASSES`` are reported as ``guard``.

Writes JSON to ``--out``. Exits 3, before any check, if torch was not
imported from under ``--expect-torch-under`` or if the hook is active.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import sys
import traceback
import unittest
from pathlib import Path
from typing import Any

# Test classes of the carried test file that guard what torch already does right
# (they must pass with and without the patch).
GUARD_TEST_CLASSES = ("TestNamesKept",)


def _first_line(text: object, limit: int = 240) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:limit]


def _check(kind: str, name: str, ok: bool | None, detail: str = "") -> dict:
    return {"kind": kind, "name": name, "ok": ok, "detail": detail}


def _cases() -> list[dict]:
    import torch

    from torch_export_names.passes import find_unrecorded_names
    from torch_export_names.tools.cases import CASES, executorch_missing, run_case

    out = []
    for case in CASES:
        if case.needs_executorch and executorch_missing():
            out.append(_check("case", case.name, None, executorch_missing() or ""))
            continue
        try:
            model, args = case.make()
            unrecorded = find_unrecorded_names(torch.export.export(model, args), strict=True)
            outcome = run_case(case, repaired=False)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            out.append(_check("case", case.name, False, f"{type(e).__name__}: {_first_line(e)}"))
            continue
        problems = []
        if unrecorded:
            problems.append(f"unrecorded names {unrecorded}")
        if not outcome.ok:
            problems.append(f"{outcome.stage}: {outcome.error}")
        out.append(_check("case", case.name, not problems, "; ".join(problems)))
    return out


def _move_to_device_pass():
    """``torch.export.passes.move_to_device_pass``, or None where this torch has none."""
    try:
        import torch.export.passes
    except ImportError:
        return None
    return getattr(torch.export.passes, "move_to_device_pass", None)


def _entries() -> list[dict]:
    import torch

    from torch_export_names.passes import find_unrecorded_names
    from torch_export_names.tools.cases import CollidingInputs, CondMulInput

    args = (torch.randn(2, 3), torch.randn(2, 3))

    def export(model=CollidingInputs, **kw):
        return torch.export.export(model(), args, **kw)

    def load():
        buf = io.BytesIO()
        torch.export.save(export(), buf)
        buf.seek(0)
        return torch.export.load(buf)

    draft_export = getattr(torch.export, "draft_export", None)
    move_to_device_pass = _move_to_device_pass()
    entries = {
        "torch.export.export": export,
        "torch.export.export(strict=True)": lambda: export(strict=True),
        "ExportedProgram.run_decompositions": lambda: export().run_decompositions(),
        "torch.export.load": load,
        "torch.export.draft_export": lambda: draft_export(CollidingInputs(), args),  # type: ignore[misc]
        "move_to_device_pass": lambda: move_to_device_pass(export(), "cpu"),
        "ExportedProgram.module()": lambda: export().module(),
        "ExportedProgram.module() with cond": lambda: export(CondMulInput).module(),
        "torch.export.unflatten": lambda: torch.export.unflatten(export()),
    }
    # Entry points this torch does not have: reported as skipped, with the reason.
    missing = {}
    if draft_export is None:
        missing["torch.export.draft_export"] = "this torch has no torch.export.draft_export"
    if move_to_device_pass is None:
        missing["move_to_device_pass"] = "this torch has no torch.export.passes.move_to_device_pass"
    out = []
    for name, make in entries.items():
        if name in missing:
            out.append(_check("entry", name, None, missing[name]))
            continue
        try:
            obj = make()
            if isinstance(obj, (torch.export.ExportedProgram, torch.fx.GraphModule)):
                unrecorded = find_unrecorded_names(obj, strict=True)  # nested graphs included
            else:  # an UnflattenedModule: GraphModules below a plain module
                unrecorded = [
                    f"{path}.{n}" if path else n
                    for path, mod in obj.named_modules()
                    if isinstance(mod, torch.fx.GraphModule)
                    for n in find_unrecorded_names(mod.graph, strict=True)
                ]
        except Exception as e:  # noqa: BLE001
            out.append(_check("entry", name, False, f"{type(e).__name__}: {_first_line(e)}"))
            continue
        out.append(
            _check("entry", name, not unrecorded, f"unrecorded names {unrecorded}" if unrecorded else "")
        )
    return out


def _outcome(call) -> str:
    """What ``call()`` does, as a caller sees it: "runs", or the exception's type and first line."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return f"{type(e).__name__}: {_first_line(e, 120)}"
    return "runs"


def _guards() -> list[dict]:
    import inspect

    import torch

    def sequential():
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(),
            torch.nn.Linear(4, 2),
        ).eval()

    class InputInput(torch.nn.Module):
        def forward(self, input):
            return input * 2 + 1

    def sequential_dynamic():
        model, new = sequential(), torch.randn(5, 3, 11, 9)
        Dim = torch.export.Dim
        if hasattr(Dim, "AUTO"):
            dims = {0: Dim.AUTO, 2: Dim.AUTO, 3: Dim.AUTO}
        else:  # torch 2.4: the ranges spelled out
            dims = {0: Dim("batch"), 2: Dim("height", min=4), 3: Dim("width", min=4)}
        ep = torch.export.export(model, (torch.randn(2, 3, 8, 8),), dynamic_shapes=(dims,))
        module = ep.module()
        torch.testing.assert_close(module(new), model(new))
        placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
        return (
            f"forward{inspect.signature(module.forward)}; placeholders {placeholders}; "
            f"module()(input=t): {_outcome(lambda: module(input=new))}"
        )

    def input_argument():
        model, x = InputInput(), torch.randn(3)
        ep = torch.export.export(model, (x,))
        module = ep.module()
        torch.testing.assert_close(module(x), model(x))
        by_keyword = torch.export.export(model, (), {"input": x}).module()
        torch.testing.assert_close(by_keyword(input=x), model(x))
        names = [n.name for n in ep.graph.nodes]
        return (
            f"forward{inspect.signature(module.forward)}; nodes {names}; "
            f"input spec {[s.arg.name for s in ep.graph_signature.input_specs]}; "
            f"module()(input=t): {_outcome(lambda: module(input=x))}; "
            f"exported by keyword: forward{inspect.signature(by_keyword.forward)}"
        )

    out = []
    for name, run in (
        ("nn.Sequential with dynamic shapes", sequential_dynamic),
        ("argument named input", input_argument),
    ):
        try:
            out.append(_check("guard", name, True, run()))
        except Exception as e:  # noqa: BLE001
            out.append(_check("guard", name, False, f"{type(e).__name__}: {_first_line(e)}"))
    return out


class _Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.checks: list[dict] = []

    @staticmethod
    def _name(test) -> str:
        return f"{type(test).__name__}.{test._testMethodName}"

    @staticmethod
    def _kind(test) -> str:
        return "guard" if type(test).__name__ in GUARD_TEST_CLASSES else "test"

    def _reason(self, err) -> str:
        exc_type, exc, _ = err
        return f"{exc_type.__name__}: {_first_line(exc)}"

    def addSuccess(self, test):
        self.checks.append(_check(self._kind(test), self._name(test), True))

    def addFailure(self, test, err):
        self.checks.append(_check(self._kind(test), self._name(test), False, self._reason(err)))

    def addError(self, test, err):
        self.checks.append(_check(self._kind(test), self._name(test), False, self._reason(err)))

    def addSkip(self, test, reason):
        self.checks.append(_check(self._kind(test), self._name(test), None, f"skipped: {reason}"))

    def addExpectedFailure(self, test, err):
        self.checks.append(_check(self._kind(test), self._name(test), True, "expected failure"))

    def addUnexpectedSuccess(self, test):
        self.checks.append(_check(self._kind(test), self._name(test), False, "unexpected success"))


def _tests(path: Path) -> list[dict]:
    saved_argv = sys.argv
    sys.argv = [str(path)]  # torch's common_utils reads its options from argv
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    except Exception as e:  # noqa: BLE001
        return [_check("test", path.name, False, f"import failed: {type(e).__name__}: {_first_line(e)}")]
    finally:
        sys.argv = saved_argv
    result = _Result()
    suite.run(result)
    return result.checks


def _detect() -> list[dict]:
    """The package's own detection: on a patched torch, ``is_affected()`` must say no (so the
    hook and ``repair`` change nothing there); on stock torch it says yes."""
    from torch_export_names import is_affected

    affected = is_affected()
    return [_check("detect", "is_affected() is False", not affected, "" if not affected else "True")]


def hook_installed_or_asked_for(hook_installed: bool, environ) -> bool:
    """Whether the export hook is in place or TORCH_EXPORT_NAMES asks for it, by the package's
    own reading of the variable (``_bootstrap.enabled``: ``false``, ``off``, ... leave it off)."""
    from torch_export_names import _bootstrap

    return hook_installed or _bootstrap.enabled(environ)


def records_assigned_names(torch: Any) -> bool:
    """Does this torch record a name assigned to ``node.name`` (the patch's part 1)?"""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.relu, (x,)).name = "relu_7"
    return graph.create_node("call_function", torch.relu, (x,), name="relu_7").name != "relu_7"


def keeps_parameter_names(torch: Any) -> bool:
    """Does this torch's code generator keep a parameter called ``inf`` apart from the global
    ``inf`` its code reads (the patch's part 2)? Asked of the code, not of a helper's name: the
    code generated for ``x + math.inf`` with ``x`` called ``inf`` adds infinity."""
    import math
    import operator

    graph = torch.fx.Graph()
    x = graph.placeholder("inf")
    graph.output(graph.call_function(operator.add, (x, math.inf)))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    return bool(module(torch.tensor(1.0)).item() == math.inf)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="torch_export_names.tools.torch_patch._child")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--expect-torch-under", type=Path)
    p.add_argument("--tests", nargs="*", type=Path, default=[])
    args = p.parse_args(argv)

    import torch
    import torch.fx.graph

    from torch_export_names import codegen_guard, hook

    # Importing the package put its code-generator guard in place: take it off, so
    # that what runs is this torch's own code generator, patched or not.
    codegen_guard.uninstall()
    info: dict[str, Any] = {
        "version": torch.__version__,
        "torch_file": torch.__file__,
        "fx_graph_file": torch.fx.graph.__file__,
        "records_assigned_names": records_assigned_names(torch),
        "keeps_parameter_names": keeps_parameter_names(torch),
        "hook_installed": hook.is_installed(),
        "codegen_guard_installed": codegen_guard.is_installed(),
        "TORCH_EXPORT_NAMES": os.environ.get("TORCH_EXPORT_NAMES"),
    }
    problems = []
    if args.expect_torch_under is not None:
        expected = os.path.abspath(args.expect_torch_under) + os.sep
        for key in ("torch_file", "fx_graph_file"):
            if not os.path.abspath(info[key]).startswith(expected):
                problems.append(f"{key} is {info[key]}, not under {expected}")
    if hook_installed_or_asked_for(info["hook_installed"], os.environ):
        problems.append("the torch_export_names hook is active")
    if info["codegen_guard_installed"]:
        problems.append("the torch_export_names code-generator guard is in place")
    if problems:
        args.out.write_text(json.dumps({"torch": info, "problems": problems, "checks": []}))
        print("; ".join(problems), file=sys.stderr)
        return 3

    checks = []
    for part in (_cases, _entries, _guards, _detect):
        try:
            checks += part()
        except Exception:  # noqa: BLE001 - a broken part must not hide the others
            checks.append(_check(part.__name__.strip("_"), "(all)", False, traceback.format_exc(limit=3)))
    for path in args.tests:
        checks += _tests(path)
    args.out.write_text(json.dumps({"torch": info, "problems": [], "checks": checks}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
