"""The tooling: the ``torch-export-names`` command line (``doctor``, ``patch``, ``run``), the
reproduction cases and the torch patches' harness.

The runtime (``install``, ``repair``, the hook, the code-generator guard, the ExecuTorch adapter)
never imports this package (tests/test_structure.py checks it). Not a stable API: use the command
line.
"""
