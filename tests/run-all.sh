#!/usr/bin/env bash
# Sets up, builds and runs slurmtune's whole test suite: `bash tests/run-all.sh`.
# BUILD_DIR (default build) and JOBS (default: number of cores) may be overridden.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup-debian.sh
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
# With the CUDA Toolkit and NCCL in /usr/local/cuda the trial API is built with NCCL;
# on machines without a GPU the tests then check that it falls back to MPI.
cuda=()
if [ -x /usr/local/cuda/bin/nvcc ] && [ -f /usr/local/cuda/include/nccl.h ]; then
  cuda=(-DSLURMTUNE_ENABLE_CUDA=ON -DCUDAToolkit_ROOT=/usr/local/cuda)
fi
# The unit tests run in the sanitizer stage below only, so this build leaves them out
# (about 370 s of CI's two cores); with SANITIZE=0 it builds and runs them.
unit_tests=OFF
if [ "${SANITIZE:-1}" = 0 ]; then unit_tests=ON; fi
# lld (setup-debian.sh installs it) links in about a third of ld.bfd's time.
linker=()
if command -v ld.lld > /dev/null; then linker=(-DSLURMTUNE_LINKER=lld); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSLURMTUNE_WARNINGS_AS_ERRORS=ON \
      -DSLURMTUNE_BUILD_TESTS=ON -DSLURMTUNE_BUILD_UNIT_TESTS="$unit_tests" \
      -DSLURMTUNE_BUILD_BENCHMARKS=ON "${cuda[@]}" "${linker[@]}"
cmake --build "$build" -j "$jobs"
# The sanitizer stage's build (below) starts now, at the lowest priority, beside the
# Release tests: those mostly wait (the Slurm chain, the end-to-end tests' trials), and
# the build takes the idle cores instead of running alone after them.
sanitize=${SANITIZE_BUILD_DIR:-build-sanitize}
build_pid=
if [ "${SANITIZE:-1}" != 0 ]; then
  # A second build with Clang, AddressSanitizer + UndefinedBehaviorSanitizer and the
  # libFuzzer targets. Line tables are all a sanitizer's report needs of the debug
  # information, and cost far less to compile and link than -g.
  CC=clang CXX=clang++ cmake -S . -B "$sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
        -DSLURMTUNE_WARNINGS_AS_ERRORS=ON -DSLURMTUNE_BUILD_TESTS=ON \
        -DSLURMTUNE_BUILD_BENCHMARKS=OFF -DSLURMTUNE_BUILD_EXAMPLES=OFF \
        -DSLURMTUNE_SANITIZE=address,undefined -DSLURMTUNE_BUILD_FUZZERS=ON \
        -DSLURMTUNE_FUZZ_SECONDS="${SLURMTUNE_FUZZ_SECONDS:-10}" "${linker[@]}"
  # Its own process group, so that a failure of the Release tests stops all of it. That
  # makes it a session of its own too, and with the kernel's autogroups (on in most
  # distributions) nice only ranks processes within a session: the session's autogroup
  # gets the nice value as well (sched(7)), or the build takes a core from the tests.
  setsid bash -c 'echo 19 > /proc/self/autogroup 2>/dev/null || true
                  exec nice -n 19 cmake --build "$0" -j "$1"' "$sanitize" "$jobs" \
      > "$sanitize/build.log" 2>&1 &
  build_pid=$!
  trap '[ -n "$build_pid" ] && kill -- "-$build_pid" 2>/dev/null; true' EXIT
fi

# With the sanitizer stage below, the local `slurmtune run` tests of the runtime (label
# `runtime`) run there, under ASan and UBSan, and not here too (the same scenarios run
# here under Slurm, `run.slurm.*`), and so do the unit tests (not built here): CI has two
# cores and 40 minutes. The cli tests run in both: here they check the binary users get.
skip_here=()
if [ "${SANITIZE:-1}" != 0 ]; then skip_here=(-LE '^(runtime|unit)$'); fi
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 "${skip_here[@]}"

# The sanitizer build: the unit and cli tests and the local `slurmtune run` tests of the
# runtime under the sanitizers, but for those labelled `decisions`, which ran above:
# their subject is the sampler's decisions, whose code the unit tests and the other cli
# tests run here (MOBSTER's option variants replayed, simulate's jobs compared: each
# 5-50 s under ASan), and for run.local.torch (about 57 s here, nearly all of it PyTorch's
# import and training in the trials, not the coordinator; run.slurm.torch runs the same
# scenario above). Then every fuzz target for SLURMTUNE_FUZZ_SECONDS (default 10 here,
# from its seed corpus). SANITIZE=0 skips it, and the stage above then runs every test.
if [ "${SANITIZE:-1}" != 0 ]; then
  if ! wait "$build_pid"; then
    build_pid=
    cat "$sanitize/build.log"
    echo "run-all: the sanitizer build failed (its log is above: $sanitize/build.log)" >&2
    exit 1
  fi
  build_pid=
  ctest --test-dir "$sanitize" --output-on-failure -j "$jobs" --timeout 900 \
        -R '^(unit|cli|fuzz|run[.]local)[.]' -LE '^decisions$' -E '^run[.]local[.]torch$'
fi
