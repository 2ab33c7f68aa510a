#!/usr/bin/env bash
# Bad input to `slurmtune join` and to a joined job's workers: each case fails with a
# clear message. A real coordinator (local launcher) refuses workers it cannot use, and a
# worker refuses a coordinator that cannot prove the study's token.
#   check_join_errors.sh SLURMTUNE
set -u
slurmtune=$1
expect=$(realpath "$(dirname "$0")")/expect.sh
work=$(mktemp -d)
coordinator=
trap '[ -n "$coordinator" ] && kill "$coordinator" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
check() { bash "$expect" "$@" >/dev/null || { echo "FAILED: $*"; bash "$expect" "$@"; failures=$((failures + 1)); }; }
check 1 'slurmtune join runs inside a Slurm job' \
  env -u SLURM_JOB_ID -u SLURM_JOB_NODELIST -u SLURM_JOB_CPUS_PER_NODE "$slurmtune" join study.h5
check 1 'no/such/folder/study.h5: no such folder' "$slurmtune" join no/such/folder/study.h5
check 1 '--reconnect-timeout must be > 0 seconds' "$slurmtune" join study.h5 --reconnect-timeout 0
check 1 'worker --study needs --allocation and --cpus > 0' "$slurmtune" worker --study study.h5 --node n1
check 1 'SLURMTUNE_ADDR is not set' env -u SLURMTUNE_ADDR "$slurmtune" worker
# The one step of all workers: each names its node by SLURMD_NODENAME and finds its
# credential by it.
check 1 'SLURMD_NODENAME is not set' env -u SLURMD_NODENAME "$slurmtune" worker --study study.h5 --allocation 1 --cpus 2
check 1 'SLURMTUNE_WORKER_CREDENTIALS is not set' \
  env -u SLURMTUNE_WORKER_CREDENTIALS SLURMTUNE_ADDR=127.0.0.1:1 SLURMD_NODENAME=n1 "$slurmtune" worker
check 1 'worker-6e31: cannot read the token file' \
  env SLURMTUNE_WORKER_CREDENTIALS="$work" SLURMTUNE_ADDR=127.0.0.1:1 SLURMD_NODENAME=n1 "$slurmtune" worker
check 1 "no coordinator of .*absent.h5 within 1(\\.0)? s; leaving" \
  "$slurmtune" worker --study absent.h5 --allocation 99 --node n9 --cpus 2 --reconnect-timeout 1

# A process that accepts the connection and never answers: the worker's handshake gives
# up after its 10 s bound, and the worker after its reconnect timeout.
python=$(command -v /usr/bin/python3 || command -v python3)
"$python" -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
c = s.accept(); time.sleep(60)' > silent.port &
silent=$!
for _ in $(seq 50); do [ -s silent.port ] && break; sleep 0.1; done
mkdir -m 700 silent.trials
echo "127.0.0.1:$(cat silent.port)" > silent.trials/coordinator
(umask 077 && printf '%064d\n' 3 > silent.trials/token)
check 1 "the coordinator at 127.0.0.1:[0-9]+ did not answer within 10 s" \
  "$slurmtune" worker --study silent.h5 --allocation 99 --node n9 --cpus 2 --reconnect-timeout 1
kill "$silent" 2>/dev/null

# A coordinator without room answers BUSY: the study's own worker waits what it asks (plus
# up to half again) and tries again, until its reconnect timeout (issue #61).
"$python" -c 'import json, socket, struct
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
body = json.dumps({"why": "512 connections are open already", "retry_after_s": 0.4}).encode()
for tries in range(1, 100):
    c, _ = s.accept(); c.recv(4096)
    c.sendall(struct.pack(">2sBBI", b"ST", 1, 21, len(body)) + body); c.close()
    open("busy.tries", "w").write(str(tries))' > busy.port &
busy=$!
for _ in $(seq 50); do [ -s busy.port ] && break; sleep 0.1; done
mkdir -m 700 busy.credentials
(umask 077 && printf '%064d\n' 3 > busy.credentials/worker-6e31)
check 1 "worker n1: the coordinator has no room yet \(512 connections are open already\)" \
  env SLURMTUNE_ADDR="127.0.0.1:$(cat busy.port)" SLURMTUNE_WORKER_CREDENTIALS="$work/busy.credentials" \
  SLURMD_NODENAME=n1 "$slurmtune" worker --reconnect-timeout 2
kill "$busy" 2>/dev/null
tries=$(cat busy.tries 2>/dev/null || echo 0)
if [ "$tries" -lt 3 ]; then echo "FAILED: the worker tried $tries time(s) against BUSY, not 3 or more"; failures=$((failures + 1)); fi

