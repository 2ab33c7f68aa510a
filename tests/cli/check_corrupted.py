#!/usr/bin/env python3
"""Corrupted results files: every reading command answers, exit 0 or 1, never hangs.

    check_corrupted.py SLURMTUNE STUDY.toml [--copies N] [--seed S]

Records a simulated study, then writes N copies, each with one 64-byte burst of flipped
bytes at a seeded random offset, and runs `status`, `best` and `export` on each. A copy
whose damage HDF5 notices must fail with exit status 1 and a message that names the file
(and says "corrupted" when the damage is in HDF5's structures); one whose damage lands in
unused space or raw values may succeed. A command still running after HANG_S seconds is a
hang (HDF5's SWMR retry loop once made some of these run for more than ten minutes).
Standard library only.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HANG_S = 60  # a hang detector, not a speed requirement: a healthy answer takes milliseconds
COMMANDS = (["status"], ["best"], ["export", "--table", "metrics"], ["export", "--table", "events"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("study")
    parser.add_argument("--copies", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="slurmtune-corrupted-")
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work):
    original = os.path.join(work, "study.h5")
    subprocess.run([args.slurmtune, "simulate", args.study, "--workers", "8", "--quiet",
                    "-o", original], check=True, stdout=subprocess.DEVNULL)
    data = open(original, "rb").read()
    rng = random.Random(args.seed)
    outcomes = {"ok": 0, "corrupted": 0, "other error": 0}
    slowest = 0.0
    failures = []
    for copy in range(args.copies):
        offset = rng.randrange(0, len(data) - 64)
        damaged = bytearray(data)
        for i in range(64):
            damaged[offset + i] ^= rng.randrange(1, 256)
        path = os.path.join(work, "copy-%03d.h5" % copy)
        with open(path, "wb") as f:
            f.write(damaged)
        for command in COMMANDS:
            started = time.monotonic()
            try:
                done = subprocess.run([args.slurmtune] + command + [path], capture_output=True,
                                      text=True, timeout=HANG_S)
            except subprocess.TimeoutExpired:
                failures.append("%s %s (burst at %d): still running after %d s"
                                % (" ".join(command), path, offset, HANG_S))
                continue
            slowest = max(slowest, time.monotonic() - started)
            message = done.stderr.strip()
            if done.returncode == 0:
                outcomes["ok"] += 1
            elif done.returncode != 1:
                failures.append("%s on the copy with a burst at %d: exit status %d\n%s"
                                % (" ".join(command), offset, done.returncode, message))
            elif os.path.basename(path) not in message:
                failures.append("%s on the copy with a burst at %d: the error does not name the "
                                "file: %s" % (" ".join(command), offset, message))
            elif "HDF5" in message and "corrupted" not in message:
                failures.append("%s on the copy with a burst at %d: an HDF5 error not reported "
                                "as corruption: %s" % (" ".join(command), offset, message))
            else:
                outcomes["corrupted" if "corrupted" in message else "other error"] += 1
    for failure in failures:
        print("FAIL: " + failure)
    print("%d damaged copies x %d commands: %s; slowest answer %.2f s"
          % (args.copies, len(COMMANDS), outcomes, slowest))
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
