#!/usr/bin/python3
"""The score of a candidate against a base setting on runs saved by hpo_quality.py --save:
per (table, target) cell the base's median time to the target over the candidate's (> 1:
the candidate is sooner) with a paired-bootstrap 95 % interval, and the geometric mean over
the cells, with its own interval (the seeds of every table resampled together).

    /usr/bin/python3 tests/bench/quality/screen_score.py RUNS.json [MORE.json ...] --base NAME --candidate NAME
    /usr/bin/python3 tests/bench/quality/screen_score.py RUNS.json ... --base NAME --placebo 20 [--workers 8]

--placebo N scores the base against itself: disjoint groups of N seeds, one as the base and
another as the "candidate". What such a no-change candidate scores is the noise floor a
screening rule has to clear.

    /usr/bin/python3 tests/bench/quality/screen_score.py RUNS.json ... --rival-selection "optuna" [--workers 8]

--rival-selection PREFIX measures how much "the best of several rivals per cell" flatters
the rival when it is picked on the same seeds it is scored on: over random halves of the
seeds, the rival picked on one half (lowest median) is scored on the other, against the
best rival on that other half. The methods compared are those whose names start with
PREFIX and that charge their decisions ("[measured]").
"""
import argparse
import itertools
import math
import sys

import numpy as np

from quality_runs import Run, read_saved
from quality_stats import BOOTSTRAP_RESAMPLES, speedup_interval, times_by_seed


def load(paths, names=None):
    """{table key: {name: [Run]}} for the keys that hold every name (the first file wins);
    without names, every method of every key."""
    saved = {}
    for path in paths:
        for key, methods in read_saved(path).items():
            for name in methods if names is None else names:
                if name in methods:
                    saved.setdefault(key, {}).setdefault(name, [Run.from_json(r) for r in methods[name]["runs"]])
    return {key: methods for key, methods in saved.items() if all(n in methods for n in names or [])}


def only_workers(saved, workers):
    return saved if workers is None else {k: v for k, v in saved.items() if k.endswith(f"@{workers}")}


def score(cells, rng):
    """Geometric mean of the cells' point speed-ups, and its bootstrap interval: each
    resample draws the seeds of every table once, shared by the table's targets."""
    point = math.exp(np.mean([math.log(c["point"]) for c in cells]))
    logs = np.zeros(BOOTSTRAP_RESAMPLES)
    by_table = {}
    for c in cells:
        by_table.setdefault(c["table"], []).append(c)
    for table_cells in by_table.values():
        n = len(table_cells[0]["base"])
        picks = rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
        for c in table_cells:
            with np.errstate(divide="ignore", invalid="ignore"):
                logs += np.log(np.median(c["base"][picks], axis=1) / np.median(c["candidate"][picks], axis=1))
    logs /= len(cells)
    low, high = np.exp(np.percentile(logs[np.isfinite(logs)], [2.5, 97.5]))
    return point, float(low), float(high)


def cells_of(saved, base, candidate, base_seeds=None, candidate_seeds=None):
    """Per (table, target): the base's and the candidate's times to the target, on the given
    seeds, or by default on the seeds both ran on that table."""
    cells = []
    for key, methods in saved.items():
        a, b = methods[base], methods[candidate]
        ours = theirs = sorted({r.seed for r in a} & {r.seed for r in b})
        if base_seeds is not None:
            ours, theirs = base_seeds, candidate_seeds
        for t in range(len(a[0].times)):
            cells.append(dict(table=key, target=t, base=times_by_seed(a, t, ours),
                              candidate=times_by_seed(b, t, theirs)))
    return cells


def measured_cells(cells, rng):
    """Sets each cell's point speed-up and interval ("point", "low", "high"); returns the
    cells that have one. A cell where neither method reaches the target in half the seeds
    (both medians infinite) has no speed-up to measure and is left out."""
    for c in cells:
        c["point"], c["low"], c["high"] = speedup_interval(c["candidate"], c["base"], rng)
    return [c for c in cells if not math.isnan(c["point"])]


