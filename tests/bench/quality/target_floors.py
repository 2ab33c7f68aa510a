#!/usr/bin/python3
"""The least time in which any method can reach a target on a recorded table: per table and
target (T1, T2 as in hpo_quality.py), the virtual seconds the fastest configuration's
recorded run takes from its first step to the report that first meets the target.

No method under hpo_quality.py's harness can be sooner: a trial's steps run one after
another on one worker and take the seconds they took when the table was recorded, so
the first report to meet a target comes at least this long after the study starts, even
from an oracle that starts the fastest such configuration first and pays nothing for its
decisions. A method's median time over the floor is how much room is left to any other
method in that cell: a speed-up over it larger than that ratio is impossible.

    /usr/bin/python3 tests/bench/quality/target_floors.py [--tables digits-mlp ...] [--next 4]
        [--workers 8 32] [--draws 4000] [--first-wave uniform|nearest]

Printed per target: the floor, the times of the next fastest configurations (a method that
does not start the single fastest one first is bounded by those), and how many of the
table's recorded runs meet the target at all.

`--workers W ...` adds the bound for a method that knows nothing of the table before its
first report: its first W trials start at once, drawn at random (as every sampler here
draws its start-up trials), and no trial it starts later can begin before the first of
them reports. So in each run it reaches the target no sooner than the first wave's own
first hit, or the first report plus the floor, whichever comes first: as if the first
report told it which configuration is fastest to the target. The median of that bound
over random first waves (--draws of them) is a median no such method can beat.
`--first-wave nearest` draws each wave as the model samplers' start-up and Optuna's
samplers draw in hpo_quality.py (the unused configuration nearest to a random point of
the search space, which weights a configuration by the volume nearest to it) instead of
uniformly among the table's configurations.
"""
import argparse
import math
import zlib

import numpy as np

import quality_runs


def time_to_target(table, target, values, seconds):
    """The seconds of a recorded run's steps up to its first report that meets the target
    (inf if none does)."""
    met = [i for i, v in enumerate(values) if not np.isnan(v) and table.reached(v, target)]
    return float(np.cumsum(seconds)[met[0]]) if met else math.inf


def times_to_target(table, target):
    """Per recorded run that meets the target: its time_to_target, sorted."""
    times = [time_to_target(table, target, values, seconds)
             for runs in table.curves for _, values, seconds in runs]
    return sorted(t for t in times if t < math.inf)


def random_point(table, rng):
    """A point of the search space drawn as Optuna's RandomSampler draws it, in the unit
    cube hpo_quality.py maps suggestions in (quality_runs.unit)."""
    point = []
    for p in table.params:
        kind, args = quality_runs.domain_kind(table.space[p])
        if kind in ("choice", "grid"):
            value = args[rng.integers(len(args))]
        elif kind == "constant":
            value = args
        elif kind in ("randint", "lograndint"):  # [low, high)
            low, high = int(args[0]), int(args[1]) - 1
            value = (int(rng.integers(low, high + 1)) if kind == "randint" else
                     min(high, int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))))
        else:
            low, high = float(args[0]), float(args[1])
            value = math.exp(rng.uniform(math.log(low), math.log(high))) if kind.startswith("log") else \
                rng.uniform(low, high)
        point.append(quality_runs.unit(table.space[p], value))
    return np.array(point)


def first_wave(table, workers, rng, mechanism):
    """The configurations of a first wave of `workers` trials drawn without knowledge."""
    count = min(workers, len(table.configs))
    if mechanism == "uniform":
        return [int(c) for c in rng.choice(len(table.configs), count, replace=False)]
    unused, wave = np.ones(len(table.configs), bool), []
    for _ in range(count):
        wave.append(quality_runs.nearest_config(table, random_point(table, rng), unused))
        unused[wave[-1]] = False
    return wave


def no_prior_bound(table, target, workers, draws, mechanism="uniform"):
    """Median over random first waves of min(the wave's first hit, its first report +
    the floor): what a method without knowledge of the table cannot beat."""
    rng = np.random.default_rng(zlib.crc32(f"{table.name}/{workers}".encode()))
    # per configuration, per recorded run: its time to the target, and to its first report
    hits = [[time_to_target(table, target, values, seconds) for _, values, seconds in runs]
            for runs in table.curves]
    firsts = [[float(seconds[0]) for _, _, seconds in runs] for runs in table.curves]
    floor = min(min(h) for h in hits)
    bounds = []
    for _ in range(draws):
        runs = [(c, rng.integers(len(hits[c]))) for c in first_wave(table, workers, rng, mechanism)]
        bounds.append(min(min(hits[c][r] for c, r in runs), min(firsts[c][r] for c, r in runs) + floor))
    return float(np.median(bounds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt", "diabetes-sgd", "digits-deep"])
    parser.add_argument("--next", type=int, default=4, help="also print the next this many fastest runs' times")
    parser.add_argument("--workers", type=int, nargs="*", default=[], help="also the bound without prior knowledge")
    parser.add_argument("--draws", type=int, default=4000, help="random first waves per bound")
    parser.add_argument("--first-wave", choices=("uniform", "nearest"), default="uniform",
                        help="how a bound's first waves are drawn")
    args = parser.parse_args()
    tables = [quality_runs.Table(name) for name in args.tables]
    print("| table | target | floor s | next fastest s | runs that meet it |")
    print("|---|---|---|---|---|")
    for table in tables:
        runs = sum(len(r) for r in table.curves)
        for t, target in enumerate(table.targets):
            times = times_to_target(table, target)
            following = ", ".join(f"{s:.3g}" for s in times[1:1 + args.next])
            print(f"| {table.name} | T{t + 1} | {times[0]:.3g} | {following} | {len(times)} of {runs} |")
    if args.workers:
        print(f"\nmedian no-prior bound, s (first waves drawn at random: {args.first_wave})\n")
        print("| table | workers | T1 | T2 |\n|---|---|---|---|")
        for table in tables:
            for workers in args.workers:
                bounds = [no_prior_bound(table, target, workers, args.draws, args.first_wave)
                          for target in table.targets]
                print(f"| {table.name} | {workers} | " + " | ".join(f"{b:.3g}" for b in bounds) + " |", flush=True)


if __name__ == "__main__":
    main()
