"""The differential corpus: models nobody in this project wrote, with example inputs.

Each ``Entry`` builds a model and its inputs (``Built``): torchvision, timm, ``torch.nn`` modules
whose arguments are called ``input``, ``src``, ``query``, ``hx``, ..., Hugging Face architectures
built from tiny configs with random weights, and the ``names/`` models whose arguments are named
like the globals of fx's generated code. ``corpus()`` lists them all, ``ci_subset()`` those
tests/test_differential.py runs, ``missing_requirement`` says why one cannot run here.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import math
import sys
from collections.abc import Callable
from pathlib import Path

import torch

try:  # python -m tests.differential: the package tests.differential
    from .. import _torchvision_shim
except ImportError:  # pytest puts tests/ itself on sys.path: the package is differential
    import _torchvision_shim

ROOT = Path(__file__).resolve().parents[2]

FAMILIES = ("torchvision", "timm", "nn", "names", "hf")

AUTO = "AUTO"  # a dynamic dimension (torch.export.Dim.AUTO), spelled without importing it early


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
# instead (a name torch.export assigns skips create_name's check against those globals): stock
# computes wrong numbers or crashes, the code-generator guard does not,
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
