"""Helpers the benchmark commands share: argument parsing and one-line error reports."""

from __future__ import annotations

import argparse


def int_list(text: str) -> list[int]:
    """``1,4,16`` (``_`` allowed in a number) as ``[1, 4, 16]``, for argparse: positive integers."""
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def int_list_or_none(text: str) -> list[int]:
    """As ``int_list``, and ``0`` for none (``--layers 0``: no Llama sizes)."""
    return [] if text.strip() == "0" else int_list(text)


def error_line(e: BaseException) -> str:
    """``Type: first line with text`` (ExecuTorch's SpecViolationError starts with an empty one)."""
    first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
    return f"{type(e).__name__}: {first[:200]}"
