"""A progress display on stderr: one line per step, with elapsed time and load."""

from __future__ import annotations

import sys
import time

from benchmarks.timing import loadavg


class Progress:
    """Prints ``[  12.3s  5/31 load 1.52] label`` for each step; keeps the load samples."""

    def __init__(self, total: int, stream=None):
        self.total = total
        self.done = 0
        self.start = time.perf_counter()
        self.stream = stream if stream is not None else sys.stderr
        self.load_samples: list[dict] = []

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def step(self, label: str) -> None:
        self.done += 1
        load = loadavg()
        self.load_samples.append({"t_s": round(self.elapsed(), 2), "step": label, "loadavg": load})
        one_min = f"{load[0]:.2f}" if load else "n/a"
        width = len(str(self.total))
        print(
            f"[{self.elapsed():7.1f}s {self.done:{width}d}/{self.total} load {one_min}] {label}",
            file=self.stream,
            flush=True,
        )
