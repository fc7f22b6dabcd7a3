"""The comparison: one corpus entry exported on stock torch and under the hook, check by check.

``run_entry`` exports an entry once on stock torch (every patch of the package, the code-generator
guard included, bypassed in the thread: ``hook.suspended()``) and once under
``torch_export_names.installed()``, in three variants (``VARIANTS``): ``static`` (positional
arguments), ``dynamic`` (positional, batch and, for convnets, spatial dimensions ``Dim.AUTO``;
called again with a different batch and size) and ``kwargs`` (the arguments exported by keyword).
Per variant it compares the two sides check by check (``CHECKS``); every mismatch is a
``Difference``. A difference is *allowed* only where, in the check that records it, stock torch
computes a wrong result or crashes and the hook does not, and the hook's ``ep.module()`` computes
eager's results (``Difference.allowed``; a signature or warning difference never is).
``compare(entry)`` returns the differences; ``run_all`` runs many entries, in worker processes if
asked.

Stock runs before the hook in every variant, so a warning that torch emits once per process is
seen on the stock side first; the package's own warn-once registry is cleared before each hooked
side (every program is judged as in a fresh process).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import io
import os
import re
import sys
import time
import traceback
import warnings

import torch

from .corpus import Built, Entry, entry, missing_requirement

# The checks, in report order, and what each compares (stock vs hook, per variant).
CHECKS = {
    "export": "the export succeeds on both, or fails on both with the same exception type and first line",
    "outputs": "ep.module() computes what eager computes, on both (and the same on both); for dynamic "
    "shapes also on inputs of another batch and size",
    "signature": "inspect.signature(ep.module().forward) is the same",
    "keyword call": "ep.module() called with every argument by keyword: same outcome (and outputs)",
    "warnings": "no warning message under the hook that the stock run lacks (export, module(), calls, "
    "run_decompositions, save, load)",
    "save/load": "torch.export.save / load: saved under the hook and loaded on stock, saved on stock and "
    "loaded under the hook: each loaded module() behaves as the stock-saved, stock-loaded one",
    "decompositions": "ep.run_decompositions(): same outcome and outputs (and as eager)",
}
VARIANTS = ("static", "dynamic", "kwargs")
# What the kwargs variant skips: it is the same program as static but for its input spec.
KWARGS_CHECKS = ("export", "outputs", "signature", "keyword call", "warnings")


@dataclasses.dataclass
class Difference:
    model: str
    variant: str
    check: str
    stock: str
    hook: str
    allowed: bool = False
    why: str = ""
    # set by the check that records it: stock's side is wrong or crashes and the hook's is right
    stock_wrong_hook_right: bool = False

    def __str__(self) -> str:
        verdict = f"allowed: {self.why}" if self.allowed else "NOT allowed"
        return (
            f"{self.model} [{self.variant}] {self.check}: stock: {self.stock} | hook: {self.hook} ({verdict})"
        )


@dataclasses.dataclass
class EntryResult:
    name: str
    family: str
    seconds: float = 0.0
    skipped: str | None = None
    # (variant, check) -> "same" | "differs" | "n/a: why"
    checks: dict = dataclasses.field(default_factory=dict)
    differences: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)  # facts about stock torch, not differences

    def failed_checks(self, check: str) -> list[Difference]:
        return [d for d in self.differences if d.check == check and not d.allowed]


_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return f"{type(e).__name__}: {_HEX.sub('0x...', lines[0]) if lines else ''}"[:300]


@dataclasses.dataclass
class Outcome:
    """What a call did: its outputs (flattened) or the exception's type and first line."""

    error: str | None = None
    leaves: list | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        return "ok" if self.ok else self.error


def _leaves(out) -> list:
    from torch.utils import _pytree

    leaves, _ = _pytree.tree_flatten(out)
    return leaves


def _call(fn, *args, **kwargs) -> Outcome:
    try:
        with torch.no_grad():
            return Outcome(leaves=_leaves(fn(*args, **kwargs)))
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return Outcome(error=_first_line(e))


