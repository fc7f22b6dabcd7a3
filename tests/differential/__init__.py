"""Differential test against stock torch: real models exported with and without the export hook.

    python -m tests.differential --jobs 2 --out docs/reports/differential.md   # the whole corpus
    python -m tests.differential --ci --models nn/Linear                        # a subset, on stdout

One module per job, each readable alone:

- ``corpus``: the models (``Entry``, ``Built``, ``corpus()``, ``ci_subset()``, ``entry(name)``);
- ``runner``: one model on stock torch and under the hook, compared check by check (``CHECKS``,
  ``run_entry``, ``compare``, ``run_all``);
- ``report``: the results as Markdown and JSON (``markdown``, ``EXPLANATIONS``);
- ``__main__``: the command line above.

tests/test_differential.py runs the CI subset; tests/onnx_corpus.py reuses corpus entries. Both
import this package as ``differential`` (pytest and ``python tests/onnx_corpus.py`` put tests/ on
``sys.path``), so the names they use are here.
"""

from .corpus import (
    AUTO,
    FAMILIES,
    HF_TINY,
    Built,
    Entry,
    _torchvision_shim,
    ci_subset,
    corpus,
    entry,
    missing_requirement,
)
from .report import EXPLANATIONS, environment, markdown
from .runner import (
    CHECKS,
    KWARGS_CHECKS,
    VARIANTS,
    Difference,
    EntryResult,
    Outcome,
    _dynamic_shapes,
    compare,
    run_all,
    run_entry,
)

__all__ = [
    "AUTO",
    "CHECKS",
    "EXPLANATIONS",
    "FAMILIES",
    "HF_TINY",
    "KWARGS_CHECKS",
    "VARIANTS",
    "Built",
    "Difference",
    "Entry",
    "EntryResult",
    "Outcome",
    "_dynamic_shapes",
    "_torchvision_shim",
    "ci_subset",
    "compare",
    "corpus",
    "entry",
    "environment",
    "markdown",
    "missing_requirement",
    "run_all",
    "run_entry",
]
