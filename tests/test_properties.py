"""Property: whatever the input names, after repair new nodes never collide."""

import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from torch_export_names import find_unrecorded_names, repair
from torch_export_names._torch_compat import output_node

from helpers import lint_all

# Op names and suffixed forms torch.export and later passes hand out.
NAMES = [
    "mul",
    "mul_1",
    "mul_2",
    "t",
    "t_1",
    "cat",
    "cat_1",
    "arange",
    "add",
    "add_1",
    "sub",
    "output",
    "_tensor_constant0",
    "arg0_1",
    "getitem",
    "slice_1",
    "neg",
]

OPS = {
    "mul": "{a} * {b}",
    "add": "{a} + {b}",
    "sub": "{a} - {b}",
    "t": "{a}.t() + {b}",
    "cat": "torch.cat([{a}, {b}])[:3]",
    "arange": "{a} + torch.arange(3.0)",
    "neg": "-{a}",
}


@st.composite
def programs(draw):
    inputs = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    steps = draw(
        st.lists(
            st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 99), st.integers(0, 99)),
            min_size=1,
            max_size=6,
        )
    )
    values, body = list(inputs), []
    for k, (op, i, j) in enumerate(steps):
        body.append(f"    v{k} = " + OPS[op].format(a=values[i % len(values)], b=values[j % len(values)]))
        values.append(f"v{k}")
    src = f"def forward(self, {', '.join(inputs)}):\n" + "\n".join(body) + f"\n    return {values[-1]}\n"
    namespace = {"torch": torch}
    exec(src, namespace)
    model = type("Generated", (torch.nn.Module,), {"forward": namespace["forward"]})()
    added = draw(st.lists(st.sampled_from(NAMES), max_size=6))
    copies = draw(st.integers(0, 3))
    return src, model, len(inputs), added, copies


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_after_repair_added_and_copied_nodes_never_collide(program):
    src, model, n_inputs, added, copies = program
    args = tuple(torch.randn(3, 3) for _ in range(n_inputs))
    ep = torch.export.export(model, args)
    repair(ep)
    assert find_unrecorded_names(ep) == []
    g = ep.graph
    x = next(n for n in g.nodes if n.op == "placeholder")
    ops = [n for n in g.nodes if n.op == "call_function"]
    with g.inserting_before(output_node(g)):
        for name in added:
            g.create_node("call_function", torch.ops.aten.mul.Tensor, (x, x), name=name)
        for n in ops[:copies]:
            g.node_copy(n, lambda a: a)
    lint_all(ep)
    ep.graph_module.recompile()
    torch.testing.assert_close(ep.module()(*args), model(*args), msg=src)


@given(st.from_regex(r"\A[a-zA-Z_][0-9a-zA-Z_]{0,12}\Z"))
def test_split_suffix_agrees_with_torch_fx(name):
    """Our fast suffix split gives torch.fx's own answer for every identifier."""
    import torch.fx.graph

    from torch_export_names._fx_namespace import split_suffix

    # torch.fx.graph._name_regex from torch 2.7. Before, _Namespace._name_suffix_regex, ``(.*)_(\d+)$``:
    # no match means no suffix, and for ``_<digits>`` it gives an empty base. We keep ``_7`` whole
    # there, which only moves where create_name starts counting: _used_names still rules out ``_7``.
    regex = getattr(torch.fx.graph, "_name_regex", None) or torch.fx.graph._Namespace()._name_suffix_regex
    match = regex.match(name)
    base, num = match.group(1, 2) if match else (name, None)
    assume(base != "")
    assert split_suffix(name) == (base, int(num) if num is not None else None)


@given(st.lists(st.from_regex(r"\A[a-zA-Z_][0-9a-zA-Z_]{0,12}\Z"), max_size=20))
def test_record_all_raises_suffix_counters_as_split_suffix_does(names):
    """record_all parses all new names at once; the counters are what split_suffix gives."""
    from torch_export_names import _fx_namespace

    graph = torch.fx.Graph()
    for i in range(len(set(names))):
        graph.placeholder(f"tmp{i}")
    for node, name in zip(graph.nodes, sorted(set(names))):
        node.name = name  # assigned directly, as torch.export does
    before = dict(graph._graph_namespace._base_count)
    _fx_namespace.record_all(graph)
    expected = dict(before)
    for name in set(names):
        base, num = _fx_namespace.split_suffix(name)
        if num is not None and expected.get(base, 0) < num:
            expected[base] = num
    assert graph._graph_namespace._base_count == expected
