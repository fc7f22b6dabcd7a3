"""The ONNX exporter as a client: ``torch.onnx.export(..., dynamo=True)`` on stock torch and under the hook.

    python tests/onnx_corpus.py --full            # the whole corpus: the table and the export time ratio
    python tests/onnx_corpus.py --ci              # the subset tests/test_onnx.py runs in CI
    python tests/onnx_corpus.py --only names/mul-under-cond/static

Each configuration (a model, its inputs, static or dynamic shapes) is exported to ONNX in two fresh
Python processes: one *stock*, without the package (``TORCH_EXPORT_NAMES`` unset: the package's
``.pth`` file imports nothing, and this file never imports the package), and one *hook*, started
with ``TORCH_EXPORT_NAMES=1`` (the ``.pth`` file installs the hook when ``torch.export`` loads).
Each process saves its ``.onnx`` file, runs it in onnxruntime on the example inputs and compares the
outputs with eager's, and times ``torch.onnx.export`` (after one warm-up export, so that neither
side pays torch's and onnxscript's first-use costs in its first configuration).

``compare`` holds the three promises per configuration: the hook exports wherever stock does;
onnxruntime computes eager's outputs under the hook wherever it does on stock; and the ``.onnx``
bytes are the same wherever no name collides (``Config.collides`` is ``None``: an argument named
like a global of fx's generated code, or a HOP subgraph whose placeholders the hook names, may
legitimately give other bytes).

This file imports torch, onnx and onnxruntime only: the stock process must not load the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENV_VAR = "TORCH_EXPORT_NAMES"  # torch_export_names._bootstrap.ENV_VAR, not imported (see above)
SIDES = ("stock", "hook")
CHECKS = {
    "exports": "the hook exports wherever stock does",
    "failure": "where the hook does not export, stock fails with the same error (the exporter's limit)",
    "outputs": "onnxruntime's outputs equal eager's under the hook wherever they do on stock",
    "bytes": "the .onnx files are byte-identical wherever no name collides",
}
# What each side needs; the tests skip naming the first one missing.
REQUIRED = ("onnx", "onnxscript", "onnxruntime")


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Model:
    name: str  # "family/model"
    build: Callable[[], Any]  # -> differential.Built: module in eval mode, inputs(0), dims; seeded
    dynamic: bool = True  # also exported with its dims dynamic (Dim.AUTO)
    requires: str | None = None  # a module the build imports (transformers); missing -> skipped
    ci: bool = False  # in tests/test_onnx.py's CI subset (the static configuration only)
    collides: str | None = None  # why the hook may give other bytes; None -> bytes must be equal
    known_issue: str | None = None  # why the hook is worse than stock here for now
    known_checks: tuple[str, ...] = ()  # the checks the known issue breaks (xfails in tests/test_onnx.py)
    atol: float = 1e-4  # onnxruntime against eager


@dataclasses.dataclass(frozen=True)
class Config:
    model: Model
    variant: str  # static | dynamic

    @property
    def name(self) -> str:
        return f"{self.model.name}/{self.variant}"

    def __str__(self) -> str:
        return self.name


def _differential(name: str, **kwargs) -> Model:
    """A model of tests/differential.py's corpus, its example inputs and dynamic dimensions."""
    import differential

    e = differential.entry(name)
    return Model(name, e.build, requires=e.requires, atol=max(e.atol, 1e-4), **kwargs)


def _hf(config_class: str, model_class: str):
    """A Hugging Face model's own forward (``input_ids``, ``attention_mask``; batch and sequence
    dynamic) from tests/differential.py's tiny config, random weights: nothing is downloaded. Not
    differential's own Llama entry: its config comes from benchmarks/, which imports the package."""

    def build():
        import torch

        import differential

        differential._torchvision_shim.import_torchvision_if_installed()
        import transformers

        torch.manual_seed(0)
        config = getattr(transformers, config_class)(**differential.HF_TINY, use_cache=False)
        model = getattr(transformers, model_class)(config).eval()

        def inputs(k):
            ids = torch.randint(0, 128, (2 + k, 6 + 2 * k), generator=torch.Generator().manual_seed(k))
            return (ids, torch.ones_like(ids))

        return differential.Built(model, inputs, ({0: "AUTO", 1: "AUTO"}, {0: "AUTO", 1: "AUTO"}))

    return build


