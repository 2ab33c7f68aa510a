#!/usr/bin/env bash
# Out of descriptors, a launch waits instead of failing its trial (issue #61, item 3):
# under a hard `ulimit -n` a little above what the coordinator holds itself, a study of
# 12 reporting trials on 8 slots completes every trial, and at least one limit makes
# launches wait ("launches wait: ..."); a limit that leaves no room for one launch with
# nothing running ends the study with a clear error instead of waiting for ever.
#   check_descriptor_wait.sh SLURMTUNE
set -u
slurmtune=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > fd.toml <<'TOML'
[study]
name = "fd"
metric = "loss"
max_trials = 12
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "fifo"
max_t = 3
[trial]
command = ["/usr/bin/python3", "-c", "import time\nfrom slurmtune import client\nfor s in range(1, 4):\n    client.report(s, loss=s * client.params()['x'])\n    time.sleep(0.2)"]
TOML
failures=0 waited=0
for limit in 40 30 26 22 20 18 16; do
  rm -rf fd.h5 fd.trials
  (ulimit -n "$limit" && "$slurmtune" run fd.toml -o fd.h5 --launcher local --slots 8 > "log.$limit" 2>&1)
  rc=$?
  if grep -q "no descriptors to spare for a launch even with no trial running" "log.$limit"; then
    continue  # below what one launch needs: the clear error, checked below
  fi
  if [[ $rc != 0 ]] || ! grep -q "completed 12, stopped 0, failed 0 (retries 0)" "log.$limit"; then
    echo "FAILED: ulimit -n $limit: a trial failed or the study did not complete"
    tail -20 "log.$limit"
    failures=$((failures + 1))
  fi
  grep -q "launches wait: this process has no 8 descriptors to spare" "log.$limit" && waited=$((waited + 1))
done
if [[ $waited == 0 ]]; then
  echo "FAILED: no limit made launches wait"
  failures=$((failures + 1))
fi
rm -rf fd.h5 fd.trials
(ulimit -n 10 && "$slurmtune" run fd.toml -o fd.h5 --launcher local --slots 8 > log.10 2>&1)
if [[ $? != 1 ]] || ! grep -q "error: no descriptors to spare for a launch even with no trial running: raise ulimit -n" log.10; then
  echo "FAILED: ulimit -n 10 did not end with the clear error"
  cat log.10
  failures=$((failures + 1))
fi
echo "descriptor wait: $waited limit(s) made launches wait, every trial completed; $failures failure(s)"
exit $((failures > 0))
