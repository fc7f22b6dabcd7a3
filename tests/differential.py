"""Differential test against stock torch: real models exported with and without the export hook.

    python -m tests.differential --out docs/reports/differential.md     # the whole corpus (about an hour)
    python -m tests.differential --ci --models nn/Linear        # a subset, report on stdout

Each corpus entry is a model nobody in this project wrote (torchvision, timm, ``torch.nn``,
Hugging Face architectures built from configs with random weights) with example inputs, plus
small models whose arguments are named like the globals of fx's generated code (``names/``).
For each entry ``run_entry`` exports it once on stock torch (every patch of the package, the
code-generator guard included, bypassed in the thread: ``hook.suspended()``) and once under
``torch_export_names.installed()``, in three variants: ``static`` (positional arguments),
``dynamic`` (positional, batch and, for convnets, spatial dimensions ``Dim.AUTO``; called again
with a different batch and size) and ``kwargs`` (the arguments exported by keyword). Per variant
it compares the two sides check by check (``CHECKS``); every mismatch is a ``Difference``.
A difference is *allowed* only where, in the check that records it, stock torch computes a wrong
result or crashes and the hook does not, and the hook's ``ep.module()`` computes eager's results
(``Difference.allowed``; a signature or warning difference never is); ``compare(entry)``
returns the differences, and ``tests/test_differential.py`` fails on any that is not allowed.

Stock runs before the hook in every variant, so a warning that torch emits once per process is
seen on the stock side first; the package's own warn-once registry is cleared before each hooked
side (every program is judged as in a fresh process).
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import copy
import dataclasses
import importlib
import inspect
import io
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import torch

try:  # python -m tests.differential
    from . import _torchvision_shim
except ImportError:  # pytest puts tests/ itself on sys.path
    import _torchvision_shim

ROOT = Path(__file__).resolve().parent.parent

# The checks, in report order, and what each compares (stock vs hook, per variant).
CHECKS = {
    "export": "the export succeeds on both, or fails on both with the same exception type and first line",
    "outputs": "ep.module() computes what eager computes, on both (and the same on both); for dynamic "
    "shapes also on inputs of another batch and size",
    "signature": "inspect.signature(ep.module().forward) is the same",
    "keyword call": "ep.module() called with every argument by keyword: same outcome (and outputs)",
    "warnings": "no warning message under the hook that the stock run lacks (export, module(), calls, "
    "run_decompositions, save, load)",
    "save/load": "torch.export.save / load: saved under the hook and loaded on stock, saved on stock and "
    "loaded under the hook: each loaded module() behaves as the stock-saved, stock-loaded one",
    "decompositions": "ep.run_decompositions(): same outcome and outputs (and as eager)",
}
VARIANTS = ("static", "dynamic", "kwargs")
FAMILIES = ("torchvision", "timm", "nn", "names", "hf")
# What the kwargs variant skips: it is the same program as static but for its input spec.
KWARGS_CHECKS = ("export", "outputs", "signature", "keyword call", "warnings")

AUTO = "AUTO"  # a dynamic dimension (torch.export.Dim.AUTO), spelled without importing it early


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Built:
    """A model and its inputs.

    ``inputs(k)`` returns the positional arguments: ``k=0`` the example the export traces, ``k=1``
    another batch size (and spatial size for convnets) for calling a dynamic-shape export.
    ``dims`` gives, per positional argument (a pytree of the argument's structure), the dimensions
    made dynamic, ``None`` for a static argument.
    """

    module: torch.nn.Module
    inputs: Callable[[int], tuple]
    dims: tuple | None


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str  # "family/model", the test id
    family: str  # nn | names | torchvision | timm | hf
    build: Callable[[], Built]
    requires: str | None = None  # the package it needs; absent -> skipped
    ci: bool = False  # in tests/test_differential.py's subset
    rtol: float = 1e-4
    atol: float = 1e-4

    def __str__(self) -> str:
        return self.name


def _seeded(fn):
    def build():
        torch.manual_seed(0)
        built = fn()
        built.module.eval()
        return built

    return build


def _image_inputs(channels=3, size=32, batch=2, shrink=8, frames=None):
    """Images; ``k=1`` has one more image and is ``shrink`` pixels smaller (not larger: export often
    bounds a dynamic spatial size by the example's, e.g. ``x.size()[2] <= 32`` for resnet18)."""

    def inputs(k):
        torch.manual_seed(100 + k)
        b, s = batch + k, size - shrink * k
        shape = (b, channels, s, s) if frames is None else (b, channels, frames, s, s)
        return (torch.randn(shape),)

    return inputs


def _convnet_dims(frames=False):
    spatial = {0: AUTO, 3: AUTO, 4: AUTO} if frames else {0: AUTO, 2: AUTO, 3: AUTO}
    return (spatial,)


# torchvision at 64x64 (the k=1 call is 56x56: vgg, densenet, convnext need 32 or more at every
# stage), alexnet at 80 (72 keeps its last pooling at 2x2 or more).
# Left out for time (the whole corpus must run in under an hour on 2 shared cores): the larger
# graphs of a family already here (resnext50, wide_resnet50, densenet121, efficientnet_v2_s,
# swin_v2_t, maxvit_t, deeplabv3_resnet50, inception_v3, convnext_tiny, swin_t, fcn_resnet50,
# r2plus1d_18, s3d, swin3d_t; timm's hgnetv2, efficientvit, fastvit, repvit, edgenext, levit, pvt_v2).
def _torchvision(name, size=64, ci=False, dynamic_spatial=True, atol=1e-4, rtol=1e-4, **kwargs):
    def build():
        tv = _torchvision_shim.import_torchvision()
        model = tv.models.get_model(name, weights=None, **kwargs)
        dims = _convnet_dims() if dynamic_spatial else ({0: AUTO},)
        return Built(model, _image_inputs(size=size, shrink=8 if dynamic_spatial else 0), dims)

    return Entry(f"torchvision/{name}", "torchvision", _seeded(build), "torchvision", ci, rtol, atol)


def _torchvision_video(name, size=32, frames=4, ci=False, **kwargs):
    def build():
        tv = _torchvision_shim.import_torchvision()
        model = tv.models.get_model(name, weights=None, **kwargs)
        return Built(model, _image_inputs(size=size, frames=frames), _convnet_dims(frames=True))

    return Entry(f"torchvision/{name}", "torchvision", _seeded(build), "torchvision", ci)


def _torchvision_segmentation(name, size=64, ci=False):
    # weights_backbone=None: the default backbone weights would be downloaded
    return _torchvision(name, size=size, ci=ci, weights_backbone=None, atol=1e-3)


def _timm(name, size=32, ci=False, dynamic_spatial=True, atol=1e-4, rtol=1e-4, **kwargs):
    def build():
        timm = _torchvision_shim.import_timm()
        model = timm.create_model(name, pretrained=False, **kwargs)
        dims = _convnet_dims() if dynamic_spatial else ({0: AUTO},)
        return Built(model, _image_inputs(size=size, shrink=8 if dynamic_spatial else 0), dims)

    return Entry(f"timm/{name}", "timm", _seeded(build), "timm", ci, rtol, atol)


def _nn(label, make_module, make_inputs, dims, ci=False, atol=1e-5, rtol=1e-4):
    def build():
        return Built(make_module(), make_inputs, dims)

    return Entry(f"nn/{label}", "nn", _seeded(build), None, ci, rtol, atol)


def _rand(*shape, k=0, seed=0):
    torch.manual_seed(1000 * seed + k)
    return torch.randn(*shape)


def _nn_entries() -> list[Entry]:
    nn = torch.nn
    B = 2  # example batch size; k=1 calls use B + 1

    def batch(*rest, seed=0):
        return lambda k: (_rand(B + k, *rest, k=k, seed=seed),)

    def classes(n, seed=0):
        def make(k):
            torch.manual_seed(7 + k + seed)
            return (torch.randint(0, n, (B + k,)),)

        return make

    def pair(first, second):
        return lambda k: (*first(k), *second(k))

    b0 = ({0: AUTO},)
    images = ({0: AUTO, 2: AUTO, 3: AUTO},)
    tokens = lambda k: (torch.randint(0, 50, (B + k, 7), generator=torch.Generator().manual_seed(k)),)  # noqa: E731
    seq_first = lambda *rest: lambda k: (_rand(5 + k, B + k, *rest, k=k),)  # noqa: E731

    def rnn_state(layers, hidden, lstm):
        # the sequence length stays 5: export specializes it (the loop over time steps is unrolled)
        def make(k):
            x = _rand(B + k, 5, 8, k=k)
            h = _rand(layers, B + k, hidden, k=k, seed=1)
            return (x, (h, _rand(layers, B + k, hidden, k=k, seed=2)) if lstm else h)

        return make

    def cell_state(hidden, lstm):
        def make(k):
            x = _rand(B + k, 8, k=k)
            h = _rand(B + k, hidden, k=k, seed=1)
            return (x, (h, _rand(B + k, hidden, k=k, seed=2)) if lstm else h)

        return make

    def qkv(k):
        return tuple(_rand(B + k, 5 + k, 16, k=k, seed=s) for s in range(3))

    def mlp():
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    def conv_stack():
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 4, 3),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )

    def enc_layer():
        return nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)

    def encoder():
        return nn.TransformerEncoder(enc_layer(), 2, enable_nested_tensor=False)

    img = batch(3, 12, 12)
    return [
        _nn("Linear", lambda: nn.Linear(8, 4), batch(8), b0, ci=True),
        _nn("Sequential-MLP", mlp, batch(8), b0, ci=True),
        _nn("Sequential-ConvBNReLU", conv_stack, img, images, ci=True),
        _nn("Conv1d", lambda: nn.Conv1d(4, 6, 3), batch(4, 10), ({0: AUTO, 2: AUTO},), ci=True),
        _nn("Conv2d", lambda: nn.Conv2d(3, 5, 3), img, images, ci=True),
        _nn("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), img, images),
        _nn("Conv3d", lambda: nn.Conv3d(2, 3, 3), batch(2, 5, 6, 6), ({0: AUTO},)),
        _nn("BatchNorm2d", lambda: nn.BatchNorm2d(3), img, images),
        _nn("LayerNorm", lambda: nn.LayerNorm(8), batch(5, 8), ({0: AUTO, 1: AUTO},), ci=True),
        _nn("GroupNorm", lambda: nn.GroupNorm(1, 3), img, images, ci=True),
        _nn("InstanceNorm2d", lambda: nn.InstanceNorm2d(3, affine=True), img, images),
        _nn("Embedding", lambda: nn.Embedding(50, 8), tokens, ({0: AUTO, 1: AUTO},), ci=True),
        _nn("EmbeddingBag", lambda: nn.EmbeddingBag(50, 8, mode="mean"), tokens, b0),
        _nn(
            "LSTM",
            lambda: nn.LSTM(8, 12, num_layers=2, batch_first=True),
            rnn_state(2, 12, True),
            ({0: AUTO, 1: AUTO}, ({1: AUTO}, {1: AUTO})),
            ci=True,
        ),
        _nn(
            "GRU",
            lambda: nn.GRU(8, 12, batch_first=True),
            rnn_state(1, 12, False),
            ({0: AUTO, 1: AUTO}, {1: AUTO}),
            ci=True,
        ),
        _nn(
            "RNN",
            lambda: nn.RNN(8, 12, batch_first=True),
            rnn_state(1, 12, False),
            ({0: AUTO, 1: AUTO}, {1: AUTO}),
        ),
        _nn(
            "LSTMCell", lambda: nn.LSTMCell(8, 12), cell_state(12, True), ({0: AUTO}, ({0: AUTO}, {0: AUTO}))
        ),
        _nn("GRUCell", lambda: nn.GRUCell(8, 12), cell_state(12, False), ({0: AUTO}, {0: AUTO}), ci=True),
        _nn("TransformerEncoderLayer", enc_layer, batch(5, 16), ({0: AUTO, 1: AUTO},), ci=True),
        _nn("TransformerEncoder", encoder, batch(5, 16), ({0: AUTO, 1: AUTO},)),
        _nn(
            "TransformerDecoderLayer",
            lambda: nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, dropout=0.0),
            lambda k: (*seq_first(16)(k), _rand(6, B + k, 16, k=k, seed=3)),
            ({0: AUTO, 1: AUTO}, {1: AUTO}),
        ),
        _nn(
            "Transformer",
            lambda: nn.Transformer(16, 2, 1, 1, dim_feedforward=32, dropout=0.0, batch_first=True),
            lambda k: (_rand(B + k, 5, 16, k=k), _rand(B + k, 4, 16, k=k, seed=4)),
            ({0: AUTO}, {0: AUTO}),
        ),
        _nn(
            "MultiheadAttention",
            lambda: nn.MultiheadAttention(16, 2, batch_first=True),
            qkv,
            ({0: AUTO, 1: AUTO}, {0: AUTO, 1: AUTO}, {0: AUTO, 1: AUTO}),
            ci=True,
        ),
        _nn(
            "Bilinear",
            lambda: nn.Bilinear(4, 5, 3),
            pair(batch(4), batch(5, seed=1)),
            ({0: AUTO}, {0: AUTO}),
            ci=True,
        ),
        _nn("PReLU", lambda: nn.PReLU(3), img, images),
        _nn("Softmax", lambda: nn.Softmax(dim=-1), batch(6), b0, ci=True),
        _nn("PixelShuffle", lambda: nn.PixelShuffle(2), batch(8, 4, 4), images),
        _nn("Upsample", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), img, images),
        _nn("AvgPool2d", lambda: nn.AvgPool2d(2), img, images),
        _nn(
            "MSELoss", lambda: nn.MSELoss(), pair(batch(6), batch(6, seed=1)), ({0: AUTO}, {0: AUTO}), ci=True
        ),
        _nn(
            "L1Loss",
            lambda: nn.L1Loss(reduction="none"),
            pair(batch(6), batch(6, seed=1)),
            ({0: AUTO}, {0: AUTO}),
        ),
        _nn(
            "CrossEntropyLoss",
            lambda: nn.CrossEntropyLoss(),
            pair(batch(10), classes(10)),
            ({0: AUTO}, {0: AUTO}),
            ci=True,
        ),
        _nn("NLLLoss", lambda: nn.NLLLoss(), pair(batch(10), classes(10, seed=1)), ({0: AUTO}, {0: AUTO})),
        _nn(
            "BCEWithLogitsLoss",
            lambda: nn.BCEWithLogitsLoss(),
            pair(batch(6), lambda k: (torch.rand(B + k, 6, generator=torch.Generator().manual_seed(k)),)),
            ({0: AUTO}, {0: AUTO}),
        ),
        _nn("HuberLoss", lambda: nn.HuberLoss(), pair(batch(6), batch(6, seed=1)), ({0: AUTO}, {0: AUTO})),
        _nn(
            "KLDivLoss",
            lambda: nn.KLDivLoss(reduction="batchmean", log_target=True),
            pair(batch(6), batch(6, seed=1)),
            ({0: AUTO}, {0: AUTO}),
        ),
        _nn(
            "CosineEmbeddingLoss",
            lambda: nn.CosineEmbeddingLoss(),
            lambda k: (_rand(B + k, 6, k=k), _rand(B + k, 6, k=k, seed=1), torch.ones(B + k)),
            ({0: AUTO}, {0: AUTO}, {0: AUTO}),
        ),
    ]