def _plain_models() -> list[Model]:
    """Models nobody here wrote, whose arguments are ``input``, ``src``, ``query``, ``hx``, ..."""
    return [
        _differential("nn/Sequential-MLP", ci=True),
        _differential("nn/Sequential-ConvBNReLU", ci=True),
        _differential("nn/TransformerEncoderLayer"),
        _differential("nn/MultiheadAttention"),
        _differential("nn/EmbeddingBag"),
        _differential("nn/GRU"),
        _differential("torchvision/resnet18"),
        Model("hf/llama", _hf("LlamaConfig", "LlamaForCausalLM"), requires="transformers"),
        Model("hf/bert", _hf("BertConfig", "BertModel"), requires="transformers"),
    ]


# names/: arguments named like a global of the code torch.fx generates (inf, device, torch) or like a
# node of the model (mul), in the places where stock torch fails: the exporter decomposes the program,
# which re-traces that code, and there the argument shadows the global (issue 27, issue 38). The
# module-level classes are built by name in the child process.


class NegInfLiteral:
    def forward(self, x, inf):
        return x.masked_fill(x > 0, -math.inf) + inf  # fx writes the literal -inf


class NegInfUnderCond:
    def forward(self, x, inf):
        import torch

        def true_fn(x, inf):
            return x.masked_fill(x > 0, -math.inf) + inf

        return torch.cond(x.sum() > 0, true_fn, lambda x, inf: x - inf, (x, inf))


class InfUnderCond:
    def forward(self, x, inf):
        import torch

        return torch.cond(
            x.sum() > 0, lambda x, inf: x.clamp(max=math.inf) + inf, lambda x, inf: x - inf, (x, inf)
        )


class MulUnderCond:
    def forward(self, x, mul):
        import torch

        return torch.cond(x.sum() > 0, lambda x, mul: x * mul * 2, lambda x, mul: x - mul, (x, mul))


class DeviceUnderCond:
    def forward(self, x, device):
        import torch

        def true_fn(x, device):
            return x + device * torch.ones(x.shape[-1], device="cpu")  # fx writes device(type='cpu')

        return torch.cond(x.sum() > 0, true_fn, lambda x, device: x - device, (x, device))


class TorchUnderCond:
    def forward(self, x, torch):
        import torch as _torch

        def true_fn(x, torch):
            return x + torch * _torch.ones(x.shape[-1], dtype=_torch.float32)  # torch.float32

        return _torch.cond(x.sum() > 0, true_fn, lambda x, torch: x - torch, (x, torch))


class NoGradInf:
    def forward(self, x, inf):
        import torch

        with torch.no_grad():  # a set-grad region, its own subgraph, with the argument inf in it
            y = x * inf + x.masked_fill(x > 0, -math.inf)
        return y


class NoGradLiteral:
    def forward(self, x, inf):
        import torch

        with torch.no_grad():  # the literal inf in the region, the argument inf outside it
            y = x.masked_fill(x > 0, math.inf)
        return y + inf


# The two programs the hook exports worse than stock for now (issue 38), kept in the corpus.
class InfAndInfParam:
    def forward(self, inf, inf_param):
        return inf.masked_fill(inf_param > 0, math.inf)


class ThisSelf:
    def forward(this, self):  # noqa: N805 - an argument called self is the point
        return self * 2


def _names_model(cls, **kwargs) -> Model:
    nargs = 1 if cls is ThisSelf else 2

    def build():
        import torch

        import differential

        module = type(cls.__name__, (torch.nn.Module,), {"forward": cls.forward})()

        def inputs(k):
            return tuple(torch.randn(4 + k, generator=torch.Generator().manual_seed(s)) for s in range(nargs))

        return differential.Built(module.eval(), inputs, ({0: "AUTO"},) * nargs)

    slug = "".join("-" + c.lower() if c.isupper() else c for c in cls.__name__).strip("-")
    return Model(f"names/{slug}", build, **kwargs)


