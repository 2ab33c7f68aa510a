#!/usr/bin/env bash
# Hunts flaky tests: runs the end-to-end suites of one or more builds N times, with CPU
# hogs beside them, and prints a flake table (runs, passes, failures per test). Not part
# of CI; see doc/development.md#hunting-flaky-tests.
#
#   tests/stress.sh [-n RUNS] [-j JOBS] [--hogs K] [--keep DIR] [BUILD[:REGEX] ...]
#
# BUILD defaults to build (regex '^(run|slurm)[.]') and build-sanitize (regex
# '^run[.]local[.]', what CI runs there). Each run is one `ctest -j JOBS` over the
# selected tests (the Slurm tests run serially among themselves, as in CI); the log of
# every failed test is kept under --keep (default build/stress) as
# <build>-<run>-<test>.log, and every test run's outcome, round by round, in
# <keep>/results.txt (so an interrupted hunt keeps its rounds). Exits 1 if any test
# failed in any run.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=10 jobs=4 hogs=2 keep=build/stress
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "stress.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=('build:^(run|slurm)[.]' 'build-sanitize:^run[.]local[.]')
for v in "$runs" "$jobs" "$hogs"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "stress.sh: -n, -j and --hogs take a whole number, not '$v'" >&2; exit 2; }
done
mkdir -p "$keep"
results=$keep/results.txt
: >"$results"
hog_pids=()
stop_hogs() { [ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null || true; hog_pids=(); }
trap stop_hogs EXIT

# The load: K busy loops at normal priority for as long as the tests run, each bounded
# by `timeout` in case this script is killed without running its trap.
start_hogs() {
  for _ in $(seq 1 "$hogs"); do
    timeout 6h sh -c 'while :; do :; done' &
    hog_pids+=($!)
  done
}

started=$(date +%s)
for target in "${targets[@]}"; do
  build=${target%%:*}
  regex='^(run|slurm)[.]'
  [ "$build" = "$target" ] || regex=${target#*:}
  if [ ! -f "$build/CTestTestfile.cmake" ]; then
    echo "stress.sh: $build is not a configured build folder (run tests/run-all.sh first)" >&2
    exit 2
  fi
  for run in $(seq 1 "$runs"); do
    start_hogs
    out=$(ctest --test-dir "$build" -R "$regex" -j "$jobs" --timeout 900 2>&1 || true)
    stop_hogs
    # "  3/51 Test  #12: run.local.kill ..............   Passed   12.3 sec"
    grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' <<<"$out" |
      sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) [ .*]*(\*\*\*)?([A-Za-z][A-Za-z ]*[a-z]).*/\1 \3/' |
      while read -r name outcome; do
        echo "$build $run $name $outcome" >>"$results"
        case "$outcome" in
          Passed|*Skipped*|*"Not Run"*) ;;
          *) cp "$build/Testing/Temporary/LastTest.log" "$keep/$(basename "$build")-$run-$name.log" 2>/dev/null || true ;;
        esac
      done
    echo "stress.sh: $build run $run/$runs: $(grep -E 'tests passed' <<<"$out" || echo 'no summary')"
  done
done

elapsed=$(( $(date +%s) - started ))
echo
printf '%-16s %-40s %5s %6s %6s %7s\n' build test runs passed failed skipped
awk '
  { key = $1 " " $3; runs[key]++
    if ($4 == "Passed") passed[key]++
    else if ($0 ~ /Skipped|Not Run/) skipped[key]++
    else failed[key]++ }
  END { for (k in runs) { split(k, p, " ")
          printf "%-16s %-40s %5d %6d %6d %7d\n", p[1], p[2], runs[k], passed[k], failed[k], skipped[k] } }' "$results" |
  sort -k5,5nr -k1,1 -k2,2
total_failed=$(awk '$4 != "Passed" && $0 !~ /Skipped|Not Run/' "$results" | wc -l)
echo
echo "stress.sh: $(wc -l <"$results") test runs, $total_failed failed, $runs run(s) per build," \
     "$hogs CPU hog(s), -j $jobs, ${elapsed} s"
[ "$total_failed" -eq 0 ]
