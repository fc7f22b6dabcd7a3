"""Instructions per call of ``repair`` and of the upstream loop, counted by valgrind's callgrind.

    python -m benchmarks.instructions                       # 1, 4, 16 layers; synthetic 10k and 100k nodes
    python -m benchmarks.instructions --layers 1 --keep DIR # keep the callgrind files (callgrind_annotate)
    python -m benchmarks.instructions --cache-sim           # also simulated cache misses
    python -m benchmarks.instructions --layers 0 --synthetic-sizes 0 --hf "Qwen3 0.6B"
                                                            # a Hugging Face architecture (benchmarks.hf)

Wall-clock ratios of two calls that take tens of microseconds move with the load of a
shared machine and with what its caches hold; the number of instructions a call executes
does not. A child process runs under ``valgrind --tool=callgrind`` with instrumentation
off while it imports torch and exports the models (several times faster than
instrumented), then switches it on and, for each method, runs the call ``--reps`` times
on the same program, put back to its just-exported names before each call
(``methods.Unrepaired``, not counted). Counting is switched on only around the call, by
callgrind's client requests from a small C helper compiled here (valgrind's
``callgrind.h``); each method's count is dumped to its own file. The cost of the switch
itself is measured on a call that does nothing and subtracted. Each method runs once
uncounted first, so the interpreter's specialization of its bytecode is done.

Counts are the guest instructions of the Python process (interpreter, torch.fx, this
package), with a fixed string-hash seed: the same within a few percent from run to run
whatever the load (nodes hash by their address, so dict probes still vary a little). They
do not see cache misses (``--cache-sim`` adds callgrind's simulated ones) or kernel time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/instructions.py: import from the repository root
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks.common import int_list_or_none  # noqa: E402 (after the sys.path line)

DEFAULT_LAYERS = [1, 4, 16]
DEFAULT_SYNTHETIC = [10_000, 100_000]
DEFAULT_REPS = 2
WARMUP = 1

_HELPER_C = r"""
#include <valgrind/callgrind.h>
void ten_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void ten_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void ten_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
int ten_running(void) { return RUNNING_ON_VALGRIND; }
"""


def _build_helper(directory: Path) -> Path:
    """Compile the client-request helper; raises RuntimeError saying why it cannot."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler (cc) to build the callgrind client-request helper")
    src, lib = directory / "callgrind_helper.c", directory / "callgrind_helper.so"
    src.write_text(_HELPER_C)
    done = subprocess.run(
        [cc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"cannot build the callgrind helper (valgrind/callgrind.h missing?): {done.stderr.strip()[-300:]}"
        )
    return lib


def _parse_dump(path: Path) -> tuple[str, dict[str, int]]:
    """(label, {event: count}) of one callgrind dump file."""
    label, events, totals = None, None, None
    with open(path) as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split("Client Request: ", 1)[1].strip()
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("summary:", "totals:")) and totals is None:
                totals = [int(x) for x in line.split()[1:]]
    if label is None or events is None or totals is None:
        raise ValueError(f"{path}: not a callgrind dump made by a client request")
    return label, dict(zip(events, totals + [0] * (len(events) - len(totals))))


def _source_roots() -> list[str]:
    """The directories the child must import ``benchmarks`` and ``torch_export_names`` from."""
    import torch_export_names

    here = Path(__file__).resolve().parent.parent
    return list(dict.fromkeys([str(here), str(Path(torch_export_names.__file__).parent.parent)]))


def measure(
    layers: list[int],
    synthetic_sizes: list[int],
    *,
    hf_models: list[str] = (),
    hf_full_width: bool = False,
    hf_layers: int | None = None,
    reps: int = DEFAULT_REPS,
    cache_sim: bool = False,
    keep: Path | None = None,
    progress=None,
) -> dict:
    """Instructions per call of each method, and the ratios; ``available: False`` and why if not measured.

    ``hf_models``: names from ``benchmarks.models.ARCHITECTURES``, built and exported as
    ``benchmarks.hf`` does (real widths with ``hf_full_width``, ``hf_layers`` instead of the
    real depth if given); a model that fails to build or export is reported in
    ``result["hf"]`` with its error.
    """

    def spec(models):
        return {"models": models, "full_width": hf_full_width, "layers": hf_layers}

    # One child per Hugging Face model, each built before counting starts: one model alive at a
    # time (real widths take gigabytes), and no instrumentation switched off and on again (counts
    # after CALLGRIND_STOP/START_INSTRUMENTATION came out as garbage, -9.2e18).
    runs = []
    if layers or synthetic_sizes or not hf_models:
        runs.append(_measure(layers, synthetic_sizes, spec([]), reps=reps, cache_sim=cache_sim, keep=keep))
    for model in hf_models:
        if runs and not runs[-1]["available"]:
            break
        runs.append(_measure([], [], spec([model]), reps=reps, cache_sim=cache_sim, keep=keep))
    result = next((r for r in runs if not r["available"]), runs[0])
    if result["available"]:
        for other in runs[1:]:
            result["hf"] += other["hf"]
            result["duration_s"] += other["duration_s"]
    if progress is not None:
        progress.step(
            f"instruction counts (callgrind): {_summary(result)}"
            if result["available"]
            else f"instruction counts: not measured ({result['reason']})"
        )
    return result