def _names_models() -> list[Model]:
    inf = "an argument inf: the code-generator guard renames fx's global inf in the generated code"
    cond = "the hook names the cond branches' placeholders after their operands"
    region = "the hook names the no_grad region's placeholders after their operands"
    return [
        _differential("names/inf", collides=inf),  # tests/differential.py's, outside any HOP
        _differential("names/device", collides="an argument device"),
        _differential("names/torch", collides="an argument torch"),
        _names_model(NegInfLiteral, ci=True, collides=inf),
        _names_model(NegInfUnderCond, collides=f"{inf}; {cond}"),
        _names_model(InfUnderCond, collides=f"{inf}; {cond}"),
        _names_model(MulUnderCond, collides=f"an argument mul, a node's name; {cond}"),
        _names_model(DeviceUnderCond, ci=True, collides=f"an argument device; {cond}"),
        _names_model(TorchUnderCond, collides=f"an argument torch; {cond}"),
        _names_model(NoGradInf, ci=True, collides=f"{inf}; {region}"),
        _names_model(NoGradLiteral, collides=f"{inf}; {region}"),
        _names_model(
            InfAndInfParam,
            ci=True,
            collides=inf,
        ),  # failed under the earlier guard: SyntaxError: duplicate argument 'inf'
        # Stock's exporter fails on it too (it binds the inputs to forward's signature, where self is
        # the module: TypeError); the hook must fail the same way (the earlier guard raised
        # SyntaxError: duplicate argument 'self').
        _names_model(ThisSelf, ci=True, collides="an argument self"),
    ]


def models() -> list[Model]:
    return _plain_models() + _names_models()


def configs(full: bool = True) -> list[Config]:
    """Every model static, and with its dims dynamic unless it says otherwise; the CI subset is the
    static configuration of the models marked ``ci``."""
    out = []
    for m in models():
        if full or m.ci:
            out.append(Config(m, "static"))
        if full and m.dynamic:
            out.append(Config(m, "dynamic"))
    return out


def config(name: str) -> Config:
    found = {c.name: c for c in configs()}
    if name not in found:
        raise SystemExit(f"no configuration {name!r}; one of: {', '.join(found)}")
    return found[name]


def missing(module: str | None) -> str | None:
    """Why ``module`` cannot be used here (not installed), or None."""
    import importlib.util

    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return f"{module} is not installed"


def missing_requirements() -> str | None:
    """What the ONNX exporter needs and this environment lacks, or None."""
    absent = [m for m in REQUIRED if missing(m)]
    if absent:
        return (
            f"{', '.join(absent)} not installed (the ONNX exporter's test dependencies: bash scripts/test.sh)"
        )
    return None


# ---------------------------------------------------------------------------------------------
# One side: a child process exporting configurations
# ---------------------------------------------------------------------------------------------


def _file(directory: Path, c: Config) -> Path:
    return directory / (c.name.replace("/", "__") + ".onnx")


def _export(c: Config, built):
    import torch

    import differential

    dynamic = differential._dynamic_shapes(built, [], by_keyword=False) if c.variant == "dynamic" else None
    return torch.onnx.export(
        built.module, built.inputs(0), dynamo=True, dynamic_shapes=dynamic, verbose=False
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def _root_error(e: BaseException) -> str:
    """The first line of the deepest cause (the exporter wraps torch.export's error)."""
    while e.__cause__ is not None:
        e = e.__cause__
    return _first_line(e)


def _outputs(path: Path, module, args, atol: float) -> str:
    """``equal``, or how onnxruntime's outputs differ from eager's (or why they could not run)."""
    import numpy as np
    import onnxruntime
    import torch

    with torch.no_grad():
        eager = [t.numpy() for t in torch.utils._pytree.tree_leaves(module(*args))]
    try:
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feeds = {
            i.name: a.numpy() for i, a in zip(session.get_inputs(), torch.utils._pytree.tree_leaves(args))
        }
        got = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - the failure is the result
        return f"onnxruntime failed: {_first_line(e)}"
    if len(got) != len(eager):
        return f"{len(got)} outputs, eager has {len(eager)}"
    for i, (a, b) in enumerate(zip(got, eager)):
        if a.shape != b.shape:
            return f"output {i}: shape {a.shape}, eager {b.shape}"
        if not np.allclose(a, b, rtol=1e-4, atol=atol, equal_nan=True):
            return f"output {i}: max abs difference {float(np.nanmax(np.abs(a - b)))}"
    return "equal"


def _warm_up() -> None:
    """One small export, so that the first configuration timed does not pay for first use."""
    import torch

    torch.manual_seed(0)
    torch.onnx.export(torch.nn.Linear(2, 2).eval(), (torch.randn(1, 2),), dynamo=True, verbose=False)


def _restart_code_names() -> None:
    """Number the code torch.fx generates from 0 again, as in a fresh process.

    The exporter writes each node's stack trace into the ``.onnx`` file, and it names the generated
    code ``<eval_with_key>.N``, N counting every module compiled so far in the process: without the
    restart a configuration's bytes would depend on what the process exported before (on which
    configurations failed on that side). The old keys' source is only for tracebacks.
    """
    import torch.fx.graph_module

    loader = getattr(torch.fx.graph_module, "_loader", None)
    if loader is not None and hasattr(loader, "next_id"):
        loader.next_id = 0


def child(out: Path, names: list[str]) -> dict:
    """Export ``names`` here and save each ``.onnx`` under ``out``; what happened, as a dict."""
    import logging
    import warnings

    import torch

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)  # the exporter's progress lines
    torch.set_num_threads(1)  # two sides may run at once on a shared machine
    _warm_up()
    results = {}
    for name in names:
        c = config(name)
        start = time.perf_counter()
        try:
            built = c.model.build()
            module, args = built.module, built.inputs(0)
            _restart_code_names()
            start = time.perf_counter()
            program = _export(c, built)
        except Exception as e:  # noqa: BLE001 - the failure is the result
            results[name] = {
                "exported": False,
                "error": _root_error(e),
                "seconds": time.perf_counter() - start,
            }
            continue
        seconds = time.perf_counter() - start
        path = _file(out, c)
        program.save(str(path), external_data=False)
        results[name] = {
            "exported": True,
            "seconds": seconds,
            "outputs": _outputs(path, module, args, c.model.atol),
        }
    return {
        "results": results,
        "package_loaded": "torch_export_names" in sys.modules,
        "hook_installed": "torch_export_names" in sys.modules
        and sys.modules["torch_export_names"].is_installed(),
    }


