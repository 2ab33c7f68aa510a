#!/usr/bin/env python3
"""The coordinator at scale (issue #16 §4; doc/performance.md): many trials running at
once, all reporting, on a local Slurm cluster that declares more cores than this machine
has (the trials mostly sleep).

  bench_scale.py SLURMTUNE LOAD_PROBE [--trials 2000] [--steps 20] [--interval 0.5]
                 [--cores 500]                          (SLURM_CONF set; 4 nodes of CORES CPUs:
                                                         tests/slurm/local-cluster.sh start DIR 4 CORES)

Inside one `salloc -N 4`: a fifo study of TRIALS trials on worker steps, all running at
once (4 x CORES slots), each reporting every INTERVAL s for STEPS steps
(tests/bench/runtime/load_probe.cpp). Prints the reports per second the coordinator took while
every trial ran, the decision latency the trials saw (p50, p99, max), and the
coordinator's peak memory.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

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
"""


def inside(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-scale-")
    study = os.path.join(workdir, "study.toml")
    with open(study, "w") as f:
        f.write(STUDY.format(trials=args.trials, steps=args.steps, interval=args.interval,
                             probe=args.probe))
    output = os.path.join(workdir, "study.h5")
    run = subprocess.run(["/usr/bin/time", "-f", "%M", args.slurmtune, "run", study, "-o", output,
                          "--progress-interval", "3600"], cwd=workdir, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("slurmtune run failed:\n" + run.stderr[-3000:])
    peak_mib = int(run.stderr.strip().splitlines()[-1]) / 1024
    with h5py.File(output, "r") as f:
        metrics = f["metrics"][:]
        trials = f["trials"][:]
    times = np.sort(metrics["time"])
    # The window in which every trial ran: from the last start to the first end.
    start, end = float(np.max(trials["start_time"])), float(np.min(trials["end_time"]))
    during = np.count_nonzero((times >= start) & (times <= end))
    latency = metrics["latency_ms"][metrics["latency_ms"] >= 0]
    print("%d trials at once on worker steps, %d reports: %.0f reports/s while all ran "
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
    parser.add_argument("--inside", action="store_true")
    args = parser.parse_args()
    args.slurmtune, args.probe = os.path.abspath(args.slurmtune), os.path.abspath(args.probe)
    if args.inside:
        return inside(args)
    subprocess.run(["salloc", "-N", "4", "--ntasks-per-node", str(args.cores), sys.executable,
                    os.path.abspath(__file__), args.slurmtune, args.probe, "--trials", str(args.trials),
                    "--steps", str(args.steps), "--interval", str(args.interval), "--inside"],
                   check=True)


if __name__ == "__main__":
    main()