# names/: arguments named like the globals fx's generated code reads (codegen_names: inf, nan,
# device, torch, pytree, fx_pytree, getattr, slice, Ellipsis), a builtin the graph calls (round,
# dynamic shapes only) and a placeholder's local (input beside input_1). Each body makes the code
# torch generates for ep.module() read that global, so stock torch's forward reads the argument
# instead (issue 27): stock computes wrong numbers or crashes, the code-generator guard does not,
# and every parameter keeps its name on both.
_torch = torch  # for forwards whose argument called torch hides the module


class _Inf(torch.nn.Module):
    def forward(self, x, inf):
        return x * math.inf + inf  # fx writes the literal inf


class _Nan(torch.nn.Module):
    def forward(self, nan):
        return torch.where(nan > 0, nan, math.nan)  # fx writes the literal nan


class _Device(torch.nn.Module):
    def forward(self, x, device):
        return x + device * torch.ones(x.shape[-1], device="cpu")  # fx writes device(type='cpu')


class _Torch(torch.nn.Module):
    def forward(self, x, torch):
        return x + torch * _torch.ones(x.shape[-1], dtype=_torch.float32)  # torch.ops..., torch.float32


class _Pytree(torch.nn.Module):
    def forward(self, x, pytree):
        return x * 2 + pytree  # ep.module() ends with pytree.tree_unflatten(...)


