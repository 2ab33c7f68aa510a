#!/usr/bin/env bash
# A throwaway Slurm cluster on this machine: munge, one slurmctld and NODES slurmd
# daemons on loopback, all state under one directory. For tests only (see
# ../../doc/development.md); the recipe is that of shared/notes/local-slurm.md.
#
#   local-cluster.sh start DIR [NODES] [CPUS]
#                                        start and wait until every node is idle;
#                                        prints "export SLURM_CONF=DIR/slurm.conf"
#   local-cluster.sh stop DIR            stop every daemon started from DIR
#
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm and munge.
set -euo pipefail

command=${1:?usage: local-cluster.sh start|stop DIR [NODES]}
dir=$(realpath -m "${2:?usage: local-cluster.sh start|stop DIR [NODES]}")
nodes=${3:-4}
cpus=${4:-4}  # per node (benchmarks ask for more than the machine has: trials mostly sleep)
conf=$dir/slurm.conf

log() { echo "local-cluster: $*" >&2; }

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  mkdir -p /run/munge && chown munge:munge /run/munge
  if [ ! -f /etc/munge/munge.key ]; then  # normally made by the package's postinst
    mungekey --create --keyfile=/etc/munge/munge.key && chown munge:munge /etc/munge/munge.key &&
      chmod 0400 /etc/munge/munge.key || { log "cannot create /etc/munge/munge.key"; exit 1; }
  fi
  su -s /bin/sh munge -c munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return; sleep 0.1; done
  log "munged did not come up"; exit 1
}

write_config() {
  local host
  host=$(hostname)
  mkdir -p "$dir/state" "$dir/log"
  for n in $(seq "$nodes"); do mkdir -p "$dir/spool/n$n" "$dir/tmp/n$n"; done
  cat > "$conf" <<CONF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
# The PMIx plugin makes per-step directories under TmpFS: one per node, or the 2nd..Nth
# node fail with EEXIST.
TmpFS=$dir/tmp/%n
SlurmctldPidFile=$dir/ctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/ctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmix
# Below the trial count of run.slurm.workers-many (600), above any other test's steps per job.
MaxStepCount=500
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=n[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=2000 Port=[17001-$((17000 + nodes))] State=UNKNOWN
PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
}

start() {
  [ "$(id -u)" -eq 0 ] || { log "must run as root"; exit 1; }
  if [ -f "$dir/ctld.pid" ] && kill -0 "$(cat "$dir/ctld.pid")" 2>/dev/null; then
    log "already running from $dir"; echo "export SLURM_CONF=$conf"; return
  fi
  start_munge
  write_config
  export SLURM_CONF=$conf
  slurmctld -f "$conf"
  for n in $(seq "$nodes"); do slurmd -f "$conf" -N "n$n"; done
  for _ in $(seq 100); do
    if [ "$(sinfo -h -o %t 2>/dev/null | sort -u | tr -d '\n')" = "idle" ]; then
      log "$nodes nodes idle (SLURM_CONF=$conf)"
      echo "export SLURM_CONF=$conf"
      return
    fi
    sleep 0.2
  done
  log "nodes did not become idle; sinfo says:"; sinfo >&2 || true
  tail -20 "$dir/log/ctld.log" >&2 || true
  exit 1
}

stop() {
  export SLURM_CONF=$conf
  [ -f "$conf" ] && scontrol shutdown >/dev/null 2>&1 || true
  # scontrol shutdown stops the daemons it reaches; make sure of the rest.
  for pidfile in "$dir"/ctld.pid "$dir"/slurmd.*.pid; do
    # A daemon that heard the shutdown removes its pid file as it exits, maybe just now.
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  log "stopped ($dir)"
}

case $command in
  start) start ;;
  stop) stop ;;
  *) log "unknown command $command"; exit 2 ;;
esac
