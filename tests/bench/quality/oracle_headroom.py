#!/usr/bin/python3
"""How much sooner a sampler that knows something reaches the targets: the headroom a
model has on a table. An oracle draws the table's configurations in the order of a noisy
score of their true quality (normal scores of the ranks of each configuration's best value,
mean over its recorded repeats, plus independent normal noise of standard deviation sigma,
fixed per seed), under Optuna's SuccessiveHalving pruner in quality_runs.run_optuna's
discrete-event loop, decisions free. sigma = inf is random search; sigma = 0 knows the
ranking. Each level's rank correlation with the true quality is measured and printed, so
it can be set beside a model's held-out rank correlation (model_predictiveness.py).

`--cost-exponents a ...` adds oracles that know each configuration's recorded step time
and nothing of its quality: they draw configurations without replacement with
probability proportional to (seconds a step)^-a (the Gumbel top-k order of
-a log(seconds) + Gumbel noise). They bound what preferring cheap configurations alone
would win or lose on a table: 0 is random search.

    /usr/bin/python3 tests/bench/quality/oracle_headroom.py [--tables digits-mlp ...] [--workers 8]
        [--seeds 60] [--sigmas inf 2 1 0.5 0] [--cost-exponents 0.5 1] [--jobs 2]

Per table and level: the median virtual time to each target and its speed-up over random
search with the same pruner (paired seeds, bootstrap 95 % interval).
"""
import argparse
import math
import multiprocessing

import numpy as np
import optuna
from scipy.stats import norm, spearmanr

import quality_runs
from model_predictiveness import first_and_best
from quality_stats import fmt, speedup_interval, times_by_seed


def quality_scores(table):
    """Normal scores of the configurations' ranks by their best value (0 = median; lower
    is better), the mean over repeats where a configuration has several."""
    _, best = first_and_best(table)
    ranks = np.argsort(np.argsort(best, kind="stable"), kind="stable")
    return norm.ppf((ranks + 0.5) / len(ranks))


def step_seconds(table):
    """Each configuration's mean recorded seconds a step (over its repeats)."""
    return np.array([np.mean([seconds.mean() for _, _, seconds in runs]) for runs in table.curves])


class OracleSampler(optuna.samplers.BaseSampler):
    """Draws configurations in the order of quality score + sigma x normal noise, or, for a
    level ("cost", a), by step time: probability proportional to seconds^-a."""

    def __init__(self, table, level, seed):
        rng = np.random.default_rng(seed)
        quality = quality_scores(table)
        if isinstance(level, tuple):
            # Lower is drawn sooner: a log(seconds) - Gumbel noise (Gumbel top-k sampling).
            belief = level[1] * np.log(step_seconds(table)) - rng.gumbel(size=len(quality))
        else:
            noise = rng.standard_normal(len(quality))
            belief = noise if math.isinf(level) else quality + level * noise
        self.rank_correlation = float(spearmanr(belief, quality).correlation)
        self.order = [int(i) for i in np.argsort(belief, kind="stable")]
        self.configs = table.configs
        self.chosen = {}

    def infer_relative_search_space(self, study, trial):
        return {}

    def sample_relative(self, study, trial, search_space):
        return {}

    def sample_independent(self, study, trial, name, distribution):
        if trial.number not in self.chosen:
            self.chosen[trial.number] = self.order[len(self.chosen)]
        value = self.configs[self.chosen[trial.number]][name]
        return value.item() if hasattr(value, "item") else value


def run_level(task):
    table, level, seed, workers, budget = task
    sampler = OracleSampler(table, level, seed)
    run = quality_runs.run_optuna(table, "oracle", "sha", seed, workers, budget, False, sampler=sampler)
    return level, seed, run, sampler.rank_correlation


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt"])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--sigmas", nargs="+", type=float, default=[math.inf, 2.0, 1.0, 0.5, 0.0])
    parser.add_argument("--cost-exponents", nargs="*", type=float, default=[],
                        help="also oracles drawing with probability proportional to seconds a step ^ -a")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng(0)
    print("| table | sigma | rank correlation | T1 median s | T1 speed-up over random [95% CI] | "
          "T2 median s | T2 speed-up over random [95% CI] |\n|---|---|---|---|---|---|---|")
    for name in args.tables:
        table = quality_runs.Table(name)
        budget = table.total_seconds / args.workers
        levels = list(args.sigmas) + [("cost", a) for a in args.cost_exponents]
        tasks = [(table, s, seed, args.workers, budget) for s in levels for seed in range(args.seeds)]
        with multiprocessing.Pool(args.jobs) as pool:
            done = pool.map(run_level, tasks)
        seeds = list(range(args.seeds))
        runs = {s: [r for sigma, _, r, _ in done if sigma == s] for s in levels}
        rho = {s: np.mean([c for sigma, _, _, c in done if sigma == s]) for s in levels}
        random_runs = runs[math.inf] if math.inf in runs else None
        for s in levels:
            cells = []
            for t in range(len(table.targets)):
                ours = times_by_seed(runs[s], t, seeds)
                cell = f"{fmt(float(np.median(ours)))}"
                if random_runs is None:
                    cells += [cell, "-"]
                    continue
                point, low, high = speedup_interval(ours, times_by_seed(random_runs, t, seeds), rng)
                cells += [cell, f"{fmt(point)} [{fmt(low)}, {fmt(high)}]"]
            label = f"seconds^-{s[1]:g}" if isinstance(s, tuple) else f"{s:g}"
            print(f"| {name} | {label} | {rho[s]:.2f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