# The relay tier (issue #61): a worker behind a relay waits for its relay's address
# within --relay-wait, then connects to the coordinator directly; a relay that does not
# answer is passed over the same way; a fan-out that is not a count is refused.
relayed=(env SLURMTUNE_ADDR=127.0.0.1:1 SLURMTUNE_WORKER_CREDENTIALS="$work/busy.credentials"
  SLURMD_NODENAME=n1 SLURMTUNE_RELAYS="$work/relays" SLURM_NODEID=1)
check 1 "no relay published .*relays/group-0 within 0\.5 s; connecting to the coordinator directly" \
  "${relayed[@]}" SLURMTUNE_RELAY_FANOUT=2 "$slurmtune" worker --relay-wait 0.5 --reconnect-timeout 1
mkdir -p relays && echo 127.0.0.1:2 > relays/group-0
check 1 "its relay at 127\.0\.0\.1:2 failed \(.*\); connecting to the coordinator directly" \
  "${relayed[@]}" SLURMTUNE_RELAY_FANOUT=2 "$slurmtune" worker --relay-wait 0.5 --reconnect-timeout 1
check 1 "SLURMTUNE_RELAY_FANOUT='two' is not a count" \
  "${relayed[@]}" SLURMTUNE_RELAY_FANOUT=two "$slurmtune" worker
check 1 "--relay-wait must be > 0 seconds" "${relayed[@]}" SLURMTUNE_RELAY_FANOUT=2 "$slurmtune" worker --relay-wait 0

# A study run without --accept-joins writes no secret: a joining worker is told why.
mkdir -m 700 closed.trials
echo "127.0.0.1:1" > closed.trials/coordinator
check 1 "accepts no joined jobs .*closed.trials/token is absent.: run the study with .slurmtune run --accept-joins." \
  "$slurmtune" worker --study closed.h5 --allocation 99 --node n9 --cpus 2 --reconnect-timeout 1

# A running study whose trials need 4 CPUs each.
cat > big.toml <<'TOML'
[study]
name = "big"
metric = "loss"
max_trials = 1
[search]
x = { uniform = [0, 1] }
[trial]
command = ["sleep", "30"]
[resources]
cpus_per_task = 4
TOML
quick="--shutdown-grace 1 --kill-grace 1"
# shellcheck disable=SC2086
"$slurmtune" run big.toml -o big.h5 --launcher local --slots 4 --accept-joins $quick > run.log 2>&1 &
coordinator=$!
for _ in $(seq 100); do [ -s big.trials/coordinator ] && break; sleep 0.1; done
[ -s big.trials/coordinator ] || { echo "FAILED: the coordinator published no address"; cat run.log; exit 1; }
check 1 "refused this worker: node n9 of job 99 has 2 CPU\(s\) and 0 GPU\(s\), but one trial needs 4 CPU\(s\)" \
  "$slurmtune" worker --study big.h5 --allocation 99 --node n9 --cpus 2 --reconnect-timeout 1
# Another study's folder naming the same address, with a token of its own: the process
# there cannot prove it holds this token, and the worker never sends its own.
mkdir -m 700 other.trials
cp big.trials/coordinator other.trials/coordinator
(umask 077 && printf '%064d\n' 7 > other.trials/token)
check 1 "the process at .* could not prove that it holds the study's token" \
  "$slurmtune" worker --study other.h5 --allocation 99 --node n9 --cpus 8 --reconnect-timeout 1
kill "$coordinator"; wait "$coordinator" 2>/dev/null; coordinator=

# A study of 2-rank trials takes no joined job (an mpirun that runs one copy stands in).
printf '#!/bin/sh\nshift 2\nOMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 exec "$@"\n' > one-rank-mpirun
chmod +x one-rank-mpirun
sed -e 's/cpus_per_task = 4/ntasks_per_node = 2/' -e 's/"big"/"pair"/' big.toml > pair.toml
# shellcheck disable=SC2086
"$slurmtune" run pair.toml -o pair.h5 --launcher local --slots 2 --accept-joins --mpirun "$work/one-rank-mpirun" $quick > run2.log 2>&1 &
coordinator=$!
for _ in $(seq 100); do [ -s pair.trials/coordinator ] && break; sleep 0.1; done
check 1 "refused this worker: a joined job runs single-rank command trials on its workers, but this study's trials have 2 rank\(s\)" \
  "$slurmtune" worker --study pair.h5 --allocation 99 --node n9 --cpus 8 --reconnect-timeout 1
kill "$coordinator"; wait "$coordinator" 2>/dev/null; coordinator=
[ ! -e pair.trials/coordinator ] || { echo "FAILED: an ended session left its address published"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] && echo "all join error cases passed"
exit $((failures > 0))