def _measure(layers, synthetic_sizes, hf_spec, *, reps, cache_sim, keep) -> dict:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {"available": False, "reason": "valgrind is not installed"}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ten-callgrind-") as tmp:
        out_dir = Path(keep) if keep is not None else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            helper = _build_helper(Path(tmp))
        except RuntimeError as e:
            return {"available": False, "reason": str(e)}
        cmd = [
            valgrind,
            "--tool=callgrind",
            "--instr-atstart=no",
            "--collect-atstart=no",
            f"--cache-sim={'yes' if cache_sim else 'no'}",
            f"--callgrind-out-file={out_dir}/callgrind.out.%p",
            sys.executable,
            "-m",
            "benchmarks.instructions",
            "--child",
            str(helper),
            "--layers",
            ",".join(map(str, layers)) or "0",
            "--synthetic-sizes",
            ",".join(map(str, synthetic_sizes)) or "0",
            "--reps",
            str(reps),
            "--hf-json",
            json.dumps(hf_spec),
        ]
        path = os.pathsep.join([*_source_roots(), os.environ.get("PYTHONPATH", "")])
        # A fixed string-hash seed, so that set and dict probes over names are the same from run
        # to run (nodes still hash by address: counts vary by a few percent at most).
        env = dict(os.environ, PYTHONPATH=path, PYTHONHASHSEED="0")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=_source_roots()[0])
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            return {"available": False, "reason": "callgrind child failed: " + " | ".join(tail)[-500:]}
        info = json.loads(done.stdout.strip().splitlines()[-1])
        counts: dict[str, dict[str, int]] = {}
        for path in out_dir.glob("callgrind.out.*"):
            try:
                label, events = _parse_dump(path)
            except ValueError:
                continue
            counts[label] = events
    result = {
        "available": True,
        "tool": f"valgrind --tool=callgrind ({_valgrind_version(valgrind)})",
        "reps": reps,
        "warmup": WARMUP,
        "cache_sim": cache_sim,
        "duration_s": time.perf_counter() - t0,
        "llama": [],
        "synthetic": [],
        "hf": [],
    }
    for kind in ("llama", "synthetic", "hf"):
        for case in info.get(kind, []):
            if "error" in case:
                result[kind].append(dict(case["meta"], error=case["error"]))
                continue
            key = case["key"]
            base = counts[f"{key}:noop"]
            row = dict(case["meta"])
            for method in case["methods"]:
                c = counts[f"{key}:{method}"]
                row[method] = {ev: (c[ev] - base.get(ev, 0)) / reps for ev in c}
                if not 0 < row[method]["Ir"] < c["Ir"] + 1:  # a count below the switch's own cost
                    return {
                        "available": False,
                        "reason": f"callgrind counts of {key}:{method} are not "
                        f"consistent ({c['Ir']} against {base.get('Ir')} for a call doing nothing)",
                    }
            _add_ratios(row, kind)
            result[kind].append(row)
    return result


def _add_ratios(row: dict, kind: str) -> None:
    ir = {m: row[m]["Ir"] for m in row if isinstance(row[m], dict) and "Ir" in row[m]}
    if kind in ("llama", "hf"):
        row["ratios"] = {"repair_to_top_level_loop": ir["repair"] / ir["top_level_loop"]}
        row["repair_ir_per_node"] = ir["repair"] / row["nodes_total"]
    else:
        row["ratios"] = {
            "repair_to_top_level_loop": ir["repair"] / ir["top_level_loop"],
            "repair_export_like_to_top_level_loop": ir["repair_export_like"] / ir["top_level_loop"],
        }
        row["repair_ir_per_node"] = ir["repair"] / row["nodes"]


def _summary(result: dict) -> str:
    parts = [f"{r['layers']}L {r['ratios']['repair_to_top_level_loop']:.2f}x" for r in result["llama"]]
    parts += [
        f"{r['model']} " + (f"{r['ratios']['repair_to_top_level_loop']:.2f}x" if "ratios" in r else "failed")
        for r in result.get("hf", [])
    ]
    parts += [
        f"synthetic {r['nodes']:,} {r['ratios']['repair_export_like_to_top_level_loop']:.2f}x "
        f"(all unrecorded {r['ratios']['repair_to_top_level_loop']:.2f}x)"
        for r in result["synthetic"]
    ]
    return "repair/loop " + ", ".join(parts) + f" ({result['duration_s']:.0f} s)"


