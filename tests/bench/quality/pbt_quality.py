#!/usr/bin/env python3
"""PBT against ASHA and random search on the `schedule` objective, in simulation, over
many seeds (doc/performance.md, "PBT in simulation").

    /usr/bin/python3 tests/bench/quality/pbt_quality.py [--slurmtune build/src/slurmtune] [--seeds 40]

Each seed runs PBT on a population of 8 (max_t 60 epochs, perturbation every 5) with 8
workers, then synchronous PBT, ASHA (Ray's rules) and random search without stopping
(fifo) on the same 8 workers for the same virtual time (PBT's makespan of that seed),
ASHA and random search with fresh configurations as long as the budget lasts. The figure is the best validation loss each
reached; the objective's best constant learning rate is computed alongside (a fine grid
over lr with the other parameter at its optimum), the bound any fixed configuration has.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

STUDY = """
[study]
name = "pbt-schedule"
metric = "val_loss"
seed = {seed}
max_trials = {max_trials}
{budget}
[search]
lr = {{ loguniform = [1e-4, 1e-1] }}
wd = {{ uniform = [0.0, 1.0] }}
[scheduler]
{scheduler}
[simulate]
objective = "schedule"
step_time_s = 1.0
noise = 0.0
"""

PBT = """type = "pbt"
resource = "epoch"
max_t = 60
perturbation_interval = 5
[scheduler.mutations]
lr = "resample"
wd = "resample"
"""
ASHA = """type = "asha"
resource = "epoch"
max_t = 60
grace_period = 1
reduction_factor = 3
"""
FIFO = """type = "fifo"
resource = "epoch"
max_t = 60
"""


def simulate(slurmtune, text, workdir):
    path = os.path.join(workdir, "study.toml")
    with open(path, "w") as f:
        f.write(text)
    out = subprocess.run([slurmtune, "simulate", path, "--workers", "8", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def best_constant_loss(steps=60):
    # The schedule objective's law (src/core/simulation/synthetic_objective.hpp) with the
    # second parameter at its optimum: the best any fixed learning rate reaches.
    best = float("inf")
    for i in range(2001):
        u = i / 2000
        scale = 10 ** (-2 * (1 - u))
        speed, floor = 0.3 * scale, 0.02 + 0.5 * scale
        best = min(best, floor + (2.5 - floor) * (1 - speed) ** steps)
    return best


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):.4g} [{q[0]:.4g}, {q[2]:.4g}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slurmtune", default=os.path.join(ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args()
    names = ["pbt", "pbt (synch)", "asha (ray)", "random (fifo)"]
    results = {name: [] for name in names}
    trials = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as workdir:
        for seed in range(1, args.seeds + 1):
            pbt = simulate(args.slurmtune, STUDY.format(seed=seed, max_trials=8, budget="",
                                                        scheduler=PBT), workdir)
            budget = "time_budget_s = %r" % pbt["makespan_s"]
            results["pbt"].append(pbt["best_value"])
            trials["pbt"].append(pbt["started"])
            synch = PBT.replace("perturbation_interval = 5", "perturbation_interval = 5\nsynch = true")
            for name, scheduler, population in (("pbt (synch)", synch, 8), ("asha (ray)", ASHA, 100000),
                                                ("random (fifo)", FIFO, 100000)):
                run = simulate(args.slurmtune, STUDY.format(seed=seed, max_trials=population,
                                                            budget=budget, scheduler=scheduler),
                               workdir)
                results[name].append(run["best_value"])
                trials[name].append(run["started"])
    print(f"schedule objective, 8 workers, {args.seeds} seeds, the same virtual time per seed; "
          f"best constant learning rate: {best_constant_loss():.4g}\n")
    print("| method | best val_loss, median [q25, q75] | trials (median) | seeds PBT beats |")
    print("|---|---|---|---|")
    for name, values in results.items():
        wins = "-" if name == "pbt" else "%d/%d" % (
            sum(p < v for p, v in zip(results["pbt"], values)), len(values))
        print(f"| {name} | {quartiles(values)} | {statistics.median(trials[name]):g} | {wins} |")


if __name__ == "__main__":
    main()
