#!/usr/bin/python3
"""What starting the earlier best as they were can reach (issue #64, item 2): for each
transfer pair and scoring seed s, the earlier study `transfer_quality.py` runs (the
recommended setting on the small table, seed 10,000 + s, the given workers), its best
configurations in the order a prior and Optuna's enqueue start them, and for each count k:
the least time any of the first k takes to each of the large table's targets when it runs
alone from the start (its first recorded run). Printed: the median over the seeds ("-": half
never reach it) and the share of seeds where one of the k reaches the target at all.

A prior that starts k earlier best as they were, trusted to run on, reaches a target at
about this time where the k hold one; Optuna's enqueue at W workers starts the first W. So
the difference between two counts is what the exact places alone can buy on a pair, read
from the tables and the earlier studies, before any method runs on the large table.

    /usr/bin/python3 tests/bench/quality/priors/exact_reach.py [--slurmtune build/src/slurmtune]
        [--pairs gbdt-data ...] [--workers 8] [--seeds 40] [--counts 2 5 8 16] [--jobs 2]
"""
import argparse
import functools
import math
import multiprocessing
import os
import sys
import tempfile

import numpy as np

# The shared harness lies one folder up (tests/bench/quality).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import quality_runs  # noqa: E402
import target_floors  # noqa: E402
import transfer_quality as tq  # noqa: E402


def alone_times(large, rows):
    """Per target, each row's time to it when its first recorded run trains alone."""
    return [[target_floors.time_to_target(large, target, large.curves[r][0][1], large.curves[r][0][2])
             for r in rows] for target in large.targets]


def earlier_rows(binary, pair, workers, work, seed):
    """The large table's rows of the earlier study's best configurations, best first."""
    large = tq.pair_table(pair, "large")
    _, earlier = tq.run_earlier((binary, pair, workers, seed, work))
    return [quality_runs.config_row(large, c) for c in tq.earlier_best(earlier, large.params)]


def report(pair, workers, seeds, counts, binary, pool, work):
    large = tq.pair_table(pair, "large")
    per_seed = pool.map(functools.partial(earlier_rows, binary, pair, workers, work), range(seeds))
    times = [alone_times(large, rows) for rows in per_seed]  # [seed][target][earlier best]
    cells = []
    for t, target in enumerate(large.targets):
        floor = target_floors.times_to_target(large, target)
        row = [f"{pair} | T{t + 1} = {target:.4g} | {floor[0]:.3g}" if floor else f"{pair} | T{t + 1} | -"]
        for k in counts:
            best = [min(seed_times[t][:k], default=math.inf) for seed_times in times]
            median = float(np.median(best))
            reached = np.mean([b < math.inf for b in best])
            row.append(f"{'-' if math.isinf(median) else f'{median:.3g}'} ({reached:.0%})")
        cells.append(" | ".join(row))
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slurmtune", default=os.path.join(quality_runs.ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--pairs", nargs="+", default=["mlp-width", "mlp-data", "gbdt-data", "mlp-shift",
                                                        "rff-cancer-shift"])
    parser.add_argument("--workers", type=int, default=8, help="the earlier studies' workers")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--counts", nargs="+", type=int, default=[2, 5, 8, 16])
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    unknown = [p for p in args.pairs if p not in tq.ALL_PAIRS]
    if unknown:
        raise SystemExit(f"--pairs: not a pair of transfer_quality.py: {' '.join(unknown)}")
    print(f"the earlier best started as they were, alone: median seconds to each target over {args.seeds} "
          f"seeds (earlier studies at {args.workers} workers) and the share of seeds where one of them reaches it")
    print()
    print("| pair | target | floor, s | " + " | ".join(f"first {k}" for k in args.counts) + " |")
    print("|---" * (3 + len(args.counts)) + "|")
    with tempfile.TemporaryDirectory() as work, multiprocessing.Pool(args.jobs) as pool:
        for pair in args.pairs:
            for line in report(pair, args.workers, args.seeds, args.counts, args.slurmtune, pool, work):
                print(f"| {line} |", flush=True)


if __name__ == "__main__":
    main()
