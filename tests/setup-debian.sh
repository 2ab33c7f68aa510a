#!/usr/bin/env bash
# Installs the Debian packages slurmtune needs. Idempotent and non-interactive: packages
# already present are skipped, so a second run does nothing. Run as root (or with sudo).
#   setup-debian.sh            every package of the build, the tests and the examples
#   setup-debian.sh example    only what tests/run-example.sh needs: the command's build
#                              and numpy for the example's trials (README's first command)
set -euo pipefail

# `slurmtune` itself and the numpy MLP example (no tests, no MPI, no browser, no torch).
example_packages=(
  build-essential cmake pkg-config
  libboost-program-options-dev libtomlplusplus-dev libeigen3-dev libsimdjson-dev libcereal-dev
  libhdf5-dev libssl-dev libicu-dev zlib1g-dev liblz4-dev
  python3 python3-numpy
)

packages=(
  # build
  build-essential cmake pkg-config
  # the sanitizer build and the libFuzzer targets (tests/run-all.sh, tests/fuzz)
  clang libclang-rt-14-dev
  # lld: both builds of tests/run-all.sh link with it (SLURMTUNE_LINKER)
  lld
  # lint.clang_tidy (.clang-tidy's checks)
  clang-tidy
  libboost-program-options-dev libboost-test-dev libtomlplusplus-dev libeigen3-dev libbenchmark-dev
  # cereal: the decision state's snapshot (src/core/state_archive.hpp)
  libcereal-dev
  libhdf5-dev hdf5-tools
  # zlib: the CRC-32 of the results file's write-ahead log; LZ4: its records, compressed
  # (src/store/file/commit_log.hpp)
  zlib1g-dev liblz4-dev
  # libcrypto: the control plane's HMAC-SHA-256, random tokens, constant-time compares
  libssl-dev
  # ICU: Unicode normalization (NFKC) of parameter and metric names that read alike
  libicu-dev
  # simdjson: replay's event lines; RapidJSON and nlohmann/json only for the comparison in
  # tests/bench/bench_json (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement)
  libsimdjson-dev rapidjson-dev nlohmann-json3-dev
  # a throwaway Slurm cluster for the slurm-labelled tests (tests/slurm/local-cluster.sh)
  slurm-wlm slurmctld slurmd slurm-client munge libpmix2 libpmix-dev
  # MPI trials (srun --mpi=pmix across the test cluster, mpirun with the local launcher)
  openmpi-bin libopenmpi-dev
  # collective trial checkpoints (parallel HDF5 over MPI-IO; the results file stays serial)
  libhdf5-openmpi-dev
  # the mlp-digits example: the UCI digits ship with scikit-learn; zlib reads them
  python3-sklearn zlib1g-dev
  # environment modules: the install test loads the generated modulefile with the real Lmod
  lmod
  # Python: scheduler semantics against numpy and the real Optuna; the analysis module
  python3 python3-numpy python3-optuna python3-h5py python3-pandas python3-matplotlib
  # the HTML report, loaded in a real browser (tests/python/module/check_html_report.py), and
  # an independent reader of the TensorBoard export (tests/python/module/check_tensorboard_export.py)
  chromium python3-protobuf
  # slurmtune dashboard: its HTTP server and the plotting library it serves
  python3-tornado libjs-chart.js
  # distributed Python trials: PyTorch (gloo on CPU) and mpi4py
  python3-torch python3-mpi4py
)

if [ "${1:-all}" = example ]; then
  packages=("${example_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "setup-debian: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
