#!/usr/bin/env bash
# Out of descriptors, a launch waits instead of failing its trial (issue #61, item 3).
# A study of 12 reporting trials on 8 slots runs under a hard `ulimit -n` lowered step by
# step, from well above what the coordinator holds itself: at every limit every trial
# completes, at some of them launches wait ("launches wait: ..."), and the first limit
# that leaves no room for one launch with nothing running ends the study with a clear
# error instead of waiting for ever. (Counting down, not naming a limit: what the
# coordinator holds differs a little between machines and builds, and the sanitizers
# need a few descriptors of their own.)
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
failures=0 waited=0 refused_at=
for limit in $(seq 48 -4 8); do
  rm -rf fd.h5 fd.trials
  (ulimit -n "$limit" && "$slurmtune" run fd.toml -o fd.h5 --launcher local --slots 8 > log 2>&1)
  rc=$?
  if grep -q "error: no descriptors to spare for a launch even with no trial running: raise ulimit -n" log; then
    [[ $rc == 1 ]] || { echo "FAILED: ulimit -n $limit: the clear error with exit status $rc"; failures=$((failures + 1)); }
    refused_at=$limit
    break
  fi
  if [[ $rc != 0 ]] || ! grep -q "completed 12, stopped 0, failed 0 (retries 0)" log; then
    echo "FAILED: ulimit -n $limit: a trial failed or the study did not complete"
    tail -20 log
    failures=$((failures + 1))
    break
  fi
  grep -q "launches wait: this process has no 8 descriptors to spare" log && waited=$((waited + 1))
done
if [[ $waited == 0 ]]; then
  echo "FAILED: no limit made launches wait"
  failures=$((failures + 1))
fi
if [[ -z $refused_at ]]; then
  echo "FAILED: no limit ended with the clear error"
  failures=$((failures + 1))
fi
echo "descriptor wait: $waited limit(s) made launches wait, every trial completed;" \
  "ulimit -n ${refused_at:-?} ended with the clear error; $failures failure(s)"
exit $((failures > 0))
