#!/usr/bin/python3
"""How much a perfect reading of the earlier task could buy (issue #64, item 2): on each
transfer pair's large table, the time to its targets of a method that knows the small
table's every curve and starts the configurations in the small table's order (the best
value there first), each trained to its end, W at a time with no pause. It does not learn
from the large table as it goes, so it is not a bound; it is what the earlier lesson alone,
read as well as it can be, gives. Beside it: the floor (the fastest recorded run's own time
to the target, which needs the large table), and each method's median from saved
transfer_quality.py runs, with that median over the small table's order (above 1: the order
alone is sooner).

What an earlier study knows is less than the small table: it ran successive halving there,
so a configuration that blooms late was stopped early in it too. --earlier-seeds N adds,
per cell, the median over N seeds of the same schedule started from what the prior is given:
each seed's earlier study (transfer_quality.py's, on the small table) ranks its good set
(the configurations Optuna's enqueue is given, best first), which is run first, then the
rest in a random order.

A pooled line per worker count over the pairs whose lesson holds gives the geometric mean
of each method's median over each order's time, beside the same over the floor
(transfer_quality.py's ceiling). Where a method is less than 2x the earlier studies' order,
starting the earlier best first and training them to the end would not by itself be 2x
sooner than it; a prior would have to learn more from the large table as the study runs.
Tables with repeats use each configuration's first recorded run.

    /usr/bin/python3 tests/bench/quality/priors/lesson_reference.py --runs SAVED.json.xz ... \
        [--pairs rf-data ...] [--workers 8 32] [--earlier-seeds 20] [--build build] [--prior METHOD]
"""
import argparse
import heapq
import math
import os
import random
import tempfile

import sys

import numpy as np

# The shared harness lies one folder up (tests/bench/quality).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import target_floors  # noqa: E402
import transfer_quality  # noqa: E402
from quality_stats import times_by_seed

SHOWN = {"recommended": "no prior", "recommended, warm_start": "warm_start",
         "optuna tpe + sha, enqueued": "enqueue"}


def small_table_order(small):
    """The configurations in the small table's order: the best value of their curves, best
    first (a run that never reports a finite value last)."""
    def best(runs):
        values = np.concatenate([v for _, v, _ in runs])
        if np.isnan(values).all():
            return math.inf
        return float(np.nanmin(values)) if small.mode == "min" else -float(np.nanmax(values))
    return sorted(range(len(small.configs)), key=lambda c: (best(small.curves[c]), c))


def in_order_time(large, order, target, workers):
    """List scheduling of `order` on `workers`, each configuration run to its end: the first
    time a report meets the target (inf if none does). The pairs' tables hold the same
    configurations in the same order, so an index names one configuration in both."""
    free = [0.0] * workers
    best = math.inf
    for config in order:
        start = heapq.heappop(free)
        if start >= best:
            break
        _, values, seconds = large.curves[config][0]
        best = min(best, start + target_floors.time_to_target(large, target, values, seconds))
        heapq.heappush(free, start + float(np.sum(seconds)))
    return best


def earlier_order(binary, pair, workers, seed, work, large):
    """The order a seed's earlier study gives: its good set, best first, then the other
    configurations in a random order of the seed."""
    _, h5 = transfer_quality.run_earlier((binary, pair, workers, seed, work))
    index = {tuple(c[p] for p in large.params): i for i, c in enumerate(large.configs)}
    good = [index[tuple(c[p] for p in large.params)]
            for c in transfer_quality.earlier_best(h5, large.params)]
    rest = [c for c in range(len(large.configs)) if c not in set(good)]
    random.Random(seed).shuffle(rest)
    return good + rest


