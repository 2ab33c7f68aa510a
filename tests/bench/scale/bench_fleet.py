#!/usr/bin/env python3
"""The fleet harness (issue #61, item 4; doc/performance/control-plane.md): the real
`slurmtune run` coordinator of a worker-launch study on NODES emulated nodes, each node's
worker and node agent the real code, its trials played in-process by a few fleet
processes (tests/bench/scale/fleet.cpp), not a process each.

  bench_fleet.py SLURMTUNE FLEET [--nodes 2048] [--slots 8] [--steps 300] [--interval 1]
                 [--jitter 0] [--parts 4] [--relay-fanout F]
                 [--scheduler fifo|recommended|recommended-ahead]
                 [--nofile N] [--hard-nofile]
                 [--coordinator-cpu 0] [--fleet-cpus 1] [--workdir DIR]

The coordinator believes it runs in a Slurm job of NODES nodes of SLOTS cores (the job's
variables are set, `--srun` is tests/bench/scale/fleet_srun.sh); NODES x SLOTS one-rank
trials run at once, each reporting every INTERVAL s for STEPS steps. The coordinator and
the fleet are pinned to different cores. Prints trials failed or retried, reports lost
(sent without a DECISION back), the decision round trip the trials saw (p50, p99, max,
over all parts: the largest of the parts' p50 and p99), the coordinator's connections,
its longest loop turn, its CPU time and peak memory, and worker utilization: the share of
the trials' time not spent waiting on decisions, and the share of the slots' time spent
in trials between the first start and the last end (the launch ramp included); and how
busy the coordinator's cores were each second and which of its threads used them
(core_sampler.py).

On a machine with cores to spare, give the coordinator several and the fleet the rest
(--coordinator-cpu 0-3 --fleet-cpus 4-15): its loop, its flush thread, its helpers and the
kernel's work for its sockets then need not share one. On this project's 2-core test VM
the defaults pin each to one core, and at the rung crossings of the recommended setting
the coordinator's is full (doc/performance/control-plane.md).

--workdir: where the study's folder is made (default: the system's temporary folder). On
a disk formatted ext4 without a journal, as this project's test machines' are, every
file created scans past the inodes removed in the last seconds, and a study at 2,048
nodes removes thousands of ended attempts' credential files a second: the
coordinator's helper thread then spends a fifth of its core in the kernel. A study's
folder on a cluster lies on a parallel file system, whose metadata server pays for its
creates; a tmpfs (/dev/shm) is the nearer stand-in on one machine.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import threading
import tempfile
import time

import h5py
import numpy as np

from core_sampler import CoreSampler

HERE = os.path.dirname(os.path.abspath(__file__))

STUDY = """[study]
name = "fleet"
metric = "loss"
max_trials = {trials}
[search]
x = {{ uniform = [0, 1] }}
{scheduler}
[trial]
command = ["/bin/true", "{steps}"]  # played by the fleet, never run
[resources]
launch = "worker"
"""

SCHEDULERS = {
    "fifo": '[scheduler]\ntype = "fifo"\nmax_t = {steps}\n',
    # The recommended setting (doc/schedulers.md): MOBSTER with Hyper-Tune on promotion.
    # (MOBSTER is the sampler asha_promotion gets by default.)
    "recommended": '[scheduler]\ntype = "asha_promotion"\nmax_t = {steps}\ngrace_period = 1\n'
                   'reduction_factor = 3\n[sampler]\nrung_weighting = "hyper-tune"\n',
}
# The same with each suggestion made ahead on the sampler's thread (issue #62).
SCHEDULERS["recommended-ahead"] = SCHEDULERS["recommended"] + 'suggest_ahead = true\n'



def spawn_fleet(folder):
    """The step fleet_srun.sh hands over: the same script, with the step's environment
    and this process's descriptor limits."""
    with open(os.path.join(folder, "request")) as f:
        nodelist = f.readline().strip()
    with open(os.path.join(folder, "env"), "rb") as f:
        env = dict(kv.split("=", 1) for kv in f.read().decode().split("\0") if "=" in kv)
    env.pop("FLEET_SPAWNER", None)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    rc = subprocess.run([os.path.join(HERE, "fleet_srun.sh"), "--nodelist=" + nodelist, "worker"],
                        env=env, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                                        (hard, hard))).returncode
    with open(os.path.join(folder, "done"), "w") as f:
        f.write("%d\n" % rc)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("fleet")
    parser.add_argument("--nodes", type=int, default=2048)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="each step lasts INTERVAL x U(1 - J, 1 + J)")
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--relay-fanout", type=int, default=None,
                        help="slurmtune run --relay-fanout (the fleet's part 0 plays the relays)")
    parser.add_argument("--trials", type=int, default=0, help="default: nodes x slots")
    parser.add_argument("--scheduler", choices=sorted(SCHEDULERS), default="fifo")
    parser.add_argument("--nofile", type=int, default=0)
    parser.add_argument("--hard-nofile", action="store_true")
    parser.add_argument("--coordinator-cpu", default="0")
    parser.add_argument("--fleet-cpus", default="1")
    parser.add_argument("--workdir", default=None,
                        help="where the study's folder is made (e.g. /dev/shm; see above)")
    args = parser.parse_args()
    trials = args.trials or args.nodes * args.slots
    workdir = tempfile.mkdtemp(prefix="slurmtune-fleet-", dir=args.workdir)
    study = os.path.join(workdir, "study.toml")
    with open(study, "w") as f:
        f.write(STUDY.format(trials=trials, steps=args.steps,
                             scheduler=SCHEDULERS[args.scheduler].format(steps=args.steps)))
    # No Slurm cluster answers here: a `scontrol` that says so at once, not after its
    # retries (the rendezvous asks it about nodes at the first launch).
    bin_dir = os.path.join(workdir, "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "scontrol"), "w") as f:
        f.write("#!/bin/sh\necho 'fleet: no Slurm cluster' >&2\nexit 1\n")
    os.chmod(os.path.join(bin_dir, "scontrol"), 0o755)
    # The emulated nodes' names resolve (to this host), as a cluster's do: the coordinator
    # looks a node's name up at its first launch (MASTER_ADDR), and a name the resolver
    # has to ask a DNS server about stalls the loop for its timeout (5 s here, once per
    # node). The hosts file is bound over /etc/hosts for the coordinator alone
    # (unshare -m: a mount namespace of its own; needs root).
    hosts = os.path.join(workdir, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost %s\n" % os.uname().nodename)
        f.writelines("127.0.0.1 n%d\n" % (i + 1) for i in range(args.nodes))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SLURMD_"))}
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.update({
        "SLURM_JOB_ID": "424242", "SLURM_JOB_NODELIST": "n[1-%d]" % args.nodes,
        "SLURM_JOB_NUM_NODES": str(args.nodes), "SLURM_NNODES": str(args.nodes),
        "SLURM_JOB_CPUS_PER_NODE": "%d(x%d)" % (args.slots, args.nodes),
        "SLURM_CONF": os.path.join(workdir, "no-cluster.conf"),
        "FLEET_BINARY": os.path.abspath(args.fleet), "FLEET_PARTS": str(args.parts),
        "FLEET_INTERVAL": str(args.interval), "FLEET_JITTER": str(args.jitter),
        "FLEET_OUT": os.path.join(workdir, "fleet"),
        "FLEET_CPUS": args.fleet_cpus,
    })
    command = ["/usr/bin/time", "-f", "%M %U %S", "unshare", "-m", "sh", "-c",
               'mount --bind "$0" /etc/hosts && exec "$@"', hosts, "taskset", "-c", args.coordinator_cpu,
               os.path.abspath(args.slurmtune), "run", study, "-o", os.path.join(workdir, "study.h5"),
               "--launcher", "slurm", "--srun", os.path.join(HERE, "fleet_srun.sh"),
               "--time-left", "1000000", "--progress-interval", "30",
               "--worker-connect-timeout", "600"]
    if args.relay_fanout is not None:
        command += ["--relay-fanout", str(args.relay_fanout)]
    if args.hard_nofile:
        # The nodes keep their own limits: the fleet starts from here (fleet_srun.sh).
        env["FLEET_SPAWNER"] = os.path.join(workdir, "spawner")
        os.makedirs(env["FLEET_SPAWNER"])
        os.mkfifo(os.path.join(env["FLEET_SPAWNER"], "request"))
        os.mkfifo(os.path.join(env["FLEET_SPAWNER"], "done"))
        threading.Thread(target=spawn_fleet, args=(env["FLEET_SPAWNER"],), daemon=True).start()
    if args.nofile:
        flag = "-n" if args.hard_nofile else "-Sn"
        command = ["bash", "-c", 'ulimit %s %d && exec "$@"' % (flag, args.nofile), "bash"] + command
    sampler = CoreSampler(os.path.abspath(args.slurmtune), os.path.join(workdir, "study.h5"),
                          args.coordinator_cpu)
    sampler.start()
    started = time.time()
    run = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True)
    wall = time.time() - started
    log = run.stderr
    if run.returncode != 0:
        raise SystemExit("slurmtune run failed (%d):\n%s" % (run.returncode, log[-4000:]))
    peak_kib, user_s, sys_s = log.strip().splitlines()[-1].split()
    with open(os.path.join(workdir, "coordinator.log"), "w") as f:
        f.write(log)
    parts = []
    for k in range(args.parts):
        with open(os.path.join(workdir, "fleet.%d" % k)) as f:
            parts.append(json.loads(f.read()))
    with h5py.File(os.path.join(workdir, "study.h5"), "r") as f:
        rows = f["trials"][:]
        names = {v: n for n, v in h5py.check_enum_dtype(rows.dtype["status"]).items()}
    statuses = {}
    for s in rows["status"]:
        statuses[names[s]] = statuses.get(names[s], 0) + 1
    busy = float(np.sum(rows["end_time"] - rows["start_time"]))
    span = float(np.max(rows["end_time"]) - np.min(rows["start_time"]))
    utilization = busy / (args.nodes * args.slots * span)
    reports = sum(p["reports"] for p in parts)
    decisions = sum(p["decisions"] for p in parts)
    lines = [l.split("] ", 1)[-1] for l in log.splitlines()
             if re.search(r"control plane: at most|loop: longest|loop: busy|worker\(s\) connected after|relay per|"
                          r"descriptors:|summary:|coordinator: CPU|new trials. files:|decisions held (for a group commit|until their report was durable)", l)]
    print("fleet: %d nodes x %d slots, %d trials of %d steps every %g s (+-%g %%), %s, "
          "%d fleet processes%s; soft ulimit -n %s%s"
          % (args.nodes, args.slots, trials, args.steps, args.interval, 100 * args.jitter,
             args.scheduler, args.parts,
             ", relays per %d nodes" % args.relay_fanout if args.relay_fanout else "",
             args.nofile or "as inherited", " (hard too)" if args.hard_nofile else ""))
    print("study folder: %s" % workdir)
    print("\n".join(lines))
    print("trials %s, retries %d; reports sent %d, answered %d, lost %d; refused %d, killed %d"
          % (statuses, int(np.sum(rows["retries"])), reports, decisions, reports - decisions,
             sum(p["refused"] for p in parts), sum(p["killed"] for p in parts)))
    print("decision round trip seen by trials: p50 %.2f ms, p99 %.2f ms (the worst part's), "
          "max %.1f ms" % (max(p["p50_ms"] for p in parts), max(p["p99_ms"] for p in parts),
                           max(p["max_ms"] for p in parts)))
    steady = [p for p in parts if p["steady_samples"]]
    if steady:
        print("... in the steady state (from 10 s after the last start to 2 s before the first "
              "end; %d reports): p50 %.2f ms, p99 %.2f ms, max %.1f ms"
              % (sum(p["steady_samples"] for p in steady), max(p["steady_p50_ms"] for p in steady),
                 max(p["steady_p99_ms"] for p in steady), max(p["steady_max_ms"] for p in steady)))
    print("... decisions that asked for a checkpoint (they wait until their report is durable; %d): p99 %.2f ms "
          "(the worst part's); the others: p99 %.2f ms"
          % (sum(p["checkpoint_samples"] for p in parts), max(p["checkpoint_p99_ms"] for p in parts),
             max(p["other_p99_ms"] for p in parts)))
    if all("outside_p99_ms" in p for p in parts):
        print("... from a report's leaving its node to its decision's arrival there (the coordinator "
              "and the kernel, without the fleet's own turns; %d): p50 %.2f ms, p99 %.2f ms, max %.1f ms "
              "(the worst part's)"
              % (sum(p["outside_samples"] for p in parts), max(p["outside_p50_ms"] for p in parts),
                 max(p["outside_p99_ms"] for p in parts), max(p["outside_max_ms"] for p in parts)))
    if all("to_socket_p99_ms" in p for p in parts):
        print("... of which until the decision was in the node's socket (the coordinator and the "
              "kernel: the socket's receive timestamp; %d): p50 %.2f ms, p99 %.2f ms; and then until "
              "the fleet's process read it (the harness's): p50 %.2f ms, p99 %.2f ms (the worst part's)"
              % (sum(p["socket_samples"] for p in parts), max(p["to_socket_p50_ms"] for p in parts),
                 max(p["to_socket_p99_ms"] for p in parts), max(p["in_socket_p50_ms"] for p in parts),
                 max(p["in_socket_p99_ms"] for p in parts)))
    if all("lag_p99_ms" in p for p in parts):
        print("... the harness's own lag (how late a due timer of the fleet ran: a decision it reads "
              "late counts in the round trip): p99 %.2f ms, max %.1f ms (the worst part's)"
              % (max(p["lag_p99_ms"] for p in parts), max(p["lag_max_ms"] for p in parts)))
    windows = {}
    for p in parts:
        for start, sent, slow, *split in p["windows"]:
            total = windows.setdefault(start, [0, 0, 0, 0])
            total[0] += sent
            total[1] += slow
            for i, count in enumerate(split[:2]):
                total[2 + i] += count
    slow_total = sum(w[1] for w in windows.values())
    print("... reports over 20 ms: %d of %d (%.2f %%); by 10 s window from the first report, "
          "those with any (over 20 ms; of which the coordinator's and the kernel's part alone "
          "was; the fleet's wait to read the decision alone was): %s"
          % (slow_total, decisions, 100.0 * slow_total / max(decisions, 1),
             ", ".join("%d s: %d of %d (%d; %d)" % (start, w[1], w[0], w[2], w[3])
                       for start, w in sorted(windows.items()) if w[1])))
    sampler.save(os.path.join(workdir, "core.json"))
    print(sampler.summary())
    waited = sum(p["waited_s"] for p in parts) / max(sum(p["lived_s"] for p in parts), 1e-9)
    print("%.0f s wall (the coordinator's CPU: its line above; with the fleet's: %.1f s user + "
          "%.1f s system); worker utilization: %.4f of the trials' time not waiting on decisions, "
          "%.4f of the slots' time in trials (launches and the ramp included)"
          % (wall, float(user_s), float(sys_s), 1 - waited, utilization))


if __name__ == "__main__":
    main()
