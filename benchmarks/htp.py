"""QNN partitioning: the HTP adapter (``ConstantAwareQnnPartitioner``) vs plain ``QnnPartitioner``.

The QNN SDK is replaced by a test double (``tests/fakes/fake_qnn_manager.py``,
``FakeQnnManager``): ExecuTorch's own op-support checks, node visitors and
partitioner run; the double only answers the SDK manager's calls (every op with a
QNN node visitor is "supported"). The figures are the Python-side analysis cost;
with the real SDK, ``IsNodeSupportedByBackend`` would add its own (identical for
both partitioners) time.

Per size, the program goes through ExecuTorch's QNN flow as
``to_edge_transform_and_lower_to_qnn`` runs it (export, ``transform_for_export_pipeline``,
the to-edge transform passes, ``qnn_edge_config``), with the export hook installed.
Timed, each partitioner's calls on the same programs, in rotation:

- ``ops_to_not_decompose(ep)``, then its node filter applied to every node of ``ep``
  (what decomposition does with it);
- ``generate_partitions(edge_program)`` on the edge program the partitioner is handed
  (built with plain ``QnnPartitioner``'s decomposition table);
- and, alone, the adapter's analysis: ``constant_only_nodes`` on both programs.

The lowering then completes with plain ``QnnPartitioner`` (untimed).
"""

from __future__ import annotations

import contextlib
import sys

from benchmarks.env import REPO
from benchmarks.timing import run_interleaved, run_timed, summarize

NOTE = "QNN SDK replaced by a test double (tests/fakes/fake_qnn_manager.py, FakeQnnManager)"


def _imports():
    """The adapter, the test double and ExecuTorch's QNN pieces, or ImportError."""
    from torch_export_names.executorch import ConstantAwareQnnPartitioner

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.fakes.fake_qnn_manager import install_fake_qnn_manager

    return ConstantAwareQnnPartitioner, install_fake_qnn_manager


@contextlib.contextmanager
def fake_qnn_sdk():
    """FakeQnnManager in place of the SDK-backed manager for the block (pytest's MonkeyPatch)."""
    import pytest

    _, install_fake_qnn_manager = _imports()
    with pytest.MonkeyPatch.context() as mp:
        install_fake_qnn_manager(mp)
        yield


def _specs():
    from executorch.backends.qualcomm.serialization.qc_schema import QcomChipset
    from executorch.backends.qualcomm.utils.utils import (
        generate_htp_compiler_spec,
        generate_qnn_executorch_compiler_spec,
    )

    return generate_qnn_executorch_compiler_spec(
        soc_model=QcomChipset.SM8650, backend_options=generate_htp_compiler_spec(use_fp16=True)
    )


def _apply_filter(ops_and_filter, ep) -> int:
    """Call the partitioner's node filter on every node of ``ep``, as decomposition does.

    ExecuTorch 1.5.1's own ``filter_fn`` raises AttributeError on ``aten.unbind.int``
    (its value is a list); such nodes count as skipped, for both partitioners alike.
    Returns the number skipped.
    """
    _, check = ops_and_filter
    skipped = 0
    if check is not None:
        for node in ep.graph.nodes:
            try:
                check(node)
            except AttributeError:
                skipped += 1
    return skipped


