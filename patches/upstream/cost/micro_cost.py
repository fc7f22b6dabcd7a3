"""Per-call instructions of the added operations, counted by callgrind around loops of N calls.

valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no python micro_cost.py HELPER N
Needs the stack applied (Node._assign_name, _record_name, _shadows_generated_code).
"""

import ctypes
import gc
import sys

import torch

helper, n = sys.argv[1], int(sys.argv[2])
lib = ctypes.CDLL(helper)
g = torch.fx.Graph()
x = g.placeholder("x")
nodes = [g.call_function(torch.relu, (x,)) for _ in range(n)]
names = [nd.name for nd in nodes]
ns = g._graph_namespace
from torch.fx.graph import _shadows_generated_code


def plain():
    for nd, name in zip(nodes, names):
        nd.name = name


def helper_call():
    for nd, name in zip(nodes, names):
        nd._assign_name(name)


def setattr_record():  # what recording in Node.__setattr__ would add: the same set + record
    for nd, name in zip(nodes, names):
        nd.name = name
        ns._record_name(nd, name)


def record_only():  # the re-sync walk: record every node's current name
    for nd in nodes:
        ns._record_name(nd, nd.name)


def legality():
    for name in names:
        _shadows_generated_code(name)


def loop_only():
    for nd, name in zip(nodes, names):
        pass


for label, fn in [
    ("loop", loop_only),
    ("plain", plain),
    ("helper", helper_call),
    ("setattr_record", setattr_record),
    ("record_only", record_only),
    ("legality", legality),
]:
    fn()
    fn()
    gc.collect()
    gc.disable()
    if label == "loop":
        lib.ten_start()
    lib.ten_toggle()
    fn()
    lib.ten_toggle()
    gc.enable()
    lib.ten_dump(label.encode())
print("done", n)
