#!/usr/bin/env python3
"""JSON readers on slurmtune's own lines (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement), beside
Python's json.loads, the peer every event log is written with:

  * replay events as `slurmtune replay` reads them (written by Python's json module:
    starts with a configuration, reports with 1 % NaN values, ends);
  * REPORT payloads as the C++ client sends them (the control plane's busiest message).

It also times `slurmtune replay` end to end on the events (ASHA), against the same
lines read by json.loads alone.

    bench_json.py BUILD_DIR [LINES=200000]
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

STUDY = """
[study]
name = "json-bench"
metric = "val_loss"
mode = "min"
max_trials = 1000000
[search]
lr = { loguniform = [1e-4, 1e-1] }
layers = { randint = [1, 9] }
opt = { choice = ["adam", "sgd"] }
[scheduler]
type = "asha"
max_t = 27
grace_period = 1
reduction_factor = 3
"""


def replay_events(count, rng):
    lines, trial = [], 0
    while len(lines) < count:
        config = {"lr": 10 ** rng.uniform(-4, -1), "layers": rng.randint(1, 8),
                  "opt": rng.choice(["adam", "sgd"])}
        lines.append(json.dumps({"type": "start", "trial": trial, "config": config}))
        for step in range(1, 10):
            value = float("nan") if rng.random() < 0.01 else rng.uniform(0.05, 2.0)
            lines.append(json.dumps({"type": "report", "trial": trial, "step": step,
                                     "value": value}))
        lines.append(json.dumps({"type": "end", "trial": trial, "state": "completed"}))
        trial += 1
    return lines[:count]


def report_payloads(count, rng):
    # As the C++ client encodes REPORT: {"step": S, "metrics": {"name": value, ...}}.
    return [json.dumps({"step": float(i % 100), "metrics": {
        "val_loss": rng.uniform(0.05, 2.0), "accuracy": rng.uniform(0, 1)}})
        for i in range(count)]


def python_ns_per_line(lines, rounds=5):
    best = math.inf
    for _ in range(rounds):
        start = time.perf_counter()
        for line in lines:
            json.loads(line)
        best = min(best, time.perf_counter() - start)
    return best * 1e9 / len(lines)


def main():
    build = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="slurmtune-json-") as scratch:
        for name, lines in (("replay events", replay_events(count, rng)),
                            ("REPORT payloads", report_payloads(count, rng))):
            path = os.path.join(scratch, name.split()[0] + ".jsonl")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            print("## %s (%d lines, %.0f bytes each on average)" %
                  (name, len(lines), sum(map(len, lines)) / len(lines)))
            sys.stdout.flush()
            subprocess.run([os.path.join(build, "tests", "bench", "bench_json"), path], check=True)
            print("%-44s %8.1f ns/line" % ("Python json.loads (the peer)", python_ns_per_line(lines)))
            if name == "replay events":
                study = os.path.join(scratch, "study.toml")
                with open(study, "w") as f:
                    f.write(STUDY)
                best = math.inf
                for _ in range(3):
                    start = time.perf_counter()
                    subprocess.run([os.path.join(build, "src", "slurmtune"), "replay", study, path],
                                   check=True, stdout=subprocess.DEVNULL)
                    best = min(best, time.perf_counter() - start)
                print("%-44s %8.1f ns/line (whole command: read, decide, write)" %
                      ("slurmtune replay (asha)", best * 1e9 / len(lines)))
            print()


if __name__ == "__main__":
    main()
