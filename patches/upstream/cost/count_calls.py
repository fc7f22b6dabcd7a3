"""How many times export of the Llama decoder calls each added operation (no valgrind)."""

import collections
import logging
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.environ["SCRATCH"], "llama_shim"))  # see ../README.md
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
import torch
import torch.fx.graph as G
import torch.fx.node as N
from executorch.examples.models.llama.llama_transformer import construct_transformer
from executorch.examples.models.llama.model_args import ModelArgs

cfg = {
    "dim": 256,
    "n_heads": 8,
    "vocab_size": 512,
    "max_seq_len": 128,
    "max_context_len": 128,
    "max_batch_size": 1,
    "use_kv_cache": True,
    "enable_dynamic_shape": False,
}
layers = int(sys.argv[1])
torch.manual_seed(0)
model = construct_transformer(ModelArgs(n_layers=layers, **cfg)).eval()
inputs = (torch.tensor([[1]], dtype=torch.long), {"input_pos": torch.tensor([0], dtype=torch.long)})
torch.export.export(model, inputs, strict=False)
c = collections.Counter()
orig_assign = getattr(N.Node, "_assign_name", None)
orig_shadow = getattr(G, "_shadows_generated_code", None)
if orig_assign:

    def assign(self, name):
        c["_assign_name"] += 1
        return orig_assign(self, name)

    N.Node._assign_name = assign
if orig_shadow:

    def shadow(name):
        c["_shadows_generated_code"] += 1
        return orig_shadow(name)

    G._shadows_generated_code = shadow
orig_setattr = N.Node.__setattr__


def sa(self, name, value):
    if name == "name":
        c["Node.name set"] += 1
    return orig_setattr(self, name, value)


N.Node.__setattr__ = sa
ep = torch.export.export(model, inputs, strict=False)
nodes = sum(len(m.graph.nodes) for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule))
print(dict(c), "nodes in the exported program:", nodes)
