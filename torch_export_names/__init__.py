"""Keep torch.export node names recorded, so later passes never reuse one.

torch.export assigns node names without recording them in the graph's name
space (pytorch/pytorch#202927); a pass that adds nodes can then be handed a
name already taken and fails with ``Node redefined name ...``. ``repair``
restores the invariant on an exported program; ``install`` applies it to
every program torch hands out.

Importing this package does not import torch; the names below load their
module on first use. It does put the code-generator guard (``codegen_guard``)
on torch.fx as soon as torch.fx is imported, so that no parameter of the code
fx generates (an input called ``inf``, ``device``, ...) shadows a global of
that code, in any program, repaired or not, hook on or off.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS = {
    "RepairNamesPass": "passes",
    "RepairReport": "passes",
    "find_illegal_names": "passes",
    "find_unrecorded_names": "passes",
    "legalize_node_names": "passes",
    "propagate_subgraph_names": "passes",
    "repair": "passes",
    "record_node_names": "passes",
    "is_affected": "_detect",
    "install": "hook",
    "installed": "hook",
    "is_installed": "hook",
    "uninstall": "hook",
    "TorchExportNamesWarning": "_warnings",
    "PrivateStateMissing": "_warnings",
}

__all__ = sorted(_EXPORTS)

# Submodules reachable as attributes without an import of their own
# (``torch_export_names.audit.audited()``, ``torch_export_names.hook.status()``); loaded on first use.
_SUBMODULES = ("audit", "codegen_guard", "hook")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


from . import codegen_guard  # noqa: E402 - imports nothing of torch

codegen_guard.arm()

# The same names for type checkers (``_EXPORTS`` is the list; tests/test_api.py keeps them equal).
if TYPE_CHECKING:
    from ._detect import is_affected
    from ._warnings import PrivateStateMissing, TorchExportNamesWarning
    from .hook import install, installed, is_installed, uninstall
    from .passes import (
        RepairNamesPass,
        RepairReport,
        find_illegal_names,
        find_unrecorded_names,
        legalize_node_names,
        propagate_subgraph_names,
        record_node_names,
        repair,
    )
