"""Print what torch.compile produces (inductor's output code, AOT graphs, compiled
autograd graphs) for a few programs that reach direct node-name assignments outside
torch.export: inductor's constant folding under freezing, the HOP partitioner (scan and
invoke_subgraph with a backward), compiled autograd (also over a compiled forward), dynamo.
Compare the output between stock torch and each prefix of the stack (run each in a fresh
process with its own TORCHINDUCTOR_CACHE_DIR and the FX graph and autograd caches off)."""

import os
import re
import sys

import torch
import torch._dynamo
import torch._inductor.config as iconfig
from torch._dynamo.backends.common import aot_autograd
from torch._inductor.utils import run_and_get_code

torch.manual_seed(0)
OUT = []


SITE = os.path.dirname(os.path.dirname(torch.__file__))


def norm(s):
    """Drop what differs between runs and installs: temporary paths, torch's location (an
    overlay per prefix), object addresses and ids."""
    s = s.replace(SITE + os.sep, "<site>/")
    s = re.sub(r"/tmp/[^\s'\"]+", "<path>", s)
    s = re.sub(r"0x[0-9a-f]+", "0x", s)
    s = re.sub(r"(?m) [0-9a-f]{12}$", " <id>", s)
    return s


def aot_graphs(fn, *args, backward=False):
    graphs = []

    def comp(gm, example_inputs):
        graphs.append(gm.print_readable(print_output=False, include_stride=True, include_device=True))
        return gm

    torch._dynamo.reset()
    c = torch.compile(fn, backend=aot_autograd(fw_compiler=comp, bw_compiler=comp), fullgraph=True)
    out = c(*args)
    if backward:
        (out if isinstance(out, torch.Tensor) else out[0]).sum().backward()
    return graphs


def inductor_code(fn, *args):
    torch._dynamo.reset()
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return codes


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x))) + 1


class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1) @ v


def with_cond(x):
    return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


def with_while(x):
    def cond_fn(i, t):
        return i < 3

    def body_fn(i, t):
        return i + 1, t * 2

    return torch._higher_order_ops.while_loop(cond_fn, body_fn, (torch.tensor(0), x))[1]


def with_scan(x):
    from torch._higher_order_ops.scan import scan

    def f(carry, xs):
        return carry + xs, carry * xs

    return scan(f, torch.zeros(4), x)[1]


@torch.compiler.nested_compile_region
def region(x, w):
    return torch.sin(x @ w)


def with_invoke_subgraph(x, w):
    return region(x, w) + region(x, w)


cases = []
x = torch.randn(4, 16)
cases.append(("inductor MLP", lambda: inductor_code(MLP().eval(), x)))
img = torch.randn(2, 3, 8, 8)


def convbn_frozen():
    m = ConvBN().eval()
    with torch.no_grad(), iconfig.patch(freezing=True):
        return inductor_code(m, img)


cases.append(("inductor conv+bn, freezing (constant folding)", convbn_frozen))
q = torch.randn(2, 4, 16, 8)
cases.append(("inductor attention", lambda: inductor_code(attention, q, q, q)))
cases.append(("inductor cond", lambda: inductor_code(with_cond, torch.randn(4))))
cases.append(("inductor while_loop", lambda: inductor_code(with_while, torch.randn(4))))
cases.append(("inductor scan", lambda: inductor_code(with_scan, torch.randn(3, 4))))
xs = torch.randn(4, 4, requires_grad=True)
ws = torch.randn(4, 4, requires_grad=True)
cases.append(
    (
        "aot graphs, invoke_subgraph with backward (HOP partitioner)",
        lambda: aot_graphs(with_invoke_subgraph, xs, ws, backward=True),
    )
)
cases.append(
    (
        "aot graphs, MLP with backward",
        lambda: aot_graphs(MLP(), torch.randn(4, 16, requires_grad=True), backward=True),
    )
)
cases.append(
    (
        "aot graphs, cond with backward",
        lambda: aot_graphs(with_cond, torch.randn(4, requires_grad=True), backward=True),
    )
)


def compiled_autograd_graphs(compile_forward):
    """Compiled autograd's graph of an MLP's backward, its forward eager or compiled."""
    graphs = []

    def comp(gm, example_inputs):
        graphs.append(gm.print_readable(print_output=False))
        return gm

    torch._dynamo.reset()
    m = torch.compile(MLP(), backend="aot_eager") if compile_forward else MLP()
    inp = torch.randn(4, 16)
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend=comp)):
        m(inp).sum().backward()
    return graphs


cases.append(("compiled autograd graph", lambda: compiled_autograd_graphs(False)))


def scan_backward():
    from torch._higher_order_ops.scan import scan

    def f(carry, xs):
        return carry * xs.sin(), carry + xs

    def g(init, xs):
        return scan(f, init, xs)[1]

    return aot_graphs(
        g, torch.randn(4, requires_grad=True), torch.randn(3, 4, requires_grad=True), backward=True
    )


cases.append(("aot graphs, scan with backward (HOP partitioner)", scan_backward))


cases.append(("compiled autograd over a compiled forward", lambda: compiled_autograd_graphs(True)))

for title, fn in cases:
    try:
        res = fn()
        text = "\n".join(res)
    except Exception as e:  # a failure is output too: it must be the same everywhere
        text = f"RAISED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    OUT.append(f"===== {title}\n{norm(text)}")
sys.stdout.write("\n".join(OUT) + "\n")
