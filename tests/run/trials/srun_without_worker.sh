#!/usr/bin/env bash
# An `srun` for `slurmtune run --srun` in tests: the worker step of node $SLURMTUNE_TEST_DEAD_NODE
# never starts (as when Slurm cannot place it): it sleeps instead, until it is ended.
# Every other call is the real srun.
for arg in "$@"; do
  if [[ $arg == "--nodelist=$SLURMTUNE_TEST_DEAD_NODE" && ${*: -1} == worker ]]; then
    exec sleep 600
  fi
done
exec srun "$@"
