#!/usr/bin/env python3
"""What a SIGKILL in a results file's first milliseconds leaves behind.

    early_kills.py KILLABLE_WRITER STUDY.toml [N]

Starts build/tests/killable_writer N times (default 200) and kills it at uniform(0, 60 ms)
after its start (run it on an idle machine: a loaded one starts the program later), then
counts the paths that hold no file, a file h5py opens (SWMR), and a file it cannot open.
The last must be 0: slurmtune publishes a results file only once it is complete
(doc/hdf5-layout.md). Example:

    /usr/bin/python3 tests/bench/components/early_kills.py build/tests/killable_writer \\
        share/slurmtune/examples/mlp-digits.toml
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import h5py


def main():
    writer, study = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    rng = random.Random(7)
    counts = {"no file": 0, "readable": 0, "unreadable": 0}
    with tempfile.TemporaryDirectory() as folder:
        for i in range(rounds):
            path = os.path.join(folder, "k%d.h5" % i)
            child = subprocess.Popen([writer, study, path, "0.02"], stdout=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.06))
            child.send_signal(signal.SIGKILL)
            child.wait()
            if not os.path.exists(path):
                counts["no file"] += 1
                continue
            try:
                with h5py.File(path, "r", swmr=True) as f:
                    f["commit"][0]
                counts["readable"] += 1
            except (OSError, KeyError):  # cannot open, or no /commit
                counts["unreadable"] += 1
    print(", ".join("%s: %d" % item for item in counts.items()))
    sys.exit(1 if counts["unreadable"] else 0)


if __name__ == "__main__":
    main()