class _FxPytree(torch.nn.Module):
    def forward(self, x, fx_pytree):
        return x * 2 + fx_pytree  # ep.module() starts with fx_pytree.tree_flatten_spec(...)


class _Getattr(torch.nn.Module):
    """ep.module() reads the parameters of ``layers[0]`` as ``getattr(self.layers, "0").weight``
    (a path component that is not an identifier)."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())

    def forward(self, getattr):
        return self.layers(getattr)


# No exported construct makes the code of ep.module() (nor of ep.graph_module or of
# run_decompositions()) write ``slice(`` or ``Ellipsis``: export lowers indexing to aten.slice /
# unsqueeze / select with int arguments (tried, torch 2.13, strict and non-strict, static and
# Dim.AUTO: x[..., 1:3], x[:, None, ...], setitem on slices, x.shape[:1] slicing, unflatten). Only
# symbolic_trace writes them (tests/test_codegen_guard.py). These two entries check that the names
# are kept and nothing else changes: stock and the hook must be the same in every check.
class _Slice(torch.nn.Module):
    def forward(self, x, slice):
        return x[..., 1:] * slice[:, :-1]


class _Ellipsis(torch.nn.Module):
    def forward(self, x, Ellipsis):
        return x[..., ::2] + Ellipsis[..., 1::2]


class _Round(torch.nn.Module):
    """With a dynamic first dimension the graph calls ``builtins.round`` on a SymInt expression and
    fx writes ``round(...)``; with static shapes export computes it (the same on both sides)."""

    def forward(self, x, round):
        return x[: builtins.round(x.shape[0] / 3)] + round.sum()


class _Input(torch.nn.Module):
    """Stock fx names the placeholder ``input``'s value ``input_1``, the other argument's name."""

    def forward(self, input, input_1):
        return input * 2 - input_1


def _names_entries() -> list[Entry]:
    B = 2

    def rows(*shapes):
        # k=1: one row more (the dynamic first dimension of each argument)
        return lambda k: tuple(_rand(B + k, *rest, k=k, seed=i) for i, rest in enumerate(shapes))

    def named(label, cls, inputs, dims, ci=False):
        def build():
            return Built(cls(), inputs, dims)

        return Entry(f"names/{label}", "names", _seeded(build), None, ci, 1e-4, 1e-5)

    b0 = {0: AUTO}

    def round_inputs(k):  # x has 7 rows (round(7/3) = 2), then 8 (round(8/3) = 3)
        return (_rand(7 + k, 3, k=k), _rand(3, k=k, seed=1))

    return [
        named("inf", _Inf, rows((3,), (3,)), (b0, b0), ci=True),
        named("nan", _Nan, rows((3,)), (b0,)),
        named("device", _Device, rows((3,), (3,)), (b0, b0), ci=True),
        named("torch", _Torch, rows((3,), (3,)), (b0, b0)),
        named("pytree", _Pytree, rows((3,), (3,)), (b0, b0)),
        named("fx_pytree", _FxPytree, rows((3,), (3,)), (b0, b0)),
        named("getattr", _Getattr, rows((3,)), (b0,), ci=True),
        named("slice", _Slice, rows((4,), (4,)), (b0, b0)),
        named("Ellipsis", _Ellipsis, rows((4,), (4,)), (b0, b0)),
        named("round", _Round, round_inputs, (b0, None), ci=True),
        named("input-input_1", _Input, rows((3,), (3,)), (b0, b0), ci=True),
    ]


def _torchvision_entries() -> list[Entry]:
    tv, seg, vid = _torchvision, _torchvision_segmentation, _torchvision_video
    return [
        tv("resnet18", ci=True),
        tv("resnet50"),
        tv("alexnet", size=80, ci=True),
        tv("vgg11"),
        tv("vgg11_bn"),
        tv("squeezenet1_0"),
        tv("squeezenet1_1", ci=True),
        tv("googlenet", init_weights=True),
        tv("mobilenet_v2"),
        tv("mobilenet_v3_small"),
        tv("mobilenet_v3_large"),
        tv("mnasnet0_5"),
        tv("mnasnet1_0"),
        tv("shufflenet_v2_x0_5"),
        tv("shufflenet_v2_x1_0"),
        tv("efficientnet_b0"),
        tv("regnet_x_400mf"),
        tv("regnet_y_400mf"),
        tv("vit_b_32", size=64, image_size=64, dynamic_spatial=False),
        seg("deeplabv3_mobilenet_v3_large"),
        seg("lraspp_mobilenet_v3_large"),
        vid("r3d_18"),
        vid("mc3_18"),
    ]


def _timm_entries() -> list[Entry]:
    t = _timm
    return [
        t("test_resnet", ci=True),
        t("test_convnext", size=64, ci=True),
        t("test_convnext2", size=64),
        t("test_convnext3", size=64),
        t("test_efficientnet", ci=True),
        t("test_efficientnet_gn"),
        t("test_efficientnet_ln"),
        t("test_efficientnet_evos"),
        t("test_byobnet", ci=True),
        t("test_nfnet", size=64),
        t("test_vit", ci=True, dynamic_spatial=False, size=160),
        t("test_vit2", dynamic_spatial=False, size=160),
        t("test_vit3", dynamic_spatial=False, size=160),
        t("test_vit4", dynamic_spatial=False, size=160),
        t("test_vit_relpos", dynamic_spatial=False, size=160),
        t("test_coatnet", dynamic_spatial=False, size=160),
        t("test_maxvit", dynamic_spatial=False, size=160),
        t("test_mambaout", size=64),
        t("resnet10t"),
        t("resnet18d"),
        t("regnetx_002"),
        t("mobilenetv3_small_050"),
        t("lcnet_050"),
        t("tinynet_e"),
        t("ghostnet_050"),
        t("rexnet_100"),
        t("efficientnet_b0"),
        t("mobilevit_xxs", size=64),
        t("convnext_atto", size=64),
        t("mobileone_s0"),
        t("vit_tiny_patch16_224", dynamic_spatial=False, size=64, img_size=64),
        t("deit_tiny_patch16_224", dynamic_spatial=False, size=64, img_size=64),
    ]


# benchmarks/hf.py's architectures, tiny (1 layer, width 64).
HF_TINY = dict(
    num_hidden_layers=1,
    hidden_size=64,
    intermediate_size=128,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    vocab_size=128,
    max_position_embeddings=256,
)
HF_CACHE_LEN = 16


def _hf_config(arch: str):
    import transformers

    sys.path.insert(0, str(ROOT))
    try:
        hf = importlib.import_module("benchmarks.hf")
    finally:
        sys.path.remove(str(ROOT))
    cls_name, real = hf.ARCHITECTURES[arch]
    kwargs = dict(real, **HF_TINY)
    kwargs.pop("rope_scaling", None)
    if "sliding_window" in kwargs:
        kwargs["sliding_window"] = HF_CACHE_LEN // 2
    if "num_local_experts" in kwargs:
        kwargs.update(num_local_experts=4, num_experts_per_tok=2)
    return getattr(transformers, cls_name)(**kwargs)


def _hf(arch: str, ci=False) -> list[Entry]:
    """Two entries per architecture: the causal LM's own forward (``input_ids``, ``attention_mask``;
    dynamic batch and sequence), and the static-cache module ExecuTorch's integration exports
    (``input_ids``, ``cache_position``, one token; as benchmarks/hf.py, not dynamic)."""
    slug = arch.split(" (")[0].replace(" ", "-")

    def forward():
        _torchvision_shim.import_torchvision_if_installed()
        import transformers

        config = _hf_config(arch)
        config.use_cache = False
        model = transformers.AutoModelForCausalLM.from_config(config)

        def inputs(k):
            g = torch.Generator().manual_seed(k)
            ids = torch.randint(0, 128, (2 + k, 6 + 2 * k), generator=g)
            return (ids, torch.ones_like(ids))

        return Built(model, inputs, ({0: AUTO, 1: AUTO}, {0: AUTO, 1: AUTO}))

    def static_cache():
        _torchvision_shim.import_torchvision_if_installed()
        import transformers
        from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

        config = _hf_config(arch)
        config.use_cache = True
        model = transformers.AutoModelForCausalLM.from_config(config)
        generation = model.generation_config
        generation.use_cache = True
        generation.cache_implementation = "static"
        generation.cache_config = {"batch_size": 1, "max_cache_len": HF_CACHE_LEN}
        wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=HF_CACHE_LEN)
        # What wrapper.export() exports: its inner module, called with these keywords.
        inner = wrapper.model

        def inputs(k):
            # one token at position 0: every call writes the same cache slot, so calls repeat
            # forward(input_ids, inputs_embeds, cache_position): positionally, inputs_embeds None
            return (torch.tensor([[3 + k]], dtype=torch.long), None, torch.tensor([0], dtype=torch.long))

        return Built(inner, inputs, None)

    return [
        Entry(f"hf/{slug}-forward", "hf", _seeded(forward), "transformers", False, 1e-4, 1e-4),
        # in CI: the forward's dynamic batch and sequence take about 3x as long to export
        Entry(f"hf/{slug}-static-cache", "hf", _seeded(static_cache), "transformers", ci, 1e-4, 1e-4),
    ]


def _hf_entries() -> list[Entry]:
    archs = ("Llama 3.2 1B", "Qwen3 0.6B", "Gemma 3 1B", "Granite 3.0 1B-A400M (MoE)")
    entries = []
    for arch in archs:
        entries += _hf(arch, ci=arch == "Llama 3.2 1B")
    return entries


def corpus() -> list[Entry]:
    return _nn_entries() + _names_entries() + _torchvision_entries() + _timm_entries() + _hf_entries()


def ci_subset() -> list[Entry]:
    return [e for e in corpus() if e.ci]


def entry(name: str) -> Entry:
    for e in corpus():
        if e.name == name:
            return e
    raise KeyError(name)


def missing_requirement(e: Entry) -> str | None:
    """Why ``e`` cannot run here (a package missing or failing to import), or None."""
    if not hasattr(torch.export, "Dim") or not hasattr(torch.export.Dim, "AUTO"):
        return f"torch {torch.__version__} has no torch.export.Dim.AUTO (the corpus's dynamic shapes)"
    if e.requires is None:
        return None
    try:
        if e.requires == "torchvision":
            _torchvision_shim.import_torchvision()
        elif e.requires == "timm":
            _torchvision_shim.import_timm()
        else:
            importlib.import_module(e.requires)
    except ImportError as exc:
        return f"{e.requires} is not installed ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
    return None


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Difference:
    model: str
    variant: str
    check: str
    stock: str
    hook: str
    allowed: bool = False
    why: str = ""
    # set by the check that records it: stock's side is wrong or crashes and the hook's is right
    stock_wrong_hook_right: bool = False

    def __str__(self) -> str:
        verdict = f"allowed: {self.why}" if self.allowed else "NOT allowed"
        return (
            f"{self.model} [{self.variant}] {self.check}: stock: {self.stock} | hook: {self.hook} ({verdict})"
        )


@dataclasses.dataclass
class EntryResult:
    name: str
    family: str
    seconds: float = 0.0
    skipped: str | None = None
    # (variant, check) -> "same" | "differs" | "n/a: why"
    checks: dict = dataclasses.field(default_factory=dict)
    differences: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)  # facts about stock torch, not differences

    def failed_checks(self, check: str) -> list[Difference]:
        return [d for d in self.differences if d.check == check and not d.allowed]


_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return f"{type(e).__name__}: {_HEX.sub('0x...', lines[0]) if lines else ''}"[:300]


@dataclasses.dataclass
class Outcome:
    """What a call did: its outputs (flattened) or the exception's type and first line."""

    error: str | None = None
    leaves: list | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        return "ok" if self.ok else self.error


