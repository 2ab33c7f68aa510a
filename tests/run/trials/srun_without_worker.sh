#!/usr/bin/env bash
# An `srun` for `slurmtune run --srun` in tests: the worker of node $SLURMTUNE_TEST_DEAD_NODE
# never starts (as when its task cannot run): in the one step of all workers, that
# node's task sleeps instead, until it is ended. Every other call is the real srun.
if [[ ${*: -1} == worker ]]; then
  args=("$@")
  last=$((${#args[@]} - 1))
  for ((i = 0; i < ${#args[@]}; i++)); do
    if [[ ${args[i]} == -- ]]; then
      exec srun "${args[@]:0:i}" -- bash -c \
        '[[ $SLURMD_NODENAME == "$SLURMTUNE_TEST_DEAD_NODE" ]] && exec sleep 600; exec "$@"' \
        bash "${args[@]:i+1:last-i}"
    fi
  done
fi
exec srun "$@"
