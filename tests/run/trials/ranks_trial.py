#!/usr/bin/env python3
"""A trial of several ranks whose every rank holds its own connection: rank 0 reports
each step, the others ask for the trial's decision after each step (slurmtune.client,
as a program without a process group of its own would). Each rank prints where it runs:

    rank R of N on NODE in SLURM_STEP
    rank R left at step S (stop) | rank R done

    ranks_trial.py [--steps N] [--sleep S]
"""
import argparse
import os
import time

from slurmtune import client

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=9)
parser.add_argument("--sleep", type=float, default=0.1)
args = parser.parse_args()
rank = int(os.environ.get("SLURM_PROCID", "0"))
print("rank %d of %s on %s in %s.%s" % (rank, os.environ.get("SLURM_NTASKS", "1"),
                                         os.environ.get("SLURMD_NODENAME", ""),
                                         os.environ.get("SLURM_JOB_ID", ""),
                                         os.environ.get("SLURM_STEP_ID", "")), flush=True)
x = float(client.params()["x"])
try:
    for step in range(1, args.steps + 1):
        time.sleep(args.sleep)
        if rank == 0:
            client.report(step, loss=(x - 0.3) ** 2 + 1.0 / step)
        else:
            client.ask()
except client.TrialStopped as stopped:
    print("rank %d left at step %s (%s)" % (rank, stopped.step, stopped.decision), flush=True)
else:
    print("rank %d done" % rank, flush=True)