def run_side(side: str, names: list[str], out: Path, timeout: float = 3600) -> dict:
    """``child`` in a fresh process: stock (``TORCH_EXPORT_NAMES`` unset) or hook (set to 1)."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    # The same string hashing on both sides: stock torch's own .onnx bytes depend on it
    # (nn.EmbeddingBag's Loop carries its values in set order: PYTHONHASHSEED 0 and 1 give
    # different files on stock torch alone).
    env["PYTHONHASHSEED"] = "0"
    if side == "hook":
        env[ENV_VAR] = "1"
    out.mkdir(parents=True, exist_ok=True)
    report = out / "results.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out), *names]
    r = subprocess.run(cmd, env=env, cwd=out, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or not report.exists():
        raise RuntimeError(f"the {side} process failed (exit {r.returncode}):\n{r.stderr[-4000:]}")
    data = json.loads(report.read_text())
    data["side"] = side
    return data


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------


def compare(c: Config, stock: dict, hook: dict, same_bytes: bool | None) -> dict[str, str | None]:
    """Per check of ``CHECKS``, what breaks its promise for ``c`` (None: kept, or nothing to hold).

    ``stock`` and ``hook`` are the configuration's results on each side; ``same_bytes`` whether
    both ``.onnx`` files are the same bytes (None where a side has none).
    """
    problems: dict[str, str | None] = dict.fromkeys(CHECKS)
    if stock["exported"] and not hook["exported"]:
        problems["exports"] = f"stock exports, the hook does not: {hook['error']}"
    if not hook["exported"] and stock.get("error") != hook["error"]:
        problems["failure"] = f"stock: {stock.get('error', 'exports')}; the hook: {hook['error']}"
    if stock["exported"] and stock["outputs"] == "equal" and hook.get("outputs") != "equal":
        problems["outputs"] = (
            f"stock's onnxruntime outputs equal eager's, the hook's: {hook.get('outputs', 'none')}"
        )
    if c.model.collides is None and stock["exported"] and not same_bytes:
        problems["bytes"] = "the .onnx bytes differ" if hook["exported"] else "the hook wrote no .onnx file"
    return problems


@dataclasses.dataclass
class Row:
    config: Config
    stock: dict
    hook: dict
    same_bytes: bool | None

    @property
    def problems(self) -> dict[str, str | None]:
        return compare(self.config, self.stock, self.hook, self.same_bytes)


def run(names: list[str], directory: Path, rounds: int = 1, parallel: bool = False) -> tuple[list[Row], dict]:
    """Both sides over ``names`` (``rounds`` times each, alternating, the fastest time kept; with
    ``parallel`` the two sides of a round at once, for tests: the times are then not comparable);
    the rows and the processes' facts (``package_loaded``, ``hook_installed`` per side)."""
    import concurrent.futures

    data: dict[str, dict] = {}
    for i in range(rounds):
        if parallel:
            with concurrent.futures.ThreadPoolExecutor(len(SIDES)) as pool:
                futures = {s: pool.submit(run_side, s, names, directory / f"{s}{i}") for s in SIDES}
                got_round = {s: f.result() for s, f in futures.items()}
        else:
            got_round = {s: run_side(s, names, directory / f"{s}{i}") for s in SIDES}
        for side, got in got_round.items():
            if side in data:
                for name, result in got["results"].items():
                    kept = data[side]["results"][name]
                    kept["seconds"] = min(kept["seconds"], result["seconds"])
            else:
                data[side] = got
    rows = []
    for name in names:
        c = config(name)
        stock, hook = (data[s]["results"][name] for s in SIDES)
        files = [_file(directory / f"{s}0", c) for s in SIDES]
        same = files[0].read_bytes() == files[1].read_bytes() if all(f.exists() for f in files) else None
        rows.append(Row(c, stock, hook, same))
    facts = {s: {k: data[s][k] for k in ("package_loaded", "hook_installed")} for s in SIDES}
    return rows, facts


