#!/usr/bin/python3
"""Time and size of `slurmtune html` on a large study: 100,000 trials and 10.2 million
reports (tests/bench/data/studies/html-100k.toml, written by `slurmtune simulate`), median of
three runs, against the issue's bounds (< 10 s, < 20 MB).

    /usr/bin/python3 tests/bench/components/bench_html.py build/src/slurmtune [WORKDIR]
"""
import os
import statistics
import subprocess
import sys
import time

import h5py

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")  # tests/bench/data


def main():
    slurmtune = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/slurmtune-bench-html"
    os.makedirs(work, exist_ok=True)
    study = os.path.join(work, "html-100k.h5")
    if not os.path.exists(study):
        started = time.monotonic()
        subprocess.run([slurmtune, "simulate", os.path.join(DATA, "studies", "html-100k.toml"),
                        "-w", "2000", "-q", "-o", study], check=True, stdout=subprocess.DEVNULL)
        print(f"simulated the study in {time.monotonic() - started:.1f} s")
    with h5py.File(study, "r") as f:
        trials, reports = f["trials"].shape[0], f["metrics"].shape[0]
    page = os.path.join(work, "html-100k.html")
    env = dict(os.environ, SLURMTUNE_PYTHON=sys.executable)
    times = []
    for _ in range(3):
        started = time.monotonic()
        subprocess.run([slurmtune, "html", study, "-o", page], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        times.append(time.monotonic() - started)
    size = os.path.getsize(page) / 1e6
    print(f"{trials} trials, {reports} reports ({os.path.getsize(study) / 1e6:.0f} MB results file): "
          f"page in {statistics.median(times):.1f} s (median of {', '.join(f'{t:.1f}' for t in times)}), "
          f"{size:.1f} MB")


if __name__ == "__main__":
    main()
