#!/usr/bin/env bash
# `torch-export-names patch verify` on every supported torch release, without the test suite:
# the shorter half of scripts/matrix.sh, for when only the release patches changed. Per release
# a new virtual environment with that torch, this package beside it, the ExecuTorch release
# that pins it where one installs (the Qualcomm cases need it), then the harness. Writes
# docs/reports/patch-verify.md.
#
#   scripts/verify_releases.sh [VERSION ...]   (default: all twelve, scripts/releases.sh)
#
#   VERIFY_DIR=DIR   where the venvs and results go (default: a new /tmp dir)
#   VERIFY_JOBS=N    releases at the same time (default 2)
#   VERIFY_OUT=FILE  the table to write (default: docs/reports/patch-verify.md)
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# shellcheck source=scripts/releases.sh
. scripts/releases.sh  # the releases, their ExecuTorch pairs and their install, as the matrix has them

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${VERSIONS[@]}")
dir=${VERIFY_DIR:-$(mktemp -d /tmp/torch-export-names-verify.XXXXXX)}
out=${VERIFY_OUT:-docs/reports/patch-verify.md}
jobs=${VERIFY_JOBS:-2}
mkdir -p "$dir/results"
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo "?")
echo "verify: ${versions[*]} in $dir ($jobs at a time) at $commit"
started=$(date +%s)

row() {
  local v=$1 venv="$dir/venv-$1" res="$dir/results/$1"
  rm -rf "$venv" "$res"; mkdir -p "$res"
  echo "$commit" > "$res/commit"
  install_release "$v" "$venv" "$res" "$repo" || return
  "$venv/bin/python" -c "import json, torch; print(json.dumps({'torch': torch.__version__}))" > "$res/env.json"
  (cd "$dir" && "$venv/bin/python" -m torch_export_names patch verify --json) > "$res/verify.json" 2> "$res/verify.log"
  rm -rf "$venv"
  echo "== torch $v: $(python3 -c "import json,sys; print('PASS' if json.load(open(sys.argv[1]))['ok'] else 'FAIL')" "$res/verify.json" 2>/dev/null || echo 'no report')"
}

for_each_release "$jobs" row "${versions[@]}"
minutes=$(( ($(date +%s) - started + 59) / 60 ))
python3 scripts/verify_report.py "$dir/results" "$out" "$minutes" "${versions[@]}"
