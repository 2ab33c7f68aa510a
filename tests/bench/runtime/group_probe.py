#!/usr/bin/env python3
"""Python probe for the trial-group turnaround benchmark (bench_turnaround.py): under
`slurmtune run` ([trial] mode = "mpi"), every trial reports with t0 = the wall-clock
time its train function started, three times, the last with report_ms = how long the
one before took (the collective report's round trip), and ends."""
import sys
import time

from slurmtune.trial import run_trials


def train(t):
    t0 = time.time()
    x = float(t.params["x"])
    t.report(1, loss=x, t0=t0)
    before = time.time()
    t.report(1.5, loss=x, t0=t0)  # timed: the collective report's round trip
    t.report(2, loss=x, t0=t0, report_ms=1e3 * (time.time() - before))


if __name__ == "__main__":
    sys.exit(run_trials(train))
