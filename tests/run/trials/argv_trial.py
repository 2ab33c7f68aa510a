#!/usr/bin/env python3
"""A trial that records what it was given, for the conditional-space scenario: its argv
and its parameters as the client reads them (JSON, to --record), then reports a loss.

    argv_trial.py --x X [--momentum M] [--warmup W] --record PATH [--steps N] [--sleep S] [--cost]

With --cost it also reports `cost`, a second objective that grows with x (the
two-objective scenarios), and `mem`, which a constraint may bound.
"""
import argparse
import json
import sys
import time

from slurmtune import client

parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float, required=True)
parser.add_argument("--momentum", type=float)
parser.add_argument("--warmup", type=int)
parser.add_argument("--record", required=True)
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--sleep", type=float, default=0.05)
parser.add_argument("--cost", action="store_true")
args = parser.parse_args()
with open(args.record, "w") as f:
    json.dump({"argv": sys.argv[1:], "params": client.params()}, f)
for step in range(1, args.steps + 1):
    time.sleep(args.sleep)
    loss = (args.x - 0.3) ** 2 + 1.0 / step + 0.1 * (args.momentum or 0.5)
    extra = {"cost": (args.x + 1.0) * step, "mem": 4.0 * abs(args.x)} if args.cost else {}
    client.report(step, loss=loss, **extra)
