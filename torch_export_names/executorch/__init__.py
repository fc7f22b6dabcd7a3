"""ExecuTorch adapter: Qualcomm HTP's constant-only rule for ``QnnPartitioner``.

``ConstantAwareQnnPartitioner`` is a drop-in subclass of ExecuTorch's
``QnnPartitioner``; ``install()`` / ``uninstall()`` give ``QnnPartitioner``
itself the same behaviour. Needs ExecuTorch with its Qualcomm backend (the
Python side only; no QNN SDK).
"""

from __future__ import annotations

try:
    import executorch.backends.qualcomm.partition.qnn_partitioner  # noqa: F401
except Exception as e:  # noqa: BLE001 - ImportError, or the backend's own (1.0 fetches the QNN SDK)
    raise ImportError(
        "torch_export_names.executorch needs ExecuTorch with its Qualcomm backend "
        f"(import failed: {type(e).__name__}: {e}). Install ExecuTorch 1.5.x next to your torch: "
        "`pip install executorch==1.5.1` (it pins torch 2.13.0), or, from a checkout of "
        "torch-export-names (it is not published on the package index), "
        "`pip install -c constraints.txt '.[executorch]'`."
    ) from e

# The partitioner API the adapter extends, as ExecuTorch 1.5 has it (checked: 1.5.1).
SUPPORTED_EXECUTORCH = "1.5"
try:
    from .constant_only import constant_only_nodes, is_quantize_op, runtime_placeholders
    from .partitioner import ConstantAwareQnnPartitioner, install, installed, is_installed, uninstall
except (ImportError, AttributeError, KeyError) as e:  # a module, class or method it extends
    import importlib.metadata

    raise ImportError(
        f"torch_export_names.executorch supports ExecuTorch {SUPPORTED_EXECUTORCH}.x, whose Qualcomm "
        f"partitioner API it extends; this is ExecuTorch {importlib.metadata.version('executorch')} "
        f"({type(e).__name__}: {e}). The export hook (torch_export_names.install()) works with "
        "any ExecuTorch."
    ) from e

__all__ = [
    "ConstantAwareQnnPartitioner",
    "constant_only_nodes",
    "install",
    "installed",
    "is_installed",
    "is_quantize_op",
    "runtime_placeholders",
    "uninstall",
]
