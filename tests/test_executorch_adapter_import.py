"""The HTP adapter on an ExecuTorch whose Qualcomm partitioner API it does not know."""

import importlib
import sys

import pytest

from helpers import import_or_skip

import_or_skip(
    "executorch.backends.qualcomm.partition.qnn_partitioner", "needs ExecuTorch with its Qualcomm backend"
)


def test_adapter_names_the_supported_executorch_when_the_partitioner_api_differs(monkeypatch):
    from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner

    monkeypatch.delattr(QnnPartitioner, "ops_to_not_decompose")  # as an ExecuTorch without it
    for name in [m for m in sys.modules if m.startswith("torch_export_names.executorch")]:
        monkeypatch.delitem(sys.modules, name)
    expected = r"supports ExecuTorch 1\.5\.x.*this is ExecuTorch [\d.]+ \(KeyError"
    with pytest.raises(ImportError, match=expected):
        importlib.import_module("torch_export_names.executorch")
