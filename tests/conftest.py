import pytest
import torch

from torch_export_names import _warnings
from torch_export_names.passes import _graph_modules


def lint_all(obj) -> None:
    """Lint the graph of ``obj`` and every nested graph (ep.module() would hide duplicates)."""
    for _, _, graph in _graph_modules(obj):
        graph.lint()


def add_named_node(graph: torch.fx.Graph, name: str, target=torch.ops.aten.mul.Tensor):
    """Add ``target(x, x)`` before the output, asking for ``name``, as node-copying passes do."""
    x = next(n for n in graph.nodes if n.op == "placeholder")
    with graph.inserting_before(graph.output_node()):
        return graph.create_node("call_function", target, (x, x), name=name)


def submodule(ep, path: str) -> torch.fx.GraphModule:
    return ep.graph_module.get_submodule(path)


@pytest.fixture(autouse=True)
def _fresh_warn_once():
    """Each test sees the package's warn-once state as a new process would."""
    saved = set(_warnings._warned)
    _warnings._warned.clear()
    yield
    _warnings._warned.clear()
    _warnings._warned.update(saved)
