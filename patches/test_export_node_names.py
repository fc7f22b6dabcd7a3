# Owner(s): ["oncall: export"]
"""torch.export records every node name it assigns, and keeps it legal (pytorch/pytorch#202927).

torch.export renames nodes after tracing. A name it assigns without recording
it in the graph's namespace can be handed out again by ``create_node``, and
the graph then fails to lint with "Node redefined name ...". A name that
is a global the code torch.fx generates reads (``inf``, ``nan``, ``device``,
``torch``, ...) shadows it and changes what ``ExportedProgram.module()``
computes. Other names, builtins such as ``input`` included, must stay as they
are (``TestNamesKept``): they shadow nothing.
"""

import inspect
import io
import keyword
import math
import unittest

import torch
import torch._higher_order_ops.wrap
from torch._higher_order_ops.while_loop import while_loop
from torch.export import Dim, export
from torch.testing._internal.common_utils import (
    instantiate_parametrized_tests,
    parametrize,
    run_tests,
    TestCase,
)


# Older releases lack some of what these tests use; each test that needs it
# skips, detected by the feature itself.
try:
    from torch._higher_order_ops.scan import scan
except ImportError:
    scan = None
try:
    from torch.export.experimental import _copy_graph_module_and_signature
except ImportError:
    _copy_graph_module_and_signature = None
HAS_AUTOCAST_HOP = hasattr(torch._higher_order_ops.wrap, "wrap_with_autocast")
try:
    from torch.export._swap import _swap_modules
except ImportError:
    _swap_modules = None


class MulInput(torch.nn.Module):
    # The input takes the name "mul", so the model's own mul becomes mul_1.
    def forward(self, mul):
        return mul * 2


class ParamsBuffersConstants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.register_buffer("buf", torch.ones(3))
        self.const = torch.ones(3)

    def forward(self, add):
        return self.linear(add + self.buf + self.const) + 1


class CondMulInput(torch.nn.Module):
    def forward(self, x, mul):
        return torch.cond(
            x.sum() > 0, lambda a, b: a * b * 2, lambda a, b: a - b, (x, mul)
        )


class AutocastT1Input(torch.nn.Module):
    # The region's own second t() is traced as t_1, the input's name.
    def forward(self, t_1):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return t_1.t() @ t_1.t().t()


class WhileLoop(torch.nn.Module):
    def forward(self, it, x):
        return while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (it, x))


class WhileLoopSameOperandTwice(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        return while_loop(
            lambda a, b: a.sum() < 10, lambda a, b: (a + 1, b * 2), (y, y)
        )


class ScanAddInput(torch.nn.Module):
    # The combine function's own add collides with the input called "add".
    def forward(self, add, xs):
        return scan(lambda c, x: (c + x, c * x), add, xs)


class InputInput(torch.nn.Module):
    # "input" is a builtin that generated code never reads: the name is kept.
    # FX's create_name never hands it out, so the deserializer and
    # _copy_graph_module_and_signature create the placeholder as input_1
    # before they give it the stored name.
    def forward(self, input):
        return input + 1


def _sequential():
    # nn.Sequential (like nn.Linear and nn.Conv2d) calls its argument "input"
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
    ).eval()


# batch, height and width dynamic; used with inputs of shape (2, 3, 8, 8) (the
# ranges spelled out where this torch has no Dim.AUTO)
if hasattr(Dim, "AUTO"):
    IMAGE_DIMS = {0: Dim.AUTO, 2: Dim.AUTO, 3: Dim.AUTO}
else:
    IMAGE_DIMS = {0: Dim("batch"), 2: Dim("height", min=4), 3: Dim("width", min=4)}


class ConvInfInput(torch.nn.Module):
    # A renamed argument (inf -> inf_1) with dynamic shapes: the guards of the
    # exported program name it L['inf'].
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, inf):
        y = self.conv(inf).flatten(1).sum(1)
        return y * math.inf + y


class InfInput(torch.nn.Module):
    # A placeholder called inf would shadow the global inf of generated code.
    def forward(self, inf):
        return inf * math.inf + inf


class SubmoduleInfInput(torch.nn.Module):
    class Sub(torch.nn.Module):
        def forward(self, x):
            return x + 1

    def __init__(self):
        super().__init__()
        self.sub = SubmoduleInfInput.Sub()

    def forward(self, inf):
        return self.sub(inf) * math.inf + inf


class CondInfOperand(torch.nn.Module):
    # cond names its branch placeholders after the operands.
    def forward(self, x, inf):
        return torch.cond(
            x.sum() > 0,
            lambda a, b: a * math.inf + b,
            lambda a, b: a - b * math.inf,
            (x, inf),
        )