def _leaves(out) -> list:
    from torch.utils import _pytree

    leaves, _ = _pytree.tree_flatten(out)
    return leaves


def _call(fn, *args, **kwargs) -> Outcome:
    try:
        with torch.no_grad():
            return Outcome(leaves=_leaves(fn(*args, **kwargs)))
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return Outcome(error=_first_line(e))


def _mismatch(a: list, b: list, rtol: float, atol: float) -> str | None:
    """Why the flattened outputs ``a`` and ``b`` differ, or None."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"output {i}: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}"
            try:
                torch.testing.assert_close(x.detach(), y.detach(), rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as e:
                detail = [line for line in str(e).splitlines() if "Greatest absolute" in line]
                return f"output {i} differs ({detail[0].strip() if detail else 'values'})"
        elif type(x) is not type(y) or x != y:
            return f"output {i}: {x!r} vs {y!r}"
    return None


def _same_outcome(stock: Outcome, hook: Outcome, rtol: float, atol: float) -> str | None:
    if stock.ok != hook.ok or (not stock.ok and stock.error != hook.error):
        return "outcome"
    if stock.ok:
        return _mismatch(stock.leaves, hook.leaves, rtol, atol)
    return None


def _dynamic_shapes(built: Built, names: list[str], by_keyword: bool):
    from torch.export import Dim

    def convert(spec):
        if spec is None:
            return None
        if isinstance(spec, dict):
            return {d: Dim.AUTO for d in spec}
        return type(spec)(convert(s) for s in spec)

    shapes = tuple(convert(s) for s in built.dims)
    return dict(zip(names, shapes)) if by_keyword else shapes


def _positional_names(module: torch.nn.Module, n: int) -> list[str]:
    params = list(inspect.signature(module.forward).parameters.values())
    return [p.name for p in params[:n]]


class _Side:
    """One side (stock or hook) of one variant: everything it did, as outcomes."""

    def __init__(self):
        self.export_error: str | None = None
        self.ep = None
        self.signature = None
        self.calls: dict[str, Outcome] = {}  # "k=0", "k=1" (dynamic)
        self.keyword: Outcome | None = None
        self.decomposed: dict[str, Outcome] = {}
        self.saved: bytes | None = None
        self.save_error: str | None = None
        self.warnings: set[str] = set()


def _warning_key(w: warnings.WarningMessage) -> str:
    return f"{w.category.__name__}: {_HEX.sub('0x...', str(w.message))}"


@contextlib.contextmanager
def _recording(into: set):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            into.update(_warning_key(w) for w in caught)


@contextlib.contextmanager
def _stock():
    """Stock torch: every patch of the package bypassed in this thread (the code-generator guard is
    in place as soon as the package is imported; the hook may be installed)."""
    import torch_export_names.hook as hook

    with hook.suspended():
        yield


@contextlib.contextmanager
def _hooked():
    import torch_export_names
    from torch_export_names import _warnings

    saved = set(_warnings._warned)
    _warnings._warned.clear()  # judge each program as in a fresh process
    try:
        with torch_export_names.installed():
            yield
    finally:
        _warnings._warned.clear()
        _warnings._warned.update(saved)


def _run_side(
    side: _Side, context, model, args, kwargs, dynamic_shapes, call_inputs, keyword_inputs, with_rest: bool
) -> None:
    with _recording(side.warnings), context():
        try:
            side.ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
        except Exception as e:  # noqa: BLE001
            side.export_error = _first_line(e)
            return
        mod = side.ep.module()
        side.signature = str(inspect.signature(mod.forward))
        for label, (a, kw) in call_inputs.items():
            side.calls[label] = _call(mod, *a, **kw)
        side.keyword = _call(mod, **keyword_inputs)
        if not with_rest:
            return
        try:
            decomposed = side.ep.run_decompositions().module()
        except Exception as e:  # noqa: BLE001
            side.decomposed = {label: Outcome(error=_first_line(e)) for label in call_inputs}
        else:
            for label, (a, kw) in call_inputs.items():
                side.decomposed[label] = _call(decomposed, *a, **kw)
        buffer = io.BytesIO()
        try:
            torch.export.save(side.ep, buffer)
            side.saved = buffer.getvalue()
        except Exception as e:  # noqa: BLE001
            side.saved = None
            side.save_error = _first_line(e)


def _load_and_call(data: bytes | None, context, call_inputs, into: set, save_error: str | None):
    if data is None:
        return {label: Outcome(error=f"save failed: {save_error}") for label in call_inputs}
    with _recording(into), context():
        try:
            mod = torch.export.load(io.BytesIO(data)).module()
        except Exception as e:  # noqa: BLE001
            return {label: Outcome(error=_first_line(e)) for label in call_inputs}
        return {label: _call(mod, *a, **kw) for label, (a, kw) in call_inputs.items()}


def _run_variant(e: Entry, built: Built, variant: str, result: EntryResult, quick: bool) -> None:
    example = built.inputs(0)
    names = _positional_names(built.module, len(example))
    dynamic = variant == "dynamic"
    if dynamic and built.dims is None:
        for check in CHECKS:
            result.checks[(variant, check)] = "n/a: no dynamic dimensions"
        return
    by_keyword = variant == "kwargs"
    as_kwargs = dict(zip(names, example))
    args, kwargs = ((), as_kwargs) if by_keyword else (example, {})
    shapes = _dynamic_shapes(built, names, by_keyword) if dynamic else None
    # how ep.module() is called: as exported; for dynamic shapes also with another batch/size
    sets = {"k=0": (example, {})} if not by_keyword else {"k=0": ((), as_kwargs)}
    if dynamic:
        sets["k=1"] = (built.inputs(1), {})
    with torch.no_grad():
        eager = {label: _call(built.module, *a, **kw) for label, (a, kw) in sets.items()}
    for label, out in eager.items():
        if not out.ok:  # the corpus entry is wrong, not torch: fail loudly
            raise RuntimeError(f"the model itself (eager, {label}) raised {out.error}")

    # decompositions and save/load: not for kwargs (the static program but for its input spec)
    with_rest = not by_keyword and not (quick and dynamic)
    if not by_keyword and not with_rest:
        for check in ("decompositions", "save/load"):
            result.checks[(variant, check)] = "n/a: quick run (checked on the static export)"
    stock, hook = _Side(), _Side()
    for side, context in ((stock, _stock), (hook, _hooked)):
        _run_side(
            side, context, copy.deepcopy(built.module), args, kwargs, shapes, sets, as_kwargs, with_rest
        )
    checks = KWARGS_CHECKS if by_keyword else tuple(CHECKS)
    diffs: list[Difference] = []

    def differ(check, s, h, stock_wrong_hook_right=False):
        diffs.append(Difference(e.name, variant, check, s, h, stock_wrong_hook_right=stock_wrong_hook_right))

    # export
    if stock.export_error != hook.export_error:
        differ(
            "export",
            stock.export_error or "ok",
            hook.export_error or "ok",
            stock_wrong_hook_right=stock.export_error is not None and hook.export_error is None,
        )
    if stock.export_error or hook.export_error:
        result.checks[(variant, "export")] = "same" if stock.export_error == hook.export_error else "differs"
        why = f"n/a: export failed ({stock.export_error or hook.export_error})"
        for check in checks[1:]:
            result.checks[(variant, check)] = why
        if stock.export_error and stock.export_error == hook.export_error:
            result.notes.append(
                f"{variant}: export fails on stock torch and under the hook: {stock.export_error}"
            )
        _finish(result, e, diffs, variant, checks, stock, hook, eager)
        return

    # outputs: each side against eager, and against each other
    for label in sets:
        s, h, ref = stock.calls[label], hook.calls[label], eager[label]
        s_vs_eager = _wrong(s, ref, e)
        h_vs_eager = _wrong(h, ref, e)
        if _same_outcome(s, h, e.rtol, e.atol) or h_vs_eager != s_vs_eager:
            differ(
                "outputs",
                f"{label}: {s_vs_eager or 'as eager'}",
                f"{label}: {h_vs_eager or 'as eager'}",
                bool(s_vs_eager) and not h_vs_eager,
            )
        elif s_vs_eager:
            result.notes.append(
                f"{variant}: ep.module() {label} on stock torch and under the hook: {s_vs_eager}"
            )
    # signature
    if stock.signature != hook.signature:
        differ("signature", stock.signature, hook.signature)
    # keyword call
    if _same_outcome(stock.keyword, hook.keyword, e.rtol, e.atol):
        # the same values as the k=0 call: eager's k=0 outputs are the reference
        s_vs_eager, h_vs_eager = _wrong(stock.keyword, eager["k=0"], e), _wrong(hook.keyword, eager["k=0"], e)
        differ(
            "keyword call",
            s_vs_eager or "as eager",
            h_vs_eager or "as eager",
            bool(s_vs_eager) and not h_vs_eager,
        )
    if with_rest:
        # decompositions
        for label in sets:
            s, h, ref = stock.decomposed[label], hook.decomposed[label], eager[label]
            s_vs_eager, h_vs_eager = _wrong(s, ref, e), _wrong(h, ref, e)
            if _same_outcome(s, h, e.rtol, e.atol) or h_vs_eager != s_vs_eager:
                differ(
                    "decompositions",
                    f"{label}: {s_vs_eager or 'as eager'}",
                    f"{label}: {h_vs_eager or 'as eager'}",
                    bool(s_vs_eager) and not h_vs_eager,
                )
        # save/load: the stock-saved, stock-loaded program is the reference (quick: stock's own
        # ep.module(), one load less)
        base_w, cross_w = set(), set()
        if stock.save_error and stock.save_error == hook.save_error:
            result.notes.append(
                f"{variant}: torch.export.save fails on stock torch and under the hook: {stock.save_error}"
            )
        base = stock.calls if quick else _load_and_call(stock.saved, _stock, sets, base_w, stock.save_error)
        hook_to_stock = _load_and_call(hook.saved, _stock, sets, cross_w, hook.save_error)
        stock_to_hook = _load_and_call(stock.saved, _hooked, sets, cross_w, stock.save_error)
        for direction, loaded in (
            ("saved under the hook, loaded on stock", hook_to_stock),
            ("saved on stock, loaded under the hook", stock_to_hook),
        ):
            for label in sets:
                b, x = base[label], loaded[label]
                b_vs_eager, x_vs_eager = _wrong(b, eager[label], e), _wrong(x, eager[label], e)
                if _same_outcome(b, x, e.rtol, e.atol) or b_vs_eager != x_vs_eager:
                    reference = "stock" if quick else "stock->stock"
                    differ(
                        "save/load",
                        f"{label} {reference}: {b_vs_eager or 'as eager'}",
                        f"{label} {direction}: {x_vs_eager or 'as eager'}",
                        bool(b_vs_eager) and not x_vs_eager,
                    )
        stock.warnings |= base_w
        if not quick:  # quick has no stock-saved, stock-loaded program to compare the loads' warnings with
            hook.warnings |= cross_w
    _finish(result, e, diffs, variant, checks, stock, hook, eager)


def _wrong(out: Outcome, ref: Outcome, e: Entry) -> str | None:
    """How ``out`` departs from eager's ``ref``: its exception, or the mismatch; None if it matches."""
    if not out.ok:
        return f"raises {out.error}"
    if not ref.ok:
        return f"runs where eager raises {ref.error}"
    mismatch = _mismatch(ref.leaves, out.leaves, e.rtol, e.atol)
    return f"differs from eager: {mismatch}" if mismatch else None