def _mismatch(a: list, b: list, rtol: float, atol: float) -> str | None:
    """Why the flattened outputs ``a`` and ``b`` differ, or None."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"output {i}: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}"
            try:
                torch.testing.assert_close(x.detach(), y.detach(), rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as e:
                detail = [line for line in str(e).splitlines() if "Greatest absolute" in line]
                return f"output {i} differs ({detail[0].strip() if detail else 'values'})"
        elif type(x) is not type(y) or x != y:
            return f"output {i}: {x!r} vs {y!r}"
    return None


def _same_outcome(stock: Outcome, hook: Outcome, rtol: float, atol: float) -> str | None:
    if stock.ok != hook.ok or (not stock.ok and stock.error != hook.error):
        return "outcome"
    if stock.ok:
        return _mismatch(stock.leaves, hook.leaves, rtol, atol)
    return None


def _dynamic_shapes(built: Built, names: list[str], by_keyword: bool):
    from torch.export import Dim

    def convert(spec):
        if spec is None:
            return None
        if isinstance(spec, dict):
            return {d: Dim.AUTO for d in spec}
        return type(spec)(convert(s) for s in spec)

    shapes = tuple(convert(s) for s in built.dims)
    return dict(zip(names, shapes)) if by_keyword else shapes


def _positional_names(module: torch.nn.Module, n: int) -> list[str]:
    params = list(inspect.signature(module.forward).parameters.values())
    return [p.name for p in params[:n]]


class _Side:
    """One side (stock or hook) of one variant: everything it did, as outcomes."""

    def __init__(self):
        self.export_error: str | None = None
        self.ep = None
        self.signature = None
        self.calls: dict[str, Outcome] = {}  # "k=0", "k=1" (dynamic)
        self.keyword: Outcome | None = None
        self.decomposed: dict[str, Outcome] = {}
        self.saved: bytes | None = None
        self.save_error: str | None = None
        self.warnings: set[str] = set()


def _warning_key(w: warnings.WarningMessage) -> str:
    return f"{w.category.__name__}: {_HEX.sub('0x...', str(w.message))}"


@contextlib.contextmanager
def _recording(into: set):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            into.update(_warning_key(w) for w in caught)


@contextlib.contextmanager
def _stock():
    """Stock torch: every patch of the package bypassed in this thread (the code-generator guard is
    in place as soon as the package is imported; the hook may be installed)."""
    import torch_export_names.hook as hook

    with hook.suspended():
        yield


@contextlib.contextmanager
def _hooked():
    import torch_export_names
    from torch_export_names import _warnings

    saved = set(_warnings._warned)
    _warnings._warned.clear()  # judge each program as in a fresh process
    try:
        with torch_export_names.installed():
            yield
    finally:
        _warnings._warned.clear()
        _warnings._warned.update(saved)


def _run_side(
    side: _Side, context, model, args, kwargs, dynamic_shapes, call_inputs, keyword_inputs, with_rest: bool
) -> None:
    with _recording(side.warnings), context():
        try:
            side.ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
        except Exception as e:  # noqa: BLE001
            side.export_error = _first_line(e)
            return
        mod = side.ep.module()
        side.signature = str(inspect.signature(mod.forward))
        for label, (a, kw) in call_inputs.items():
            side.calls[label] = _call(mod, *a, **kw)
        side.keyword = _call(mod, **keyword_inputs)
        if not with_rest:
            return
        try:
            decomposed = side.ep.run_decompositions().module()
        except Exception as e:  # noqa: BLE001
            side.decomposed = {label: Outcome(error=_first_line(e)) for label in call_inputs}
        else:
            for label, (a, kw) in call_inputs.items():
                side.decomposed[label] = _call(decomposed, *a, **kw)
        buffer = io.BytesIO()
        try:
            torch.export.save(side.ep, buffer)
            side.saved = buffer.getvalue()
        except Exception as e:  # noqa: BLE001
            side.saved = None
            side.save_error = _first_line(e)


def _load_and_call(data: bytes | None, context, call_inputs, into: set, save_error: str | None):
    if data is None:
        return {label: Outcome(error=f"save failed: {save_error}") for label in call_inputs}
    with _recording(into), context():
        try:
            mod = torch.export.load(io.BytesIO(data)).module()
        except Exception as e:  # noqa: BLE001
            return {label: Outcome(error=_first_line(e)) for label in call_inputs}
        return {label: _call(mod, *a, **kw) for label, (a, kw) in call_inputs.items()}


def _run_variant(e: Entry, built: Built, variant: str, result: EntryResult, quick: bool) -> None:
    example = built.inputs(0)
    names = _positional_names(built.module, len(example))
    dynamic = variant == "dynamic"
    if dynamic and built.dims is None:
        for check in CHECKS:
            result.checks[(variant, check)] = "n/a: no dynamic dimensions"
        return
    by_keyword = variant == "kwargs"
    as_kwargs = dict(zip(names, example))
    args, kwargs = ((), as_kwargs) if by_keyword else (example, {})
    shapes = _dynamic_shapes(built, names, by_keyword) if dynamic else None
    # how ep.module() is called: as exported; for dynamic shapes also with another batch/size
    sets = {"k=0": (example, {})} if not by_keyword else {"k=0": ((), as_kwargs)}
    if dynamic:
        sets["k=1"] = (built.inputs(1), {})
    with torch.no_grad():
        eager = {label: _call(built.module, *a, **kw) for label, (a, kw) in sets.items()}
    for label, out in eager.items():
        if not out.ok:  # the corpus entry is wrong, not torch: fail loudly
            raise RuntimeError(f"the model itself (eager, {label}) raised {out.error}")

    # decompositions and save/load: not for kwargs (the static program but for its input spec)
    with_rest = not by_keyword and not (quick and dynamic)
    if not by_keyword and not with_rest:
        for check in ("decompositions", "save/load"):
            result.checks[(variant, check)] = "n/a: quick run (checked on the static export)"
    stock, hook = _Side(), _Side()
    for side, context in ((stock, _stock), (hook, _hooked)):
        _run_side(
            side, context, copy.deepcopy(built.module), args, kwargs, shapes, sets, as_kwargs, with_rest
        )
    checks = KWARGS_CHECKS if by_keyword else tuple(CHECKS)
    diffs: list[Difference] = []

    def differ(check, s, h, stock_wrong_hook_right=False):
        diffs.append(Difference(e.name, variant, check, s, h, stock_wrong_hook_right=stock_wrong_hook_right))

    # export
    if stock.export_error != hook.export_error:
        differ(
            "export",
            stock.export_error or "ok",
            hook.export_error or "ok",
            stock_wrong_hook_right=stock.export_error is not None and hook.export_error is None,
        )
    if stock.export_error or hook.export_error:
        result.checks[(variant, "export")] = "same" if stock.export_error == hook.export_error else "differs"
        why = f"n/a: export failed ({stock.export_error or hook.export_error})"
        for check in checks[1:]:
            result.checks[(variant, check)] = why
        if stock.export_error and stock.export_error == hook.export_error:
            result.notes.append(
                f"{variant}: export fails on stock torch and under the hook: {stock.export_error}"
            )
        _finish(result, e, diffs, variant, checks, stock, hook, eager)
        return

    # outputs: each side against eager, and against each other
    for label in sets:
        s, h, ref = stock.calls[label], hook.calls[label], eager[label]
        s_vs_eager = _wrong(s, ref, e)
        h_vs_eager = _wrong(h, ref, e)
        if _same_outcome(s, h, e.rtol, e.atol) or h_vs_eager != s_vs_eager:
            differ(
                "outputs",
                f"{label}: {s_vs_eager or 'as eager'}",
                f"{label}: {h_vs_eager or 'as eager'}",
                bool(s_vs_eager) and not h_vs_eager,
            )
        elif s_vs_eager:
            result.notes.append(
                f"{variant}: ep.module() {label} on stock torch and under the hook: {s_vs_eager}"
            )
    # signature
    if stock.signature != hook.signature:
        differ("signature", stock.signature, hook.signature)
    # keyword call
    if _same_outcome(stock.keyword, hook.keyword, e.rtol, e.atol):
        # the same values as the k=0 call: eager's k=0 outputs are the reference
        s_vs_eager, h_vs_eager = _wrong(stock.keyword, eager["k=0"], e), _wrong(hook.keyword, eager["k=0"], e)
        differ(
            "keyword call",
            s_vs_eager or "as eager",
            h_vs_eager or "as eager",
            bool(s_vs_eager) and not h_vs_eager,
        )
    if with_rest:
        # decompositions
        for label in sets:
            s, h, ref = stock.decomposed[label], hook.decomposed[label], eager[label]
            s_vs_eager, h_vs_eager = _wrong(s, ref, e), _wrong(h, ref, e)
            if _same_outcome(s, h, e.rtol, e.atol) or h_vs_eager != s_vs_eager:
                differ(
                    "decompositions",
                    f"{label}: {s_vs_eager or 'as eager'}",
                    f"{label}: {h_vs_eager or 'as eager'}",
                    bool(s_vs_eager) and not h_vs_eager,
                )
        # save/load: the stock-saved, stock-loaded program is the reference (quick: stock's own
        # ep.module(), one load less)
        base_w, cross_w = set(), set()
        if stock.save_error and stock.save_error == hook.save_error:
            result.notes.append(
                f"{variant}: torch.export.save fails on stock torch and under the hook: {stock.save_error}"
            )
        base = stock.calls if quick else _load_and_call(stock.saved, _stock, sets, base_w, stock.save_error)
        hook_to_stock = _load_and_call(hook.saved, _stock, sets, cross_w, hook.save_error)
        stock_to_hook = _load_and_call(stock.saved, _hooked, sets, cross_w, stock.save_error)
        for direction, loaded in (
            ("saved under the hook, loaded on stock", hook_to_stock),
            ("saved on stock, loaded under the hook", stock_to_hook),
        ):
            for label in sets:
                b, x = base[label], loaded[label]
                b_vs_eager, x_vs_eager = _wrong(b, eager[label], e), _wrong(x, eager[label], e)
                if _same_outcome(b, x, e.rtol, e.atol) or b_vs_eager != x_vs_eager:
                    reference = "stock" if quick else "stock->stock"
                    differ(
                        "save/load",
                        f"{label} {reference}: {b_vs_eager or 'as eager'}",
                        f"{label} {direction}: {x_vs_eager or 'as eager'}",
                        bool(b_vs_eager) and not x_vs_eager,
                    )
        stock.warnings |= base_w
        if not quick:  # quick has no stock-saved, stock-loaded program to compare the loads' warnings with
            hook.warnings |= cross_w
    _finish(result, e, diffs, variant, checks, stock, hook, eager)


def _wrong(out: Outcome, ref: Outcome, e: Entry) -> str | None:
    """How ``out`` departs from eager's ``ref``: its exception, or the mismatch; None if it matches."""
    if not out.ok:
        return f"raises {out.error}"
    if not ref.ok:
        return f"runs where eager raises {ref.error}"
    mismatch = _mismatch(ref.leaves, out.leaves, e.rtol, e.atol)
    return f"differs from eager: {mismatch}" if mismatch else None


