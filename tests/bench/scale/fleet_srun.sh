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
# A fleet process plays hundreds of nodes, each of which has descriptors of its own on a
# real cluster: a hard limit the coordinator runs under (bench_fleet.py --hard-nofile)
# is not the fleet's. Its processes are then started by the harness (FLEET_SPAWNER: a
# folder with the FIFOs `request` and `done`), with the step's environment.
if [[ -n ${FLEET_SPAWNER:-} ]]; then
  env -0 > "$FLEET_SPAWNER/env"
  echo "$nodelist" > "$FLEET_SPAWNER/request"
  read -r status < "$FLEET_SPAWNER/done"
  exit "$status"
fi
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
