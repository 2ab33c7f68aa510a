#!/usr/bin/python3
"""Two ways to draw a random configuration from a recorded table, in the same loop.
`slurmtune simulate` with the random sampler draws uniformly among the table's
configurations not yet drawn (Syne Tune's restricted configurations); a sampler that
suggests a point in the search space (Optuna's samplers, slurmtune's model samplers and
their random start-up) gets the configuration nearest to that point, which weights each
configuration by the volume of the space nearest to it. Both run here through
quality_runs.run_optuna with the same pruner, 8 workers, decisions free: "uniform" draws
the table's configurations in a random order (oracle_headroom's sigma = inf), "nearest"
is Optuna's RandomSampler mapped as hpo_quality.py maps every suggestion.

    /usr/bin/python3 tests/bench/quality/draw_mechanism.py [--tables digits-deep ...] [--pruners none sha]
        [--workers 8] [--seeds 60] [--jobs 2]

Per table and pruner: the median virtual time to each target under each mechanism and
the speed-up of "nearest" over "uniform" (paired seeds, bootstrap 95 % interval).
"""
import argparse
import math
import multiprocessing

import numpy as np
import optuna

import quality_runs
from oracle_headroom import OracleSampler
from quality_stats import fmt, speedup_interval, times_by_seed


def run_one(task):
    table, mechanism, pruner, seed, workers, budget = task
    sampler = (OracleSampler(table, math.inf, seed) if mechanism == "uniform"
               else optuna.samplers.RandomSampler(seed=seed))
    return mechanism, pruner, quality_runs.run_optuna(table, mechanism, pruner, seed, workers, budget, False,
                                                      sampler=sampler)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["digits-deep"])
    parser.add_argument("--pruners", nargs="+", default=["none", "sha"])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng(0)
    seeds = list(range(args.seeds))
    print("| table | pruner | uniform T1 / T2 s | nearest T1 / T2 s | nearest over uniform T1 [95% CI] | T2 [95% CI] |\n"
          "|---|---|---|---|---|---|")
    for name in args.tables:
        table = quality_runs.Table(name)
        budget = table.total_seconds / args.workers
        tasks = [(table, m, p, s, args.workers, budget) for p in args.pruners for m in ("uniform", "nearest")
                 for s in seeds]
        with multiprocessing.Pool(args.jobs) as pool:
            done = pool.map(run_one, tasks)
        for pruner in args.pruners:
            runs = {m: [r for mm, p, r in done if mm == m and p == pruner] for m in ("uniform", "nearest")}
            medians, ratios = {}, []
            for m in runs:
                medians[m] = " / ".join(fmt(float(np.median(times_by_seed(runs[m], t, seeds))))
                                        for t in range(len(table.targets)))
            for t in range(len(table.targets)):
                point, low, high = speedup_interval(times_by_seed(runs["nearest"], t, seeds),
                                                    times_by_seed(runs["uniform"], t, seeds), rng)
                ratios.append(f"{fmt(point)} [{fmt(low)}, {fmt(high)}]")
            print(f"| {name} | {pruner} | {medians['uniform']} | {medians['nearest']} | {ratios[0]} | {ratios[1]} |",
                  flush=True)


if __name__ == "__main__":
    main()
