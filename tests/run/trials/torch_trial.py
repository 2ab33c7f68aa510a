#!/usr/bin/env python3
"""A distributed PyTorch trial (gloo) for the rendezvous tests: it joins its process
group with init_method="env://" from nothing but what slurmtune run set (MASTER_ADDR,
MASTER_PORT, WORLD_SIZE, RANK), all-reduces a loss over its ranks, and reports from
every rank through slurmtune.distributed; each rank says at which step it left.

    torch_trial.py --steps 9 [--sleep 0.2] [--reporter torch|mpi] [--kill-trial N]

--reporter mpi broadcasts the decisions over mpi4py's COMM_WORLD instead of the torch
process group (the trial must then be started by srun or mpirun). --kill-trial N: rank
1 of trial N's first attempt dies of SIGKILL at step 1, with rank 0 in an all-reduce.
"""
import argparse
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

from slurmtune.distributed import DistributedClient, TrialStopped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=9)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--reporter", choices=["torch", "mpi"], default="torch")
    parser.add_argument("--kill-trial", type=int, default=-1)
    args = parser.parse_args()
    # Evidence for a rendezvous that never completes (seen once in 10 stress runs under
    # load, with nothing in either log): which rank of which attempt got this far.
    print("trial %s attempt %s: rank %s of %s joining %s:%s" % (
        os.environ.get("SLURMTUNE_TRIAL_ID"), os.environ.get("SLURMTUNE_ATTEMPT"),
        os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK")), os.environ.get("WORLD_SIZE"),
        os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")), file=sys.stderr, flush=True)
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.reporter == "mpi":
        from mpi4py import MPI
        reporter = DistributedClient.mpi(MPI.COMM_WORLD)
        assert reporter.rank == rank, "mpi4py and torch disagree on the rank"
    else:
        reporter = DistributedClient.torch()
    x = float(reporter.params()["x"])
    where = "%s rank %d/%d local %s node %s port %s" % (
        os.uname().nodename, rank, world, os.environ.get("LOCAL_RANK"),
        os.environ.get("NODE_RANK"), os.environ.get("MASTER_PORT"))
    print("joined: " + where, flush=True)
    step = 0
    try:
        for step in range(1, args.steps + 1):
            time.sleep(args.sleep)
            if (step == 1 and rank == 1 and os.environ["SLURMTUNE_TRIAL_ID"] == str(args.kill_trial)
                    and os.environ["SLURMTUNE_ATTEMPT"] == "0"):
                os.kill(os.getpid(), signal.SIGKILL)
            # Every rank contributes; the sum is the same everywhere only if all joined.
            part = torch.tensor([(x - 0.3) ** 2 + 1.0 / step + rank], dtype=torch.float64)
            dist.all_reduce(part)
            loss = (part.item() - world * (world - 1) / 2) / world
            reporter.report(step=step, loss=loss, ranks=float(world),
                            port=float(os.environ["MASTER_PORT"]))
        print("rank %d left at step %d (completed)" % (rank, step), flush=True)
    except TrialStopped as stopped:
        print("rank %d left at step %d (%s)" % (rank, step, stopped.decision), flush=True)
    dist.barrier()  # nobody hangs: every rank got the same decision
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
