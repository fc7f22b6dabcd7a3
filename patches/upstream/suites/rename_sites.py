# pytest -p rename_sites (this folder on PYTHONPATH): counts renames of fx nodes, that is a
# name assigned to a node that already has one, by the torch source line that made them (for
# Node._rename, also the line that called it). Writes $SITES_DIR/sites.<pid>.txt per process
# (pytest-xdist workers load the plugin too). Shows which rename sites a suite reaches.
import atexit
import collections
import os
import sys

import torch.fx.node as fxn

_counts = collections.Counter()
_base = os.path.dirname(os.path.dirname(fxn.__file__))
_orig = fxn.Node.__setattr__


def _where(f):
    return f"{os.path.relpath(f.f_code.co_filename, _base)}:{f.f_lineno}"


def _setattr(self, key, value):
    if key == "name" and hasattr(self, "name"):
        f = sys._getframe(1)
        site = _where(f)
        if f.f_code.co_name == "_rename":
            site += " <- " + _where(f.f_back)
        _counts[site] += 1
    _orig(self, key, value)


fxn.Node.__setattr__ = _setattr


@atexit.register
def _report():
    if _counts:
        out = os.environ.get("SITES_DIR", "/tmp")
        with open(os.path.join(out, f"sites.{os.getpid()}.txt"), "w") as fh:
            for k, v in _counts.most_common():
                fh.write(f"{v}\t{k}\n")
