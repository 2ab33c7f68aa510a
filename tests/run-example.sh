#!/usr/bin/env bash
# Sets up, builds and runs the example study end to end on this machine:
# `bash tests/run-example.sh`. `slurmtune run` tunes a small numpy MLP
# (share/slurmtune/examples/numpy-mlp) with ASHA using the local launcher: real trial
# processes, real reports over the control plane, one results file. Inside a Slurm
# allocation the same command would launch each trial as a job step (doc/slurm.md).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup-debian.sh example
build=${BUILD_DIR:-build}
# A new build folder gets the command alone (tests, benchmarks and the compiled examples
# need packages the example does not); one that tests/run-all.sh made is reused as it is.
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build"
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSLURMTUNE_BUILD_TESTS=OFF \
        -DSLURMTUNE_BUILD_BENCHMARKS=OFF -DSLURMTUNE_BUILD_EXAMPLES=OFF
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target slurmtune
slurmtune=$(realpath "$build/src/slurmtune")
run=$build/example
rm -rf "$run" && mkdir -p "$run"
cp share/slurmtune/examples/numpy-mlp/{study.toml,train.py} "$run/"
cd "$run"
# The example's command names Debian's interpreter, which sees python3-numpy.
"$slurmtune" run study.toml --progress-interval 5
"$slurmtune" status study.h5
echo "results file: $run/study.h5 (try: $slurmtune best $run/study.h5 --format flags)"
