"""``ConstantAwareQnnPartitioner``: QNN's partitioner with HTP's constant-only rule.

HTP refuses a graph that reads no runtime input, and ExecuTorch 1.5.1's
``QnnPartitioner`` does not know it: a partition computed only from
parameters, buffers and lifted constants is delegated and fails when the
context binary is built. Keeping such work on the CPU is not enough either:
decomposition happens before partitioning, so an op QNN keeps whole (its skip
table: linear, hardswish, rms_norm, ...) would stay whole on the CPU and
``to_edge_transform_and_lower`` raises ``... was not decomposed or delegated``.

On the HTP backend this partitioner therefore

- drops every proposed partition none of whose nodes reads a runtime value
  (``constant_only.constant_only_nodes``: transitive, so a partition fed only
  by another dropped constant-only partition is dropped too); those nodes run
  on the CPU;
- asks for a skip-table op to be decomposed when it reads only constants,
  except quantize/dequantize ops, which QNN needs whole to build weight
  encodings (constant-ness still propagates through them);
- hands back the plain ``filter_fn`` when asked about the lowered (edge)
  program, so ExecuTorch's post-lowering check still reports a kept-whole op
  left on the CPU (for example an rms_norm that ``RecomposeRmsNorm`` rebuilt
  from constants).

On the GPU and LPAI backends it is exactly ``QnnPartitioner``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Callable, Iterator, List, Optional, Tuple

import torch
from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner
from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchBackendType
from torch.export import ExportedProgram

from .._patching import Patch, PatchSet, original_of, wrapping
from .constant_only import constant_only_nodes, is_quantize_op

__all__ = ["ConstantAwareQnnPartitioner", "install", "installed", "is_installed", "uninstall"]

logger = logging.getLogger("torch_export_names.executorch")


def _plain(name: str):
    """QnnPartitioner's own method ``name``, even if an earlier import of this module patched it."""
    method = QnnPartitioner.__dict__[name]
    return original_of(method) or method


_PLAIN = {name: _plain(name) for name in ("generate_partitions", "ops_to_not_decompose")}


def _is_htp(partitioner: QnnPartitioner) -> bool:
    # QnnPartitioner.__init__ decodes the backend from the compile specs.
    return partitioner.backend == QnnExecuTorchBackendType.kHtpBackend


def _is_edge_program(ep: ExportedProgram) -> bool:
    """Whether ``ep`` is in the edge dialect: the lowered program ExecuTorch re-checks."""
    try:
        return ep.dialect == "EDGE"
    except (AttributeError, AssertionError):
        return False


def _generate_partitions(self: QnnPartitioner, edge_program: ExportedProgram) -> list:
    partitions = _PLAIN["generate_partitions"](self, edge_program)
    if not _is_htp(self):
        return partitions
    constant = constant_only_nodes(edge_program)
    kept = []
    for p in partitions:
        if any(n not in constant for n in p.nodes):
            kept.append(p)
        else:
            logger.info(
                "HTP: partition %s reads no runtime value, left on the CPU: %s",
                p.id,
                ", ".join(sorted(n.name for n in p.nodes)),
            )
    return kept


def _ops_to_not_decompose(
    self: QnnPartitioner, ep: ExportedProgram
) -> Tuple[List[torch._ops.OpOverload], Optional[Callable[[torch.fx.Node], bool]]]:
    ops, plain_filter = _PLAIN["ops_to_not_decompose"](self, ep)
    if not _is_htp(self) or _is_edge_program(ep):
        return ops, plain_filter
    constant = constant_only_nodes(ep)

    def keep_unless_constant_only(node: torch.fx.Node) -> bool:
        # Only consulted for the ops listed above (the skip table).
        if plain_filter is not None and not plain_filter(node):
            return False
        if node in constant and not is_quantize_op(node.target):
            return False  # decompose: it may run on the CPU, where it has no kernel whole
        return True

    return ops, keep_unless_constant_only


class ConstantAwareQnnPartitioner(QnnPartitioner):
    """``QnnPartitioner`` (same constructor) that keeps constant-only work off HTP.

    See the module docstring. Use it wherever ``QnnPartitioner`` is used, or
    call ``install()`` to give ``QnnPartitioner`` itself this behaviour.
    """

    generate_partitions = _generate_partitions
    ops_to_not_decompose = _ops_to_not_decompose


# --- install / uninstall ---------------------------------------------------------


def _calling(impl: Callable):
    """``make`` of a ``QnnPartitioner`` method patch: ``impl`` in place of the method."""
    return wrapping(lambda original, *args, **kwargs: impl(*args, **kwargs))


def _make_patches() -> list[Patch]:
    return [
        Patch(QnnPartitioner, "generate_partitions", _calling(_generate_partitions)),
        Patch(QnnPartitioner, "ops_to_not_decompose", _calling(_ops_to_not_decompose)),
    ]


# A method wrapped again by someone else since it was patched keeps ours beneath, switched off
# (see torch_export_names._patching).
_patched = PatchSet(
    _make_patches,
    installed=lambda: logger.debug("torch_export_names.executorch: QnnPartitioner patched"),
    uninstalled=lambda: logger.debug("torch_export_names.executorch: QnnPartitioner restored"),
)


def install() -> None:
    """Give ``QnnPartitioner`` itself the constant-aware behaviour. Idempotent, thread-safe.

    ExecuTorch helpers that build a ``QnnPartitioner`` (such as
    ``to_edge_transform_and_lower_to_qnn``) then get it without code changes. It stays until
    ``uninstall()``, however ``installed()`` blocks open and close.
    """
    _patched.request("install()")


def uninstall() -> None:
    """Withdraw ``install()``. Idempotent, thread-safe; harmless if not installed.

    If no ``installed()`` block is open in any thread, ``QnnPartitioner``'s own methods are put
    back (the same objects). Otherwise the patch stays until the last open block closes (those
    blocks asked for it), and ``is_installed()`` stays True until then.
    """
    _patched.withdraw()


def is_installed() -> bool:
    """Whether ``QnnPartitioner`` is patched, whoever asked for it."""
    return _patched.is_installed()


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Keep ``QnnPartitioner`` patched for a block.

    Blocks are counted across threads, as the export hook's are: the patch stays while any block
    is open (or ``install()`` was called), so one thread's block closing never ends another's.
    """
    with _patched.block():
        yield