def _codegen_global_input(name):
    # forward(self, <name>): <name> + ones(3, device="cpu")
    namespace = {}
    exec(
        f"def forward(self, {name}):\n"
        f"    return {name} + _torch.ones(3, device='cpu')\n",
        {"_torch": torch},
        namespace,
    )
    return type("CodegenGlobalInput", (torch.nn.Module,), namespace)()


def _placeholder_names(gm):
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def _output_node(graph):
    return next(n for n in reversed(graph.nodes) if n.op == "output")


def _shadows_generated_code(name):
    # torch.fx.graph._shadows_generated_code; the same rule where this torch
    # lacks it (to show what these tests check on a torch without the fix)
    rule = getattr(torch.fx.graph, "_shadows_generated_code", None)
    if rule is not None:
        return rule(name)
    if not name.isidentifier() or keyword.iskeyword(name):
        return True
    if name in ("__debug__", "self", "getattr", "slice", "Ellipsis"):
        return True
    return name in torch.fx.graph._custom_builtins and name != "NoneType"


def _hop_node(gm, name):
    return next(
        n
        for n in gm.graph.nodes
        if n.op == "call_function"
        and isinstance(n.target, torch._ops.HigherOrderOperator)
        and n.target._name == name
    )


@instantiate_parametrized_tests
class TestExportNodeNames(TestCase):
    def assertNamesRecorded(self, gm):
        """Every node name of ``gm`` and of every graph below it is recorded in that
        graph's namespace, and a node asking for any of those names gets a new one."""
        for path, mod in gm.named_modules():
            if not isinstance(mod, torch.fx.GraphModule):
                continue
            graph, where = mod.graph, path or "top-level graph"
            ns = graph._graph_namespace
            nodes = list(graph.nodes)
            for node in nodes:
                self.assertIn(node.name, ns._used_names, f"{where}: {node.name}")
                self.assertEqual(ns._obj_to_name.get(node), node.name, where)
            names = {n.name for n in nodes}
            anchor = next(n for n in nodes if n.op != "output")
            with graph.inserting_before(_output_node(graph)):
                for name in sorted(names):
                    new = graph.create_node(
                        "call_function", torch.ops.aten.clone.default, (anchor,), name=name
                    )
                    self.assertNotIn(new.name, names, where)
                    graph.erase_node(new)
            graph.lint()

    @parametrize("strict", [False, True])
    def test_placeholder_naming_records_suffixed_op(self, strict):
        ep = export(MulInput(), (torch.randn(3),), strict=strict)
        self.assertEqual([n.name for n in ep.graph.nodes], ["mul", "mul_1", "output"])
        self.assertNamesRecorded(ep.graph_module)

    @parametrize("strict", [False, True])
    def test_placeholder_naming_records_params_buffers_constants(self, strict):
        ep = export(ParamsBuffersConstants(), (torch.randn(3),), strict=strict)
        self.assertEqual(
            _placeholder_names(ep.graph_module),
            ["p_linear_weight", "p_linear_bias", "b_buf", "c_const", "add"],
        )
        self.assertNamesRecorded(ep.graph_module)

    def test_run_decompositions_records_names(self):
        ep = export(MulInput(), (torch.randn(3),)).run_decompositions()
        self.assertEqual([n.name for n in ep.graph.nodes], ["mul", "mul_1", "output"])
        self.assertNamesRecorded(ep.graph_module)

    def test_cond_subgraph_names_are_recorded(self):
        ep = export(CondMulInput(), (torch.randn(2, 3), torch.randn(2, 3)))
        operands = [n.name for n in _hop_node(ep.graph_module, "cond").args[3]]
        self.assertEqual(sorted(operands), ["mul", "x"])
        for branch in ("true_graph_0", "false_graph_0"):
            gm = getattr(ep.graph_module, branch)
            self.assertEqual(_placeholder_names(gm), operands)
        self.assertNamesRecorded(ep.graph_module)

    @unittest.skipIf(not HAS_AUTOCAST_HOP, "this torch has no wrap_with_autocast HOP")
    def test_autocast_subgraph_placeholders_take_operand_names(self):
        ep = export(AutocastT1Input(), (torch.randn(3, 3),))
        region = ep.graph_module.submod_1
        self.assertExpectedInline(
            "\n".join(f"{n.op} {n.name}" for n in region.graph.nodes),
            """\
placeholder t_1
call_function t
call_function t_2
call_function t_3
call_function matmul
output output""",
        )
        self.assertNamesRecorded(ep.graph_module)

    def test_while_loop_subgraph_placeholders_take_operand_names(self):
        ep = export(WhileLoop(), (torch.tensor(0), torch.randn(3)))
        for sub in ("while_loop_cond_graph_0", "while_loop_body_graph_0"):
            self.assertEqual(_placeholder_names(getattr(ep.graph_module, sub)), ["it", "x"])
        self.assertNamesRecorded(ep.graph_module)

    def test_while_loop_operand_passed_twice_gets_distinct_placeholder_names(self):
        model, args = WhileLoopSameOperandTwice(), (torch.randn(3),)
        try:
            ep = export(model, args)
        except Exception as e:
            # some releases refuse a while_loop whose carried inputs alias (the
            # reason may be in the exception's cause)
            causes, cause = [], e
            while cause is not None and len(causes) < 10:
                causes.append(f"{type(cause).__name__}: {cause}")
                cause = cause.__cause__ or cause.__context__
            aliasing = next((c for c in causes if "alias" in c.lower()), None)
            if aliasing is None:
                raise
            self.skipTest(f"this torch does not export it: {aliasing}"[:200])
        body = ep.graph_module.while_loop_body_graph_0
        if any(not n.users for n in body.graph.nodes if n.op == "placeholder"):
            # the body uses both a and b: some releases trace the aliased inputs into
            # one placeholder, and module() then differs from eager, with or without
            # this change
            self.skipTest("this torch traces the aliased carried inputs into one placeholder")
        self.assertEqual(_placeholder_names(body), ["clone", "clone_1"])
        self.assertNamesRecorded(ep.graph_module)
        self.assertEqual(ep.module()(*args), model(*args))

    @unittest.skipIf(scan is None, "this torch has no scan HOP")
    def test_scan_subgraph_placeholders_take_operand_names(self):
        ep = export(ScanAddInput(), (torch.randn(3), torch.randn(4, 3)))
        combine = ep.graph_module.scan_combine_graph_0
        # the xs operand is xs itself or, in some releases, a movedim of it
        xs = _hop_node(ep.graph_module, "scan").args[2][0].name
        self.assertEqual(
            "\n".join(f"{n.op} {n.name}" for n in combine.graph.nodes),
            f"""\
placeholder add
placeholder {xs}
call_function add_1
call_function mul
output output""",
        )
        self.assertNamesRecorded(ep.graph_module)

    def test_load_records_names(self):
        buffer = io.BytesIO()
        torch.export.save(export(InputInput(), (torch.randn(3),)), buffer)
        buffer.seek(0)
        ep = torch.export.load(buffer)
        self.assertEqual(_placeholder_names(ep.graph_module), ["input"])
        self.assertNamesRecorded(ep.graph_module)

    def assertNamesLegal(self, gm):
        for path, mod in gm.named_modules():
            if isinstance(mod, torch.fx.GraphModule):
                for node in mod.graph.nodes:
                    self.assertFalse(
                        _shadows_generated_code(node.name),
                        f"{path or 'top-level graph'}: {node.name}",
                    )

    def test_input_named_inf_computes_the_eager_result(self):
        x = torch.tensor([2.0, -3.0])
        ep = export(InfInput(), (x,))
        self.assertEqual(ep.module()(x), InfInput()(x))  # [6., 6.] when inf is a parameter
        self.assertEqual(_placeholder_names(ep.graph_module), ["inf_1"])
        self.assertEqual([s.arg.name for s in ep.graph_signature.input_specs], ["inf_1"])
        self.assertNamesLegal(ep.graph_module)

    @parametrize("name", ["device", "torch", "pytree", "fx_pytree", "nan"])
    def test_input_named_like_a_codegen_global_runs(self, name):
        model, x = _codegen_global_input(name), torch.randn(3)
        ep = export(model, (x,))
        self.assertEqual(ep.module()(x), model(x))
        self.assertNamesLegal(ep.graph_module)

    def test_input_named_inf_with_dynamic_shapes_runs_on_new_shapes(self):
        # module() turns the program's guards (on L['inf']) into code over the
        # forward's parameters (inf_1); so do run_decompositions and load
        model, new = ConvInfInput(), torch.randn(5, 3, 11, 9)
        ep = export(model, (torch.randn(2, 3, 8, 8),), dynamic_shapes=(IMAGE_DIMS,))
        self.assertEqual(_placeholder_names(ep.graph_module)[-1], "inf_1")
        buffer = io.BytesIO()
        torch.export.save(ep, buffer)
        buffer.seek(0)
        self.assertEqual(list(inspect.signature(ep.module().forward).parameters), ["inf_1"])
        for program in (ep, ep.run_decompositions(), torch.export.load(buffer)):
            module = program.module()
            # inf_1; arg_0 where this torch does not keep the argument names
            (param,) = inspect.signature(module.forward).parameters
            self.assertFalse(_shadows_generated_code(param), param)
            self.assertEqual(module(new), model(new))
            with self.assertRaisesRegex(Exception, "Guard failed|shape|size"):
                module(torch.randn(5, 3, 2, 9))  # height below the conv's kernel
            self.assertNamesLegal(program.graph_module)

    @unittest.skipIf(_swap_modules is None, "this torch has no torch.export._swap")
    def test_swapped_module_with_input_named_inf_computes_the_eager_result(self):
        # _swap_modules makes its placeholders from the argument names
        model, x = SubmoduleInfInput(), torch.tensor([2.0, -3.0])
        ep = export(model, (x,), preserve_module_call_signature=("sub",))
        gm = _swap_modules(ep, {"sub": SubmoduleInfInput.Sub()})
        self.assertEqual(gm(x), model(x))

    def test_cond_branch_placeholder_named_inf_computes_the_eager_result(self):
        args = (torch.tensor([2.0, -3.0]), torch.tensor([1.0, 4.0]))
        ep = export(CondInfOperand(), args)
        self.assertEqual(ep.module()(*args), CondInfOperand()(*args))
        self.assertNamesLegal(ep.graph_module)

    def test_unlift_records_output_name(self):
        ep = export(ParamsBuffersConstants(), (torch.randn(3),))
        gm = ep.module()
        if _output_node(gm.graph).name != "output":
            # the unlift gives its new output node the name create_node chose
            self.skipTest("this torch's unlift assigns no node name")
        self.assertNamesRecorded(gm)

    @unittest.skipIf(
        _copy_graph_module_and_signature is None,
        "this torch has no torch.export.experimental._copy_graph_module_and_signature",
    )
    def test_copy_graph_module_and_signature_records_names(self):
        ep = export(InputInput(), (torch.randn(3),))
        gm, _ = _copy_graph_module_and_signature(ep)
        self.assertEqual(_placeholder_names(gm), ["input"])
        self.assertNamesRecorded(gm)