def _finish(result, e: Entry, diffs, variant, checks, stock: _Side, hook: _Side, eager) -> None:
    new = sorted(hook.warnings - stock.warnings)
    if new:
        diffs.append(Difference(result.name, variant, "warnings", "(none of these)", " || ".join(new)))
    # Allowed only where, in the check that records the difference, stock computes a wrong result
    # or crashes and the hook does not (never a signature or a warning), and the hook's ep.module()
    # computes eager's results in every call of the variant.
    hook_right = hook.ep is not None and all(
        _wrong(o, eager[label], e) is None for label, o in hook.calls.items() if eager[label].ok
    )
    for d in diffs:
        if d.stock_wrong_hook_right and hook_right:
            d.allowed = True
            d.why = "stock torch crashes or computes a wrong result here; under the hook it does not"
    result.differences += diffs
    for check in checks:
        key = (variant, check)
        if key not in result.checks:
            result.checks[key] = "differs" if any(d.check == check for d in diffs) else "same"


def run_entry(e: Entry, variants=VARIANTS, quick: bool = False) -> EntryResult:
    """Export ``e`` on stock torch and under the hook, per variant; every check's verdict.

    ``quick`` (the CI subset): the dynamic variant skips ``run_decompositions`` and save/load (the
    static one checks them), and save/load compares the loaded programs with stock's in-memory ``ep.module()``
    instead of a stock-saved, stock-loaded one. The full corpus runs everything."""
    result = EntryResult(e.name, e.family)
    reason = missing_requirement(e)
    if reason:
        result.skipped = reason
        return result
    start = time.perf_counter()
    # Each model as in a fresh process: dynamo's caches (and their recompile limit, which a long
    # run of exports reaches on torch 2.7: FailOnRecompileLimitHit on both sides) start empty.
    torch._dynamo.reset()
    built = e.build()
    for variant in variants:
        try:
            _run_variant(e, built, variant, result, quick)
        except Exception as exc:  # noqa: BLE001 - a bug here must not hide the other variants
            result.differences.append(Difference(e.name, variant, "harness", "", _first_line(exc)))
            result.notes.append(f"{variant}: the harness raised:\n{traceback.format_exc()}")
    result.seconds = time.perf_counter() - start
    return result


