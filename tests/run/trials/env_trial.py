#!/usr/bin/env python3
"""A trial that says what it was given: CUDA_VISIBLE_DEVICES as set by the local
launcher (the first device's index as a metric, the count as another) and the Slurm
step that runs it and its credential file's path (printed), then sleeps a little per step so that trials overlap.

    env_trial.py [--steps N] [--sleep S]
"""
import argparse
import os
import time

from slurmtune import client

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--sleep", type=float, default=0.3)
args = parser.parse_args()
devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")
names = [d for d in devices.split(",") if d]
print("CUDA_VISIBLE_DEVICES=%s" % devices, flush=True)
print("SLURM_STEP=%s.%s on %s" % (os.environ.get("SLURM_JOB_ID", ""), os.environ.get("SLURM_STEP_ID", ""),
                                 os.environ.get("SLURMD_NODENAME", "")), flush=True)
print("SLURMTUNE_TOKEN_FILE=%s" % os.environ.get("SLURMTUNE_TOKEN_FILE", ""), flush=True)
x = float(client.params()["x"])
for step in range(1, args.steps + 1):
    time.sleep(args.sleep)
    client.report(step, loss=(x - 0.3) ** 2 + 1.0 / step,
                  device=float(names[0]) if names else -1.0, devices=float(len(names)))
