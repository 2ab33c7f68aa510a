#!/usr/bin/env bash
# The sbatch template from an install tree, on the local Slurm cluster, with nothing but
# `module load slurmtune` (no build tree on PATH, no SLURMTUNE_BUILD):
#   check_installed_sbatch.sh BUILD_DIR      (SLURM_CONF set by run_with_cluster.sh)
set -euo pipefail
build_dir=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -f /usr/share/lmod/lmod/init/bash ] || { echo "SKIPPED: Lmod is not installed"; exit 77; }

cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
cp "$work/prefix/share/slurmtune/sbatch/submit-hpo.sbatch" "$work/"
cp -r "$work/prefix/share/slurmtune/examples/numpy-mlp" "$work/study"
# The submitting user's environment: the module tree known, slurmtune itself not on PATH.
export MODULEPATH=$work/prefix/share/slurmtune/modulefiles/lmod
unset SLURMTUNE_BUILD LMOD_CMD BASH_FUNC_module%% 2>/dev/null || true
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "$build_dir" | paste -sd:)
! command -v slurmtune > /dev/null || fail "slurmtune is already on PATH: $(command -v slurmtune)"

job=$(cd "$work/study" && STUDY=study.toml sbatch --parsable -N 2 --ntasks-per-node 1 \
        --output "$work/job.out" "$work/submit-hpo.sbatch")
for _ in $(seq 300); do
  state=$(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL) break ;; esac
  sleep 1
done
cat "$work/job.out"
[ "$state" = COMPLETED ] || fail "job $job: $state"
grep -q "slurm launcher: job $job" "$work/job.out" || fail "not run by the Slurm launcher"
grep -q "summary: running 0, .*12/12 started" "$work/job.out" || fail "no summary"
echo "installed sbatch template: job $job ran the numpy example with only 'module load slurmtune'"
