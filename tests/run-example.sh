#!/usr/bin/env bash
# Sets up, builds and runs the example study end to end on this machine:
# `bash tests/run-example.sh`. For now the study runs in virtual time (`slurmtune
# simulate`) against the built-in synthetic objective.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup-debian.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target slurmtune
study=share/slurmtune/examples/mlp-digits.toml
"$build/src/slurmtune" validate --quiet "$study"
"$build/src/slurmtune" simulate "$study" --workers 8
