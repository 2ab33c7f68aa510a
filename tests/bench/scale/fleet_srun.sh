#!/usr/bin/env bash
# The `srun` of the fleet harness (`slurmtune run --srun fleet_srun.sh`): the one step of
# all workers becomes FLEET_PARTS fleet processes, each playing every FLEET_PARTS-th node
# of the step's --nodelist (tests/bench/scale/fleet.cpp), pinned to FLEET_CPUS when set.
# It lives as long as they do, as srun does for its tasks. Any other srun call fails.
set -u
nodelist=
for arg in "$@"; do
  case $arg in --nodelist=*) nodelist=${arg#--nodelist=} ;; esac
done
[[ ${*: -1} == worker && -n $nodelist ]] || { echo "fleet_srun: not a worker step: $*" >&2; exit 1; }
parts=${FLEET_PARTS:-4}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' TERM INT
for ((k = 0; k < parts; k++)); do
  ${FLEET_CPUS:+taskset -c "$FLEET_CPUS"} "$FLEET_BINARY" --nodes "$nodelist" --part "$k" --parts "$parts" \
    --interval "${FLEET_INTERVAL:-1}" --jitter "${FLEET_JITTER:-0}" --out "$FLEET_OUT.$k" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
