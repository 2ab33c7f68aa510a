#!/usr/bin/python3
"""Who reaches the target first: for a slurmtune setting on recorded tables, the trial whose
report first met each target (T1, T2 as in hpo_quality.py), where its configuration came
from (a start-up draw, the sampler's random share, the model, or a sampler without a
model: "blind") and how many trials had started before it, and how many of those were
"able": their configuration's recorded curve meets the target, had it trained far enough
(the hit's own trial among them; a mean over the seeds). When about one able trial has
started by the hit, the scheduler lost none and the time went to finding one. "Straight
on": the median time at which the first of the trials started by the hit would have met
the target had each trained straight on from its start, never paused or stopped (and
displacing nothing): the most a scheduler that kept the same trials could win. When most
first hits are random draws, no sampler can make that cell much sooner; when the model's
suggestions make them, the cell measures the model. "First wave holds one": the share of
seeds whose first `workers` trials include a configuration whose recorded curve reaches
the target (had it trained far enough): how much of a cell is the first wave's luck, which
no sampler without a prior can change and a prior's first wave trades (issue #64).

Where the time to the target went, as shares of it (means over the seeds, so they add up
to 100 %): before the trial that met it started (proposing it), while it waited paused
at a rung (the scheduler's doing), and while it trained up to the report that met it (its
own steps, which only a cheaper configuration could shorten).

    /usr/bin/python3 tests/bench/quality/first_hits.py [--slurmtune build/src/slurmtune]
        [--tables digits-mlp ...] [--workers 8 [32 ...]] [--seeds 20] [--method recommended]

Decisions are free (a seed gives the same run everywhere); the runs are those of
hpo_quality.py's method of the same name. With --pairs, the large tables of
transfer_quality.py's pairs instead, each seed's earlier study run first on the small table
and the method one of transfer_quality.py's (a prior's start-ups, the earlier best started
as they were and the draws from its region, count as "startup"):

    /usr/bin/python3 tests/bench/quality/first_hits.py --pairs mlpreg-data ... --workers 8 32
        --method "recommended, prior check, eager promotion, trusted 2, trust check"
"""
import argparse
import functools
import math
import multiprocessing
import os
import tempfile
from typing import NamedTuple

import h5py
import numpy as np

import hpo_quality
import quality_runs
import target_floors
import transfer_quality

ORIGINS = ("startup", "random", "model", "enqueued", "blind")


class FirstHit(NamedTuple):
    """The report that first met a target, and the trial that made it."""
    origin: str          # where the trial's configuration came from (ORIGINS)
    trial: int
    started: int         # trials started by the time of the hit
    model_share: float   # the model's share of those
    time: float          # of the hit
    start: float         # the trial's start
    paused: float        # seconds the trial spent paused at rungs before the hit
    able: int            # trials started by then whose configuration's recorded curve meets the target
    straight: float      # when the first of those would have met it, had each trained straight on

    def time_shares(self):
        """(before the trial started, paused, training) as shares of the time to the hit."""
        return (self.start / self.time, self.paused / self.time,
                (self.time - self.start - self.paused) / self.time)


def paused_before(events, kinds, trial, time):
    """Seconds the trial spent paused at rungs before `time` (each pause to its resume)."""
    mine = np.sort(events[events["trial"] == trial], order="seq")
    paused, since = 0.0, None
    for event in mine:
        if event["time"] > time:
            break
        if event["kind"] == kinds["pause"]:
            since = float(event["time"])
        elif event["kind"] == kinds["resume"] and since is not None:
            paused, since = paused + float(event["time"]) - since, None
    return paused


