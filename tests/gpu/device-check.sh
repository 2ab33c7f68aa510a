#!/usr/bin/env bash
# The GPU path in one call (doc/development.md#gpu-device-check): on a machine with NVIDIA
# GPUs, builds slurmtune with CUDA and NCCL (only what the checks need), then checks
#   - the machine: nvidia-smi, the driver's, CUDA's and NCCL's versions;
#   - GPU packing: studies of one-rank GPU trials with --trials-per-gpu 1, 2 and 4 on one
#     GPU: each trial sees only the device it was given, computes on it exactly, and the
#     time per trial against one alone;
#   - the trial API's NCCL communicator (gpu_trial): one rank on one GPU, and two ranks
#     on two GPUs where there are two;
#   - PyTorch trials on the GPU through the Python client (where python3's torch has CUDA);
#   - all-reduce bandwidth inside a trial against outside slurmtune (2 GPUs or more).
# Without a GPU it says so, runs the packing logic with a fake device list and gpu_trial's
# MPI fallback, and exits 0 when they pass (CI runs it so: ctest -L gpu).
#
#   tests/gpu/device-check.sh OUTDIR [--build DIR]
#
# OUTDIR gets table.md (the table for doc/performance.md) and the raw logs. --build uses
# an existing build tree instead of building one in OUTDIR/build. Exits 1 when a check
# that ran failed.
set -uo pipefail

usage() { echo "usage: $0 OUTDIR [--build DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
out=$(mkdir -p "$1" && cd "$1" && pwd) || usage
shift
build=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$(cd "$2" && pwd) || usage; shift 2 ;;
    *) usage ;;
  esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
started=$(date +%s)
table=$out/table.md
: > "$out/machine.log"
# Open MPI refuses root unless told; the lent GPU machines run commands as root.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# ---- the machine ---------------------------------------------------------------------
gpus=0
bus_ids=""
# Every probe of the driver is bounded: a wedged GPU must not hang the check.
smi() { timeout 60 nvidia-smi "$@"; }
if command -v nvidia-smi > /dev/null && smi > "$out/nvidia-smi.log" 2>&1; then
  gpus=$(smi -L 2>/dev/null | grep -c '^GPU ')
  driver=$(smi --query-gpu=driver_version --format=csv,noheader | head -1)
  names=$(smi --query-gpu=name,memory.total --format=csv,noheader | sort | uniq -c |
          sed 's/^ *\([0-9]*\) /\1 x /' | paste -sd ';' -)
  bus_ids=$(smi --query-gpu=index,pci.bus --format=csv,noheader | tr -d ' ' |
            sed 's/,/:/' | paste -sd ',' -)
else
  driver="none"
  names="no NVIDIA GPU (nvidia-smi absent or failed)"
fi
echo "gpus: $gpus ($names), driver $driver" | tee -a "$out/machine.log"

# ---- the build ---------------------------------------------------------------------
cuda=OFF
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && [ -f "${CUDA_HOME:-/usr/local/cuda}/include/nccl.h" ]; then
  cuda=ON
fi
if [ -z "$build" ]; then
  build=$out/build
  {
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSLURMTUNE_BUILD_TESTS=ON \
          -DSLURMTUNE_BUILD_BENCHMARKS=OFF -DSLURMTUNE_BUILD_EXAMPLES=OFF \
          -DSLURMTUNE_ENABLE_CUDA=$cuda -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" &&
    targets=(slurmtune gpu_pack_trial) &&
    { [ $cuda = OFF ] || targets+=(gpu_probe gpu_trial); } &&
    cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
  } > "$out/build.log" 2>&1 || { echo "build failed: $out/build.log" >&2; tail -30 "$out/build.log" >&2; exit 1; }
fi
built() { find "$build" -name "$1" -type f -perm -u+x -print -quit; }
slurmtune=$build/src/slurmtune
pack_trial=$(built gpu_pack_trial)
gpu_trial=$(built gpu_trial)
gpu_probe=$(built gpu_probe)
[ -x "$slurmtune" ] && [ -n "$pack_trial" ] || { echo "no slurmtune or gpu_pack_trial in $build" >&2; exit 1; }
with_cuda=$(grep -q 'SLURMTUNE_HAVE_CUDA:INTERNAL=ON\|^SLURMTUNE_ENABLE_CUDA:BOOL=ON' "$build/CMakeCache.txt" && echo ON || echo OFF)

versions="CUDA and NCCL: not in this build"
if [ -n "$gpu_probe" ]; then
  timeout 60 "$gpu_probe" > "$out/gpu-probe.log" 2>&1
  versions=$(grep -E '^(cuda_driver_api|cuda_runtime|nccl):' "$out/gpu-probe.log" | paste -sd ';' - |
             sed 's/cuda_driver_api:/CUDA driver API/; s/;cuda_runtime:/, runtime/; s/;nccl:/, NCCL/')
  cat "$out/gpu-probe.log" >> "$out/machine.log"
fi

# ---- the checks ---------------------------------------------------------------------
# A python3 whose torch sees the GPUs (none of Debian's does): one GPU for the PyTorch
# trials, two for the all-reduce bench.
torch_python=""
allreduce_python=""
for python in python3 /usr/bin/python3; do
  gpus_seen=$(timeout 120 "$python" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null) ||
    continue
  [ "${gpus_seen:-0}" -ge 1 ] && [ -z "$torch_python" ] && torch_python=$(command -v "$python")
  [ "${gpus_seen:-0}" -ge 2 ] && [ -z "$allreduce_python" ] && allreduce_python=$(command -v "$python")
done
python=$(command -v python3 || echo /usr/bin/python3)
"$python" "$src/tests/gpu/device_check.py" "$out" --slurmtune "$slurmtune" --pack-trial "$pack_trial" \
    --gpus "$gpus" --bus-ids "$bus_ids" --gpu-trial "$gpu_trial" \
    --mpirun "$(command -v mpirun || echo mpirun)" --allreduce-python "$allreduce_python" --torch-python "$torch_python" \
    2>&1 | tee "$out/checks.log"
status=${PIPESTATUS[0]}

{
  echo "GPU device check, $(date -u +%Y-%m-%d), $(cd "$src" && git rev-parse --short HEAD 2>/dev/null || echo 'no git')"
  echo
  echo "| check | result | details |"
  echo "|---|---|---|"
  echo "| machine | $([ "$gpus" -gt 0 ] && echo "$gpus GPU(s)" || echo "no GPU") | $names; driver $driver |"
  echo "| build | CUDA $with_cuda | $versions |"
  tail -n +3 "$out/checks.md" 2>/dev/null || echo "| checks | FAIL | device_check.py wrote no table: see checks.log |"
  echo
  echo "Took $(( $(date +%s) - started )) s. Logs: $(cd "$out" && ls *.log | paste -sd ' ' -)."
} > "$table"
cat "$table"
[ -f "$out/checks.md" ] || status=1
exit "$status"