def measure_size(n_layers: int, *, reps: int, export: dict | None) -> dict:
    from executorch.backends.qualcomm._passes.qnn_pass_manager import get_qnn_pass_manager_cls
    from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner
    from executorch.backends.qualcomm.serialization.qc_schema_serialize import flatbuffer_to_option
    from executorch.backends.qualcomm.utils.qnn_manager_lifecycle import QnnManagerContext
    from executorch.backends.qualcomm.utils.utils import generate_qnn_executorch_option, qnn_edge_config
    from executorch.exir import to_edge_transform_and_lower

    import torch_export_names
    from benchmarks.models import build_llama, export_llama

    ConstantAwareQnnPartitioner, _ = _imports()
    from torch_export_names.executorch import constant_only_nodes

    specs = _specs()
    plain, adapter = QnnPartitioner(specs), ConstantAwareQnnPartitioner(specs)
    row: dict = {"layers": n_layers}

    class _TimingPartitioner(QnnPartitioner):
        """Plain QnnPartitioner; at partition time it first times both partitioners' analysis."""

        def partition(self, edge_program):
            row["nodes"] = len(edge_program.graph.nodes)
            seconds, results = run_interleaved(
                {
                    "plain": lambda: plain.generate_partitions(edge_program),
                    "adapter": lambda: adapter.generate_partitions(edge_program),
                },
                reps=reps,
            )
            row["generate_partitions"] = {k: summarize(v) for k, v in seconds.items()}
            row["partitions"] = {k: len(v[0]) for k, v in results.items()}
            t, _ = run_timed(lambda: constant_only_nodes(edge_program), reps=reps)
            row["constant_only_nodes_edge"] = summarize(t)
            return super().partition(edge_program)  # then lower as plain QnnPartitioner does

    model, inputs = build_llama(n_layers)
    with torch_export_names.installed(), fake_qnn_sdk():
        ep = export_llama(model, inputs)
        backend = flatbuffer_to_option(generate_qnn_executorch_option(specs)).backend_options.backend_type
        pass_manager = get_qnn_pass_manager_cls(backend)()
        ep = pass_manager.transform_for_export_pipeline(ep)
        transform_passes = pass_manager.get_to_edge_transform_passes(ep, compiler_specs=specs)
        row["nodes_exported"] = len(ep.graph.nodes)
        seconds, results = run_interleaved(
            {
                "plain": lambda: _apply_filter(plain.ops_to_not_decompose(ep), ep),
                "adapter": lambda: _apply_filter(adapter.ops_to_not_decompose(ep), ep),
            },
            reps=reps,
        )
        row["ops_to_not_decompose"] = {k: summarize(v) for k, v in seconds.items()}
        row["filter_skipped_nodes"] = {k: v[0] for k, v in results.items()}
        t, _ = run_timed(lambda: constant_only_nodes(ep), reps=reps)
        row["constant_only_nodes_exported"] = summarize(t)
        with QnnManagerContext({"forward": specs}):
            to_edge_transform_and_lower(
                ep,
                transform_passes=transform_passes,
                partitioner=[_TimingPartitioner(specs)],
                compile_config=qnn_edge_config(),
            )
    for who in ("plain", "adapter"):
        row[who] = {
            "median_s": row["ops_to_not_decompose"][who]["median_s"]
            + row["generate_partitions"][who]["median_s"]
        }
    row["extra_s"] = row["adapter"]["median_s"] - row["plain"]["median_s"]
    # The adapter's own analysis, timed alone (the difference above is of two noisy medians).
    row["analysis_s"] = (
        row["constant_only_nodes_exported"]["median_s"] + row["constant_only_nodes_edge"]["median_s"]
    )
    row["extra_to_plain"] = row["extra_s"] / row["plain"]["median_s"]
    if export is not None:
        row["extra_to_export"] = row["extra_s"] / export["median_s"]
        row["analysis_to_export"] = row["analysis_s"] / export["median_s"]
    return row


def measure(layers, *, reps: int, export_medians: dict, progress=None) -> dict:
    """Rows per layer count, or ``available: False`` with the reason when the adapter or double is missing."""
    try:
        _imports()
        import pytest  # noqa: F401  (MonkeyPatch installs the double)
    except ImportError as e:
        return {"available": False, "reason": f"not available (adapter missing: {e})", "note": NOTE}
    rows = []
    for n in layers:
        try:
            r = measure_size(n, reps=reps, export=export_medians.get(n))
        except Exception as e:  # the adapter is new: report, do not abort the run
            r = {"layers": n, "error": f"{type(e).__name__}: {e}"[:500]}
        rows.append(r)
        if progress is not None:
            progress.step(
                f"QNN partitioning {n} layers: "
                + (
                    f"error {r['error'][:80]}"
                    if "error" in r
                    else f"plain {r['plain']['median_s'] * 1e3:.1f} ms, "
                    f"adapter {r['adapter']['median_s'] * 1e3:.1f} ms, "
                    f"analysis {r['analysis_s'] * 1e3:.2f} ms ({NOTE})"
                )
            )
    return {"available": True, "note": NOTE, "rows": rows}
