"""Import torchvision (and so timm) beside the CPU torch, without torchvision's compiled ops.

Why this exists: the package index's torchvision 0.28.0 (the release for torch 2.13.0) is a CUDA
build. Installed with ``--no-deps`` beside the CPU torch 2.13.0, its ``_C`` extension cannot load
(it links the CUDA torch's libraries), so none of its operators (``torchvision::nms``, ...) are
defined; ``torchvision/_meta_registrations.py`` nevertheless registers fake kernels for
``torchvision::nms`` and ``torchvision::qnms`` unconditionally, and that raises
``RuntimeError: operator torchvision::nms does not exist``: ``import torchvision`` fails, and
so does ``import timm``, which imports it. Every other registration there and in
``_autograd_registrations.py`` is guarded by ``torchvision.extension._has_ops()``.

``import_torchvision()`` tries the plain import first (a torchvision whose ``_C`` loads needs
nothing); only when it fails with that error does it declare the schemas of those two operators
(no kernel: calling them raises, as calling any torchvision op does without ``_C``) and import
again. The classification, segmentation and video models of the differential corpus call no
torchvision operator (detection models would: nms, roi_align), which tests/differential.py
checks by exporting them: a call to an undeclared op would fail the export on both sides.
"""

from __future__ import annotations

import sys

# torchvision/csrc/ops/nms.cpp and quantized/cpu/qnms_kernel.cpp (same schema).
SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)

_lib = None  # the torch.library fragment holding the declarations (kept alive)
shimmed = False  # whether the schemas had to be declared in this process


def _forget_torchvision() -> None:
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]


def import_torchvision():
    """``torchvision``, imported; declares the missing operator schemas first if it must."""
    global _lib, shimmed
    try:
        import torchvision

        return torchvision
    except RuntimeError as e:
        if "torchvision::" not in str(e) or "does not exist" not in str(e):
            raise
    import torch

    _forget_torchvision()
    if _lib is None:
        _lib = torch.library.Library("torchvision", "FRAGMENT")
        for schema in SCHEMAS:
            if not hasattr(torch.ops.torchvision, schema.split("(", 1)[0]):
                _lib.define(schema)
        shimmed = True
    import torchvision

    return torchvision


def import_timm():
    """``timm`` (which imports torchvision), through ``import_torchvision``."""
    import_torchvision()
    import timm

    return timm


def import_torchvision_if_installed() -> None:
    """Make an installed torchvision importable (transformers imports it whenever it is installed:
    ``transformers.modeling_utils`` -> ``image_utils``); nothing if it is not installed."""
    import importlib.util

    if importlib.util.find_spec("torchvision") is not None:
        import_torchvision()


def shim_python_subprocesses(directory, monkeypatch) -> None:
    """Make an installed torchvision importable in the Python subprocesses a test starts too
    (benchmarks.instructions runs its models in a child under callgrind): a ``sitecustomize``
    in ``directory``, put first on ``PYTHONPATH`` with tests/, runs
    ``import_torchvision_if_installed`` at the child's start-up."""
    import os
    from pathlib import Path

    (Path(directory) / "sitecustomize.py").write_text(
        "import _torchvision_shim\n_torchvision_shim.import_torchvision_if_installed()\n"
    )
    here = str(Path(__file__).resolve().parent)
    rest = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(directory), here, rest) if p))
