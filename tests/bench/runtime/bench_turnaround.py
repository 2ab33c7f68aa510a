#!/usr/bin/env python3
"""Trial-group turnaround (doc/performance.md): the median gap between one trial ending
and the next one starting in the same group, against launching a new MPI job step.

  bench_turnaround.py SLURMTUNE GROUP_PROBE [--trials 40] [--python]   (SLURM_CONF set)

Inside one `salloc -N 4 --ntasks-per-node 1`:
  - bare: `srun -N2 -n2 --mpi=pmix GROUP_PROBE` 10 times; time from calling srun to rank
    0 being past MPI_Init (what a step per trial costs before any work);
  - slurmtune: a [trial] mode = "mpi" study, 2 groups of 2 nodes, fifo, one report per
    trial; gap = the next trial's t0 (taken in its train function) minus the previous
    trial's recorded end, per group;
  - with --python: the same study with the Python groups of slurmtune.trial
    (tests/bench/runtime/group_probe.py, mpi4py) instead of the C++ probe.
Needs h5py (Debian: /usr/bin/python3), and mpi4py for --python.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

STUDY = """[study]
name = "turnaround"
metric = "loss"
metrics = ["loss", "t0", "report_ms"]
max_trials = {trials}
[search]
x = {{ uniform = [0, 1] }}
[scheduler]
type = "fifo"
max_t = 2
[trial]
mode = "mpi"
program = {program}
[resources]
nodes = 2
"""


def ms(values):
    return "median %.2f ms (min %.2f, max %.2f, n=%d)" % (
        1e3 * statistics.median(values), 1e3 * min(values), 1e3 * max(values), len(values))


def inside(args):
    bare = []
    for _ in range(10):
        before = time.time()
        out = subprocess.run(["srun", "-N2", "-n2", "--exact", "--mpi=pmix", args.probe],
                             check=True, capture_output=True, text=True).stdout
        bare.append(float(out.split()[-1]) - before)
    print("new srun step, 2 nodes, --mpi=pmix, to rank 0 past MPI_Init: " + ms(bare))
    report("C++ trial group (slurmtune::run_trials)", group_gaps(args, [args.probe]))
    if args.python:
        probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "group_probe.py")
        report("Python trial group (slurmtune.trial.run_trials)",
               group_gaps(args, ["/usr/bin/python3", probe]))


def report(what, result):
    gaps, report_s, groups = result
    print("%s, previous trial ended -> next trial's train() running: %s; groups %s"
          % (what, ms(gaps), groups))
    print("%s, a collective report's round trip: %s" % (what, ms(report_s)))


def group_gaps(args, program):
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-turnaround-")
    study = os.path.join(workdir, "study.toml")
    with open(study, "w") as f:
        f.write(STUDY.format(trials=args.trials, program=json.dumps(program)))
    output = os.path.join(workdir, "study.h5")
    subprocess.run([args.slurmtune, "run", study, "-o", output, "--progress-interval", "3600"],
                   check=True, cwd=workdir, stderr=subprocess.DEVNULL)
    with h5py.File(output, "r") as f:
        trials = f["trials"][:]
        metrics = f["metrics"][:]
    t0 = {int(m["trial"]): float(m["t0"]) for m in metrics}
    report_ms = [float(m["report_ms"]) / 1e3 for m in metrics if m["step"] == 2]
    by_group = {}
    for t in trials:
        by_group.setdefault(t["nodes"].decode(), []).append(t)
    gaps = []
    for rows in by_group.values():
        rows.sort(key=lambda r: float(r["start_time"]))
        for prev, nxt in zip(rows, rows[1:]):
            gaps.append(t0[int(nxt["id"])] - float(prev["end_time"]))
    return gaps, report_ms, sorted(by_group)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("probe")
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--inside", action="store_true")
    parser.add_argument("--python", action="store_true", help="also the Python trial groups")
    parser.add_argument("--yield", dest="yield_when_idle", action="store_true",
                        help="OMPI_MCA_mpi_yield_when_idle=1 (idle MPI ranks yield their core)")
    args = parser.parse_args()
    args.slurmtune, args.probe = os.path.abspath(args.slurmtune), os.path.abspath(args.probe)
    if args.inside:
        return inside(args)
    # Open MPI's default, aggressive polling: 4 ranks on this 2-core machine keep every
    # core busy, as on a node with one rank per core (--yield: idle ranks yield).
    if args.yield_when_idle:
        os.environ["OMPI_MCA_mpi_yield_when_idle"] = "1"
    subprocess.run(["salloc", "-N", "4", "--ntasks-per-node", "1", sys.executable,
                    os.path.abspath(__file__), args.slurmtune, args.probe, "--trials",
                    str(args.trials), "--inside"] + (["--python"] if args.python else []), check=True)


if __name__ == "__main__":
    main()
