"""Instructions of torch.export.export on the Llama decoder, counted by callgrind only around the call.

Run: valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no python export_cost.py HELPER LAYERS REPS
Same approach as benchmarks/instructions.py of torch-export-names (client requests from a small C helper).
"""

import ctypes
import gc
import json
import logging
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.environ["SCRATCH"], "llama_shim"))  # see ../README.md
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
import torch

torch.set_num_threads(1)
from executorch.examples.models.llama.llama_transformer import construct_transformer
from executorch.examples.models.llama.model_args import ModelArgs

LLAMA_CONFIG = {
    "dim": 256,
    "n_heads": 8,
    "vocab_size": 512,
    "max_seq_len": 128,
    "max_context_len": 128,
    "max_batch_size": 1,
    "use_kv_cache": True,
    "enable_dynamic_shape": False,
}
helper, layers, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lib = ctypes.CDLL(helper)
torch.manual_seed(0)
model = construct_transformer(ModelArgs(n_layers=layers, **LLAMA_CONFIG)).eval()
inputs = (torch.tensor([[1]], dtype=torch.long), {"input_pos": torch.tensor([0], dtype=torch.long)})


def run():
    return torch.export.export(model, inputs, strict=False)


ep = run()  # warm-up, uncounted (before instrumentation)
nodes = sum(len(m.graph.nodes) for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule))
gc.collect()
gc.freeze()
lib.ten_start()
run()  # warm-up under instrumentation, uncounted
for i in range(reps):
    gc.collect()
    lib.ten_toggle()
    ep = run()
    lib.ten_toggle()
    lib.ten_dump(f"export{layers}:{i}".encode())
print(json.dumps({"layers": layers, "reps": reps, "nodes": nodes, "torch": torch.__version__}))
