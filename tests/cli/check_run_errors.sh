#!/usr/bin/env bash
# Bad input to `slurmtune run` and `slurmtune report`: each case must fail with a clear
# message and leave nothing half-done.
#   check_run_errors.sh SLURMTUNE
set -u
slurmtune=$1
expect=$(realpath "$(dirname "$0")")/expect.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
check() { bash "$expect" "$@" >/dev/null || { echo "FAILED: $*"; bash "$expect" "$@"; failures=$((failures + 1)); }; }

study() {  # study NAME COMMAND [EXTRA]: a one-parameter study whose trial is COMMAND
  cat > "$1.toml" <<TOML
[study]
name = "$1"
metric = "loss"
max_trials = 2
[search]
x = { uniform = [0, 1] }
[trial]
command = $2
$3
TOML
}

study no-command '[]' ''
check 1 'no-command.toml:.*\[trial\] command: must name a program' "$slurmtune" run no-command.toml
printf '[study]\nname = "bare"\nmetric = "loss"\n[search]\nx = { uniform = [0, 1] }\n' > bare.toml
check 1 '\[trial\] command is required by .slurmtune run.' "$slurmtune" run bare.toml
study missing '["no-such-trainer-xyz", "{x}"]' ''
check 1 "program 'no-such-trainer-xyz' is not on PATH" "$slurmtune" run missing.toml
test ! -e missing.h5 || { echo "FAILED: a results file was created for a study that cannot start"; failures=$((failures + 1)); }
study big '["true"]' $'[resources]\nntasks_per_node = 4'
check 1 'one trial needs 4 slot.* raise --slots' "$slurmtune" run big.toml --launcher local --slots 2
check 1 'not inside a Slurm allocation' env -u SLURM_JOB_ID "$slurmtune" run big.toml --launcher slurm
study gpu '["true"]' $'[resources]\ngpus_per_task = 2'
check 1 'one trial needs 2 GPU.* found none .*name them with --gpus' env CUDA_VISIBLE_DEVICES= "$slurmtune" run gpu.toml --launcher local
check 1 'one trial needs 2 GPU.* has 1 \(--gpus 1\)' "$slurmtune" run gpu.toml --launcher local --gpus 1
check 1 "--gpus '0,,1': give a count" "$slurmtune" run gpu.toml --launcher local --gpus 0,,1
check 1 "--worker-connect-timeout 0.0: give a positive number of seconds" "$slurmtune" run gpu.toml --worker-connect-timeout 0
check 1 "--max-connections and --max-agent-channels: give at least 1" "$slurmtune" run gpu.toml --max-connections 0
check 1 "--max-connections and --max-agent-channels: give at least 1" "$slurmtune" run gpu.toml --max-agent-channels 0
check 1 "--max-step-restarts -1: give 0 or more" "$slurmtune" run gpu.toml --max-step-restarts -1
check 1 "--step-launch-rate 0.0: give a positive number of steps a second" "$slurmtune" run gpu.toml --step-launch-rate 0
check 1 "--step-launch-rate Infinity: give a positive number of steps a second" "$slurmtune" run gpu.toml --step-launch-rate inf
test ! -e gpu.h5 || { echo "FAILED: a results file was created for GPU trials that cannot start"; failures=$((failures + 1)); }

# A finished study resumes as done; a changed search space is refused and named.
study done '["true"]' ''
check 0 'summary: .*completed 2' "$slurmtune" run done.toml --launcher local
check 0 'resuming .*done.h5' "$slurmtune" run done.toml --launcher local
sed -i 's/uniform = \[0, 1\]/uniform = [0, 2]/' done.toml
check 1 'search.x: .* recorded, .* now \(cannot change' "$slurmtune" run done.toml --launcher local
sed -i 's/max_trials = 2/max_trials = 3/; s/uniform = \[0, 2\]/uniform = [0, 1]/' done.toml
check 1 'study.max_trials: 2 recorded, 3 now \(safe to change: pass --allow-changes\)' "$slurmtune" run done.toml --launcher local
check 0 'summary: .*3/3 started' "$slurmtune" run done.toml --launcher local --allow-changes
# A write-ahead log beside the results file that is not one, or not this file's: named,
# with what to do, and the results file left as it was.
test ! -e done.h5-wal || { echo "FAILED: a clean run left its write-ahead log"; failures=$((failures + 1)); }
before=$(sha256sum done.h5)
printf 'not a log at all, just text\n' > done.h5-wal
check 1 "write-ahead log .*done.h5-wal: no slurmtune log header; it is not one slurmtune wrote, or was cut short: move it away" \
  "$slurmtune" run done.toml --launcher local --allow-changes
