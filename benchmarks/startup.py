"""What `torch-export-names run` costs against `TORCH_EXPORT_NAMES=1 python`, per program start.

``python -m benchmarks.startup [--reps R] [--workloads edge,empty] [--out DIR]``

Each workload is a script started three ways, in rotation, R times each:

- ``env var``: ``TORCH_EXPORT_NAMES=1 python script.py`` (the .pth file installs the hook);
- ``run``: ``torch-export-names run script.py`` (the console script, else
  ``python -m torch_export_names run``), which sets the variable and execs python;
- ``python``: plain ``python script.py``, without the variable (for reference).

Measured per start: the CPU time (user + system) and the peak resident memory of the process,
as ``wait4`` reports them (after exec, ``run`` and the program are one process: its figures
include run's own start). Workloads:

- ``edge``: imports ExecuTorch's edge dialect and looks up an edge op (parses the edge-op
  table): where an in-process runner's deeper stack cost CPython 3.11 +2.5 s
  (python/cpython#142183). Skipped, named, without ExecuTorch.
- ``empty``: a script that imports nothing: ``run``'s own cost, and that it imports no torch.

The ratios run / env var are of the medians of one run (and of the minima: the starts other jobs
on the machine disturbed least). Every script also prints whether the
hook is in place (edge) or torch was imported (empty), checked before the figures are kept.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.timing import loadavg

WORKLOADS = {
    "edge": (
        "import sys\n"
        "from executorch.exir.dialects._ops import ops as exir_ops\n"
        "exir_ops.edge.aten.add.Tensor, exir_ops.edge.aten.mul.Tensor, exir_ops.edge.aten.cat.default\n"
        "hook = sys.modules.get('torch_export_names.hook')\n"
        "print('hook', bool(hook and hook.is_installed()))\n"
    ),
    "empty": "import sys\nprint('torch', 'torch' in sys.modules)\n",
}
# What each workload must print under the hook's two ways (env var, run) and under plain python.
EXPECTED = {
    "edge": {"env var": "hook True", "run": "hook True", "python": "hook False"},
    "empty": {"env var": "torch False", "run": "torch False", "python": "torch False"},
}
WAYS = ("env var", "run", "python")


def _run_command() -> list[str]:
    console = Path(sys.executable).parent / "torch-export-names"
    return [str(console)] if console.exists() else [sys.executable, "-m", "torch_export_names"]


def _commands(script: Path) -> dict[str, tuple[list[str], dict]]:
    plain = {k: v for k, v in os.environ.items() if k != "TORCH_EXPORT_NAMES"}
    return {
        "env var": ([sys.executable, str(script)], {**plain, "TORCH_EXPORT_NAMES": "1"}),
        "run": ([*_run_command(), "run", str(script)], plain),
        "python": ([sys.executable, str(script)], plain),
    }


def measure(command: list[str], env: dict, cwd: Path) -> dict:
    """One start: CPU seconds (user + system), peak RSS in MiB, wall seconds, stdout."""
    with tempfile.TemporaryFile() as err:  # a file: a full stderr pipe would block the child
        start = time.perf_counter()
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own resource usage
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{command} exited {proc.returncode}:\n{err.read().decode()[-2000:]}")
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux
        "wall_s": wall,
        "stdout": out.decode().strip().splitlines()[-1],
    }


def run_workload(name: str, reps: int, workdir: Path) -> dict:
    script = workdir / f"{name}.py"
    script.write_text(WORKLOADS[name])
    commands = _commands(script)
    samples: dict[str, list[dict]] = {way: [] for way in WAYS}
    for rep in range(reps):
        order = WAYS[rep % len(WAYS) :] + WAYS[: rep % len(WAYS)]  # each way first in turn
        for way in order:
            sample = measure(*commands[way], cwd=workdir)
            if sample["stdout"] != EXPECTED[name][way]:
                raise RuntimeError(f"{name} under {way} printed {sample['stdout']!r}")
            samples[way].append(sample)
    figures = {
        way: {
            key: {"median": statistics.median(s[key] for s in got), "min": min(s[key] for s in got)}
            for key in ("cpu_s", "max_rss_mib", "wall_s")
        }
        for way, got in samples.items()
    }
    return {
        "workload": name,
        "reps": reps,
        "commands": {
            way: ("TORCH_EXPORT_NAMES=1 " if way == "env var" else "")
            + " ".join(Path(c).name if i == 0 or c == str(script) else c for i, c in enumerate(cmd))
            for way, (cmd, _) in commands.items()
        },
        "figures": figures,
        "run_over_env_var": {
            key: figures["run"][key]["median"] / figures["env var"][key]["median"]
            for key in ("cpu_s", "max_rss_mib")
        },
        # The fastest starts: what is left when other jobs on the machine got in the way least.
        "run_over_env_var_min": {
            key: figures["run"][key]["min"] / figures["env var"][key]["min"]
            for key in ("cpu_s", "max_rss_mib")
        },
        "samples": {
            way: [{k: v for k, v in s.items() if k != "stdout"} for s in got] for way, got in samples.items()
        },
    }


def markdown(results: dict) -> str:
    lines = [
        "# `torch-export-names run` against `TORCH_EXPORT_NAMES=1 python`",
        "",
        f"`{results['command']}` ({results['seconds']:.0f} s): Python {results['python']}, "
        f"torch {results['torch']}, ExecuTorch {results['executorch']}, at {results['commit']}; "
        f"load average before and after {results['load_before']} / {results['load_after']}. "
        "Medians of each way's starts (rotated), CPU = user + system of the process, memory = its "
        "peak resident set; ratios run / env var of the medians (and of the minima) from this run.",
        "",
        "| workload | way | CPU s (median, min) | peak RSS MiB | wall s | run / env var |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for w in results["workloads"]:
        if "skipped" in w:
            lines.append(f"| {w['workload']} | skipped: {w['skipped']} | | | | |")
            continue
        for way in WAYS:
            f = w["figures"][way]
            ratio = ""
            if way == "run":
                r, m = w["run_over_env_var"], w["run_over_env_var_min"]
                ratio = f"CPU {r['cpu_s']:.3f}x (minima {m['cpu_s']:.3f}x), memory {r['max_rss_mib']:.3f}x"
            lines.append(
                f"| {w['workload']} | {way} | {f['cpu_s']['median']:.3f}, {f['cpu_s']['min']:.3f} | "
                f"{f['max_rss_mib']['median']:.0f} | {f['wall_s']['median']:.2f} | {ratio} |"
            )
    return "\n".join(lines) + "\n"


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5, help="starts per way and workload (default 5)")
    p.add_argument("--workloads", default="edge,empty", help="comma-separated: edge, empty")
    p.add_argument("--out", type=Path, help="write startup.json and startup.md here")
    args = p.parse_args(argv)
    names = [n for n in args.workloads.split(",") if n]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        p.error(f"unknown workload(s) {unknown}; choose from {sorted(WORKLOADS)}")
    started = time.perf_counter()
    load_before = loadavg()
    workdir = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    try:
        workloads = []
        for name in names:
            if name == "edge" and importlib.util.find_spec("executorch") is None:
                workloads.append({"workload": name, "skipped": "ExecuTorch is not installed"})
                continue
            workloads.append(run_workload(name, args.reps, workdir))
            if "run_over_env_var" in workloads[-1]:
                r = workloads[-1]["run_over_env_var"]
                print(
                    f"{name}: run / env var = CPU {r['cpu_s']:.3f}x, memory {r['max_rss_mib']:.3f}x",
                    flush=True,
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    results = {
        "command": "python -m benchmarks.startup " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": time.perf_counter() - started,
        "python": platform.python_version(),
        "torch": _version("torch"),
        "executorch": _version("executorch"),
        "commit": commit.stdout.strip() or None,
        "load_before": load_before,
        "load_after": loadavg(),
        "workloads": workloads,
    }
    print(markdown(results))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "startup.json").write_text(json.dumps(results, indent=1) + "\n")
        (args.out / "startup.md").write_text(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
