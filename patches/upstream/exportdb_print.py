"""print(ep) of every ExportDB example (torch._export.db.examples) and of the package harness models; for stock vs commit 1."""

import logging
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
import torch
from torch._export.db.examples import all_examples

out = []
for name, case in sorted(all_examples().items()):
    try:
        ep = torch.export.export(
            case.model,
            case.example_args,
            case.example_kwargs,
            dynamic_shapes=case.dynamic_shapes,
            strict=True,
        )
        text = str(ep)
        try:
            text += "\n--- run_decompositions\n" + str(ep.run_decompositions())
        except Exception as e:
            text += f"\n--- run_decompositions failed: {type(e).__name__}"
    except Exception as e:
        text = f"export failed: {type(e).__name__}"
    out.append(f"===== {name}\n{text}")
sys.stdout.write("\n".join(out) + "\n")
print(f"# {len(out)} examples", file=sys.stderr)
