"""Benchmarks: what recording node names costs, on Llama graphs and on synthetic graphs.

Run ``python -m benchmarks`` (default sweep, a few minutes) or ``python -m benchmarks --full``
from the repository root; results go to ``benchmarks/results/``. See ``README.md`` and ``lowering.py``.
"""