def first_hit(task):
    """(seed, [per target: (None or its FirstHit, whether the first wave holds a configuration
    whose curve reaches it)])."""
    binary, table, variant, seed, workers, budget, work = task
    folder = os.path.join(work, f"{table.name}-{workers}-{seed}")
    os.makedirs(folder, exist_ok=True)
    if callable(variant):  # a transfer pair's method: its earlier study first, on the small table
        pair = os.path.basename(table.name).removesuffix("-large")
        _, earlier = transfer_quality.run_earlier((binary, pair, workers, seed, folder))
        variant = variant(earlier)
    h5, _ = quality_runs.simulate_slurmtune(binary, table, variant, seed, workers, budget, folder, False)
    with h5py.File(h5, "r") as f:
        commit = f["commit"][0]
        metrics = np.sort(f["metrics"][: int(commit["metrics"])], order="seq")
        trials = f["trials"][: int(commit["trials"])]
        names = {v: k for k, v in h5py.check_enum_dtype(f["trials"].dtype["origin"]).items()}
        events = f["events"][: int(commit["events"])]
        kinds = h5py.check_enum_dtype(f["events"].dtype["kind"])
    trials = np.sort(trials, order="id")
    rows = [quality_runs.config_row(table, c) for c in quality_runs.trial_configs(trials, table.params)]
    hits = []
    for target in table.targets:
        # Per trial: its configuration's own time to the target, trained straight on.
        own = np.array([min(target_floors.time_to_target(table, target, values, seconds)
                            for _, values, seconds in table.curves[row]) for row in rows])
        meets = own < math.inf
        holds = bool(meets[:workers].any())
        reached = [row for row in metrics if not np.isnan(row[table.metric])
                   and table.reached(float(row[table.metric]), target)]
        if not reached:
            hits.append((None, holds))
            continue
        row = reached[0]
        trial = trials[trials["id"] == row["trial"]][0]
        started = trials["start_time"] <= row["time"]
        before = trials[started]
        model_share = float(np.mean([names[o] == "model" for o in before["origin"]]))
        hits.append((FirstHit(names[int(trial["origin"])], int(row["trial"]), len(before), model_share,
                              float(row["time"]), float(trial["start_time"]),
                              paused_before(events, kinds, row["trial"], float(row["time"])),
                              int(meets[started].sum()),
                              float((trials["start_time"] + own)[started].min())), holds))
    return seed, hits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slurmtune", default=os.path.join(quality_runs.ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt", "diabetes-sgd", "digits-deep"])
    parser.add_argument("--workers", nargs="+", type=int, default=[8])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--pairs", nargs="+", help="transfer_quality.py's pairs instead of --tables")
    parser.add_argument("--method", default="recommended",
                        help="a slurmtune variant of hpo_quality.py (with --pairs, a slurmtune method of "
                             "transfer_quality.py)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    if args.pairs:
        unknown = [p for p in args.pairs if p not in transfer_quality.ALL_PAIRS]
        if unknown or args.method not in transfer_quality.METHODS or args.method.startswith("optuna"):
            raise SystemExit(f"--pairs {' '.join(unknown)} / --method {args.method!r}: not a pair and a "
                             "slurmtune method of transfer_quality.py")
        args.tables = [transfer_quality.pair_table(p, "large").name for p in args.pairs]
        variants = {args.method: functools.partial(transfer_quality.slurmtune_variant, args.method)}
    else:
        variants = {v[0]: v[1:] for v in hpo_quality.SLURMTUNE_VARIANTS}
    if args.method not in variants:
        raise SystemExit(f"--method: no slurmtune variant named {args.method!r}")
    print(f"first hits of `{args.method}`, {args.seeds} seeds, decisions free; origin of the trial that "
          "first met the target (shares of the seeds that reached it), median trials started by then "
          "[quartiles], and the model's share of those trials")
    print()
    print("| table | workers | target | reached | startup | random | model | blind | trials started | model's share of them "
          "| able ones among them | time to it | straight on | before it started | paused | training | first wave holds one |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work, multiprocessing.Pool(args.jobs) as pool:
        for name in args.tables:
            table = quality_runs.Table(name)
            for workers in args.workers:
                budget = table.total_seconds / workers
                tasks = [(args.slurmtune, table, variants[args.method], seed, workers, budget, work)
                         for seed in range(args.seeds)]
                results = sorted(pool.map(first_hit, tasks))
                for t in range(len(table.targets)):
                    hits = [h[t][0] for _, h in results if h[t][0] is not None]
                    holds = np.mean([h[t][1] for _, h in results])
                    shares = {o: sum(h.origin == o for h in hits) / max(len(hits), 1) for o in ORIGINS}
                    started = [h.started for h in hits]
                    q = np.percentile(started, [25, 50, 75]) if started else [np.nan] * 3
                    model = np.median([h.model_share for h in hits]) if hits else np.nan
                    able = np.mean([h.able for h in hits]) if hits else np.nan
                    time = np.median([h.time for h in hits]) if hits else np.nan
                    straight = np.median([h.straight for h in hits]) if hits else np.nan
                    split = [h.time_shares() for h in hits if h.time > 0]  # (before, paused, training)
                    shares_of_time = " | ".join(f"{np.mean(v):.0%}" for v in zip(*split)) if split else "- | - | -"
                    print(f"| {name} | {workers} | T{t + 1} | {len(hits)}/{args.seeds} | {shares['startup']:.0%} | "
                          f"{shares['random']:.0%} | "
                          f"{shares['model']:.0%} | {shares['blind']:.0%} | {q[1]:.0f} [{q[0]:.0f}, {q[2]:.0f}] | {model:.0%} | {able:.2f} | "
                          f"{time:.3g} s | {straight:.3g} s | "
                          f"{shares_of_time} | {holds:.0%} |", flush=True)


if __name__ == "__main__":
    main()
