#!/usr/bin/env bash
# The torch version matrix: one new virtual environment per supported torch,
# the package installed with ExecuTorch, the full test suite and the patch
# harness run in it, and docs/compatibility.md written from what they report.
#
#   scripts/matrix.sh [VERSION ...]        (default: 2.13.0 2.14.1 2.15.0)
#
#   MATRIX_DIR=DIR   where the venvs, logs and results go (default: a new /tmp dir;
#                    an existing venv-VERSION there is deleted and made again)
#   MATRIX_OUT=FILE  the table to write (default: docs/compatibility.md)
#   MATRIX_REUSE=1   keep a venv-VERSION that an earlier run made in MATRIX_DIR
#                    (reinstalls this package into it) instead of making it anew
#
# Every venv is made from scratch with `python3 -m venv`; torch is pinned
# through a constraints file, never left to pip's choice (a bare `torch`
# pulls a multi-GB CUDA build). This machine's pip is capped at torch<=2.14.1
# by its global config, so 2.15.0 is installed with PIP_CONFIG_FILE=/dev/null
# (the package registry's default index). A version whose install fails is
# reported as such in the table; the script then exits non-zero.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

EXECUTORCH=1.5.1
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(2.13.0 2.14.1 2.15.0)
dir=${MATRIX_DIR:-$(mktemp -d /tmp/torch-export-names-matrix.XXXXXX)}
out=${MATRIX_OUT:-docs/compatibility.md}
mkdir -p "$dir/results"
echo "matrix: ${versions[*]} in $dir"

status=0
for v in "${versions[@]}"; do
  venv="$dir/venv-$v"
  res="$dir/results/$v"
  mkdir -p "$res"
  if [ "${MATRIX_REUSE:-0}" = 1 ] && [ -x "$venv/bin/python" ]; then
    echo "== torch $v: reusing $venv (MATRIX_REUSE=1)"
    echo "reused from an earlier run of this script" > "$res/venv.txt"
  else
    rm -rf "$venv"
    echo "== torch $v: new venv $venv"
    python3 -m venv "$venv"
    echo "made new by this run" > "$res/venv.txt"
  fi
  printf 'torch==%s\nexecutorch==%s\n' "$v" "$EXECUTORCH" > "$res/constraints.txt"
  pip_env=()
  case "$v" in
    2.15.*) pip_env=(PIP_CONFIG_FILE=/dev/null) ;;  # beyond this machine's torch<=2.14.1 cap
  esac
  start=$(date +%s)
  if ! env "${pip_env[@]}" "$venv/bin/pip" install -q -c "$res/constraints.txt" \
      "torch==$v" "$repo[executorch,test]" > "$res/install.log" 2>&1; then
    echo "install failed (see $res/install.log)"; tail -5 "$res/install.log"
    echo "install failed" > "$res/install-failed"
    status=1
    continue
  fi
  echo "   installed in $(( $(date +%s) - start )) s"
  "$venv/bin/python" - > "$res/env.json" <<'EOF'
import json, platform, importlib.metadata as md
import torch, torch_export_names
print(json.dumps({
    "torch": torch.__version__,
    "executorch": md.version("executorch"),
    "python": platform.python_version(),
    "is_affected": torch_export_names.is_affected(),
}))
EOF
  # The full suite, from the source tree, as CI runs it.
  start=$(date +%s)
  (cd "$repo" && "$venv/bin/python" -m pytest tests -q -p no:cacheprovider \
      --junitxml="$res/junit.xml") > "$res/pytest.log" 2>&1
  echo "   pytest exit $? in $(( $(date +%s) - start )) s: $(tail -1 "$res/pytest.log")"
  # The harness, from the installed package (so the patches shipped in the wheel are used).
  (cd "$dir" && "$venv/bin/python" -m torch_export_names.patches verify --json) \
      > "$res/verify.json" 2> "$res/verify.log"
  echo "   verify exit $?"
done

python3 - "$dir/results" "$out" "${versions[@]}" <<'EOF' || status=1
import json, re, sys, datetime, xml.etree.ElementTree as ET
from pathlib import Path

results, out, versions = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]

def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None

