#!/usr/bin/env bash
# One writer per study (issue #59): a second `slurmtune run` of a running study is
# refused and the first finishes untouched; a killed holder's lock and a requeued job's
# lock are recognised as stale and replaced; a holder this host cannot check is never
# broken. Every wait is bounded.
#   check_study_lock.sh SLURMTUNE
set -u
slurmtune=$(realpath "$1")
expect=$(realpath "$(dirname "$0")")/expect.sh
work=$(mktemp -d)
holder=
trap '[ -n "$holder" ] && kill -9 -- -"$holder" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
check() { bash "$expect" "$@" >/dev/null || { fail "$*"; bash "$expect" "$@"; }; }

# The trial sleeps as long as ./delay says (long while a second run knocks, short after),
# or until ./release appears: a loaded machine must not end the holder mid-check.
printf '#!/usr/bin/env bash\nfor _ in $(seq "$(( $(cat delay) * 10 ))"); do [ -e release ] && exit 0; sleep 0.1; done\n' > trial.sh
cat > lock.toml <<'TOML'
[study]
name = "lock"
metric = "loss"
max_trials = 1
[search]
x = { uniform = [0, 1] }
[trial]
command = ["bash", "trial.sh"]
TOML

# wait_for FILE: until it exists, at most 30 s.
wait_for() {
  for _ in $(seq 300); do [ -e "$1" ] && return 0; sleep 0.1; done
  fail "$1 did not appear within 30 s"; return 1
}

# 1. Two runs at once: the second is refused and touches nothing.
echo 120 > delay
setsid "$slurmtune" run lock.toml --launcher local --fail-fast 0 > first.log 2>&1 &
holder=$!
wait_for lock.trials/trial-0/stderr.log
sleep 0.5
before=$(cd lock.trials && find . -type f -newer ../lock.toml -printf '%p %s\n' | sort; cat token 2>/dev/null | sha256sum)
lock_before=$(cat lock.lock)
check 1 "the study is being run by pid $holder on host $(hostname)" "$slurmtune" run lock.toml --launcher local
after=$(cd lock.trials && find . -type f -newer ../lock.toml -printf '%p %s\n' | sort; cat token 2>/dev/null | sha256sum)
[ "$before" = "$after" ] || fail "the refused run changed the study's folder: $before / $after"
[ "$lock_before" = "$(cat lock.lock)" ] || fail "the refused run changed the lock"
touch release
for _ in $(seq 600); do kill -0 "$holder" 2>/dev/null || break; sleep 0.1; done
wait "$holder"; status=$?
holder=
[ "$status" -eq 0 ] || { fail "the first run exited $status"; cat first.log; }
grep -q "completed 1" first.log || { fail "the first run did not complete its trial"; cat first.log; }
[ ! -e lock.lock ] || fail "the lock outlived its run"
rm -f release

# 2. A killed holder: its lock is stale on this host, replaced with a line that says so.
sed -i 's/max_trials = 1/max_trials = 2/' lock.toml
echo 60 > delay
setsid "$slurmtune" run lock.toml --launcher local --allow-changes > killed.log 2>&1 &
holder=$!
wait_for lock.trials/trial-1/stderr.log
kill -9 -- -"$holder"
wait "$holder" 2>/dev/null
holder=
[ -e lock.lock ] || fail "a killed run left no lock (the test proves nothing)"
echo 0 > delay
check 0 "replaced the study's stale lock .*lock.lock: its holder, pid [0-9]+ on host .*, no longer runs" \
  "$slurmtune" run lock.toml --launcher local --allow-changes
[ ! -e lock.lock ] || fail "the lock outlived the resumed run"

# 3. A requeued job: the lock of the job's earlier run, on another node, is stale.
sed -i 's/max_trials = 2/max_trials = 3/' lock.toml
printf 'host=node-gone\npid=4242\nstarted=1\njob=777\nrestart=0\nsince=2026-01-01T00:00:00Z\n' > lock.lock
check 0 "replaced the study's stale lock .*an earlier run of Slurm job 777 \(restart 0\)" \
  env SLURM_JOB_ID=777 SLURM_RESTART_COUNT=1 "$slurmtune" run lock.toml --launcher local \
  --allow-changes --time-left 3600

# 4. Another host's holder: broken only when the queue says its job has ended. Stand-ins
# for squeue answer as Slurm would: no answer at all, a queue holding job 778, one without.
mkdir -p queue/none queue/holds queue/without
printf '#!/bin/sh\necho "squeue: error: Unable to contact slurm controller" >&2\nexit 1\n' > queue/none/squeue
printf '#!/bin/sh\necho 777\necho 778\n' > queue/holds/squeue
printf '#!/bin/sh\necho 777\n' > queue/without/squeue
chmod +x queue/*/squeue
held='host=node-elsewhere\npid=4242\nstarted=1\njob=778\nrestart=\nsince=2026-01-01T00:00:00Z\n'
for queue in none holds; do
  printf "$held" > lock.lock
  check 1 "being run by pid 4242 on host node-elsewhere \(Slurm job 778\).*cannot check.*squeue -j 778" \
    env PATH="$work/queue/$queue:$PATH" "$slurmtune" run lock.toml --launcher local
done
sed -i 's/max_trials = 3/max_trials = 4/' lock.toml
check 0 "replaced the study's stale lock .*its holder's Slurm job 778 is no longer in the queue" \
  env PATH="$work/queue/without:$PATH" "$slurmtune" run lock.toml --launcher local --allow-changes
printf "$held" > lock.lock
grep -q node-elsewhere lock.lock || fail "another host's lock was broken"
: > lock.lock
check 1 "lock.lock: the study's lock names no holder" "$slurmtune" run lock.toml --launcher local
[ -e lock.lock ] || fail "a damaged lock was removed"
exit $((failures > 0))
