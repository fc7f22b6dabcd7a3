#!/usr/bin/env python
"""ExecuTorch's own pass tests, without and with the hook: the results must be identical.

Runs the tests ExecuTorch ships in its wheel (executorch/backends/transforms/test/,
no SDK needed) twice in this Python: plainly, and through the zero-code-change
path `python -m torch_export_names run -m pytest ...`. Compares every test's
outcome, prints both pytest summary lines, exits 1 on any difference.

    python scripts/executorch_peer_suite.py [--out FILE.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path


def _outcomes(junit: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(junit).iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        out[f"{case.get('classname')}::{case.get('name')}"] = kind
    return out


def _run(label: str, prefix: list[str], tests: Path, work: Path) -> tuple[str, dict[str, str]]:
    junit = work / f"{label}.xml"
    env = {k: v for k, v in os.environ.items() if k != "TORCH_EXPORT_NAMES"}
    cmd = [
        sys.executable,
        *prefix,
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        str(tests),
    ]
    print(f"[{label}] {' '.join(cmd)}", file=sys.stderr, flush=True)
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    summary = next(
        (line for line in reversed(r.stdout.splitlines()) if " in " in line and "=" in line),
        r.stdout.splitlines()[-1] if r.stdout else f"exit {r.returncode}",
    )
    return summary.strip("= "), _outcomes(junit)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="also write the result as Markdown here")
    args = p.parse_args()
    spec = importlib.util.find_spec("executorch")
    if spec is None:
        print("executorch is not installed", file=sys.stderr)
        return 2
    tests = Path(spec.submodule_search_locations[0]) / "backends" / "transforms" / "test"
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain, plain_out = _run("without hook", ["-m"], tests, work)
        hooked, hooked_out = _run("with hook", ["-m", "torch_export_names", "run", "-m"], tests, work)
    differ = sorted(k for k in plain_out.keys() | hooked_out.keys() if plain_out.get(k) != hooked_out.get(k))
    import executorch.version as etv  # noqa: F401  (present in the 1.5 wheel)

    lines = [
        f"ExecuTorch pass tests (`executorch/backends/transforms/test/`), torch {torch.__version__}, "
        f"executorch {getattr(etv, '__version__', '?')}:",
        "",
        f"- without the hook: `{plain}`",
        f"- with the hook (`python -m torch_export_names run -m pytest ...`): `{hooked}`",
        f"- per-test outcomes identical: {'yes' if not differ else 'NO'} ({len(plain_out)} tests)",
    ]
    lines += [f"  - {k}: {plain_out.get(k)} -> {hooked_out.get(k)}" for k in differ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
