#!/usr/bin/env bash
# The torch version matrix: for every supported torch (2.4 - 2.15, the newest patch
# release of each minor), a new virtual environment with that torch, this package
# installed beside it the way a user would (`pip install ".[test]"`, which must keep
# their torch), the ExecuTorch release that pairs with it where one installs, the full
# test suite and the patch harness. Writes docs/reports/compatibility.md.
#
#   scripts/matrix.sh [VERSION ...]        (default: all twelve, see VERSIONS below)
#
#   MATRIX_DIR=DIR   where the venvs, logs and results go (default: a new /tmp dir)
#   MATRIX_JOBS=N    releases run at the same time (default 1; 2 overlaps one release's
#                    download with another's tests)
#   MATRIX_KEEP=1    keep each venv (default: deleted after its row; a CUDA build of an
#                    older torch is about 5 GB)
#   MATRIX_OUT=FILE  the table to write (default: docs/reports/compatibility.md)
#
# torch is always pinned (a bare `torch` pulls the newest multi-GB CUDA build). A global
# pip configuration may cap torch below the newest release; 2.15 is installed with
# PIP_CONFIG_FILE=/dev/null (the registry's default index).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

# shellcheck source=scripts/releases.sh
. scripts/releases.sh  # VERSIONS, EXECUTORCH, NO_EXECUTORCH, install_release, for_each_release

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${VERSIONS[@]}")
dir=${MATRIX_DIR:-$(mktemp -d /tmp/torch-export-names-matrix.XXXXXX)}
out=${MATRIX_OUT:-docs/reports/compatibility.md}
jobs=${MATRIX_JOBS:-1}
mkdir -p "$dir/results"
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
echo "matrix: ${versions[*]} in $dir ($jobs at a time)"
started=$(date +%s)

row() {  # one release, start to end; everything it learns goes to $dir/results/$v
  local v=$1 venv="$dir/venv-$1" res="$dir/results/$1" t0
  rm -rf "$venv" "$res"; mkdir -p "$res"
  git -C "$repo" describe --always --dirty > "$res/commit" 2>/dev/null || echo "?" > "$res/commit"
  t0=$(date +%s)
  # 1. the user's pinned torch; 2. this package beside it, as a user installs it; 3. ExecuTorch.
  install_release "$v" "$venv" "$res" "$repo" || return
  echo $(( $(date +%s) - t0 )) > "$res/install-seconds"
  "$venv/bin/python" - > "$res/env.json" 2> "$res/env.log" <<'EOF'
import json, platform, importlib.metadata as md
import torch, torch_export_names
def version(d):
    try:
        return md.version(d)
    except md.PackageNotFoundError:
        return None
try:
    affected = torch_export_names.is_affected()
except Exception as e:  # noqa: BLE001 - reported in the table
    affected = f"{type(e).__name__}: {e}"
print(json.dumps({"torch": torch.__version__, "executorch": version("executorch"),
                  "python": platform.python_version(), "is_affected": affected}))
EOF
  # 4. the full suite, from the source tree, as CI runs it; 5. the patch harness.
  t0=$(date +%s)
  # (test_editable_install makes its own venv with torch 2.13.0: it tests nothing of this row's torch)
  (cd "$repo" && "$venv/bin/python" -m pytest tests --slow --network -q -p no:cacheprovider -rs \
      --deselect tests/test_editable_install.py --junitxml="$res/junit.xml") > "$res/pytest.log" 2>&1
  echo $(( $(date +%s) - t0 )) > "$res/test-seconds"
  (cd "$dir" && "$venv/bin/python" -m torch_export_names patch verify --json) \
      > "$res/verify.json" 2> "$res/verify.log"
  (cd "$dir" && "$venv/bin/python" -m torch_export_names doctor) > "$res/doctor.txt" 2>&1
  [ "${MATRIX_KEEP:-0}" = 1 ] || rm -rf "$venv"
  echo "== torch $v: $(tail -1 "$res/pytest.log")"
}

for_each_release "$jobs" row "${versions[@]}"

minutes=$(( ($(date +%s) - started + 59) / 60 ))
python3 scripts/matrix_report.py "$dir/results" "$out" "$minutes" "${versions[@]}"
