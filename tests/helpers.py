"""Helpers the tests import (``from helpers import lint_all, ...``); fixtures live in conftest.py.

The shared models are in models.py; the ExecuTorch (Qualcomm) helpers in executorch_helpers.py.
"""

from __future__ import annotations

import importlib

import pytest
import torch

from torch_export_names._torch_compat import output_node
from torch_export_names.passes import _graph_modules
from torch_export_names.tools.cases import all_nodes, root_cause  # noqa: F401 - shared with the tests


def lint_all(obj) -> None:
    """Lint the graph of ``obj`` and every nested graph (ep.module() would hide duplicates)."""
    for _, _, graph in _graph_modules(obj):
        graph.lint()


def _torch_attr(module: str, name: str):
    """``module.name`` of this torch, or None where this torch lacks the module or the name."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def torch_api(module: str, name: str):
    """``module.name`` of this torch, or skip the test naming what this torch lacks."""
    found = _torch_attr(module, name)
    if found is None:
        pytest.skip(f"torch {torch.__version__} has no {module}.{name}")
    return found


def torch_has(module: str, name: str) -> bool:
    return _torch_attr(module, name) is not None


def import_or_skip(module: str, reason: str):
    """``module``, or skip (the whole test module when called at import) saying why it failed.

    Not ``pytest.importorskip``: besides ImportError, some ExecuTorch backends raise others on
    import (1.0's Qualcomm backend tries to download the QNN SDK and raises RuntimeError).
    """
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - whatever the import raised is the reason
        pytest.skip(
            f"{reason}: importing {module} raised {type(e).__name__}: {str(e)[:200]}", allow_module_level=True
        )


# Higher-order ops and export features that not every supported torch has (2.4 - 2.15).
needs_autocast_hop = pytest.mark.skipif(
    not torch_has("torch._higher_order_ops.wrap", "wrap_with_autocast"),
    reason=f"torch {torch.__version__} has no wrap_with_autocast HOP: autocast regions do not export",
)
needs_scan = pytest.mark.skipif(
    not torch_has("torch._higher_order_ops.scan", "scan"),
    reason=f"torch {torch.__version__} has no scan HOP",
)


def add_named_node(graph: torch.fx.Graph, name: str, target=torch.ops.aten.mul.Tensor):
    """Add ``target(x, x)`` before the output, asking for ``name``, as node-copying passes do."""
    x = next(n for n in graph.nodes if n.op == "placeholder")
    with graph.inserting_before(output_node(graph)):
        return graph.create_node("call_function", target, (x, x), name=name)


def submodule(ep, path: str) -> torch.fx.GraphModule:
    return ep.graph_module.get_submodule(path)


# --- the bug, reproduced or not --------------------------------------------------------------

# Every torch release from 2.4 to 2.15 leaves export names unrecorded (pytorch/pytorch#202927; the
# README's "Supported torch versions" table, written by scripts/matrix.sh, checks each). A test
# that reproduces the bug before checking the repair fails on these when the bug does not show:
# the test no longer sets it up. On a later release it skips instead (fixed upstream, perhaps).
AFFECTED_RELEASES = ((2, 4), (2, 15))


def torch_release(version: str | None = None) -> tuple[int, int]:
    """``(major, minor)`` of this torch (or of ``version``): ``(2, 13)`` for ``2.13.0+cpu``."""
    major, minor = (version or torch.__version__).split("+")[0].split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def torch_known_affected(version: str | None = None) -> bool:
    """Whether this torch is a release known to leave names unrecorded (by version, not by trying)."""
    low, high = AFFECTED_RELEASES
    return low <= torch_release(version) <= high


def not_reproduced(what: str):
    """The bug did not show (``torch <version> <what>``): fail on a release known to be affected,
    where the test no longer sets up what it checks; skip on a later one (pytorch/pytorch#202927
    fixed there, or the collision is gone)."""
    message = f"torch {torch.__version__} {what}"
    if torch_known_affected():
        low, high = (".".join(map(str, r)) for r in AFFECTED_RELEASES)
        pytest.fail(
            f"{message}, but torch {low} - {high} are affected (pytorch/pytorch#202927): the test no "
            "longer reproduces the bug it guards (a patched torch shows this too)",
            pytrace=False,
        )
    pytest.skip(
        f"{message}, so there is nothing to repair here "
        "(pytorch/pytorch#202927 fixed, or the collision is gone)"
    )


def require_unrecorded(obj, *names: str) -> list[str]:
    """The unrecorded names of ``obj``; ``not_reproduced`` unless ``names`` are among them."""
    from torch_export_names import find_unrecorded_names

    unrecorded = find_unrecorded_names(obj)
    missing = [n for n in names if n not in unrecorded]
    if missing or not unrecorded:
        not_reproduced(f"records {', '.join(missing) or 'every name'} after export")
    return unrecorded


def require_default_placeholder_names(gm: torch.fx.GraphModule) -> None:
    """``not_reproduced`` unless torch left ``gm``'s placeholders as ``arg0_1``, ``arg1_1``, ..."""
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    if not all(n.startswith("arg") for n in names):
        not_reproduced(f"already names these subgraph placeholders {names}")


def is_pinned(distribution: str) -> bool:
    """Whether the installed ``distribution`` is the version constraints.txt pins (what CI runs).

    The consumer tests skip where an older ExecuTorch's consumer behaves differently; on the pinned
    one they fail instead, as nothing there excuses it.
    """
    import importlib.metadata
    import re
    from pathlib import Path

    constraints = (Path(__file__).resolve().parents[1] / "constraints.txt").read_text()
    pin = re.search(rf"^{re.escape(distribution)}==(\S+)$", constraints, re.M)
    try:
        return pin is not None and importlib.metadata.version(distribution) == pin.group(1)
    except importlib.metadata.PackageNotFoundError:
        return False


def outcome(run):
    """What ``run()`` returns, or the exception it raises (a failure as a result to compare)."""
    try:
        return run()
    except Exception as e:  # noqa: BLE001 - the failure is the outcome
        return e


def same_values(a, b) -> bool:
    """Whether ``a`` and ``b`` are tensors (or structures of them) equal up to float tolerance,
    NaN equal to NaN; False for an exception or anything ``assert_close`` refuses."""
    try:
        torch.testing.assert_close(a, b, equal_nan=True)
    except (AssertionError, TypeError, ValueError):
        return False
    return True
