"""Audit mode: which code adds nodes to graphs whose names are not all recorded or legal.

    import torch_export_names.audit
    with torch_export_names.audit.audited() as report:
        run_my_pipeline()
    print(report.format_table())

While a block is open, ``torch.fx.Graph.create_node``, ``Graph.node_copy`` and
``Graph.graph_copy`` (``placeholder``, ``call_function``, ... go through
``create_node``) are wrapped. Each node creation on a graph that at that moment
holds names its name space does not know (pytorch/pytorch#202927) or illegal
placeholders (a name or target no Python parameter can have: ``class``,
``self``; ``inf`` and ``device`` are legal) is recorded with the code that
asked for it (the first stack frame outside torch and outside this package),
the names at risk and whether the new node's name is a duplicate of another
node's in that graph.
A created placeholder whose *target* another placeholder already has is
recorded too (fx's generated ``forward`` would have a duplicate argument).

The audit observes only: it never renames, records or repairs anything, so
it gives the same answers with the hook on or off (with the hook on, exported
graphs hold no unrecorded names, so what remains is what the hook does not
cover). Nothing is patched until a block opens; when the last block closes
the original function objects are back. Blocks may nest and be opened from
several threads; every open block receives every creation in the process.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import dataclasses
import functools
import json
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any, Iterator

from ._patching import Patch, PatchSet

__all__ = ["AuditEvent", "AuditReport", "ProcessAudit", "Site", "audit_until_exit", "audited", "is_installed"]

PATCHED = ("create_node", "node_copy", "graph_copy")
# Names kept per event; the count is always exact.
_MAX_NAMES = 8

_lock = threading.RLock()
_local = threading.local()  # .depth: patched calls in progress in this thread
# Guarded by _lock.
_reports: list[AuditReport] = []


@dataclasses.dataclass(frozen=True, order=True)
class Site:
    """Where a node creation was asked for: the first frame outside torch and this package."""

    module: str
    function: str
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.function}:{self.line}"


@dataclasses.dataclass(frozen=True)
class AuditEvent:
    """One recorded node creation.

    ``kind`` is ``"at-risk"`` (a node was created on a graph holding unrecorded or
    illegal names) or ``"shared-target"`` (a created placeholder's target is
    another placeholder's target too). ``unrecorded`` and ``illegal`` hold at most
    a few names each; ``unrecorded_count`` and ``illegal_count`` are exact.
    """

    kind: str
    site: Site
    api: str  # the Graph method called: create_node, node_copy or graph_copy
    graph: int  # 1, 2, ...: the graphs of one report, in the order first seen
    created: tuple[str, ...]
    unrecorded: tuple[str, ...] = ()
    unrecorded_count: int = 0
    illegal: tuple[str, ...] = ()
    illegal_count: int = 0
    duplicates: tuple[str, ...] = ()  # created names another node of the graph already has
    shared_target: str | None = None  # shared-target: the target ...
    sharing: tuple[str, ...] = ()  # ... and the other placeholders that have it

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["site"] = dataclasses.asdict(self.site)
        for key in ("created", "unrecorded", "illegal", "duplicates", "sharing"):
            d[key] = list(d[key])
        return d


@dataclasses.dataclass(eq=False)  # one report per block: compared by identity
class AuditReport:
    """What one ``audited()`` block saw."""

    events: list[AuditEvent] = dataclasses.field(default_factory=list)
    hook_at_start: bool = False
    hook_at_end: bool | None = None  # set when the block closes
    errors: list[str] = dataclasses.field(default_factory=list)  # the audit's own failures
    _graphs: dict[int, int] = dataclasses.field(default_factory=dict, repr=False)
    _shared_seen: set = dataclasses.field(default_factory=set, repr=False)

    @property
    def exposed(self) -> bool:
        """Whether any node was created on a graph at risk, or a placeholder target is shared."""
        return bool(self.events)

    @property
    def duplicates(self) -> list[str]:
        """Every duplicate name a creation produced, in order."""
        return [name for e in self.events for name in e.duplicates]

    def sites(self) -> list[dict]:
        """Events grouped by (kind, site, api), most creations first."""
        groups: dict[tuple, dict] = {}
        for e in self.events:
            g = groups.setdefault(
                (e.kind, e.site, e.api),
                {
                    "kind": e.kind,
                    "site": str(e.site),
                    "api": e.api,
                    "creations": 0,
                    "created": [],
                    "duplicates": [],
                    "unrecorded": set(),
                    "illegal": set(),
                    "shared_targets": set(),
                },
            )
            g["creations"] += 1
            g["created"].extend(e.created)
            g["duplicates"].extend(e.duplicates)
            g["unrecorded"].update(e.unrecorded)
            g["illegal"].update(e.illegal)
            if e.shared_target is not None:
                g["shared_targets"].add(e.shared_target)
        out = []
        for g in groups.values():
            for key in ("unrecorded", "illegal", "shared_targets"):
                g[key] = sorted(g[key])
            out.append(g)
        return sorted(out, key=lambda g: (g["kind"], -g["creations"], g["site"], g["api"]))

    def summary(self) -> str:
        """One line; "at risk": the graph held unrecorded or illegal names when the node was created."""
        at_risk = sum(e.kind == "at-risk" for e in self.events)
        shared = sum(e.kind == "shared-target" for e in self.events)
        hook = "on" if self.hook_at_start else "off"
        if self.hook_at_end is not None and self.hook_at_end != self.hook_at_start:
            hook += f" at start, {'on' if self.hook_at_end else 'off'} at end"
        return (
            f"torch-export-names audit (hook {hook}): {at_risk} at-risk creation(s), "
            f"{len(self.duplicates)} duplicate(s), {shared} shared placeholder target(s)"
        )

    def format_table(self) -> str:
        """The summary line, then one row per (kind, site, api)."""
        lines = [self.summary()]
        lines += [f"  audit error: {e}" for e in self.errors]
        rows = [
            (
                g["kind"],
                g["site"],
                g["api"],
                str(g["creations"]),
                _short(g["created"]),
                _short(g["duplicates"] or [f"target {t}" for t in g["shared_targets"]]),
                _short(g["unrecorded"] + [f"{n} (illegal)" for n in g["illegal"]]),
            )
            for g in self.sites()
        ]
        if not rows:
            return "\n".join(lines)
        header = (
            "kind",
            "site (module:function:line)",
            "api",
            "count",
            "created",
            "duplicates",
            "names at risk",
        )
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for r in (header, *rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        return "\n".join(lines)

    def to_json(self) -> dict:
        torch = sys.modules.get("torch")  # None: the program never imported torch

        return {
            "torch": getattr(torch, "__version__", None),
            "hook_at_start": self.hook_at_start,
            "hook_at_end": self.hook_at_end,
            "exposed": self.exposed,
            "summary": self.summary(),
            "sites": self.sites(),
            "events": [e.as_dict() for e in self.events],
            "errors": list(self.errors),
        }

    def _graph_index(self, graph) -> int:
        return self._graphs.setdefault(id(graph), len(self._graphs) + 1)


def _short(names, limit: int = 4) -> str:
    names = list(names)
    text = ", ".join(names[:limit])
    return text + (f" (+{len(names) - limit})" if len(names) > limit else "")


def is_installed() -> bool:
    """Whether the audit's wrappers are installed: an ``audited()`` block is open in this process."""
    with _lock:
        return bool(_reports)


def _site() -> Site:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "?")
        if not (module == "torch" or module.startswith(("torch.", __package__))):
            code = frame.f_code
            return Site(module, getattr(code, "co_qualname", code.co_name), frame.f_lineno)
        frame = frame.f_back
    return Site("?", "?", 0)


