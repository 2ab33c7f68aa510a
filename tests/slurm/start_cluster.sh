#!/usr/bin/env bash
# CTest fixture: starts the local cluster, or explains why it cannot and skips (77).
set -uo pipefail
here=$(dirname "$0")
dir=$1
if [ "$(id -u)" -ne 0 ]; then echo "SKIPPED: the local Slurm cluster needs root"; exit 77; fi
for program in slurmctld slurmd munged sinfo; do
  command -v "$program" >/dev/null || { echo "SKIPPED: $program not installed (tests/setup-debian.sh installs it)"; exit 77; }
done
bash "$here/local-cluster.sh" stop "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
exec bash "$here/local-cluster.sh" start "$dir" 4
