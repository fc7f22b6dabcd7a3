"""Keep torch.export node names recorded, so later passes never reuse one.

torch.export assigns node names without recording them in the graph's name
space (pytorch/pytorch#202927); a pass that adds nodes can then be handed a
name already taken and fails with ``Node redefined name ...``. ``repair``
restores the invariant on an exported program.
"""

from ._warnings import TorchExportNamesWarning
from .detect import is_affected
from .repair import (
    RepairReport,
    find_unrecorded_names,
    propagate_subgraph_names,
    repair,
    reserve_node_names,
)

__version__ = "0.1.0"

__all__ = [
    "RepairReport",
    "TorchExportNamesWarning",
    "find_unrecorded_names",
    "is_affected",
    "propagate_subgraph_names",
    "repair",
    "reserve_node_names",
]
