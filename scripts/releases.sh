# The supported torch releases and how to run something on each, shared by scripts/matrix.sh
# and scripts/verify_releases.sh (sourced, not run).

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
