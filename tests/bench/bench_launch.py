#!/usr/bin/env python3
"""Trial launch figures of `slurmtune run` (doc/performance.md).

  bench_launch.py slurm SLURMTUNE LAUNCH_PROBE [--trials 20]
      Under the local Slurm cluster (SLURM_CONF set): inside one `salloc -N 2`, time
      from "a slot is free" to "the trial process runs" for slurmtune's job steps,
      against bare `srun -N1 -n1 --exact` of the same probe (with and without
      --mpi=pmix), measured in the same allocation, one after the other; then the
      same study with [resources] launch = "worker" (trials started by worker steps).
  bench_launch.py startup SLURMTUNE LAUNCH_PROBE [--runs 10]
      Local launcher: from starting `slurmtune run` to the first trial's process running.

The probe takes the wall-clock time first thing in main(); under slurmtune it reports it
as the metric t0. Needs h5py (Debian: /usr/bin/python3).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

STUDY = """[study]
name = "launch"
metric = "loss"
metrics = ["loss", "t0"]
max_trials = {trials}
[search]
x = {{ uniform = [0, 1] }}
[scheduler]
type = "fifo"
max_t = 1
[trial]
command = ["{probe}"]
[resources]
max_concurrent = 1
launch = "{launch}"
"""


def study_file(workdir, probe, trials, launch="step"):
    path = os.path.join(workdir, "study-%s.toml" % launch)
    with open(path, "w") as f:
        f.write(STUDY.format(trials=trials, probe=probe, launch=launch))
    return path


def trial_latencies(h5path):
    """Per trial: t0 minus the launch decision, and t0 minus the previous trial's end."""
    with h5py.File(h5path, "r") as f:
        trials = f["trials"][:]
        metrics = f["metrics"][:]
    t0 = {int(m["trial"]): float(m["t0"]) for m in metrics}
    rows = sorted(trials, key=lambda r: int(r["id"]))
    launch = [t0[int(r["id"])] - float(r["start_time"]) for r in rows]
    free_slot = [t0[int(rows[i]["id"])] - float(rows[i - 1]["end_time"]) for i in range(1, len(rows))]
    return launch, free_slot


def bare_srun(probe, trials, mpi):
    out = []
    for _ in range(trials):
        before = time.time()
        cmd = ["srun", "-N1", "-n1", "--exact"] + (["--mpi=" + mpi] if mpi else []) + [probe]
        t0 = float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()[-1])
        out.append(t0 - before)
    return out


def ms(values):
    return "median %.1f ms (min %.1f, max %.1f)" % (1e3 * statistics.median(values),
                                                    1e3 * min(values), 1e3 * max(values))


def inside(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-launch-")
    bare = bare_srun(args.probe, args.trials, mpi=None)
    bare_none = bare_srun(args.probe, args.trials, mpi="none")
    bare_pmix = bare_srun(args.probe, args.trials, mpi="pmix")
    output = os.path.join(workdir, "study.h5")
    subprocess.run([args.slurmtune, "run", study_file(workdir, args.probe, args.trials), "-o", output,
                    "--progress-interval", "3600"], check=True, cwd=workdir,
                   stderr=subprocess.DEVNULL)
    launch, free_slot = trial_latencies(output)
    workers = os.path.join(workdir, "workers.h5")
    subprocess.run([args.slurmtune, "run", study_file(workdir, args.probe, args.trials, "worker"), "-o",
                    workers, "--progress-interval", "3600"], check=True, cwd=workdir,
                   stderr=subprocess.DEVNULL)
    worker_launch, worker_free_slot = trial_latencies(workers)
    worker_launch = worker_launch[1:]  # the first waited for the worker steps to connect
    print("bare srun -N1 -n1 --exact (MpiDefault):     " + ms(bare))
    print("bare srun -N1 -n1 --exact --mpi=none:       " + ms(bare_none))
    print("bare srun -N1 -n1 --exact --mpi=pmix:       " + ms(bare_pmix))
    print("slurmtune trial step, launch -> running:    " + ms(launch))
    print("slurmtune trial step, slot free -> running: " + ms(free_slot))
    print("ratio slurmtune (slot free -> running) / bare srun (MpiDefault): %.2f"
          % (statistics.median(free_slot) / statistics.median(bare)))
    print("slurmtune worker step, launch -> running:   " + ms(worker_launch))
    print("slurmtune worker step, slot free -> running:" + ms(worker_free_slot))


def slurm(args):
    cmd = ["salloc", "-N", "2", "--ntasks-per-node", "2", sys.executable, os.path.abspath(__file__),
           "inside", args.slurmtune, args.probe, "--trials", str(args.trials)]
    subprocess.run(cmd, check=True)


def startup(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-start-")
    study = study_file(workdir, args.probe, 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    samples = []
    for run in range(args.runs):
        output = os.path.join(workdir, "run%d.h5" % run)
        before = time.time()
        subprocess.run([args.slurmtune, "run", study, "-o", output, "--launcher", "local"],
                       check=True, cwd=workdir, env=env, stderr=subprocess.DEVNULL)
        with h5py.File(output, "r") as f:
            t0 = float(f["metrics"][0]["t0"])
        samples.append(t0 - before)
    print("slurmtune run start -> first trial running (local launcher): " + ms(samples))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["slurm", "inside", "startup"])
    parser.add_argument("slurmtune")
    parser.add_argument("probe")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    args.slurmtune, args.probe = os.path.abspath(args.slurmtune), os.path.abspath(args.probe)
    {"slurm": slurm, "inside": inside, "startup": startup}[args.mode](args)


if __name__ == "__main__":
    main()
