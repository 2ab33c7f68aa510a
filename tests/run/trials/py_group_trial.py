#!/usr/bin/env python3
"""A Python program for [trial] mode = "mpi": slurmtune.trial.run_trials (mpi4py) splits
the step into trial groups. Each trial checks that t.comm holds its own ranks only (the
sum of the trial id over it), joins a torch.distributed process group of its ranks
(gloo, when python3-torch is there) and all-reduces over it, reports a loss averaged
over its ranks from every rank, and each rank notes the step it left at. It keeps a
checkpoint (the step, written by rank 0) and resumes from it.

    py_group_trial.py [--kill-trial N] [--sleep S]

Trial 2's first attempt raises on every rank (it must fail, be retried, and the group
go on). --kill-trial N: rank 1 of trial N's first attempt dies of SIGKILL at step 2,
which ends the whole MPI step; the coordinator relaunches it and the running trials
resume from their checkpoints.
"""
import argparse
import json
import os
import signal
import sys
import time

from mpi4py import MPI

from slurmtune.trial import TrialStopped, run_trials

try:
    import torch
    import torch.distributed as dist
except ImportError:
    torch = None


def train(t, args):
    mixed = float(t.comm.allreduce(t.id, op=MPI.SUM) != t.id * t.size)
    if t.id == 2 and t.attempt == 0:
        raise RuntimeError("injected failure")
    torch_ok = -1.0
    if torch is not None:
        t.torch_process_group("gloo")
        ones = torch.tensor([float(t.rank + 1)])
        dist.all_reduce(ones)
        torch_ok = float(ones.item() == t.size * (t.size + 1) / 2 and dist.get_world_size() == t.size)
    start = 1
    if t.resume_checkpoint:
        with open(t.resume_checkpoint) as f:
            start = json.load(f)["step"] + 1
    x = float(t.params["x"])
    step = start
    try:
        for step in range(start, 10):
            time.sleep(args.sleep)
            if t.id == args.kill_trial and t.attempt == 0 and step == 2 and t.rank == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            loss = t.comm.allreduce(((x - 0.3) ** 2 + 1.0 / step) / t.size, op=MPI.SUM)
            t.report(step, loss=loss, ranks=float(t.size), mixed=mixed, torch_ok=torch_ok,
                     start=float(start))
            # After the report, not before: a step torn down between the two would resume
            # past a step whose report the coordinator never received (doc/python.md).
            t.save_checkpoint(step, "state.json", lambda path: write_state(path, step))
        note_left(t, step)
    except TrialStopped:
        note_left(t, step)
        raise


def note_left(t, step):
    """Where this rank left the trial, in the trial's folder (a file, not stdout: mpirun
    may drop forwarded output when a killed rank aborts its step). Written whole and then
    renamed: a rank that a step teardown kills mid-write leaves no file rather than an
    empty one, and the test tells the two cases apart."""
    path = os.path.join(t.trial_dir, "left-rank-%d.txt" % t.rank)
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % step)
    os.replace(path + ".tmp", path)


def write_state(path, step):
    with open(path, "w") as f:
        json.dump({"step": step}, f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kill-trial", type=int, default=-1)
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()
    return run_trials(lambda t: train(t, args))


if __name__ == "__main__":
    sys.exit(main())
