"""A test double for the Qualcomm QNN manager (``PyQnnManagerAdaptor.QnnManager``).

It stands in for the one object that needs the QNN SDK libraries, so that
ExecuTorch's real partitioning and preprocessing (op-support checks through the
real node visitors, ``QnnBackend.preprocess``, delegation) run without the SDK:

- ``IsNodeSupportedByBackend`` answers "supported". ExecuTorch only asks it
  about ops that have a QNN node visitor whose ``define_node`` built an op
  wrapper, so this means "supported for ops with a QNN node visitor".
- ``Compile`` returns a small blob, except that on HTP it refuses a graph in
  which no op reads a runtime input (a tensor of type APP_WRITE or
  APP_READWRITE: a user input or a mutable buffer), as HTP does: it logs the
  error and returns an empty context binary, as the SDK-backed manager does
  when graph finalization fails, so ExecuTorch's own check raises
  ``Failed to generate Qnn context binary.``

It checks nothing else: not op semantics, shapes, dtypes, quantization
encodings or HTP's per-op constraints. Install it with
``install_fake_qnn_manager(monkeypatch)``.
"""

from __future__ import annotations

import logging

from executorch.backends.qualcomm.python import PyQnnManagerAdaptor
from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchBackendType
from executorch.backends.qualcomm.serialization.qc_schema_serialize import flatbuffer_to_option
from executorch.backends.qualcomm.utils import qnn_sdk_setup

logger = logging.getLogger(__name__)

BLOB_MAGIC = b"FAKEQNN\x00"
_RUNTIME_TENSOR_TYPES = {
    PyQnnManagerAdaptor.Qnn_TensorType_t.QNN_TENSOR_TYPE_APP_WRITE,
    PyQnnManagerAdaptor.Qnn_TensorType_t.QNN_TENSOR_TYPE_APP_READWRITE,
}


class FakeQnnManager:
    """Replaces ``PyQnnManagerAdaptor.QnnManager(option)``; see the module docstring."""

    # Every manager built since install_fake_qnn_manager, for tests that look at the calls.
    instances: list[FakeQnnManager] = []

    def __init__(self, option: bytes):
        self.backend_type = flatbuffer_to_option(option).backend_options.backend_type
        self.graph_names: list[str] = []
        self.compiled: list[list[str]] = []  # graph names of each accepted Compile
        self.refused: list[str] = []  # graphs refused as HTP refuses them
        FakeQnnManager.instances.append(self)

    # life cycle (QnnManagerRegistry, QnnBackend.preprocess)
    def InitBackend(self):
        return PyQnnManagerAdaptor.Error.Ok

    def InitContext(self, graph_names):
        self.graph_names = list(graph_names)
        return PyQnnManagerAdaptor.Error.Ok

    def GetGraphNames(self) -> list[str]:
        return list(self.graph_names)

    def IsTensorDump(self) -> bool:
        return False

    def DestroyContext(self) -> None:
        self.graph_names = []

    def Destroy(self) -> None:
        pass

    # partitioning (QnnOperatorSupport.is_node_supported)
    def IsNodeSupportedByBackend(self, op_wrappers) -> bool:
        return True

    # compilation (QnnBackend.preprocess / preprocess_multimethod)
    def Compile(self, graph_names, op_wrappers_per_graph) -> bytes:
        if self.backend_type == QnnExecuTorchBackendType.kHtpBackend:
            for name, op_wrappers in zip(graph_names, op_wrappers_per_graph):
                if not any(map(_reads_runtime_input, op_wrappers)):
                    self.refused.append(name)
                    logger.error(
                        "[FakeQnnManager] Failed to finalize Qnn Graph %r: no op reads a runtime "
                        "input (every input tensor is STATIC or NATIVE); HTP refuses such a graph",
                        name,
                    )
                    return b""
        self.compiled.append(list(graph_names))
        return BLOB_MAGIC + ",".join(graph_names).encode()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(
            f"FakeQnnManager does not implement QnnManager.{name}: this path needs the QNN SDK "
            "(set QNN_SDK_ROOT) or an addition to tests/fakes/fake_qnn_manager.py"
        )


def _reads_runtime_input(op_wrapper) -> bool:
    tensors = op_wrapper.GetOpConfig()["inputTensors"]
    return any((t.v2 if int(t.version) == 2 else t.v1).type in _RUNTIME_TENSOR_TYPES for t in tensors)


def install_fake_qnn_manager(monkeypatch) -> type[FakeQnnManager]:
    """Put ``FakeQnnManager`` where ExecuTorch builds its SDK-backed manager.

    ``QnnManagerRegistry`` builds managers with ``PyQnnManagerAdaptor.QnnManager``
    after ``setup_qnn_sdk()``; the latter is marked done so that it does not
    try to download the SDK. Everything else is ExecuTorch's own code.
    """
    FakeQnnManager.instances = []
    monkeypatch.setattr(PyQnnManagerAdaptor, "QnnManager", FakeQnnManager)
    monkeypatch.setattr(qnn_sdk_setup, "_sdk_ready", True)
    return FakeQnnManager