def _observe(api: str, graph, call):
    """Run ``call()`` (the original method) and record it if ``graph`` was at risk."""
    from . import _fx_namespace as ns

    try:
        unrecorded, illegal = ns.names_at_risk(graph)
        before = set(graph.nodes) if api == "graph_copy" else None
    except Exception as e:  # noqa: BLE001 - the audit never breaks the program it watches
        _error(f"{type(e).__name__}: {e}")
        return call()
    result = call()
    try:
        _record(api, graph, result, unrecorded, illegal, before)
    except Exception as e:  # noqa: BLE001
        _error(f"{type(e).__name__}: {e}")
    return result


def _record(api, graph, result, unrecorded, illegal, before) -> None:
    import torch.fx

    if before is not None:
        created = [n for n in graph.nodes if n not in before]
    else:
        created = [result] if isinstance(result, torch.fx.Node) else []
    placeholders = [n for n in created if n.op == "placeholder"]
    if not (unrecorded or illegal or placeholders):
        return
    site = _site()
    events = []
    if unrecorded or illegal:
        created_names = {n.name for n in created}
        counts = collections.Counter(n.name for n in graph.nodes if n.name in created_names)
        events.append(
            dict(
                kind="at-risk",
                api=api,
                site=site,
                created=tuple(n.name for n in created),
                unrecorded=tuple(unrecorded[:_MAX_NAMES]),
                unrecorded_count=len(unrecorded),
                illegal=tuple(illegal[:_MAX_NAMES]),
                illegal_count=len(illegal),
                duplicates=tuple(n.name for n in created if counts[n.name] > 1),
            )
        )
    if placeholders:
        targets = collections.defaultdict(list)
        for n in graph.find_nodes(op="placeholder"):
            targets[n.target].append(n.name)
        for p in placeholders:
            if len(targets[p.target]) > 1:
                events.append(
                    dict(
                        kind="shared-target",
                        api=api,
                        site=site,
                        created=(p.name,),
                        shared_target=str(p.target),
                        sharing=tuple(x for x in targets[p.target] if x != p.name),
                    )
                )
    with _lock:
        for report in _reports:
            index = report._graph_index(graph)
            for ev in events:
                report.events.append(AuditEvent(graph=index, **ev))


