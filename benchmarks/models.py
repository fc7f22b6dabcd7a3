"""Llama-style decoders from ``executorch.examples.models.llama``, random weights, KV cache on."""

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