rows, details, failures, failed = [], {}, [], False
for v in versions:
    res = results / v
    if (res / "install-failed").exists():
        rows.append(f"| {v} | install failed | not run | not run |")
        failed = True
        continue
    env = load(res / "env.json") or {}
    # Counts from pytest's own summary line; failing test ids from its junit report.
    log = (res / "pytest.log").read_text() if (res / "pytest.log").exists() else ""
    summary = next((ln for ln in reversed(log.splitlines()) if re.search(r" in [\d.]+s", ln)), "")
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?)\b", summary))
    if not summary:
        tests, failed = "suite did not run", True
    else:
        bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
        tests = f"{counts.get('passed', 0)} passed, {bad} failed, {counts.get('skipped', 0)} skipped"
        failed |= bad > 0
        try:
            for case in ET.parse(res / "junit.xml").getroot().iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failures.append(f"{v}: `{case.get('classname')}::{case.get('name')}`")
        except (OSError, ET.ParseError):
            pass
    report = load(res / "verify.json")
    if report is None:
        fix = "harness did not run: " + (res / "verify.log").read_text().strip()[-200:]
        failed = True
    else:
        runs = report["runs"]
        p = runs["patched"]["checks"]
        b = runs.get("unpatched", {}).get("checks", [])
        fix = (
            ("yes" if report["ok"] else "NO")
            + f": applies; with it, no hook: {sum(c['ok'] is True for c in p)}/{len(p)} checks pass"
            + (f"; without it {sum(c['ok'] is False for c in b if c['kind'] != 'entry')}/"
               f"{sum(c['kind'] != 'entry' for c in b)} cases and tests fail" if b else "")
        )
        failed |= not report["ok"]
        for run, checks in (("patch", p), ("stock", b)):
            for c in checks:
                details.setdefault((c["kind"], c["name"]), {})[(v, run)] = c
    hook = {True: "yes", False: "no"}.get(env.get("is_affected"), "?")
    if hook == "yes" and report and report["ok"]:
        hook = "yes on stock torch; no with the patch"
    label = f"{v} (`{env.get('torch', '?')}`, ExecuTorch {env.get('executorch', '?')})"
    rows.append(f"| {label} | {tests} | {fix} | {hook} |")

mark = lambda c: "-" if c is None else {True: "pass", False: "fail", None: "skip"}[c["ok"]]
lines = [
    "# Compatibility matrix",
    "",
    "Generated by `scripts/matrix.sh` on "
    f"{datetime.date.today().isoformat()} (do not edit by hand): one new virtual environment per",
    "torch, `pip install -c <torch==V, executorch==1.5.1> \".[executorch,test]\"`, then the full",
    "suite (`python -m pytest tests`) and the patch harness",
    "(`python -m torch_export_names.patches verify`). Virtual environments: "
    + "; ".join(f"{v} {(results / v / 'venv.txt').read_text().strip()}" for v in versions
                if (results / v / "venv.txt").exists()) + ".",
    "",
    "| torch | tests | patch applies and fixes | hook needed |",
    "| --- | --- | --- | --- |",
    *rows,
    "",
    *(["Failing tests: " + "; ".join(failures) + ".", ""] if failures else []),
    "\"hook needed\": `torch_export_names.is_affected()` on the stock torch (it exports a",
    "two-node model and looks for unrecorded names). \"patch applies and fixes\": the harness",
    "applied `patches/torch-<version>.patch` to a throw-away overlay of the installed torch",
    "(after checking every file's sha256 against the release) and ran, with the hook not",
    "installed, the reproduction cases, the entry-point checks and the tests the patch carries;",
    "\"without it\" is the same run against the stock torch, where every case and test must fail.",
    "",
    "## Every check, with the patch and on stock torch",
    "",
    "| check | " + " | ".join(f"{v} patch | {v} stock" for v in versions) + " |",
    "| --- |" + " --- |" * (2 * len(versions)),
]
for (kind, name), by in details.items():
    cells = " | ".join(f"{mark(by.get((v, 'patch')))} | {mark(by.get((v, 'stock')))}" for v in versions)
    lines.append(f"| {kind} `{name}` | {cells} |")
lines.append("")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text("\n".join(lines))
print(f"wrote {out}")
sys.exit(1 if failed else 0)
EOF
exit $status
