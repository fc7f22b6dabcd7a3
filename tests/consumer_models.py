"""Small models whose input names are chosen to collide with what a consumer creates.

Shared by tests/test_consumers.py, tests/test_executorch_pipelines.py and scripts/exposure.py (which puts this
folder on sys.path).
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch


class Named(torch.nn.Module):
    """``forward(*args) = fn(*args)``, with its arguments named ``names``.

    torch.export names a program's inputs after the forward's parameters, so
    this is how a test picks the input names that collide with a pass.
    """

    def __init__(self, fn: Callable, names: tuple[str, ...]):
        super().__init__()
        self.fn = fn

        def forward(*args):
            return fn(*args)

        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        forward.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])
        self.forward = forward


class WithParam(torch.nn.Module):
    """``fn(self, *args)`` with a parameter ``w`` and a buffer ``cache``; inputs named ``names``.

    ``forward`` is a method of a class made for ``names`` (not a closure on the instance):
    torch before 2.7 does not see ``w`` and ``cache`` as the module's state through a closure.
    """

    def __new__(cls, fn: Callable, names: tuple[str, ...]):
        namespace: dict = {}
        params = ", ".join(names)
        exec(f"def forward(self, {params}):\n    return self.fn(self, {params})", {}, namespace)
        # the subclass's own __new__ is the plain one, so copies and pickles need no names
        body = {"forward": namespace["forward"], "__new__": torch.nn.Module.__new__}
        sub = type(cls.__name__, (cls,), body)
        return torch.nn.Module.__new__(sub)

    def __init__(self, fn: Callable, names: tuple[str, ...]):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(-1, 1, 3))
        self.register_buffer("cache", torch.zeros(3))
        self.fn = fn


def linear_relu_scale(name: str) -> torch.nn.Module:
    """``relu(linear(<name>)) * 2.0`` with fixed weights, as a plain class (Cadence exports strictly)."""
    namespace: dict = {}
    source = f"def forward(self, {name}):\n    return torch.relu(self.lin({name})) * 2.0"
    exec(source, {"torch": torch}, namespace)
    model = type("LinearReluScale", (torch.nn.Module,), {"forward": namespace["forward"]})()
    gen = torch.Generator().manual_seed(0)
    model.lin = torch.nn.Linear(4, 3)
    with torch.no_grad():
        model.lin.weight.copy_(torch.randn(3, 4, generator=gen))
        model.lin.bias.copy_(torch.randn(3, generator=gen))
    return model.eval()


def _rand(*shapes):
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(*s, generator=gen) for s in shapes)
