# The supported torch releases, how to install one, and how to run something on each, shared by
# scripts/matrix.sh and scripts/verify_releases.sh (sourced, not run).

VERSIONS=(2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.1 2.13.0 2.14.1 2.15.0)
# The ExecuTorch release that pins each torch (from each wheel's
# metadata). 0.3.0, 0.4.0 and 0.6.0 pin torch 2.4.0, 2.5.0 and 2.7.0 exactly, so none
# installs beside 2.4.1, 2.5.1 or 2.7.1: those rows run without ExecuTorch.
declare -A EXECUTORCH=(
  [2.6.0]=0.5.0 [2.8.0]=0.7.0 [2.9.1]=1.0.1 [2.10.0]=1.1.0 [2.11.0]=1.2.0 [2.12.1]=1.3.1
  [2.13.0]=1.5.1 [2.14.1]=1.5.1 [2.15.0]=1.5.1
)
declare -A NO_EXECUTORCH=(
  [2.4.1]="ExecuTorch 0.3.0 pins torch==2.4.0"
  [2.5.1]="ExecuTorch 0.4.0 pins torch==2.5.0"
  [2.7.1]="ExecuTorch 0.6.0 pins torch==2.7.0"
)

# for_each_release JOBS FUNCTION VERSION...: FUNCTION VERSION for each, JOBS at a time.
for_each_release() {
  local jobs=$1 fn=$2 v
  shift 2
  for v in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    echo "== torch $v: started $(date +%H:%M:%S)"
    "$fn" "$v" &
  done
  wait
}

# install_release VERSION VENV RES REPO: a new virtual environment VENV with torch==VERSION, then
# the package at REPO beside it as a user installs it (with the test extra: the carried tests
# import torch's testing helpers), then the ExecuTorch release that pins that torch where one
# installs. Writes to RES: install.log; install-failed (why; returns 1 if torch itself does not
# install, and VENV is gone); executorch (its version), or executorch-failed (why not) and
# executorch.log.
install_release() {
  local v=$1 venv=$2 res=$3 repo=$4 et
  case "$v" in 2.15.*) export PIP_CONFIG_FILE=/dev/null ;; esac  # above a pip configuration that caps torch
  python3 -m venv "$venv"
  if ! "$venv/bin/pip" install -q "torch==$v" > "$res/install.log" 2>&1; then
    echo "torch $v does not install" > "$res/install-failed"; rm -rf "$venv"; return 1
  fi
  "$venv/bin/pip" install -q "$repo[test]" >> "$res/install.log" 2>&1 \
    || echo "pip install .[test] failed" > "$res/install-failed"
  et=${EXECUTORCH[$v]:-}
  if [ -n "$et" ]; then
    printf 'torch==%s\n' "$v" > "$res/constraints.txt"
    # py-cpuinfo: older ExecuTorch's Qualcomm backend imports it without declaring it (1.5 declares it).
    if "$venv/bin/pip" install -q -c "$res/constraints.txt" "executorch==$et" py-cpuinfo \
        >> "$res/executorch.log" 2>&1; then
      echo "$et" > "$res/executorch"
    else
      echo "ExecuTorch $et does not install beside torch $v: $(grep -m1 -iE 'error|conflict' "$res/executorch.log")" \
        > "$res/executorch-failed"
    fi
  else
    echo "${NO_EXECUTORCH[$v]:-no ExecuTorch release pins torch $v}" > "$res/executorch-failed"
  fi
}
