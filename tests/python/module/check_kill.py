#!/usr/bin/env python3
"""Kill test: a study-file writer SIGKILLed at 20 random moments always leaves a file
that opens (h5py, `slurmtune status`) and holds every row it announced as flushed.
The writer simulates a deterministic study, so every file must hold a prefix of the same
sequence of reports. Most rounds count their moment from the writer's first
announcement (the file exists then, however slowly a loaded machine started the
program); every fourth counts it from the program's start, so that some kills land while
the file is being made: then there must be no file at all, never a half-made one.
Usage: check_kill.py SLURMTUNE KILLABLE_WRITER STUDY.toml"""
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ROUNDS = 20


STARTUP_BOUND_S = 120  # a program that has not announced its file by then has failed


def run_and_kill(killable_writer, study_toml, path, delay_s, from_start):
    writer = subprocess.Popen([killable_writer, study_toml, path, "0.02"], stdout=subprocess.PIPE)
    deadline = time.monotonic() + (delay_s if from_start else STARTUP_BOUND_S)
    announced, buffer = 0, b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([writer.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            chunk = os.read(writer.stdout.fileno(), 65536)
            if not chunk:
                break
            if not buffer and not from_start:  # the first announcement: the moment counts
                deadline = time.monotonic() + delay_s
            buffer += chunk
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    buffer += writer.stdout.read()
    for line in buffer.decode().splitlines():
        if line.startswith("flushed "):
            announced = int(line.split()[1])
    return announced


def main():
    slurmtune, killable_writer, study_toml = sys.argv[1:4]
    rng = random.Random(1122)
    reference = None
    with tempfile.TemporaryDirectory() as workdir:
        for round_ in range(ROUNDS):
            path = os.path.join(workdir, f"killed{round_}.h5")
            from_start = round_ % 4 == 3
            announced = run_and_kill(killable_writer, study_toml, path,
                                     rng.uniform(0.0, 0.1) if from_start else rng.uniform(0.05, 0.8),
                                     from_start)
            if not os.path.exists(path):
                assert from_start and announced == 0, \
                    f"round {round_}: no file, yet {announced} rows were announced"
                print(f"round {round_:2}: killed before the file was published: no file, as it should be")
                continue
            with h5py.File(path, "r", swmr=True) as f:
                committed = int(f["commit"][0]["metrics"])
                rows = f["metrics"][:committed]
            assert committed >= announced, f"round {round_}: {committed} rows < {announced} announced"
            if reference is None or len(rows) > len(reference):
                shorter, reference = reference, rows
            else:
                shorter = rows
            if shorter is not None:
                assert np.array_equal(shorter, reference[:len(shorter)]), f"round {round_}: rows differ"
            status = subprocess.run([slurmtune, "status", path], capture_output=True, text=True)
            assert status.returncode == 0, status.stderr
            print(f"round {round_:2}: {announced:7} rows announced, {committed:7} committed, status ok")
    print(f"kill test: {ROUNDS} SIGKILLs, every file opened with every announced row")


if __name__ == "__main__":
    main()
