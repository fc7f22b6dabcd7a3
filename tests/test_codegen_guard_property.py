"""The code-generator guard against torch.fx's own interpreter, on generated graphs.

Each example is a graph whose placeholders take names from the names fx's generated code uses
for other things (its registered globals, builtins the graph calls, other nodes' names, numeric
suffixes of all these, NFKC spellings) and whose body does or does not make fx write those
names. ``torch.fx.Interpreter`` runs the graph node by node without generated code, so it is
the reference. With the guard, the generated module computes what the interpreter computes,
takes the parameters torch writes, survives pickling, and is torch's code byte for byte wherever
no parameter's name is read as something else; no node changes during code generation,
whichever thread looks.
"""

import builtins
import copy
import math
import operator
import pickle
import symtable
import threading
import unicodedata

import torch
import torch.fx
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from torch_export_names import hook

from helpers import outcome, same_values

NAMES = [
    "x",
    "y",
    "inf",
    "nan",
    "torch",
    "device",
    "pytree",
    "fx_pytree",
    "abs",
    "getattr",
    "slice",
    "Ellipsis",
    "inf_1",
    "inf_2",
    "torch_1",
    "add",
    "add_1",
    "mul_1",
    "abs_1",
    "x_1",
    "_rf",
    "\uff49\uff4e\uff46",  # fullwidth inf
]

# Body steps: (what fx writes for it, how to add it). Each reads the previous value and may read
# a placeholder.
STEPS = {
    "add_input": lambda g, prev, ph: g.call_function(torch.ops.aten.add.Tensor, (prev, ph)),
    "mul_inf": lambda g, prev, ph: g.call_function(operator.mul, (prev, math.inf)),
    "nan_where": lambda g, prev, ph: g.call_function(
        torch.where, (g.call_function(torch.isnan, (prev,)), math.nan, prev)
    ),
    "full_like_device": lambda g, prev, ph: g.call_function(
        operator.add, (prev, g.call_function(torch.full_like, (prev, 2.0), {"device": torch.device("cpu")}))
    ),
    "builtin_abs": lambda g, prev, ph: g.call_function(builtins.abs, (prev,)),
    "slice_ellipsis": lambda g, prev, ph: g.call_function(
        operator.getitem, (prev, (Ellipsis, slice(None, None)))
    ),
    "method_relu": lambda g, prev, ph: g.call_method("relu", (prev,)),
}


@st.composite
def graphs(draw):
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique_by=lambda n: n.lower()))
    steps = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=6))
    reads = draw(st.lists(st.integers(0, len(names) - 1), min_size=len(steps), max_size=len(steps)))
    graph = torch.fx.Graph()
    phs = []
    for name in names:
        ph = graph.placeholder("p")
        ph.target = name  # the target is the parameter; the node's name stays fx's
        phs.append(ph)
    prev = phs[0]
    for step, read in zip(steps, reads):
        prev = STEPS[step](graph, prev, phs[read])
    graph.output(prev)
    return graph, len(names)


def _shadowed(graph) -> set[str]:
    """The parameter names torch's code would read as something else: the names its body uses
    when every parameter is given a name nothing else can have (on a copy of the graph)."""
    with hook.suspended():
        copied = copy.deepcopy(graph)
        params = set()
        for i, node in enumerate(n for n in copied.nodes if n.op == "placeholder"):
            params.add(unicodedata.normalize("NFKC", node.target))
            node.target = f"__param{i}"
        src = copied.python_code("self").src
    fn = symtable.symtable(src, "<fx code>", "exec").get_children()[0]
    return (set(fn.get_identifiers()) - set(fn.get_parameters())) & params


def _module(graph):
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _stock_module(graph):
    with hook.suspended():
        return outcome(lambda: _module(graph))


@settings(max_examples=150, deadline=None)
@given(graphs(), st.integers(0, 2**16))
def test_generated_code_computes_what_the_interpreter_computes(example, seed):
    graph, n = example
    # Special values too, so that torch's code is right only where nothing is shadowed, not by chance
    # (a NaN makes a where() read its nan argument).
    special = torch.tensor([math.nan, math.inf, -1.5])
    inputs = [torch.randn(3, generator=torch.Generator().manual_seed(seed + i)) + special for i in range(n)]
    expected = outcome(lambda: torch.fx.Interpreter(_module(graph)).run(*inputs))
    stock = _stock_module(graph)
    if isinstance(stock, SyntaxError):  # two targets Python compiles to one name: stock fails too
        assert isinstance(outcome(lambda: _module(graph)), SyntaxError)
        return
    gm = _module(graph)
    got = outcome(lambda: gm(*inputs))
    assert same_values(got, expected) or (isinstance(got, Exception) and isinstance(expected, Exception))
    assert gm.code.split("\n")[3] == stock.code.split("\n")[3]  # the same def line: same parameters
    if not _shadowed(graph):
        assert gm.code == stock.code
    if not isinstance(got, Exception):
        assert same_values(pickle.loads(pickle.dumps(gm))(*inputs), expected)


@settings(max_examples=25, deadline=None)
@given(graphs())
def test_no_node_changes_while_another_thread_generates_code(example):
    graph, _ = example
    assume(not isinstance(_stock_module(graph), SyntaxError))  # two targets Python reads as one
    gm = _module(graph)
    before = [(n.name, n.target) for n in graph.nodes]
    seen: list = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.append([(n.name, n.target) for n in graph.nodes])

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(5):
            gm.recompile()
    finally:
        stop.set()
        watcher.join()
    assert all(state == before for state in seen)