def time_ratio(rows: list[Row]) -> tuple[float, float, float]:
    """Total export seconds on stock and under the hook over the configurations both export, and
    their ratio (hook / stock)."""
    both = [r for r in rows if r.stock["exported"] and r.hook["exported"]]
    stock = sum(r.stock["seconds"] for r in both)
    hook = sum(r.hook["seconds"] for r in both)
    return stock, hook, (hook / stock if stock else float("nan"))


def _cell(result: dict) -> str:
    return "exports" if result["exported"] else f"fails: `{result['error'][:90]}`"


def _outputs_cell(result: dict) -> str:
    return (
        "-" if not result["exported"] else "equal" if result["outputs"] == "equal" else result["outputs"][:80]
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| configuration | stock | hook | identical bytes | outputs vs eager (stock / hook) | promises |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        same = {True: "yes", False: "no", None: "-"}[r.same_bytes]
        if r.same_bytes is False and r.config.model.collides:
            same = "no (a name collides)"
        broken = [k for k, v in r.problems.items() if v]
        promises = "kept" if not broken else "BROKEN: " + ", ".join(broken)
        if broken and r.config.model.known_issue:
            promises += " (known: issue 38)"
        lines.append(
            f"| {r.config} | {_cell(r.stock)} | {_cell(r.hook)} | {same} | "
            f"{_outputs_cell(r.stock)} / {_outputs_cell(r.hook)} | {promises} |"
        )
    return "\n".join(lines)


def _environment() -> str:
    import importlib.metadata

    versions = []
    for dist in ("torch", "onnx", "onnxscript", "onnxruntime", "transformers"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} absent")
    return f"Python {platform.python_version()}, {', '.join(versions)}, {os.cpu_count()} CPUs"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--full", action="store_true", help="every configuration")
    which.add_argument("--ci", action="store_true", help="the CI subset (tests/test_onnx.py)")
    which.add_argument("--only", nargs="+", metavar="CONFIG", help="these configurations")
    which.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    p.add_argument(
        "--rounds", type=int, default=2, help="runs per side, alternating; fastest kept (default 2)"
    )
    p.add_argument(
        "--keep", metavar="DIR", help="write the .onnx files here instead of a temporary directory"
    )
    args = p.parse_args(argv)
    if args.child:
        out = Path(args.child)
        (out / "results.json").write_text(json.dumps(child(out, args.names)))
        return 0
    reason = missing_requirements()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    chosen = args.only or [c.name for c in configs(full=args.full) if not missing(c.model.requires)]
    skipped = [c.name for c in configs(full=args.full) if missing(c.model.requires)]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(args.keep or tmp)
        try:
            rows, facts = run(chosen, directory, args.rounds)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            return 1
    print(_environment())
    print(f"processes: {facts}")
    print()
    print(table(rows))
    stock, hook, ratio = time_ratio(rows)
    print()
    print(
        f"torch.onnx.export time over the {sum(r.stock['exported'] and r.hook['exported'] for r in rows)} "
        f"configurations both export (fastest of {args.rounds} per side): stock {stock:.2f} s, "
        f"hook {hook:.2f} s, ratio {ratio:.3f}"
    )
    if skipped:
        absent = sorted({str(config(n).model.requires) for n in skipped})
        print(f"skipped ({', '.join(absent)} missing): {skipped}")
    broken = [r for r in rows if any(r.problems.values()) and not r.config.model.known_issue]
    if facts["stock"]["package_loaded"] or not facts["hook"]["hook_installed"]:
        print("the stock process loaded the package, or the hook process lacked the hook", file=sys.stderr)
        return 1
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
