"""The environment a run measured: versions, CPU, threads, source revision."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _where(path: Path) -> str:
    """``path`` relative to the repository if it is inside it; otherwise where it is installed,
    without this machine's directories (results are committed)."""
    try:
        return f"<repository>/{path.resolve().relative_to(REPO).as_posix()}"
    except ValueError:
        return f"<outside the repository>/{path.name}"


def environment() -> dict:
    import torch

    import torch_export_names

    status = _git("status", "--porcelain")
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_gib": _mem_total_gib(),
        "torch": torch.__version__,
        "torch_num_threads": torch.get_num_threads(),
        "executorch": _version("executorch"),
        "numpy": _version("numpy"),
        "matplotlib": _version("matplotlib"),
        "torch_export_names": torch_export_names.__version__,
        "torch_export_names_path": _where(Path(torch_export_names.__file__).parent),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty_files": None if status is None else len(status.splitlines()),
    }
