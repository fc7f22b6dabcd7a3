"""Timing primitives: repeated calls, medians and spreads, machine load."""

from __future__ import annotations

import gc
import os
import statistics
import time
from typing import Any, Callable


def run_timed(
    fn: Callable[[], Any],
    *,
    reps: int,
    setup: Callable[[], Any] | None = None,
    disable_gc: bool = True,
) -> tuple[list[float], list[Any]]:
    """Call ``fn`` ``reps`` times; seconds per call and the results.

    ``setup`` runs before each call, outside the timed region. The cyclic
    collector runs before ``setup``, so garbage left by earlier calls is not
    charged to this one; with ``disable_gc`` it is then off until the call
    returns (as ``timeit`` does). The collection comes before ``setup``
    because walking the heap leaves the CPU caches cold; ``setup`` (which
    touches the graph) then leaves them as they are right after export, where
    the hook runs.
    """
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    seconds, results = [], []
    for _ in range(reps):
        gc.collect()
        if disable_gc:
            gc.disable()
        try:
            if setup is not None:
                setup()
            t0 = time.perf_counter_ns()
            result = fn()
            t1 = time.perf_counter_ns()
        finally:
            if disable_gc:
                gc.enable()
        seconds.append((t1 - t0) / 1e9)
        results.append(result)
    return seconds, results


def run_interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    reps: int,
    setup: Callable[[], Any] | dict[str, Callable[[], Any]] | None = None,
) -> tuple[dict[str, list[float]], dict[str, list[Any]]]:
    """``run_timed`` for several functions in rotation: rep 1 of each, then rep 2 of each, ...

    On a shared machine the load drifts; rotating spreads the drift over all
    functions alike, so the ratios of their medians stay fair. ``setup`` is one
    function for all, or one per name.
    """
    setups = setup if isinstance(setup, dict) else {name: setup for name in fns}
    seconds: dict[str, list[float]] = {name: [] for name in fns}
    results: dict[str, list[Any]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t, r = run_timed(fn, reps=1, setup=setups[name])
            seconds[name] += t
            results[name] += r
    return seconds, results


def summarize(samples: list[float]) -> dict:
    """Median, min, max and quartiles of ``samples`` (seconds), with the samples."""
    if not samples:
        raise ValueError("no samples")
    s = sorted(samples)
    if len(s) > 1:
        q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
    else:
        q1 = q3 = s[0]
    return {
        "n": len(s),
        "median_s": statistics.median(s),
        "min_s": s[0],
        "max_s": s[-1],
        "q1_s": q1,
        "q3_s": q3,
        "samples_s": list(samples),
    }


def ratio(numerator: dict, denominator: dict) -> float:
    """Ratio of two summaries' medians."""
    return numerator["median_s"] / denominator["median_s"]


def loadavg() -> list[float]:
    """1, 5 and 15 minute load averages (empty where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def fmt_time(seconds: float) -> str:
    """``1.23 s``, ``45.6 ms``, ``789 us``, ``12.3 ns``: three significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            v = seconds / scale
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:.0f} {unit}"
    raise AssertionError("unreachable")