check 1 "write-ahead log .*done.h5-wal: no slurmtune log header" "$slurmtune" recover done.h5
check 0 "Write-ahead log: not read \(.*done.h5-wal: no slurmtune log header" "$slurmtune" status done.h5
test "$(sha256sum done.h5)" = "$before" || { echo "FAILED: a bad write-ahead log changed the results file"; failures=$((failures + 1)); }
rm done.h5-wal
check 0 "done.h5: no write-ahead log beside it: the file holds every row" "$slurmtune" recover done.h5
check 1 "nothing.h5: no such results file" "$slurmtune" recover nothing.h5

# Issue #58: a trial that never reports says so; a new study next to an earlier one's
# trial folders whose results file is gone is refused, the folders named.
study silent '["true"]' ''
check 0 'trial 0 completed: exited 0 without a single report of loss; does its command call the report client' \
  "$slurmtune" run silent.toml --launcher local
rm silent.h5
check 1 'silent.trials holds 2 trial folder\(s\) of an earlier study, but its results file .*silent.h5 is gone' \
  "$slurmtune" run silent.toml --launcher local
test ! -e silent.h5 || { echo "FAILED: a study was started into an earlier study's folders"; failures=$((failures + 1)); }

# Issue #58: html and dashboard use the interpreter the build found with their packages,
# not a conda or pyenv python3 first on PATH; one that lacks a package is named in a line.
mkdir fakebin
printf '#!/bin/sh\necho "a python3 without the packages" >&2\nexit 3\n' > fakebin/python3
chmod +x fakebin/python3
check 0 '.*' env -u SLURMTUNE_PYTHON PATH="$work/fakebin:$PATH" "$slurmtune" html done.h5 -o done.html
test -s done.html || { echo "FAILED: html wrote no page with python3 on PATH lacking its packages"; failures=$((failures + 1)); }
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' > fakebin/bare-python
chmod +x fakebin/bare-python
check 1 '^slurmtune dashboard: .* cannot import [a-z]+: it needs Python 3.9\+ with tornado' \
  env SLURMTUNE_PYTHON="$work/fakebin/bare-python" "$slurmtune" dashboard done.h5

# Issue #59: study folders of another user are refused by name (root can make one).
if [ "$(id -u)" = 0 ]; then
  study theirs '["true"]' ''
  mkdir theirs.trials && chown 4242 theirs.trials
  check 1 'theirs.trials belongs to another user \(uid 4242\): a study.s folders must be yours' \
    "$slurmtune" run theirs.toml --launcher local
fi

# Issue #59: a study the results file cannot hold is refused by validate and run, named,
# before anything is written.
{ printf '[study]\nname = "many"\nmetric = "loss"\n[search]\n'
  for i in $(seq 2000); do echo "p$i = { uniform = [0, 1] }"; done
  printf '[trial]\ncommand = ["true"]\n'; } > many.toml
check 1 'many.toml: the results file cannot hold this study: a row of /trials \(2000 parameters' \
  "$slurmtune" validate many.toml
check 1 'many.toml: the results file cannot hold this study' "$slurmtune" run many.toml --launcher local
test ! -e many.h5 || { echo "FAILED: a results file was begun for a study it cannot hold"; failures=$((failures + 1)); }

# The shell client outside a trial, with bad metrics, with a token file others can read.
check 1 'SLURMTUNE_ADDR is not set' env -u SLURMTUNE_ADDR "$slurmtune" report --step 1 loss=0.5
check 1 "'loss' is not NAME=VALUE" env SLURMTUNE_ADDR=localhost:1 "$slurmtune" report --step 1 loss
echo 0123 > token && chmod 644 token
check 1 'token.*chmod 600' env SLURMTUNE_ADDR=localhost:1 SLURMTUNE_TOKEN_FILE=token SLURMTUNE_TRIAL_ID=0 SLURMTUNE_ATTEMPT=0 "$slurmtune" report --step 1 loss=0.5
exit $((failures > 0))
