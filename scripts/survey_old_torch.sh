#!/usr/bin/env bash
# Survey one older torch release (issue 13): a new venv with that torch, the
# package installed beside it without letting pip touch torch, the test suite,
# `doctor`, and whether patches/make_patches.py's edit recipe applies to that
# release's sources. Results go to $SURVEY_DIR/results/VERSION/; the venv is
# deleted at the end (SURVEY_KEEP=1 keeps it). failures.txt groups the
# failing tests by root cause (scripts/survey_failures.py); docs/matrix-survey.md
# is the write-up of one run over 2.4 .. 2.12.
#
#   scripts/survey_old_torch.sh VERSION [VERSION ...]
#
#   SURVEY_DIR=DIR   venvs and results (default: a new /tmp dir)
#
# Not part of CI: each release is a multi-GB download (a CUDA build from PyPI;
# it runs on the CPU). Generated patches are removed again: only the recipe's
# verdict is kept (make-patches.log).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
dir=${SURVEY_DIR:-$(mktemp -d /tmp/torch-export-names-survey.XXXXXX)}
mkdir -p "$dir/results"

for v in "$@"; do
  venv="$dir/venv-$v"
  res="$dir/results/$v"
  mkdir -p "$res"
  rm -rf "$venv"
  echo "== torch $v ($venv)"
  python3 -m venv "$venv"
  start=$(date +%s)
  if ! "$venv/bin/pip" install -q "torch==$v" pytest expecttest hypothesis numpy \
      > "$res/install.log" 2>&1; then
    echo "   install failed (see $res/install.log)"
    rm -rf "$venv"
    continue
  fi
  echo "install_seconds=$(( $(date +%s) - start ))" | tee "$res/install-time.txt"
  du -sh "$venv" | tee -a "$res/install-time.txt"
  "$venv/bin/pip" install -q --no-deps "$repo" > "$res/install-pkg.log" 2>&1
  rm -rf "$repo/build" "$repo"/*.egg-info
  "$venv/bin/python" -c 'import torch, sys; print(torch.__version__, sys.version.split()[0])' \
      | tee "$res/versions.txt"

  start=$(date +%s)
  (cd "$repo" && timeout 1800 "$venv/bin/python" -m pytest tests -q -p no:cacheprovider -ra \
      --deselect tests/test_editable_install.py --continue-on-collection-errors --junitxml="$res/junit.xml") \
      > "$res/pytest.log" 2>&1
  echo "   pytest exit $? in $(( $(date +%s) - start )) s: $(tail -1 "$res/pytest.log")"

  (cd "$dir" && timeout 600 "$venv/bin/python" -m torch_export_names doctor) \
      > "$res/doctor.log" 2>&1
  echo "   doctor exit $?"

  (cd "$dir" && timeout 600 "$venv/bin/python" -W ignore "$repo/scripts/survey_probe.py") \
      > "$res/probe.log" 2>&1
  echo "   probe exit $?"
  python3 "$repo/scripts/survey_failures.py" "$res/junit.xml" --probe "$res/probe.log" \
      > "$res/failures.txt" 2>&1

  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$venv/bin/python" "$repo/scripts/survey_recipe.py" "$site" > "$res/recipe.log" 2>&1
  echo "   recipe: $(tail -1 "$res/recipe.log")"
  (cd "$repo" && "$venv/bin/python" patches/make_patches.py "$v=$site") \
      > "$res/make-patches.log" 2>&1
  echo "   make_patches exit $?: $(tail -1 "$res/make-patches.log")"
  # Keep the recipe's verdict only, never a generated patch.
  for f in "patches/torch-$v.patch" "patches/torch-$v.sha256"; do
    if git -C "$repo" ls-files --error-unmatch "$f" > /dev/null 2>&1; then
      git -C "$repo" checkout -- "$f"
    else
      rm -f "$repo/$f"
    fi
  done
  # The release's sources the recipe edits, for reading afterwards (small).
  mkdir -p "$res/src"
  for f in torch/fx/graph.py torch/fx/node.py torch/_export/utils.py torch/export/_trace.py \
      torch/export/_unlift.py torch/export/exported_program.py \
      torch/export/experimental/__init__.py torch/_export/serde/serialize.py; do
    [ -f "$site/$f" ] && mkdir -p "$res/src/$(dirname "$f")" && cp "$site/$f" "$res/src/$f"
  done

  if [ "${SURVEY_KEEP:-0}" != 1 ]; then
    rm -rf "$venv"
  fi
done
