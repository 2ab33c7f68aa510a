#!/usr/bin/env python3
"""What the allocation's clock saves, measured on simulated allocations.

    bench_allocation_clock.py SLURMTUNE [--seeds 10]

Runs `slurmtune simulate` on the mlp-digits example with 60-second epochs, 16 workers and
1000 trials, in Slurm allocations of 1 and 4 hours requeued back to back (suspend 300 s
before each end, as the sbatch template's USR1), with the clock (as `slurmtune run`) and
without it (launch whatever fits a free slot). Prints, per setting, the medians over the
seeds of the worker-seconds the jobs held, those the workers were busy, and those lost
(steps killed mid-way or re-run), and the clock's saving. Standard library only.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(ROOT, "share", "slurmtune", "examples", "mlp-digits.toml")


def study(seed, scheduler):
    text = open(EXAMPLE).read().replace("step_time_s = 2.0", "step_time_s = 60.0")
    text = re.sub(r"seed = \d+", "seed = %d" % seed, text)
    if scheduler == "asha_promotion":
        text = text.replace('type = "asha"', 'type = "asha_promotion"').replace("brackets = 1\n", "")
    return text


def simulate(slurmtune, path, allocation, startup, clock):
    argv = [slurmtune, "simulate", path, "-w", "16", "-n", "1000", "--json",
            "--allocation-s", str(allocation), "--startup-s", str(startup)]
    if not clock:
        argv.append("--no-allocation-clock")
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    print("| scheduler | allocation | start-up | held, clock / naive (worker-h) | busy, clock / "
          "naive | lost, clock / naive | held saved | busy saved | best val_loss equal |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for scheduler in ("asha", "asha_promotion"):
            for allocation in (3600, 14400):
                for startup in (60, 300):
                    rows = {True: [], False: []}
                    same_best = 0
                    for seed in range(args.seeds):
                        path = os.path.join(work, "s%d-%s.toml" % (seed, scheduler))
                        with open(path, "w") as f:
                            f.write(study(seed, scheduler))
                        runs = {clock: simulate(args.slurmtune, path, allocation, startup, clock)
                                for clock in (True, False)}
                        for clock, run in runs.items():
                            rows[clock].append(run)
                        same_best += runs[True]["best_value"] == runs[False]["best_value"]

                    def median(clock, key):
                        return statistics.median(r[key] for r in rows[clock]) / 3600

                    def saved(key):
                        return statistics.median(1 - c[key] / n[key]
                                                 for c, n in zip(rows[True], rows[False]))
                    print("| %s | %d h | %d s | %.0f / %.0f | %.0f / %.0f | %.1f / %.1f | %.1f %% | "
                          "%.1f %% | %d/%d |"
                          % (scheduler, allocation // 3600, startup,
                             median(True, "charged_worker_s"), median(False, "charged_worker_s"),
                             median(True, "busy_worker_s"), median(False, "busy_worker_s"),
                             median(True, "lost_worker_s"), median(False, "lost_worker_s"),
                             100 * saved("charged_worker_s"), 100 * saved("busy_worker_s"),
                             same_best, args.seeds))


if __name__ == "__main__":
    main()