def _valgrind_version(valgrind: str) -> str:
    try:
        return subprocess.run([valgrind, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown version"


# --- the child, under valgrind -------------------------------------------------------------


def _child(helper: str, layers: list[int], sizes: list[int], reps: int, hf_spec: dict) -> None:
    import ctypes
    import gc
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    import torch

    torch.set_num_threads(1)
    from benchmarks import methods, synthetic
    from benchmarks.models import build_llama, export_llama

    lib = ctypes.CDLL(helper)
    if not lib.ten_running():
        raise SystemExit("the child must run under valgrind --tool=callgrind")

    def noop():
        pass

    cases = []  # (kind, key, meta, {method: fn}, {method: reset})
    hf_errors = []
    for n in layers:
        model, inputs = build_llama(n)
        ep = export_llama(model, inputs)
        top, total, graphs = methods.node_counts(ep)
        reset = methods.Unrepaired(ep)
        fns = {
            "top_level_loop": lambda ep=ep: methods.run_upstream_top_level_loop(ep),
            "repair": lambda ep=ep: methods.run_repair(ep),
        }
        meta = {"layers": n, "nodes_top": top, "nodes_total": total, "graphs": graphs}
        cases.append(("llama", f"llama{n}", meta, fns, dict.fromkeys(fns, reset.reset)))
    for n in sorted(set(sizes)):
        grown = synthetic.GrowingGraph()
        grown.grow_to(n)
        all_unrecorded = methods.Unrepaired(grown.graph)
        grown.record_all_but_every(synthetic.EXPORT_LIKE_EVERY)
        export_like = methods.Unrepaired(grown.graph)
        holder = synthetic._GraphHolder(grown.graph)
        fns = {
            "top_level_loop": lambda h=holder: methods.upstream_top_level_loop(h),
            "repair": lambda g=grown.graph: methods.run_repair(g),
            "repair_export_like": lambda g=grown.graph: methods.run_repair(g),
        }
        resets = {
            "top_level_loop": all_unrecorded.reset,
            "repair": all_unrecorded.reset,
            "repair_export_like": export_like.reset,
        }
        cases.append(("synthetic", f"synthetic{n}", {"nodes": n}, fns, resets))
    for i, name in enumerate(hf_spec.get("models", [])):
        meta = {"model": name, "full_width": hf_spec.get("full_width", False)}
        try:
            cases.append(_hf_case(f"hf{i}", name, meta, hf_spec.get("layers")))
        except Exception as e:  # noqa: BLE001 - reported in the result
            from benchmarks.common import error_line

            hf_errors.append({"meta": meta, "error": error_line(e)})
    gc.collect()
    gc.freeze()  # what exists now lives to the end: keep the collections before each call small
    lib.ten_start()  # from here on every instruction is simulated; counting stays off
    info = {"llama": [], "synthetic": [], "hf": list(hf_errors)}
    for case in cases:
        kind, key, meta, fns, _ = case
        _run_case(lib, case, reps, noop)
        info[kind].append({"key": key, "meta": meta, "methods": list(fns)})
    print(json.dumps(info), flush=True)


def _hf_case(key: str, name: str, meta: dict, layers: int | None):
    """The case of one Hugging Face architecture, exported as ``benchmarks.hf`` exports it."""
    from benchmarks import methods
    from benchmarks.models import build_hf, export_hf

    ep = export_hf(build_hf(name, full=meta["full_width"], layers=layers))
    top, total, graphs = methods.node_counts(ep)
    meta.update(nodes_top=top, nodes_total=total, graphs=graphs)
    reset = methods.Unrepaired(ep)
    fns = {
        "top_level_loop": lambda: methods.run_upstream_top_level_loop(ep),
        "repair": lambda: methods.run_repair(ep),
    }
    return ("hf", key, meta, fns, dict.fromkeys(fns, reset.reset))


def _run_case(lib, case, reps: int, noop) -> None:
    """Dump ``reps`` counted calls of each method (and of ``noop``), each after an uncounted reset."""
    import gc

    _, key, _, fns, resets = case
    first_reset = next(iter(resets.values()))
    for method, fn, reset in [("noop", noop, first_reset)] + [(m, f, resets[m]) for m, f in fns.items()]:
        for _ in range(WARMUP):
            reset()
            fn()
        for _ in range(reps):
            gc.collect()
            gc.disable()
            reset()
            lib.ten_toggle()
            fn()
            lib.ten_toggle()
            gc.enable()
        lib.ten_dump(f"{key}:{method}".encode())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.instructions", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--layers",
        type=int_list_or_none,
        default=DEFAULT_LAYERS,
        help=f"default {DEFAULT_LAYERS}; 0 for none",
    )
    p.add_argument(
        "--synthetic-sizes",
        type=int_list_or_none,
        default=DEFAULT_SYNTHETIC,
        help=f"default {DEFAULT_SYNTHETIC}; 0 for none",
    )
    p.add_argument(
        "--reps", type=int, default=DEFAULT_REPS, help=f"counted calls per method (default {DEFAULT_REPS})"
    )
    p.add_argument("--cache-sim", action="store_true", help="also count simulated cache misses (slower)")
    p.add_argument("--keep", type=Path, help="keep the callgrind files here (one per size and method)")
    p.add_argument("--json", type=Path, help="write the result here")
    p.add_argument(
        "--hf",
        nargs="*",
        default=[],
        metavar="MODEL",
        help="Hugging Face architectures from benchmarks.hf (reduced widths; --hf-full: real)",
    )
    p.add_argument("--hf-full", action="store_true", help="real widths for --hf")
    p.add_argument("--hf-json", help=argparse.SUPPRESS)
    p.add_argument("--child", metavar="HELPER", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.layers, args.synthetic_sizes, args.reps, json.loads(args.hf_json or "{}"))
        return 0
    unknown = [m for m in args.hf if m not in _hf_names()]
    if unknown:
        p.error(f"unknown --hf model(s) {unknown}; choose from {_hf_names()}")
    result = measure(
        args.layers,
        args.synthetic_sizes,
        hf_models=args.hf,
        hf_full_width=args.hf_full,
        reps=args.reps,
        cache_sim=args.cache_sim,
        keep=args.keep,
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(format_table(result))
    return 0 if result["available"] else 1


def _hf_names() -> list[str]:
    from benchmarks.models import ARCHITECTURES

    return list(ARCHITECTURES)


def format_table(result: dict) -> str:
    if not result["available"]:
        return f"instruction counts not measured: {result['reason']}"
    lines = [f"{result['tool']}, {result['reps']} counted calls per method, {result['duration_s']:.0f} s", ""]
    lines.append("| case | nodes | repair (Ir/call) | top-level loop (Ir/call) | repair / loop |")
    lines.append("| --- | --- | --- | --- | --- |")
    for r in result["llama"]:
        lines.append(
            f"| {r['layers']} layers | {r['nodes_total']} | {r['repair']['Ir']:,.0f} "
            f"| {r['top_level_loop']['Ir']:,.0f} | {r['ratios']['repair_to_top_level_loop']:.3f}x |"
        )
    for r in result.get("hf", []):
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} | | | |")
            continue
        lines.append(
            f"| {r['model']} | {r['nodes_total']} | {r['repair']['Ir']:,.0f} "
            f"| {r['top_level_loop']['Ir']:,.0f} | {r['ratios']['repair_to_top_level_loop']:.3f}x |"
        )
    for r in result["synthetic"]:
        lines.append(
            f"| synthetic, all unrecorded | {r['nodes']:,} | {r['repair']['Ir']:,.0f} "
            f"| {r['top_level_loop']['Ir']:,.0f} | {r['ratios']['repair_to_top_level_loop']:.3f}x |"
        )
        lines.append(
            f"| synthetic, export-like | {r['nodes']:,} | {r['repair_export_like']['Ir']:,.0f} "
            f"| {r['top_level_loop']['Ir']:,.0f} "
            f"| {r['ratios']['repair_export_like_to_top_level_loop']:.3f}x |"
        )
    if result.get("cache_sim"):
        lines += ["", "Simulated cache misses per call (D1 read+write misses, last-level data misses):"]
        measured_hf = [r for r in result.get("hf", []) if "error" not in r]
        for r in result["llama"] + result["synthetic"] + measured_hf:
            name = (
                f"{r['layers']} layers"
                if "layers" in r
                else r["model"]
                if "model" in r
                else f"synthetic {r['nodes']:,}"
            )
            for m in ("repair", "top_level_loop", "repair_export_like"):
                if m in r:
                    ev = r[m]
                    lines.append(
                        f"- {name}, {m}: D1 misses {ev.get('D1mr', 0) + ev.get('D1mw', 0):,.0f}, "
                        f"LL data misses {ev.get('DLmr', 0) + ev.get('DLmw', 0):,.0f}, "
                        f"I1 misses {ev.get('I1mr', 0):,.0f}"
                    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
