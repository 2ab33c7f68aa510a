#!/usr/bin/python3
"""What a setting's proposals can reach: of the first trials a slurmtune setting starts on a
recorded table, the share whose configuration is able to meet each target (T1, T2 as in
hpo_quality.py) if trained to the end, split by where each configuration came from (a
start-up draw, the sampler's random share, the model, or a sampler without a model), and
what their steps cost.

A time to a target is how soon a configuration able to meet it is proposed, plus how long
it takes to train to the report that meets it (first_hits.py). This measures the first
part without the second: a model that proposes such configurations no more often than
random draws cannot make the first part shorter, whatever the scheduler does.

    /usr/bin/python3 tests/bench/quality/capable_picks.py [--slurmtune build/src/slurmtune]
        [--tables digits-mlp ...] [--methods recommended ...] [--workers 8] [--seeds 20] [--first 60]

A configuration's ability is the share of its recorded runs (several on a table with data
seeds) whose best value meets the target; the table's own share is what uniform draws
without replacement propose. Step cost: the configuration's median recorded seconds a
step over the median of the table's configurations, as a geometric mean over the picks
(the table's own row: over all its configurations, what uniform draws average).
Intervals: 95 % bootstrap over the seeds. Decisions are free, as in first_hits.py.
"""
import argparse
import math
import multiprocessing
import os
import tempfile
import zlib

import h5py
import numpy as np

import hpo_quality
import quality_runs
from quality_stats import BOOTSTRAP_RESAMPLES
from target_floors import time_to_target

ORIGINS = ("startup", "random", "model", "blind")


class Abilities:
    """Per configuration of a table: the share of its runs able to meet each target, and
    its median seconds a step over the table's."""

    def __init__(self, table):
        self.able = np.array([[np.mean([time_to_target(table, t, values, seconds) < math.inf
                                        for _, values, seconds in runs]) for t in table.targets]
                              for runs in table.curves])
        seconds = np.array([np.median(np.concatenate([s for _, _, s in runs])) for runs in table.curves])
        self.relative_cost = seconds / np.median(seconds)


def picks(task):
    """[(origin, row)] of the first `first` trials the run started, in order of start."""
    binary, table, variant, seed, workers, first, work = task
    folder = os.path.join(work, f"{table.name}-{workers}-{seed}")
    os.makedirs(folder, exist_ok=True)
    h5, _ = quality_runs.simulate_slurmtune(binary, table, variant, seed, workers,
                                            table.total_seconds / workers, folder, False)
    with h5py.File(h5, "r") as f:
        trials = f["trials"][: int(f["commit"][0]["trials"])]
        names = {v: k for k, v in h5py.check_enum_dtype(f["trials"].dtype["origin"]).items()}
    started = trials[np.argsort(trials["start_time"], kind="stable")][:first]
    return [(names[int(trial["origin"])], quality_runs.config_row(table, config))
            for trial, config in zip(started, quality_runs.trial_configs(started, table.params))]


def share_interval(per_seed, rng):
    """Pooled share over the seeds' picks and its bootstrap interval (seeds resampled)."""
    sums = np.array([s for s, _ in per_seed], float)
    counts = np.array([n for _, n in per_seed], float)
    if counts.sum() == 0:
        return np.nan, np.nan, np.nan
    draws = rng.integers(0, len(per_seed), size=(BOOTSTRAP_RESAMPLES, len(per_seed)))
    shares = sums[draws].sum(axis=1) / np.maximum(counts[draws].sum(axis=1), 1)
    return sums.sum() / counts.sum(), *np.percentile(shares, [2.5, 97.5])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slurmtune", default=os.path.join(quality_runs.ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt", "diabetes-sgd", "digits-deep"])
    parser.add_argument("--methods", nargs="+", default=["recommended"], help="slurmtune variants of hpo_quality.py")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first", type=int, default=60, help="the trials counted: the first this many started")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    variants = {v[0]: v[1:] for v in hpo_quality.SLURMTUNE_VARIANTS}
    unknown = [m for m in args.methods if m not in variants]
    if unknown:
        raise SystemExit(f"--methods: no slurmtune variant named {unknown[0]!r}")
    print(f"the first {args.first} trials started, {args.seeds} seeds, {args.workers} workers, decisions free: "
          "share able to meet each target [95 % bootstrap over the seeds], and their steps' cost "
          "relative to the table's median")
    print()
    print("| table | method | origin | picks | T1 able | T2 able | step cost |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work, multiprocessing.Pool(args.jobs) as pool:
        for name in args.tables:
            table = quality_runs.Table(name)
            abilities = Abilities(table)
            uniform = abilities.able.mean(axis=0)
            cost = np.exp(np.mean(np.log(abilities.relative_cost)))
            print(f"| {name} | the table | - | {len(table.configs)} | {uniform[0]:.1%} | {uniform[1]:.1%} | "
                  f"{cost:.2f} |")
            for method in args.methods:
                tasks = [(args.slurmtune, table, variants[method], seed, args.workers, args.first,
                          os.path.join(work, method.replace(" ", "_").replace(",", "")))
                         for seed in range(args.seeds)]
                runs = pool.map(picks, tasks)
                for origin in ORIGINS:
                    rows = [[r for o, r in run if o == origin] for run in runs]
                    if not any(rows):
                        continue
                    # each row's own resamples: a row reads the same whatever else runs
                    rng = np.random.default_rng(zlib.crc32(f"{name}/{method}/{origin}".encode()))
                    cells = []
                    for t in range(len(table.targets)):
                        point, low, high = share_interval(
                            [(abilities.able[r, t].sum(), len(r)) for r in rows], rng)
                        cells.append(f"{point:.1%} [{low:.1%}, {high:.1%}]")
                    cost = np.exp(np.mean(np.log(abilities.relative_cost[np.concatenate(rows)])))
                    print(f"| {name} | {method} | {origin} | {sum(map(len, rows))} | {cells[0]} | {cells[1]} | "
                          f"{cost:.2f} |", flush=True)


if __name__ == "__main__":
    main()
