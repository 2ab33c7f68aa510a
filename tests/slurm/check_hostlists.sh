#!/usr/bin/env bash
# slurmtune's hostlist expansion must agree with Slurm's own (`scontrol show hostnames`),
# including for the allocation of a real job. Usage: check_hostlists.sh HOSTLIST_TOOL
set -euo pipefail
tool=$1
for list in 'n[1-4]' 'gpu[08-11]' 'r[1-2]n[01-03],login' 'nid[0098-0101,0200]' 'a,b,c'; do
  diff <("$tool" "$list") <(scontrol show hostnames "$list") || { echo "differs for $list"; exit 1; }
done
# The allocation of a real job, as the orchestrator will read it.
job_out=$(sbatch -N3 --ntasks-per-node=2 --wait -o "${TMPDIR:-/tmp}/slurmtune-hostlist-$$.out" \
  --wrap 'echo "$SLURM_JOB_NODELIST|$SLURM_JOB_CPUS_PER_NODE"' >/dev/null &&
  cat "${TMPDIR:-/tmp}/slurmtune-hostlist-$$.out")
rm -f "${TMPDIR:-/tmp}/slurmtune-hostlist-$$.out"
nodelist=${job_out%%|*}
diff <("$tool" "$nodelist") <(scontrol show hostnames "$nodelist")
[ "$("$tool" "$nodelist" | wc -l)" -eq 3 ] || { echo "expected 3 nodes in $nodelist"; exit 1; }
echo "hostlists agree with scontrol, allocation $job_out"