def compare(e: Entry, quick: bool = False) -> list[Difference]:
    """Every difference between stock torch and the hook for ``e`` (allowed ones included)."""
    return run_entry(e, quick=quick).differences


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


def _version(module: str) -> str:
    try:
        if module in ("torchvision", "timm"):
            shim = _torchvision_shim
            mod = shim.import_timm() if module == "timm" else shim.import_torchvision()
        else:
            mod = importlib.import_module(module)
        return mod.__version__
    except Exception as e:  # noqa: BLE001
        return f"not available ({type(e).__name__})"


def environment() -> dict:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit += " (with uncommitted changes)" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    import torch_export_names

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchvision": _version("torchvision"),
        "timm": _version("timm"),
        "transformers": _version("transformers"),
        "commit": commit,
        "torchvision schemas declared by tests/_torchvision_shim.py": str(_torchvision_shim.shimmed),
        "torch_export_names": str(Path(torch_export_names.__file__).resolve().parent.relative_to(ROOT))
        if Path(torch_export_names.__file__).resolve().is_relative_to(ROOT)
        else "installed elsewhere",
        "threads": str(torch.get_num_threads()),
    }


def _cell(result: EntryResult, variant: str, check: str) -> str:
    verdict = result.checks.get((variant, check), "")
    if verdict == "differs":
        allowed = all(d.allowed for d in result.differences if d.variant == variant and d.check == check)
        return "differs (allowed)" if allowed else "**DIFFERS**"
    return "n/a" if verdict.startswith("n/a") else verdict


