#!/usr/bin/env bash
# Runs a command with SLURM_CONF pointing at the local test cluster in DIR, or reports
# the test as skipped (exit 77) when no cluster could be started there.
#   run_with_cluster.sh DIR COMMAND...
set -euo pipefail
dir=$1
shift
if [ ! -f "$dir/slurm.conf" ] || [ ! -f "$dir/ctld.pid" ] || ! kill -0 "$(cat "$dir/ctld.pid")" 2>/dev/null; then
  echo "SKIPPED: no local Slurm cluster in $dir (the slurm.cluster.start test says why)"
  exit 77
fi
export SLURM_CONF=$dir/slurm.conf
exec "$@"
