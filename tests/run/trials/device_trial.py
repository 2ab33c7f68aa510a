#!/usr/bin/env python3
"""A trial that reports which GPUs it was given: CUDA_VISIBLE_DEVICES as set by the
local launcher (the first device's index as a metric, the count as another), then
sleeps a little per step so that trials overlap."""
import os
import time

from slurmtune import client

devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")
names = [d for d in devices.split(",") if d]
print("CUDA_VISIBLE_DEVICES=%s" % devices, flush=True)
for step in range(1, 4):
    time.sleep(0.3)
    client.report(step, loss=float(client.params()["x"]) ** 2,
                  device=float(names[0]) if names else -1.0, devices=float(len(names)))