def markdown(
    results: list[EntryResult], env: dict, explanations: dict[str, str], command: str, seconds: float
) -> str:
    ran = [r for r in results if not r.skipped]
    out = [
        "# Differential test against stock torch",
        "",
        f"Generated by `{command}`"
        + (f" ({seconds / 60:.0f} min)" if seconds else "")
        + ". Each model is exported on stock torch (every patch of the package, the code-generator "
        "guard included, bypassed: `torch_export_names.hook.suspended()`) and under "
        "`torch_export_names.installed()`, in three variants: `static` "
        "(positional arguments), `dynamic` (`Dim.AUTO` batch, and H, W for convnets; also called "
        "with another batch and size), `kwargs` (arguments exported by keyword; export, outputs, "
        "signature, keyword call and warnings only). The corpus and the checks are in "
        "`tests/differential.py`; `tests/test_differential.py` runs a subset of it in CI.",
        "",
        "## Environment",
        "",
        "| | |",
        "| --- | --- |",
    ]
    out += [f"| {k} | {v} |" for k, v in env.items()]
    out += ["", "## Checks", "", "| check | compares |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in CHECKS.items()]
    out += [
        "",
        "## Summary",
        "",
        f"{len(results)} models ("
        + ", ".join(f"{fam} {sum(r.family == fam for r in results)}" for fam in FAMILIES)
        + f"): {len(ran)} ran, {len(results) - len(ran)} skipped.",
        "",
        "| check | variant | same | differs (allowed) | differs (not allowed) | n/a |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for check in CHECKS:
        for variant in VARIANTS:
            cells = [_cell(r, variant, check) for r in ran if (variant, check) in r.checks]
            if not cells:
                continue
            out.append(
                f"| {check} | {variant} | {cells.count('same')} | "
                f"{cells.count('differs (allowed)')} | {cells.count('**DIFFERS**')} | "
                f"{cells.count('n/a')} |"
            )
    not_allowed = [d for r in ran for d in r.differences if not d.allowed]
    allowed = [d for r in ran for d in r.differences if d.allowed]
    out += [
        "",
        f"Differences: {len(not_allowed)} not allowed, {len(allowed)} allowed, in "
        f"{len({d.model for d in not_allowed + allowed})} models.",
        "",
    ]
    out += ["## Differences", ""]
    if not not_allowed + allowed:
        out.append("None.")
    else:
        out += [
            "Each difference names its explanation (below the table); `allowed` only where, in that "
            "check, stock torch computes a wrong result or crashes and the hook does not (never a "
            "signature or a warning), and the hook's `ep.module()` computes eager's results.",
            "",
            "| model | variant | check | stock | hook | allowed | explanation |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
    used = []
    for d in not_allowed + allowed:
        text = f"{d.model} {d.check} {d.stock} {d.hook}"
        keys = [k for k in explanations if re.search(k, text)]
        for k in keys:
            if k not in used:
                used.append(k)
        ref = ", ".join(f"[{used.index(k) + 1}]" for k in keys) or "unexplained"
        cell = lambda v: v.replace("|", "\\|").replace("\n", " ")  # noqa: E731
        out.append(
            f"| `{d.model}` | {d.variant} | {d.check} | {cell(d.stock)} | {cell(d.hook)} | "
            f"{'yes: ' + d.why if d.allowed else 'no'} | {ref} |"
        )
    if used:
        out += ["", "Explanations:", ""]
        out += [f"{i}. {explanations[k]}" for i, k in enumerate(used, 1)]
    out += [
        "",
        "## Per model",
        "",
        "One cell per check: static / dynamic / kwargs (`same`, `differs (allowed)`, **DIFFERS**, `n/a`).",
        "",
        "| model | " + " | ".join(CHECKS) + " | seconds |",
        "| --- |" + " --- |" * (len(CHECKS) + 1),
    ]
    for r in results:
        if r.skipped:
            out.append(f"| `{r.name}` | skipped: {r.skipped} |" + " |" * len(CHECKS))
            continue
        cells = [" / ".join(_cell(r, v, c) if (v, c) in r.checks else "-" for v in VARIANTS) for c in CHECKS]
        out.append(f"| `{r.name}` | " + " | ".join(cells) + f" | {r.seconds:.0f} |")
    notes = [(r.name, n) for r in ran for n in r.notes]
    if notes:
        out += ["", "## Notes on stock torch (the same with and without the hook)", ""]
        out += [f"- `{name}`: {note.splitlines()[0]}" for name, note in notes]
    return "\n".join(out) + "\n"


# Explanations of known differences: regular expressions searched in "model check stock hook".
EXPLANATIONS = {
    r"^names/(inf|nan|device|torch|pytree|fx_pytree|getattr) ": "the argument is named like a global "
    "that the code torch.fx generates for `ep.module()` reads (the literals `inf`, `nan`, "
    "`device(...)`, `torch.ops...`/`torch.float32`, `pytree.tree_unflatten`, "
    '`fx_pytree.tree_flatten_spec`, `getattr(self.layers, "0")` for a submodule path that is not '
    "an identifier). On stock torch the generated forward's parameter shadows the global: it "
    "crashes or computes wrong numbers (issue 27). Under the package the code-generator guard "
    "gives the body's uses of the global a fresh name and the parameter keeps its name (the "
    "signature is the same on both). A program saved on stock and loaded under the package is "
    "right too: its code is generated on load.",
    r"^names/round ": "with a dynamic first dimension the graph calls `builtins.round` and fx writes "
    "`round(...)`, which the argument `round` shadows on stock torch (`'Tensor' object is not "
    "callable`); the guard renames the body's `round`. With static shapes export computes the "
    "round itself (same on both). `torch.export.save` cannot serialize `builtins.round` on either "
    "side (see the notes), so save/load compares two failures.",
    r"^names/input-input_1 ": "stock fx names the value of placeholder `input` `input_1` (its "
    "name space avoids the builtin), and that local overwrites the argument `input_1` "
    "(pytorch/pytorch#202927): `input * 2 - input_1` is computed as `input * 2 - input`. The guard "
    "renames the local; both arguments keep their names.",
}


def _worker(name: str, quick: bool, threads: int) -> EntryResult:
    torch.set_num_threads(threads)
    return run_entry(entry(name), quick=quick)


def _run_all(names: list[str], quick: bool, jobs: int, fresh: bool = True):
    """EntryResults in completion order; with ``jobs`` > 1 in worker processes, each model in a
    fresh one if ``fresh`` (isolation and memory; costs an import of torch per model)."""
    if jobs <= 1:
        for name in names:
            yield run_entry(entry(name), quick=quick)
        return
    import concurrent.futures
    import multiprocessing

    threads = max(1, (os.cpu_count() or 1) // jobs)
    worker = importlib.import_module(__spec__.name if __spec__ else __name__)._worker
    options = {"max_tasks_per_child": 1} if fresh and sys.version_info >= (3, 11) else {}
    with concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("spawn"), **options
    ) as pool:
        futures = {pool.submit(worker, name, quick, threads): name for name in names}
        for future in concurrent.futures.as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 - a crashed worker is a result too
                r = EntryResult(futures[future], entry(futures[future]).family)
                r.differences.append(Difference(r.name, "-", "harness", "", _first_line(exc)))
                yield r


def _to_json(r: EntryResult) -> dict:
    d = dataclasses.asdict(r)
    d["checks"] = {f"{v}|{c}": verdict for (v, c), verdict in r.checks.items()}
    return d


def _from_json(d: dict) -> EntryResult:
    r = EntryResult(d["name"], d["family"], d["seconds"], d["skipped"])
    r.checks = {tuple(k.split("|", 1)): v for k, v in d["checks"].items()}
    r.differences = [Difference(**x) for x in d["differences"]]
    r.notes = d["notes"]
    return r


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write the markdown report here (default: stdout)")
    p.add_argument("--json", type=Path, help="also write the results as JSON (for --merge)")
    p.add_argument(
        "--merge",
        type=Path,
        nargs="*",
        default=[],
        help="start from these JSON results (a later file's model replaces an earlier's) and run "
        "only what --models/--family/--ci select, replacing those",
    )
    p.add_argument("--ci", action="store_true", help="only the CI subset")
    p.add_argument("--models", nargs="*", help="only these entries (names as in the report)")
    p.add_argument("--family", choices=FAMILIES, action="append")
    p.add_argument("--quick", action="store_true", help="what the pytest subset does (see run_entry)")
    p.add_argument(
        "--note",
        action="append",
        default=[],
        help="a paragraph for the report's header (e.g. how merged results were produced)",
    )
    p.add_argument("--command", help="the command to name in the report (default: this one)")
    p.add_argument(
        "--not-run",
        action="store_true",
        help="list the corpus's models that no result covers as skipped (not run)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="models run in parallel, each in a fresh process (torch threads split between them)",
    )
    args = p.parse_args(argv)
    entries = ci_subset() if args.ci else corpus()
    if args.models is not None:
        unknown = set(args.models) - {e.name for e in entries}
        if unknown:
            p.error(f"unknown models: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.name in args.models]
    if args.family:
        entries = [e for e in entries if e.family in args.family]
    merged: dict[str, EntryResult] = {}
    for path in args.merge:
        for d in json.loads(path.read_text())["results"]:
            merged[d["name"]] = _from_json(d)
    order = {e.name: i for i, e in enumerate(corpus())}
    command = args.command or "python -m tests.differential " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    env = environment()
    start = time.perf_counter()
    done: dict[str, EntryResult] = dict(merged)

    def write(final: bool) -> str:
        missing = (
            [
                EntryResult(e.name, e.family, skipped="not run for this report (out of time)")
                for e in corpus()
                if e.name not in done
            ]
            if args.not_run
            else []
        )
        results = sorted([*done.values(), *missing], key=lambda r: order.get(r.name, len(order)))
        md = markdown(
            results, env, EXPLANATIONS, command.strip(), time.perf_counter() - start if entries else None
        )
        if args.note:
            md = md.replace("\n## Environment", "\n" + "\n\n".join(args.note) + "\n\n## Environment", 1)
        if not final:
            total = len(set(merged) | {e.name for e in entries})
            md = md.replace(
                "\n## Environment",
                f"\n**Incomplete: {len(done)} of {total} models so far.**\n\n## Environment",
                1,
            )
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(md)
        if args.json:
            args.json.write_text(
                json.dumps({"environment": env, "results": [_to_json(r) for r in results]}, indent=1)
            )
        return md

    for i, r in enumerate(_run_all([e.name for e in entries], args.quick, args.jobs), 1):
        done[r.name] = r
        bad = [d for d in r.differences if not d.allowed]
        status = f"skipped: {r.skipped}" if r.skipped else (f"{len(bad)} differences" if bad else "same")
        print(f"[{i}/{len(entries)}] {r.name}: {status} ({r.seconds:.0f} s)", file=sys.stderr, flush=True)
        for d in bad:
            print(f"    {d}", file=sys.stderr, flush=True)
        if args.out or args.json:
            write(final=False)
    md = write(final=True)
    if not args.out:
        print(md)
    return 1 if any(not d.allowed for r in done.values() for d in r.differences) else 0


if __name__ == "__main__":
    sys.exit(main())