def _error(message: str) -> None:
    with _lock:
        for report in _reports:
            if message not in report.errors:
                report.errors.append(message)


def _wrapper(name: str):
    """``make`` of the patch of ``torch.fx.Graph.<name>``: the original call, observed."""

    def make(patch: Patch):
        original = patch.original

        @functools.wraps(original)
        def wrapper(self, *args, **kwargs):
            depth = getattr(_local, "depth", 0)
            # Inner calls (graph_copy -> node_copy -> create_node) belong to the outer one.
            if depth or not _reports or not patch.installs(wrapper):
                return original(self, *args, **kwargs)
            _local.depth = depth + 1
            try:
                return _observe(name, self, lambda: original(self, *args, **kwargs))
            finally:
                _local.depth = depth

        return wrapper

    return make


def _make_patches() -> list[Patch]:
    import torch.fx

    return [Patch(torch.fx.Graph, name, _wrapper(name)) for name in PATCHED]


# On while an audited() block is open; then torch's function objects are back (a method wrapped
# again on top of ours keeps ours beneath, switched off: see _patching).
_patched = PatchSet(_make_patches)


@contextlib.contextmanager
def audited() -> Iterator[AuditReport]:
    """Record node creations on graphs at risk in this process while the block is open.

    Yields an ``AuditReport`` that fills up as the block runs; ``hook_at_end``
    is set when it closes.
    """
    from . import hook

    report = AuditReport(hook_at_start=hook.is_installed())
    with _patched.block():
        with _lock:
            _reports.append(report)
        try:
            yield report
        finally:
            with _lock:
                _reports[:] = [r for r in _reports if r is not report]
    report.hook_at_end = hook.is_installed()


# Signals whose default action ends the process without Python's clean-up (atexit): the process
# audit reports first, then dies of the signal as it would have.
_FATAL_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class ProcessAudit:
    """An ``audited()`` block for the rest of the process (``run --audit``,
    TORCH_EXPORT_NAMES_AUDIT): ``start()`` opens it (it imports torch.fx), and when the
    process ends the block closes and the report is printed to ``stream`` (stderr) and, given
    a ``json_path``, written there as JSON. See ``audit_until_exit``."""

    def __init__(self, json_path: str | None = None, stream: Any = None) -> None:
        self.json_path = json_path
        self.stream = stream
        self.report: AuditReport | None = None
        self._block: contextlib.AbstractContextManager | None = None
        self._finished = False

    def start(self) -> None:
        """Open the block (idempotent)."""
        if self._block is None and not self._finished:
            self._block = audited()
            self.report = self._block.__enter__()

    def finish(self) -> None:
        """Close the block, print the report and write the JSON (once; never raises)."""
        if self._finished:
            return
        self._finished = True
        stream = self.stream or sys.stderr
        try:
            if self._block is not None:
                self._block.__exit__(None, None, None)
                report = self.report
            else:  # torch never imported: nothing can have been created
                report = AuditReport(hook_at_end=False)
            assert report is not None
            print(report.format_table(), file=stream, flush=True)
            if self.json_path is not None:
                with open(self.json_path, "w") as f:
                    json.dump(report.to_json(), f, indent=1)
        except Exception as e:  # noqa: BLE001 - the program's own exit status stands
            print(f"torch-export-names audit: could not report ({type(e).__name__}: {e})", file=stream)

    def _on_signal(self, signum, frame) -> None:
        self.finish()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # die of it, as without the audit


def audit_until_exit(json_path: str | None = None, stream: Any = None) -> ProcessAudit:
    """Report an audit when this process ends, however it ends: a return from the program,
    ``sys.exit``, an uncaught exception (``atexit``) or SIGTERM/SIGHUP (a handler that
    reports, then lets the signal end the process as it would have; installed only where
    the signal has its default action, and a program's own handler replaces it); not
    ``os._exit`` or SIGKILL. Call ``start()`` on the result to open the block once torch
    can be imported."""
    process_audit = ProcessAudit(json_path, stream)
    atexit.register(process_audit.finish)
    if threading.current_thread() is threading.main_thread():
        for signum in _FATAL_SIGNALS:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, process_audit._on_signal)
    return process_audit
