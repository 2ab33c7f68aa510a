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

Printed per target: the floor, the times of the next fastest configurations (a method that
does not start the single fastest one first is bounded by those), and how many of the
table's recorded runs meet the target at all.
"""
import argparse

import numpy as np

import quality_runs


def times_to_target(table, target):
    """Per recorded run that meets the target: the seconds of its steps up to the first
    report that does (the run's own step times), sorted."""
    times = []
    for runs in table.curves:
        for _, values, seconds in runs:
            met = [i for i, v in enumerate(values) if not np.isnan(v) and table.reached(v, target)]
            if met:
                times.append(float(np.cumsum(seconds)[met[0]]))
    return sorted(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt", "diabetes-sgd", "digits-deep"])
    parser.add_argument("--next", type=int, default=4, help="also print the next this many fastest runs' times")
    args = parser.parse_args()
    print("| table | target | floor s | next fastest s | runs that meet it |")
    print("|---|---|---|---|---|")
    for name in args.tables:
        table = quality_runs.Table(name)
        runs = sum(len(r) for r in table.curves)
        for t, target in enumerate(table.targets):
            times = times_to_target(table, target)
            following = ", ".join(f"{s:.3g}" for s in times[1:1 + args.next])
            print(f"| {name} | T{t + 1} | {times[0]:.3g} | {following} | {len(times)} of {runs} |")


if __name__ == "__main__":
    main()
