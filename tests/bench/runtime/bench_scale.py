#!/usr/bin/env python3
"""The coordinator at scale (issue #16 §4; doc/performance.md): many trials running at
once, all reporting, on a local Slurm cluster that declares more cores than this machine
has (the trials mostly sleep).

  bench_scale.py SLURMTUNE LOAD_PROBE [--trials 2000] [--steps 20] [--interval 0.5]
                 [--cores 500] [--nodes 4] [--nofile N]
                 [--trial-nodes K] [--trial-ranks-per-node R]
                 (SLURM_CONF set; NODES nodes of CORES CPUs:
                  tests/slurm/local-cluster.sh start DIR NODES CORES)

Inside one `salloc -N NODES`: a fifo study of TRIALS trials on worker steps, all running at
once (NODES x CORES slots), each reporting every INTERVAL s for STEPS steps
(tests/bench/runtime/load_probe.cpp). With --nofile the job's shell sets that soft
`ulimit -n` first, as a login shell's 1,024 travels into a job. With --trial-nodes or
--trial-ranks-per-node each trial is a step of K nodes x R ranks, whose rank 0 reports
and whose other ranks ask, each on its own connection through its node's agent. Prints the trials that
failed or were retried, the reports per second the coordinator took while every trial
ran, the decision latency the trials saw (p50, p99, max), the coordinator's peak memory,
and its control-plane line (connections at once, those its node agents carried).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

STUDY = """[study]
name = "scale"
metric = "loss"
metrics = ["loss", "latency_ms"]
max_trials = {trials}
[search]
x = {{ uniform = [0, 1] }}
[scheduler]
type = "fifo"
max_t = {steps}
[trial]
command = ["{probe}", "{steps}", "{interval}"]
[resources]
launch = "worker"
nodes = {trial_nodes}
ntasks_per_node = {trial_ranks_per_node}
"""


def inside(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-scale-")
    study = os.path.join(workdir, "study.toml")
    with open(study, "w") as f:
        f.write(STUDY.format(trials=args.trials, steps=args.steps, interval=args.interval,
                             probe=args.probe, trial_nodes=args.trial_nodes,
                             trial_ranks_per_node=args.trial_ranks_per_node))
    output = os.path.join(workdir, "study.h5")
    command = ["/usr/bin/time", "-f", "%M", args.slurmtune, "run", study, "-o", output,
               "--progress-interval", "3600"]
    if args.nofile:
        # -S: the soft limit only, which the coordinator may raise; -n: both (--hard-nofile).
        flag = "-n" if args.hard_nofile else "-Sn"
        command = ["bash", "-c", 'ulimit %s %d && exec "$@"' % (flag, args.nofile), "bash"] + command
    run = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("slurmtune run failed:\n" + run.stderr[-3000:])
    peak_mib = int(run.stderr.strip().splitlines()[-1]) / 1024
    plane = [line for line in run.stderr.splitlines() if "control plane: at most" in line or
             "descriptors:" in line or "worker(s) connected after" in line or "lost" in line]
    with h5py.File(output, "r") as f:
        metrics = f["metrics"][:]
        trials = f["trials"][:]
    times = np.sort(metrics["time"])
    # The window in which every trial ran: from the last start to the first end.
    start, end = float(np.max(trials["start_time"])), float(np.min(trials["end_time"]))
    if end <= start:  # more trials than slots: they ran in waves, never all at once
        start, end = float(np.min(trials["start_time"])), float(np.max(trials["end_time"]))
    during = np.count_nonzero((times >= start) & (times <= end))
    latency = metrics["latency_ms"][metrics["latency_ms"] >= 0]
    names = {value: name for name, value in h5py.check_enum_dtype(trials.dtype["status"]).items()}
    statuses = {}
    for status in trials["status"]:
        statuses[names[status]] = statuses.get(names[status], 0) + 1
    print("%s ulimit -n in the job: %s; %d nodes; trials %s, retries %d" % (
        "hard and soft" if args.hard_nofile else "soft", args.nofile or "as inherited", args.nodes,
        statuses, int(np.sum(trials["retries"]))))
    print("\n".join(line.split("] ", 1)[-1] for line in plane))
    print("%d trials on worker steps, %d reports: %.0f reports/s while all ran (or, in waves, "
          "over the study) "
          "(%.1f s); decision latency seen by trials p50 %.2f ms, p99 %.2f ms, max %.1f ms; "
          "coordinator peak RSS %.0f MiB" % (len(trials), len(metrics), during / max(end - start, 1e-9),
                                              end - start, np.percentile(latency, 50),
                                              np.percentile(latency, 99), latency.max(), peak_mib))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("probe")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--cores", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--nofile", type=int, default=0, help="soft ulimit -n in the job")
    parser.add_argument("--hard-nofile", action="store_true", help="--nofile sets the hard limit too")
    parser.add_argument("--trial-nodes", type=int, default=1, help="nodes per trial")
    parser.add_argument("--trial-ranks-per-node", type=int, default=1, help="ranks per node of a trial")
    parser.add_argument("--inside", action="store_true")
    args = parser.parse_args()
    args.slurmtune, args.probe = os.path.abspath(args.slurmtune), os.path.abspath(args.probe)
    if args.inside:
        return inside(args)
    subprocess.run(["salloc", "-N", str(args.nodes), "--ntasks-per-node", str(args.cores),
                    sys.executable, os.path.abspath(__file__), args.slurmtune, args.probe,
                    "--trials", str(args.trials), "--steps", str(args.steps), "--interval",
                    str(args.interval), "--nodes", str(args.nodes), "--nofile", str(args.nofile),
                    "--trial-nodes", str(args.trial_nodes),
                    "--trial-ranks-per-node", str(args.trial_ranks_per_node), "--inside"] + (["--hard-nofile"] if args.hard_nofile else []), check=True)


if __name__ == "__main__":
    main()