def rival_selection(saved, prefix, rng, splits=400):
    """Per (table, target): the geometric mean over random halves of the out-of-half pick's
    median over the in-half best's (1.0: picking on the same seeds flatters nobody)."""
    print("| table | target | rivals | out-of-sample pick over in-sample best |\n|---|---|---|---|")
    logs = []
    for key, methods in sorted(saved.items()):
        rivals = [runs for name, runs in methods.items() if name.startswith(prefix) and "[measured]" in name]
        if len(rivals) < 2:
            continue
        seeds = sorted(set.intersection(*({r.seed for r in runs} for runs in rivals)))
        for t in range(len(rivals[0][0].times)):
            times = np.array([times_by_seed(runs, t, seeds) for runs in rivals])
            ratios = []
            for _ in range(splits):
                order = rng.permutation(len(seeds))
                a, b = order[:len(seeds) // 2], order[len(seeds) // 2:]
                on_b = np.median(times[:, b], axis=1)
                ratios.append(on_b[np.argmin(np.median(times[:, a], axis=1))] / on_b.min())
            cell = float(np.exp(np.mean(np.log(ratios))))
            logs.append(math.log(cell))
            print(f"| {key} | T{t + 1} | {len(rivals)} | {cell:.3f} |")
    print(f"\ngeometric mean over {len(logs)} cells: {math.exp(np.mean(logs)):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--base")
    parser.add_argument("--candidate")
    parser.add_argument("--placebo", type=int, metavar="N", help="seeds per group of a no-change candidate")
    parser.add_argument("--workers", type=int, help="only the tables saved at this worker count (keys TABLE@W)")
    parser.add_argument("--rival-selection", metavar="PREFIX", help="how much picking the best rival flatters it")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    if args.rival_selection:
        saved = only_workers(load(args.runs), args.workers)
        rival_selection(saved, args.rival_selection, rng)
        return
    if (args.candidate is None) == (args.placebo is None):
        sys.exit("give --candidate NAME, --placebo N or --rival-selection PREFIX")
    if args.base is None:
        sys.exit("--candidate and --placebo need --base NAME")
    if args.candidate:
        saved = only_workers(load(args.runs, [args.base, args.candidate]), args.workers)
        cells = cells_of(saved, args.base, args.candidate)
        print("| table | target | speed-up [95% CI] |\n|---|---|---|")
        measured = measured_cells(cells, rng)
        for c in cells:
            print(f"| {c['table']} | T{c['target'] + 1} | " +
                  ("neither reaches it in half the seeds: left out |" if math.isnan(c["point"])
                   else f"{c['point']:.3g} [{c['low']:.3g}, {c['high']:.3g}] |"))
        point, low, high = score(measured, rng)
        lowest = min(c["point"] for c in measured)
        left_out = f" ({len(cells) - len(measured)} left out)" if len(measured) < len(cells) else ""
        print(f"\nscore (geometric mean of {len(measured)} cells{left_out}): {point:.3f} [{low:.3f}, {high:.3f}]; "
              f"lowest cell {lowest:.3g}")
        return
    saved = only_workers(load(args.runs, [args.base]), args.workers)
    seeds = sorted(set.intersection(*({r.seed for r in m[args.base]} for m in saved.values())))
    groups = [seeds[i:i + args.placebo] for i in range(0, len(seeds) - args.placebo + 1, args.placebo)]
    print(f"`{args.base}` against itself, {len(saved)} tables, groups of {args.placebo} seeds\n")
    print("| base seeds | candidate seeds | score [95% CI] | lowest cell | highest cell |\n|---|---|---|---|---|")
    for a, b in itertools.permutations(range(len(groups)), 2):
        cells = cells_of(saved, args.base, args.base, groups[a], groups[b])
        for c in cells:
            c["point"] = float(np.median(c["base"]) / np.median(c["candidate"]))
        point, low, high = score(cells, rng)
        print(f"| {groups[a][0]}-{groups[a][-1]} | {groups[b][0]}-{groups[b][-1]} | {point:.3f} [{low:.3f}, {high:.3f}] | "
              f"{min(c['point'] for c in cells):.2f} | {max(c['point'] for c in cells):.2f} |")


if __name__ == "__main__":
    main()
