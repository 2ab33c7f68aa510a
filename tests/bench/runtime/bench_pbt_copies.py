#!/usr/bin/env python3
"""PBT with large checkpoints and the coordinator's loop (issue #62, doc/performance.md):
what keeping and cloning checkpoints of GB does to the longest turn of the loop.

  bench_pbt_copies.py SLURMTUNE [--population 4] [--gb 2] [--epochs 8] [--interval 2]
                      [--workdir DIR]

A local `slurmtune run` of a PBT study whose trials write a checkpoint of --gb GB of
incompressible data each time they are asked to (every --interval epochs for the upper
quarter), sleep 0.5 s an epoch and report; the lower quarter exploits the upper one. It
prints the loop figures of the results file (its longest turn, what filled it, the turns
over 100 ms), the exploits and the copies the log names, and the wall time. The study
folder is removed afterwards (up to population x 3 x GB of disk while it runs: each
trial's own checkpoint, its kept copy and a clone).
Needs h5py (Debian: /usr/bin/python3).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
from slurmtune.study import loop_figures  # noqa: E402

TRIAL = r'''
import os, sys, time
from slurmtune import client

size = int(float(sys.argv[1]) * (1 << 30))
epochs = int(sys.argv[2])
block = os.urandom(64 << 20)
start = 1
resume = client.resume_checkpoint()
if resume:
    with open(resume, "rb") as f:
        start = int(f.read(16).split(b"\n")[0]) + 1
path = os.path.join(client.trial_dir(), "checkpoint.bin")

def save(epoch):
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(b"%-15d\n" % epoch)
        written = 16
        while written < size:
            chunk = block[: min(len(block), size - written)]
            f.write(chunk)
            written += len(chunk)
    os.replace(partial, path)
    client.checkpoint_saved(epoch, path)

for epoch in range(start, epochs + 1):
    time.sleep(0.5)
    loss = (client.trial_id() + 1) / epoch
    try:
        client.report(step=epoch, loss=loss)
    except client.TrialStopped as stopped:
        if stopped.checkpoint:
            save(epoch)
        raise
    if client.should_checkpoint():
        save(epoch)
'''

STUDY = """[study]
name = "pbt-copies"
metric = "loss"
mode = "min"
seed = 3
max_trials = {population}
[search]
lr = {{ loguniform = [0.01, 1.0] }}
[scheduler]
type = "pbt"
resource = "epoch"
max_t = {epochs}
perturbation_interval = {interval}
[scheduler.mutations]
lr = "resample"
[trial]
command = ["/usr/bin/python3", "{trial}", "{gb}", "{epochs}", "--lr={{lr}}"]
max_failures = 0
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slurmtune")
    parser.add_argument("--population", type=int, default=4)
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--interval", type=int, default=2)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-pbt-copies-", dir=args.workdir)
    try:
        trial = os.path.join(workdir, "trial.py")
        with open(trial, "w") as f:
            f.write(TRIAL)
        study = os.path.join(workdir, "study.toml")
        with open(study, "w") as f:
            f.write(STUDY.format(population=args.population, epochs=args.epochs,
                                 interval=args.interval, trial=trial, gb=args.gb))
        path = os.path.join(workdir, "study.h5")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "share", "slurmtune", "python"))
        began = time.time()
        run = subprocess.run([args.slurmtune, "run", study, "-o", path, "--slots",
                              str(args.population)], capture_output=True, text=True, env=env,
                             timeout=3600)
        wall = time.time() - began
        if run.returncode != 0:
            sys.exit("slurmtune run failed (%d):\n%s" % (run.returncode, run.stderr[-4000:]))
        log = run.stderr + run.stdout
        with h5py.File(path, "r") as f:
            commit = f["commit"][0]
            exploits = int(commit["exploits"])
            checkpoints = f["checkpoints"][: int(commit["checkpoints"])]
            figures = loop_figures(commit, commit.dtype.names)
        print("population %d, %g GB checkpoints, %d epochs, perturbation every %d: %.0f s wall"
              % (args.population, args.gb, args.epochs, args.interval, wall))
        print("exploits: %d; checkpoints indexed: %d (%.1f GB)"
              % (exploits, len(checkpoints), sum(int(c["size"]) for c in checkpoints) / (1 << 30)))
        print("loop: longest turn %.1f ms (%s); turns %d, over 10 ms %d, over 100 ms %d, "
              "over 1 s %d" % (figures["longest_ms"], figures["longest_work"], figures["turns"],
                               figures["over_10ms"], figures["over_100ms"], figures["over_1s"]))
        for line in log.splitlines():
            if re.search(r"longest loop turn|loop: busy|exploits trial|clone|kept", line):
                print("  log: " + line.strip()[-200:])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
