#!/usr/bin/env bash
# The install tree, as an admin and a user meet it:
#   check_install.sh SOURCE_DIR BUILD_DIR
# installs into a temporary prefix, moves it (relocatable?), checks that no installed
# file names the build machine's source or build tree, loads the Lmod module with the
# real Lmod, runs slurmtune and an example study from the install, builds trial programs
# outside the tree with find_package(slurmtune) and with pkg-config and runs them as
# trials, and checks that `module unload` restores the environment exactly.
set -euo pipefail
source_dir=$(realpath "$1")
build_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build_dir" --prefix "$work/staging" > /dev/null
mv "$work/staging" "$work/prefix"  # installed once, used from elsewhere
prefix=$work/prefix
if grep -rIl -e "$source_dir" -e "$build_dir" "$prefix" 2>/dev/null; then
  fail "installed files name the build tree (above)"
fi
if grep -rl -e "$source_dir" -e "$build_dir" "$prefix/bin" "$prefix/lib" 2>/dev/null; then
  fail "installed binaries embed build-tree paths (above)"
fi

lmod_init=/usr/share/lmod/lmod/init/bash
[ -f "$lmod_init" ] || { echo "SKIPPED: Lmod is not installed (Debian: lmod)"; exit 77; }
set +u
# shellcheck disable=SC1090
source "$lmod_init"
set -u
# Lmod drops duplicate PATH entries on unload; start from a PATH without them.
PATH=$(printf '%s' "$PATH" | awk -v RS=: '!seen[$0]++' | paste -sd:)
snapshot() { env | grep -E '^(PATH|MANPATH|CMAKE_PREFIX_PATH|PKG_CONFIG_PATH|PYTHONPATH|SLURMTUNE_ROOT|LOADEDMODULES)=' | sort; }
before=$(snapshot)
module use "$prefix/share/slurmtune/modulefiles/lmod"
module load slurmtune
[ "$(command -v slurmtune)" = "$prefix/bin/slurmtune" ] || fail "module load: slurmtune is $(command -v slurmtune)"
[ "$SLURMTUNE_ROOT" = "$prefix" ] || fail "SLURMTUNE_ROOT=$SLURMTUNE_ROOT"
slurmtune --version | grep -q "^slurmtune " || fail "slurmtune --version"
if [ -d "$prefix/share/man/man1" ]; then man -w slurmtune > /dev/null || fail "man slurmtune"; fi

# The numpy example study, from the installed share/ (Debian's python3 has numpy).
cp -r "$prefix/share/slurmtune/examples/numpy-mlp" "$work/study"
(cd "$work/study" && slurmtune run study.toml --progress-interval 60 2> run.log) || { cat "$work/study/run.log"; fail "example study"; }
grep -q "summary: running 0.*12/12 started" "$work/study/run.log" || fail "example study summary"

# The installed dashboard serves the installed page and Chart.js about that study.
if [ -f "$prefix/share/slurmtune/dashboard/chart.min.js" ]; then
  if [ -d "$prefix/share/man/man1" ]; then man -w slurmtune-dashboard > /dev/null || fail "man slurmtune-dashboard"; fi
  SLURMTUNE_PYTHON=/usr/bin/python3 slurmtune dashboard "$work/study/numpy-mlp.h5" --token-file "$work/dashboard.token" \
    > "$work/dashboard.out" 2>&1 &
  dashboard=$!
  for _ in $(seq 100); do grep -q "token=" "$work/dashboard.out" && break; sleep 0.2; done
  url=$(grep -o 'http://[^ ,]*' "$work/dashboard.out") || { kill "$dashboard"; fail "dashboard: $(cat "$work/dashboard.out")"; }
  # Its output is a file, not a terminal: the URL names TOKEN, and the token file holds it.
  url=${url/TOKEN/$(cat "$work/dashboard.token")}
  /usr/bin/python3 - "$url" "$prefix/share/slurmtune/dashboard/chart.min.js" <<'PY' || { kill "$dashboard"; fail "installed dashboard"; }
import sys, urllib.request
url, chart = sys.argv[1], sys.argv[2]
base, query = url.split("?")
page = urllib.request.urlopen(url, timeout=30).read().decode()
served = urllib.request.urlopen(base + "chart.js?" + query, timeout=30).read()
assert "app.js?token=" in page, page[:300]
assert served == open(chart, "rb").read(), "the dashboard served another Chart.js"
PY
  kill "$dashboard"; wait "$dashboard" || true
  [ ! -e "$work/dashboard.token" ] || fail "the dashboard's token file outlived it"
fi

# Trial programs built outside the tree, run as trials of an installed slurmtune.
run_trial_program() {  # run_trial_program NAME PROGRAM
  mkdir -p "$work/$1"
  cat > "$work/$1/study.toml" <<TOML
[study]
name = "$1"
metric = "loss"
max_trials = 3
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "fifo"
max_t = 9
[trial]
command = ["$2"]
TOML
  (cd "$work/$1" && slurmtune run study.toml 2> run.log) || { cat "$work/$1/run.log"; fail "$1"; }
  grep -q "summary: running 0, paused 0, completed 3" "$work/$1/run.log" || { cat "$work/$1/run.log"; fail "$1 summary"; }
  grep -q "built against slurmtune" "$work/$1/study.trials/trial-0/stdout.log" || fail "$1 output"
}
cmake -S "$source_dir/tests/package/consumer" -B "$work/consumer" > /dev/null
cmake --build "$work/consumer" > /dev/null
run_trial_program cmake-consumer "$work/consumer/report_consumer"
# shellcheck disable=SC2046
g++ -o "$work/pc_consumer" "$source_dir/tests/package/consumer/report_consumer.cpp" $(pkg-config --cflags --libs slurmtune)
run_trial_program pkg-config-consumer "$work/pc_consumer"
if [ -f "$prefix/lib/cmake/slurmtune/slurmtuneTargets.cmake" ] && grep -q "slurmtune::trial" "$prefix/lib/cmake/slurmtune/slurmtuneTargets.cmake"; then
  # The MPI example from the installed share/, built on its own against the package.
  cmake -S "$prefix/share/slurmtune/examples/mlp-digits" -B "$work/digits" > /dev/null
  cmake --build "$work/digits" > /dev/null || fail "mlp-digits against the installed package"
fi
python3 -c "from slurmtune import client, study" 2>/dev/null || /usr/bin/python3 -c "from slurmtune import client" || fail "PYTHONPATH"

module unload slurmtune
after=$(snapshot)
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); fail "module unload did not restore the environment"; }
echo "install tree: relocatable, no build paths; Lmod load/unload exact; example study, CMake and pkg-config consumers run as trials"