def saved_medians(by_method, target_index):
    """Each method's median time to the target over its saved seeds (inf where more than
    half never reached it); `by_method`: one (pair, workers) of transfer_quality.load_merged."""
    return {m: float(np.median(times_by_seed(runs, target_index, sorted(r.seed for r in runs))))
            for m, runs in by_method.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, help="transfer_quality.py --save files")
    parser.add_argument("--pairs", nargs="+", default=list(transfer_quality.PAIRS),
                        choices=transfer_quality.ALL_PAIRS)
    parser.add_argument("--workers", nargs="+", type=int, default=[8, 32])
    parser.add_argument("--earlier-seeds", type=int, default=0,
                        help="also the schedule from this many seeds' earlier studies (their median)")
    parser.add_argument("--build", default="build", help="the build whose slurmtune runs the earlier studies")
    parser.add_argument("--prior", help="the saved method shown as the prior's (default: the first with a prior)")
    args = parser.parse_args()
    binary = os.path.join(args.build, "src", "slurmtune")
    saved = transfer_quality.load_merged(args.runs)
    with tempfile.TemporaryDirectory(prefix="slurmtune-lesson-") as work:
        pooled = report_cells(args, binary, saved, work)
    report_pooled(pooled)


def report_cells(args, binary, saved, work):
    """Prints each cell's row; returns, per worker count, the cells where the lesson holds:
    (floor, the small table's order, the methods' medians capped at the budget, the earlier
    studies' order)."""
    print("| pair | workers | target | floor s | small table's order s | earlier studies' order s | "
          + " | ".join(f"{name} median s (over the order)" for name in SHOWN.values()) + " | the prior's |")
    print("|---|---|---|---|---|---|" + "---|" * (len(SHOWN) + 1))
    pooled = {}
    for pair in args.pairs:
        small, large = transfer_quality.pair_table(pair, "small"), transfer_quality.pair_table(pair, "large")
        if small.configs != large.configs:
            raise SystemExit(f"{pair}: the small and large tables do not list the same configurations in order")
        order = small_table_order(small)
        floors = transfer_quality.floors_of(large)
        for workers in args.workers:
            orders = [earlier_order(binary, pair, workers, seed, work, large)
                      for seed in range(args.earlier_seeds)]
            for i, target in enumerate(large.targets):
                ordered = in_order_time(large, order, target, workers)
                earlier_time = (float(np.median([in_order_time(large, o, target, workers) for o in orders]))
                                if orders else math.nan)
                medians = saved_medians(saved.get((pair, workers), {}), i)
                prior = args.prior if args.prior in medians else next((m for m in medians if "prior" in m), None)
                cells = [medians.get(m) for m in SHOWN] + [medians.get(prior) if prior else None]
                shown = " | ".join("-" if v is None else f"{v:.3g} ({v / ordered:.3g})" for v in cells)
                print(f"| {pair} | {workers} | T{i + 1} | {floors[i]:.3g} | {ordered:.3g} | {earlier_time:.3g} | {shown} |",
                      flush=True)
                if pair not in transfer_quality.WRONG_LESSONS and all(v is not None for v in cells):
                    budget = large.total_seconds / workers
                    pooled.setdefault(workers, []).append((floors[i], ordered, [min(v, budget) for v in cells],
                                                           earlier_time))
    return pooled


def report_pooled(pooled):
    """Per worker count, each method's geometric-mean median over each order's time and the floor."""
    for workers, cells in sorted(pooled.items()):
        print(f"\nPooled at {workers} workers over the cells where the lesson holds ({len(cells)}; a median "
              "that is never reached counts as the whole budget, as transfer_quality.py counts it):")
        for k, name in enumerate(list(SHOWN.values()) + ["the prior"]):
            over_order = [math.log(c[2][k] / c[1]) for c in cells]
            over_floor = [math.log(c[2][k] / c[0]) for c in cells]
            over_earlier = [math.log(c[2][k] / c[3]) for c in cells]
            print(f"- {name}: {math.exp(np.mean(over_order)):.3g}x the small table's order, "
                  f"{math.exp(np.mean(over_earlier)):.3g}x the earlier studies' order, "
                  f"{math.exp(np.mean(over_floor)):.3g}x the floor")


if __name__ == "__main__":
    main()