class TestNamesKept(TestCase):
    """Names that shadow nothing in the generated code stay as the user wrote them;
    these programs run on torch without the fix, and must run the same with it."""

    def test_argument_named_input_keeps_its_name(self):
        model, x = InputInput(), torch.randn(3)
        ep = export(model, (x,))
        self.assertEqual(_placeholder_names(ep.graph_module), ["input"])
        self.assertEqual([s.arg.name for s in ep.graph_signature.input_specs], ["input"])
        module = ep.module()
        self.assertEqual(list(inspect.signature(module.forward).parameters), ["input"])
        self.assertEqual(module(x), model(x))
        by_keyword = export(model, (), {"input": x}).module()
        self.assertEqual(list(inspect.signature(by_keyword.forward).parameters), ["input"])
        self.assertEqual(by_keyword(input=x), model(x))

    def test_sequential_with_dynamic_shapes_runs_on_new_shapes(self):
        model, new = _sequential(), torch.randn(5, 3, 11, 9)
        ep = export(model, (torch.randn(2, 3, 8, 8),), dynamic_shapes=(IMAGE_DIMS,))
        self.assertEqual(_placeholder_names(ep.graph_module)[-1], "input")
        module = ep.module()
        self.assertEqual(list(inspect.signature(module.forward).parameters), ["input"])
        self.assertEqual(module(new), model(new))
        with torch.no_grad():
            self.assertEqual(ep.run_decompositions().module()(new), model(new))

    def test_sequential_exported_by_keyword_takes_input_by_keyword(self):
        model, new = _sequential(), torch.randn(5, 3, 11, 9)
        ep = export(
            model,
            (),
            {"input": torch.randn(2, 3, 8, 8)},
            dynamic_shapes={"input": IMAGE_DIMS},
            strict=False,  # older releases' strict export refuses a Sequential called by keyword
        )
        self.assertEqual(ep.module()(input=new), model(new))


class TestNodeAssignName(TestCase):
    def test_assigned_name_is_not_handed_out_again(self):
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        relu = graph.call_function(torch.relu, (x,))
        relu._assign_name("relu_7")
        self.assertEqual(relu.name, "relu_7")
        self.assertEqual(graph._graph_namespace._obj_to_name[relu], "relu_7")
        new = graph.call_function(torch.relu, (x,))
        self.assertEqual(new.name, "relu_8")
        graph.lint()

    def test_assigned_name_may_pass_through_a_duplicate(self):
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        mul = graph.call_function(torch.mul, (x, x))
        x._assign_name("mul")  # as placeholder naming does, before it renames mul
        mul._assign_name("mul_1")
        self.assertEqual([n.name for n in graph.nodes], ["mul", "mul_1"])
        self.assertEqual(graph.call_function(torch.mul, (x, x)).name, "mul_2")
        graph.lint()


if __name__ == "__main__":
    run_tests()
