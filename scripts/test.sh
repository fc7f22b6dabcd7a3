#!/usr/bin/env bash
# The test suite as CI runs it on the pinned torch (README "Quick start"; .ci/run calls this same
# line in a fresh virtual environment). It installs what the tests need into the Python
# environment it runs in (use a virtual environment), then runs the tests, the slow ones
# included, in two worker processes. Extra arguments go to pytest (`bash scripts/test.sh -x`,
# `bash scripts/test.sh tests/test_hook.py`).
#
# Three test dependencies cannot come in through an extra, because their metadata asks for
# releases this environment must not get, so they go in with --no-deps:
# - tosa-tools (the Arm TOSA consumer tests): its metadata pins numpy<2.2 and an older
#   flatbuffers, which torch and ExecuTorch do not need downgraded.
# - torchvision (the differential corpus): the index's 0.28.0, the release for torch 2.13.0, is a
#   CUDA build whose metadata pins torch==2.13.0; with its dependencies, installed before torch,
#   it would pull the multi-GB CUDA torch. Its compiled ops cannot load beside the CPU torch;
#   tests/_torchvision_shim.py declares the two operator schemas its import needs. Its only other
#   dependencies, numpy and pillow, come in explicitly below.
# - timm (the differential corpus) requires torchvision, so it goes in without deps too (its
#   huggingface_hub and safetensors imports are optional; pyyaml comes with ExecuTorch).
# transformers is an ordinary dependency (the Hugging Face architectures of the differential
# corpus and of benchmarks/hf.py's smoke test, built from their configurations with random
# weights: nothing is downloaded). onnx, onnxscript and onnxruntime are ordinary dependencies too
# (tests/test_onnx.py: the ONNX exporter, torch.onnx.export(dynamo=True), as a client of the
# hook). Versions are pinned in constraints.txt.
#
# Without these, the tests that need them skip, naming what is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

pip install -q --no-deps tosa-tools==2026.5.0 || exit 1
pip install -q --no-deps -c constraints.txt torchvision timm || exit 1
pip install -q -c constraints.txt ".[executorch,test]" numpy pillow transformers \
  onnx onnxscript onnxruntime || exit 1

# The two instruction-count tests under valgrind's callgrind (marker callgrind: minutes of CPU for
# the benchmark harness, not the package) are left out; docs/development.md has their command.
python -m pytest tests --slow --network -m "not callgrind" -n 2 --dist loadfile "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing the run" >&2
  exit 1
fi
exit "$rc"
