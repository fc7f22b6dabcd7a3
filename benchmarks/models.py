"""The models the benchmarks export, with random weights (no checkpoint, no download).

Llama-style decoders from ``executorch.examples.models.llama`` (KV cache on), and Hugging Face
architectures exported the way transformers' ExecuTorch integration exports them
(``python -m benchmarks.hf``; the callgrind child of ``benchmarks.instructions`` builds them too).
"""

from __future__ import annotations

import torch

# Fixed shape of every decoder in the sweep; only the layer count varies.
LLAMA_CONFIG = {
    "dim": 256,
    "n_heads": 8,
    "vocab_size": 512,
    "max_seq_len": 128,
    "max_context_len": 128,
    "max_batch_size": 1,
    "use_kv_cache": True,
    "enable_dynamic_shape": False,  # static KV cache: one token per call, as ExecuTorch's llama export
}


def build_llama(n_layers: int, *, seed: int = 0) -> tuple[torch.nn.Module, tuple]:
    """A Llama decoder with ``n_layers`` layers and its example inputs ``(tokens, {"input_pos": ...})``.

    Built directly from ``ModelArgs`` with ``construct_transformer`` (weights from
    ``torch.manual_seed(seed)``, no checkpoint, no download).
    """
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(seed)
    model = construct_transformer(ModelArgs(n_layers=n_layers, **LLAMA_CONFIG)).eval()
    tokens = torch.tensor([[1]], dtype=torch.long)
    attn_options = {"input_pos": torch.tensor([0], dtype=torch.long)}
    return model, (tokens, attn_options)


def export_llama(model: torch.nn.Module, example_inputs: tuple) -> torch.export.ExportedProgram:
    """``torch.export.export`` as the benchmark times it (non-strict)."""
    return torch.export.export(model, example_inputs, strict=False)


# Real sizes, from each model's published configuration.
ARCHITECTURES = {
    "Llama 3.2 1B": (
        "LlamaConfig",
        dict(
            num_hidden_layers=16,
            hidden_size=2048,
            intermediate_size=8192,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=64,
            vocab_size=128256,
            tie_word_embeddings=True,
            rope_theta=500000.0,
            max_position_embeddings=131072,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 32.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        ),
    ),
    "Qwen3 0.6B": (
        "Qwen3Config",
        dict(
            num_hidden_layers=28,
            hidden_size=1024,
            intermediate_size=3072,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=True,
            max_position_embeddings=40960,
        ),
    ),
    "Gemma 3 1B": (
        "Gemma3TextConfig",
        dict(
            num_hidden_layers=26,
            hidden_size=1152,
            intermediate_size=6912,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            vocab_size=262144,
            sliding_window=512,
            max_position_embeddings=32768,
        ),
    ),
    # A mixture-of-experts model small enough to build with real widths in 24 GB:
    # IBM Granite 3.0 1B-A400M (32 experts, 8 per token).
    "Granite 3.0 1B-A400M (MoE)": (
        "GraniteMoeConfig",
        dict(
            num_hidden_layers=24,
            hidden_size=1024,
            intermediate_size=512,
            num_attention_heads=16,
            num_key_value_heads=8,
            vocab_size=49155,
            num_local_experts=32,
            num_experts_per_tok=8,
            tie_word_embeddings=True,
            max_position_embeddings=4096,
        ),
    ),
}

# The default run keeps every layer count and graph shape but shrinks widths, so
# four models build and export in a few minutes on 2 cores.
SMALL = dict(hidden_size=256, intermediate_size=512, num_attention_heads=4, head_dim=64, vocab_size=4096)
MAX_CACHE_LEN = 128


def build_hf(name: str, *, full: bool, layers: int | None = None):
    """The model ``name`` with random weights; ``layers`` overrides the real depth (quick checks)."""
    import transformers

    cls_name, real = ARCHITECTURES[name]
    kwargs = dict(real)
    if layers is not None:
        kwargs["num_hidden_layers"] = layers
    if not full:
        kwargs.update(SMALL)
        kwargs["num_key_value_heads"] = min(real["num_key_value_heads"], 2)
        kwargs["max_position_embeddings"] = 4 * MAX_CACHE_LEN
        if "rope_scaling" in kwargs:
            scaling = dict(kwargs["rope_scaling"], original_max_position_embeddings=MAX_CACHE_LEN)
            kwargs["rope_scaling"] = scaling
        if "sliding_window" in kwargs:
            kwargs["sliding_window"] = MAX_CACHE_LEN // 2
    config = getattr(transformers, cls_name)(**kwargs)
    config.use_cache = True
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    generation = model.generation_config
    generation.use_cache = True
    generation.cache_implementation = "static"
    generation.cache_config = {"batch_size": 1, "max_cache_len": MAX_CACHE_LEN}
    return model


def export_hf(model) -> torch.export.ExportedProgram:
    """What ``optimum-executorch`` does: the integration's wrapper, one token, its export()."""
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=MAX_CACHE_LEN)
    ids = torch.zeros((1, 1), dtype=torch.long)
    return wrapper.export(input_ids=ids, cache_position=torch.tensor([0], dtype=torch.long))