def _finish(result, e: Entry, diffs, variant, checks, stock: _Side, hook: _Side, eager) -> None:
    new = sorted(hook.warnings - stock.warnings)
    if new:
        diffs.append(Difference(result.name, variant, "warnings", "(none of these)", " || ".join(new)))
    # Allowed only where, in the check that records the difference, stock computes a wrong result
    # or crashes and the hook does not (never a signature or a warning), and the hook's ep.module()
    # computes eager's results in every call of the variant.
    hook_right = hook.ep is not None and all(
        _wrong(o, eager[label], e) is None for label, o in hook.calls.items() if eager[label].ok
    )
    for d in diffs:
        if d.stock_wrong_hook_right and hook_right:
            d.allowed = True
            d.why = "stock torch crashes or computes a wrong result here; under the hook it does not"
    result.differences += diffs
    for check in checks:
        key = (variant, check)
        if key not in result.checks:
            result.checks[key] = "differs" if any(d.check == check for d in diffs) else "same"


def run_entry(e: Entry, variants=VARIANTS, quick: bool = False) -> EntryResult:
    """Export ``e`` on stock torch and under the hook, per variant; every check's verdict.

    ``quick`` (the CI subset): the dynamic variant skips ``run_decompositions`` and save/load (the
    static one checks them), and save/load compares the loaded programs with stock's in-memory ``ep.module()``
    instead of a stock-saved, stock-loaded one. The full corpus runs everything."""
    result = EntryResult(e.name, e.family)
    reason = missing_requirement(e)
    if reason:
        result.skipped = reason
        return result
    start = time.perf_counter()
    # Each model as in a fresh process: dynamo's caches (and their recompile limit, which a long
    # run of exports reaches on torch 2.7: FailOnRecompileLimitHit on both sides) start empty.
    torch._dynamo.reset()
    built = e.build()
    for variant in variants:
        try:
            _run_variant(e, built, variant, result, quick)
        except Exception as exc:  # noqa: BLE001 - a bug here must not hide the other variants
            result.differences.append(Difference(e.name, variant, "harness", "", _first_line(exc)))
            result.notes.append(f"{variant}: the harness raised:\n{traceback.format_exc()}")
    result.seconds = time.perf_counter() - start
    return result


