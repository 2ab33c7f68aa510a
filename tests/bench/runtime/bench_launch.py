#!/usr/bin/env python3
"""Trial launch figures of `slurmtune run` (doc/performance.md).

  bench_launch.py slurm SLURMTUNE LAUNCH_PROBE [--trials 20]
      Under the local Slurm cluster (SLURM_CONF set): inside one `salloc -N 2`, time
      from "a slot is free" to "the trial process runs" for slurmtune's job steps,
      against bare `srun -N1 -n1 --exact` of the same probe (with and without
      --mpi=pmix), measured in the same allocation, one after the other; then the
      same study with [resources] launch = "worker" (trials started by worker steps).
  bench_launch.py throughput SLURMTUNE LAUNCH_PROBE [--trials 400]
      Under the local Slurm cluster: inside one `salloc -N 4 --ntasks-per-node 4`, trials
      per second sustained by a study of one-report trials on all 16 cores, a job step
      per trial against worker steps.
  bench_launch.py many SLURMTUNE LAUNCH_PROBE [--trials 100000] [--sleep 1] [--cores 64]
      Under a local Slurm cluster of 4 nodes with CORES CPUs each (local-cluster.sh
      start DIR 4 CORES): one study of TRIALS trials of SLEEP seconds with worker steps,
      in one `salloc` (the cluster's MaxStepCount is 500); wall time, trials/s, the
      coordinator's peak memory, the results file's size.
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
command = ["{probe}"{probe_args}]
[resources]
{concurrency}launch = "{launch}"
"""


def study_file(workdir, probe, trials, launch="step", one_at_a_time=True, sleep=0.0):
    path = os.path.join(workdir, "study-%s.toml" % launch)
    with open(path, "w") as f:
        f.write(STUDY.format(trials=trials, probe=probe, launch=launch,
                             probe_args=', "%g"' % sleep if sleep else "",
                             concurrency="max_concurrent = 1\n" if one_at_a_time else ""))
    return path


def many(args):
    cmd = ["salloc", "-N", "4", "--ntasks-per-node", str(args.cores), sys.executable,
           os.path.abspath(__file__), "many-inside", args.slurmtune, args.probe, "--trials",
           str(args.trials), "--sleep", str(args.sleep), "--cores", str(args.cores)]
    subprocess.run(cmd, check=True)


def many_inside(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-many-")
    study = study_file(workdir, args.probe, args.trials, "worker", False, args.sleep)
    output = os.path.join(workdir, "study.h5")
    before = time.time()
    run = subprocess.run(["/usr/bin/time", "-f", "%M", args.slurmtune, "run", study, "-o", output,
                          "--progress-interval", "60"], cwd=workdir, capture_output=True, text=True)
    wall = time.time() - before
    if run.returncode != 0:
        raise SystemExit("slurmtune run failed:\n" + run.stderr[-3000:])
    peak_kib = int(run.stderr.strip().splitlines()[-1])
    with h5py.File(output, "r") as f:
        trials = f["trials"][:]
        done = sum(1 for t in trials if t["status"] in (3, 4))  # completed, stopped
    print("%d trials of %g s, 4 nodes x %d cores, worker steps: %d ended well, wall %.0f s "
          "(%.1f trials/s; ideal %.0f s), coordinator peak RSS %.0f MiB, results file %.1f MiB"
          % (len(trials), args.sleep, args.cores, done, wall, len(trials) / wall,
             args.trials * args.sleep / (4 * args.cores), peak_kib / 1024,
             os.path.getsize(output) / 2**20))


def trials_per_second(args, workdir, launch):
    output = os.path.join(workdir, "throughput-%s.h5" % launch)
    subprocess.run([args.slurmtune, "run", study_file(workdir, args.probe, args.trials, launch, False),
                    "-o", output, "--progress-interval", "3600"], check=True, cwd=workdir,
                   stderr=subprocess.DEVNULL)
    with h5py.File(output, "r") as f:
        trials = f["trials"][:]
    span = max(float(t["end_time"]) for t in trials) - min(float(t["start_time"]) for t in trials)
    return len(trials) / span


def throughput_inside(args):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-throughput-")
    for launch in ("step", "worker"):
        print("%d one-report trials, 16 cores on 4 nodes, launch = \"%s\": %.1f trials/s"
              % (args.trials, launch, trials_per_second(args, workdir, launch)))


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


def throughput(args):
    cmd = ["salloc", "-N", "4", "--ntasks-per-node", "4", sys.executable, os.path.abspath(__file__),
           "throughput-inside", args.slurmtune, args.probe, "--trials", str(args.trials)]
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
    parser.add_argument("mode", choices=["slurm", "inside", "startup", "throughput", "throughput-inside",
                                         "many", "many-inside"])
    parser.add_argument("--sleep", type=float, default=1.0, help="many: seconds per trial")
    parser.add_argument("--cores", type=int, default=64, help="many: CPUs per node")
    parser.add_argument("slurmtune")
    parser.add_argument("probe")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    args.slurmtune, args.probe = os.path.abspath(args.slurmtune), os.path.abspath(args.probe)
    {"slurm": slurm, "inside": inside, "startup": startup, "throughput": throughput,
     "throughput-inside": throughput_inside, "many": many, "many-inside": many_inside}[args.mode](args)


if __name__ == "__main__":
    main()
