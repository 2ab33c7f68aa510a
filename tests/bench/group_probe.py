#!/usr/bin/env python3
"""Python probe for the trial-group turnaround benchmark (bench_turnaround.py): under
`slurmtune run` ([trial] mode = "mpi"), every trial reports once, with t0 = the
wall-clock time its train function started, and ends."""
import sys
import time

from slurmtune.trial import run_trials


def train(t):
    t0 = time.time()
    t.report(1, loss=float(t.params["x"]), t0=t0)


if __name__ == "__main__":
    sys.exit(run_trials(train))