def compare(e: Entry, quick: bool = False) -> list[Difference]:
    """Every difference between stock torch and the hook for ``e`` (allowed ones included)."""
    return run_entry(e, quick=quick).differences


def _worker(name: str, quick: bool, threads: int) -> EntryResult:
    torch.set_num_threads(threads)
    return run_entry(entry(name), quick=quick)


def run_all(names: list[str], quick: bool, jobs: int, fresh: bool = True):
    """EntryResults in completion order; with ``jobs`` > 1 in worker processes, each model in a
    fresh one if ``fresh`` (isolation and memory; costs an import of torch per model)."""
    if jobs <= 1:
        for name in names:
            yield run_entry(entry(name), quick=quick)
        return
    import concurrent.futures
    import multiprocessing

    threads = max(1, (os.cpu_count() or 1) // jobs)
    options = {"max_tasks_per_child": 1} if fresh and sys.version_info >= (3, 11) else {}
    with concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("spawn"), **options
    ) as pool:
        futures = {pool.submit(_worker, name, quick, threads): name for name in names}
        for future in concurrent.futures.as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 - a crashed worker is a result too
                r = EntryResult(futures[future], entry(futures[future]).family)
                r.differences.append(Difference(r.name, "-", "harness", "", _first_line(exc)))
                yield r
