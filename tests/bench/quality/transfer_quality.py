#!/usr/bin/python3
"""Priors from earlier studies (issue #64, item 2), on the table pairs of
make_transfer_tables.py: one model family at two sizes, the same configurations trained
on both. For each seed an earlier study runs on the small table (the recommended setting,
its own seed, the small table's whole budget), and then on the large table:

  recommended              no prior (MOBSTER with Hyper-Tune on asha_promotion)
  recommended, warm_start  the earlier study's trials as this study's observations
  recommended, prior       [sampler] prior: start where the earlier study did best
  recommended, prior, eager promotion
                           the same with asha_promotion's eager_promotion: the earlier best,
                           started first, trains on while its rungs hold too few to promote
  recommended, prior 0.5, eager promotion
                           the same with prior_share = 0.5
  recommended, prior exact N, eager promotion
                           the same with prior_exact = N: the first N start-ups are the
                           earlier best N as they were (as Optuna's enqueue starts them)
  recommended, prior [exact N] startup M, eager promotion
                           the same with prior_startup = M: start-ups after the first M
                           (a first wave wider than M) are uniform
  recommended, prior [...] check, eager promotion
                           the same with prior_check = true: the prior's share follows how its
                           check draws fare at the first rung against uniform ones
  recommended, prior [...] model, [...]
                           the same with prior_model = true: the earlier study's observations
                           enter the GP as another task, whose correlation the fit learns
  recommended, prior, eager promotion, trusted
                           the same with [scheduler] trusted_trials = prior_exact: the earlier
                           best, started as they were, run to max_t without pausing (a prior's
                           default from 2026-12-03; the methods without "trusted" set 0)
  recommended, prior [...], eager promotion, trusted N
                           the same with trusted_trials = N. "recommended, prior exact 5
                           startup 10, eager promotion, trusted 2" is a prior's defaults since
                           2026-12-04, with eager promotion
  recommended, prior share X [...]
                           the same with prior_share = X
  recommended, prior [...], trusted N, trust check
                           the same with [scheduler] trust_check = true: a trusted trial in the
                           worse half of a rung it passed loses its trust ("trust check above X":
                           trust_check_above = X, the share of the rung ranked above it). "recommended, prior
                           exact 5 startup 10 check, eager promotion, trusted 2, trust check" was
                           a prior's defaults from the evening of 2026-12-04; "recommended, prior
                           check, eager promotion, trusted 2, trust check" (prior_exact and
                           prior_startup not given: they follow the workers) was until C18
                           ("trust check gain", "trust check overtake", "trust check lesson":
                           trust_check_waiver = "gain", "overtake", "lesson" as well; "... from rung K": trust_check_waiver_from_rung = K;
                           without one, "none"). "recommended, prior check, eager promotion,
                           trusted P, trust check gain from rung 1", P the resolved prior_exact (5
                           at 8 workers, 16 at 32), was a prior's defaults from C18 (2026-12-04);
                           "... trusted P, trust check lesson from rung 0" is since C20 (2026-12-05)
  recommended, [...], copula targets
                           the same with target_transform = "copula": the losses meet the GP as
                           the normal quantiles of their ranks, the earlier study's (prior_model)
                           among its own, so that the two tasks share a scale (quantile-based
                           transfer)
  optuna tpe + sha, enqueued
                           Optuna's TPE with successive halving, the earlier study's best
                           configurations enqueued first (its top 15 %, at least 5: the
                           same ones the prior starts from), best first

Printed, per pair and worker count: each method's median virtual time to the large
table's targets T1 and T2 (its configurations' 2nd and 10th percentile best values) with
quartiles, and the prior's paired speed-ups over the others with bootstrap 95 %
intervals (a seed that never reaches a target counts as infinite). mlp-shift, rff-shift,
rff-cancer-shift, mlpreg-target, hgb-noise, mlp-big-batch, cnn-shift, plain-shift and
xgb22-noise are the pairs whose lesson does not hold. The
four tuning pairs (transfer/) run unless --pairs names others: rff-cancer-shift (transfer/, a
tuning pair recorded after the claim pairs ran), the four claim pairs (transfer-claim/),
recorded after the prior's setting was fixed, the four second claim pairs
(transfer-claim-2/), recorded after the prior's checks became its defaults, the four
third claim pairs (transfer-claim-3/), recorded after its first wave began to follow the
workers, or the fourth claim pairs (transfer-claim-4/), recorded after its trust began to
ask the earlier study (cnn-data and cnn-shift, their reserves, only where the reachability
check of search-quality.md's protocol calls for them), or the fifth claim pairs
(transfer-claim-5/), recorded for families whose single tables left room at 32 workers
(xgb22-digits-data and xgb22-noise, their reserves, only where the protocol's checks call
for them). Each method's row says in how many
seeds it reached each target.

Then, per worker count, issue #64 item 2's bar in pooled form (pooled_score.py): the
prior's geometric-mean speed-up over each other method across the cells (pair x {T1, T2})
of the pairs whose lesson holds, with its paired-bootstrap interval, beside the ceiling
(the geometric mean of that method's median over each cell's floor: the most any method
could gain over it there) and the share of that ceiling closed (item 4's pooled score S
with the method as the rival and the floors as the bounds); and over no prior on
mlp-shift. In these pooled figures a seed that never reaches a target counts as the
study's whole budget, so a cell that neither side reaches is a tie.

  /usr/bin/python3 tests/bench/quality/transfer_quality.py BUILD [--pairs ...] [--workers 8 32]
      [--seeds 60] [--first-seed 0] [--jobs 2] [--methods ...] [--mine METHOD] [--charged]
      [--save runs.json] [--merge runs.json ...]

`--save` writes every run to JSON; `--merge` takes the runs of a (pair, workers, method)
from such files instead of running them again (the seeds asked for must all be there).
"""
import argparse
import functools
import math
import multiprocessing
import os
import re
import sys
import tempfile

import h5py
import numpy as np
import optuna
import pandas as pd

from hpo_quality import RECOMMENDED, write_saved
from pooled_score import bound_of_cell, pooled_score, pooled_speedup
from quality_runs import Run, Table, read_saved, run_optuna, run_slurmtune, simulate_slurmtune, trial_configs
from quality_stats import quartiles, speedup_interval, times_by_seed
from target_floors import no_prior_bound, times_to_target

PAIRS = ("mlp-width", "mlp-data", "gbdt-data", "mlp-shift")  # tuning pairs: transfer/
# A tuning pair recorded after the claim pairs ran, shaped after rff-shift's failure (not in
# the default --pairs, so the commands of the earlier screenings run what they ran).
LATER_TUNING_PAIRS = ("rff-cancer-shift",)
CLAIM_PAIRS = ("rff-width", "multigrid-grid", "hgb-data", "rff-shift")  # recorded afterwards: transfer-claim/
# Recorded after the prior's checks became its defaults: transfer-claim-2/
SECOND_CLAIM_PAIRS = ("linear-data", "mlpreg-width", "hgb-class-data", "mlpreg-target")
# Recorded after the prior's first wave began to follow the workers: transfer-claim-3/
THIRD_CLAIM_PAIRS = ("rf-data", "mlpreg-data", "mlp-batch", "hgb-noise")
# Recorded after the prior's trust began to ask the earlier study (C20): transfer-claim-4/,
# the last two the reserves of its reachability check
FOURTH_CLAIM_PAIRS = ("cnn-width", "charlm-width", "mlp-depth", "mlp-big-batch", "cnn-data", "cnn-shift")
# Recorded for families whose single tables left room at 32 workers (priors/make_fifth_pairs.py):
# transfer-claim-5/, the last two the reserves of its checks
FIFTH_CLAIM_PAIRS = ("plain-data", "xgb22-data", "wide24-data", "plain-shift", "xgb22-digits-data", "xgb22-noise")
FOLDERS = {"transfer": PAIRS + LATER_TUNING_PAIRS, "transfer-claim": CLAIM_PAIRS,
           "transfer-claim-2": SECOND_CLAIM_PAIRS, "transfer-claim-3": THIRD_CLAIM_PAIRS,
           "transfer-claim-4": FOURTH_CLAIM_PAIRS, "transfer-claim-5": FIFTH_CLAIM_PAIRS}
ALL_PAIRS = tuple(pair for pairs in FOLDERS.values() for pair in pairs)
WRONG_LESSONS = ("mlp-shift", "rff-shift", "rff-cancer-shift", "mlpreg-target", "hgb-noise", "mlp-big-batch",
                 "cnn-shift", "plain-shift", "xgb22-noise")
NO_PRIOR = "recommended"
PRIOR_TOP_SHARE, PRIOR_MIN_GOOD = 0.15, 5  # gp/prior_region.hpp's good set
NO_PRIOR_DRAWS = 4000  # random first waves behind a cell's no-prior bound, as hpo_quality.py draws
EARLIER_SEED = 10_000  # the earlier study of scoring seed s runs with seed EARLIER_SEED + s
METHODS = ("recommended", "recommended, warm_start", "recommended, prior", "optuna tpe + sha, enqueued",
           "recommended, prior, eager promotion", "recommended, prior 0.5, eager promotion",
           "recommended, prior exact 5, eager promotion", "recommended, prior exact 10, eager promotion",
           "recommended, prior startup 10, eager promotion", "recommended, prior exact 5 startup 10, eager promotion",
           "recommended, prior check, eager promotion", "recommended, prior startup 4, eager promotion",
           "recommended, prior, eager promotion, trusted",
           "recommended, prior exact 5 startup 5, eager promotion, trusted 2",
           "recommended, prior startup 4, eager promotion, trusted",
           "recommended, prior exact 5 startup 10, eager promotion, trusted 2",
           "recommended, prior exact 5 startup 10 check, eager promotion, trusted 2",
           # Where the wrong lesson's time goes at 8 workers (search-quality.md, 2026-12-04):
           # the defaults with one thing changed, and a prior that draws nothing (a control)
           "recommended, prior exact 5 startup 10, eager promotion, trusted 0",
           "recommended, prior exact 5 startup 10 check, eager promotion, trusted 0",
           "recommended, prior exact 5 startup 10, trusted 2",
           "recommended, prior share 0 exact 5 startup 10, eager promotion, trusted 2",
           "recommended, prior share 0 exact 5 startup 10, trusted 0",
           "recommended, prior share 0 exact 2 startup 2, trusted 0",
           "recommended, prior share 0 exact 1 startup 1, trusted 0",
           "recommended, prior share 0 exact 0 startup 0, trusted 0",
           # The candidates of that day's rule: a trust that ends in a rung's worse half
           "recommended, prior exact 5 startup 10, eager promotion, trusted 2, trust check",
           "recommended, prior exact 5 startup 10 check, eager promotion, trusted 2, trust check",
           # A first wave that follows the workers (search-quality.md, after the second claim
           # pairs): at 32 workers, prior_exact W / 4 and W / 2, prior_startup 5 more
           "recommended, prior exact 8 startup 13 check, eager promotion, trusted 2, trust check",
           "recommended, prior exact 16 startup 21 check, eager promotion, trusted 2, trust check",
           # A prior's defaults since C9 (prior_exact and prior_startup follow the workers)
           "recommended, prior check, eager promotion, trusted 2, trust check",
           # Trusting more of the first wave (search-quality.md, "What the earlier study can
           # teach"): C10 trusts every exact configuration, C11 half of them (5 and 3 at 8
           # workers, 16 and 8 at 32, where prior_exact is 5 and 16)
           "recommended, prior check, eager promotion, trusted 5, trust check",
           "recommended, prior check, eager promotion, trusted 3, trust check",
           "recommended, prior check, eager promotion, trusted 16, trust check",
           "recommended, prior check, eager promotion, trusted 8, trust check",
           # A trust check that waits for a worse rank (C12, C13): trust_check_above
           "recommended, prior check, eager promotion, trusted 2, trust check above 0.75",
           "recommended, prior check, eager promotion, trusted 2, trust check above 0.9",
           # C14: every exact configuration trusted, with C12's check (5 at 8 workers, 16 at 32)
           "recommended, prior check, eager promotion, trusted 5, trust check above 0.75",
           "recommended, prior check, eager promotion, trusted 16, trust check above 0.75",
           # C15 and C16: a trust check that reads the curve's gain, with every exact
           # configuration trusted (5 at 8 workers, 16 at 32) or today's 2
           "recommended, prior check, eager promotion, trusted 5, trust check gain",
           "recommended, prior check, eager promotion, trusted 16, trust check gain",
           "recommended, prior check, eager promotion, trusted 2, trust check gain",
           # C17: who the trial overtook, every exact configuration trusted
           "recommended, prior check, eager promotion, trusted 5, trust check overtake",
           "recommended, prior check, eager promotion, trusted 16, trust check overtake",
           # C18 and C19: C15's and C17's waivers weighed only above the first rung
           "recommended, prior check, eager promotion, trusted 5, trust check gain from rung 1",
           "recommended, prior check, eager promotion, trusted 16, trust check gain from rung 1",
           "recommended, prior check, eager promotion, trusted 5, trust check overtake from rung 1",
           "recommended, prior check, eager promotion, trusted 16, trust check overtake from rung 1",
           # C20: the earlier study's rank at the same rung, weighed from the first rung
           "recommended, prior check, eager promotion, trusted 5, trust check lesson from rung 0",
           "recommended, prior check, eager promotion, trusted 16, trust check lesson from rung 0",
           # C20 with fewer earlier best started as they were at 8 workers (a look, not a rule)
           "recommended, prior exact 4 check, eager promotion, trusted 4, trust check lesson from rung 0",
           "recommended, prior exact 2 check, eager promotion, trusted 2, trust check lesson from rung 0",
           # C20 with no share of draws from the region past the check's own (a look: how much
           # a prior share that the lesson cuts at once could gain where the lesson is wrong)
           "recommended, prior share 0 check, eager promotion, trusted 5, trust check lesson from rung 0",
           "recommended, prior share 0 check, eager promotion, trusted 16, trust check lesson from rung 0",
           # C20 with a first wave of the whole space past the exact five at 8 workers (a look:
           # prior_startup 5, so the check's draws are all uniform), with and without the
           # region's share of the model's candidates
           "recommended, prior startup 5 check, eager promotion, trusted 5, trust check lesson from rung 0",
           "recommended, prior share 0 startup 5 check, eager promotion, trusted 5, trust check lesson from rung 0",
           # C20 without eager promotion (the trust runs the earlier best on as eager promotion did)
           "recommended, prior check, trusted 5, trust check lesson from rung 0",
           # C20 with fewer earlier best and the rest of the first wave uniform at 8 workers
           "recommended, prior exact 2 startup 2 check, eager promotion, trusted 2, trust check lesson from rung 0",
           "recommended, prior exact 3 startup 3 check, eager promotion, trusted 3, trust check lesson from rung 0",
           # C20 with the earlier study's observations in the GP as another task (prior_model)
           "recommended, prior check model, eager promotion, trusted 5, trust check lesson from rung 0",
           "recommended, prior check model, eager promotion, trusted 16, trust check lesson from rung 0",
           # the earlier study's observations in the model alone: no start-up and no candidate
           # from its region, none as they were, no trust
           "recommended, prior share 0 exact 0 startup 0 model, trusted 0",
           # C20 with fewer of its earlier best trusted, or none (a look: how much of a target
           # beyond the earlier best the trusted trials' workers cost at 8 workers)
           "recommended, prior check, eager promotion, trusted 2, trust check lesson from rung 0",
           "recommended, prior check, eager promotion, trusted 0",
           # quantile-based transfer (Salinas et al. 2020): each study's losses through its own
           # Gaussian copula before they meet the GP, the earlier study's as another task; the
           # model alone, with C20, and without a prior for the copula's own effect
           "recommended, copula targets",
           "recommended, prior share 0 exact 0 startup 0 model, trusted 0, copula targets",
           "recommended, prior check model, eager promotion, trusted 5, trust check lesson from rung 0, copula targets",
           "recommended, prior check model, eager promotion, trusted 16, trust check lesson from rung 0, copula targets")


def pair_table(pair, size):
    """The small or large table of a pair, from the tuning or the claim pairs' folder."""
    folder = next(folder for folder, pairs in FOLDERS.items() if pair in pairs)
    return Table(f"{folder}/{pair}-{size}")


def earlier_best(h5, params):
    """The earlier study's top configurations in successive halving's order (the highest
    step reached, then the value there), as gp/prior_region.hpp ranks them."""
    with h5py.File(h5, "r") as f:
        trials = f["trials"][:]
    good = [t for t in trials if t["reports"] > 0 and math.isfinite(float(t["last_value"]))]
    good.sort(key=lambda t: (-float(t["last_step"]), float(t["last_value"])))
    keep = max(PRIOR_MIN_GOOD, math.ceil(PRIOR_TOP_SHARE * len(good)))
    return trial_configs(np.array(good[:keep], dtype=trials.dtype), params)


def run_earlier(task):
    """The earlier study of one (pair, workers, seed) on the small table: its results file."""
    binary, pair, workers, seed, work = task
    small = pair_table(pair, "small")
    folder = os.path.join(work, f"earlier-{pair}-{workers}-{seed}")
    os.makedirs(folder, exist_ok=True)
    h5, _ = simulate_slurmtune(binary, small, RECOMMENDED, EARLIER_SEED + seed, workers,
                               small.total_seconds / workers, folder, False)
    return (pair, workers, seed), h5


def run_method(task):
    binary, pair, workers, seed, method, earlier, work, charged = task
    large = pair_table(pair, "large")
    budget = large.total_seconds / workers
    if method.startswith("optuna"):
        sampler = optuna.samplers.TPESampler(seed=seed)
        run = run_optuna(large, "tpe", "sha", seed, workers, budget, charged, sampler=sampler,
                         enqueued=earlier_best(earlier, large.params))
    else:
        folder = os.path.join(work, f"{pair}-{workers}-{method.replace(' ', '_').replace(',', '')}-{seed}")
        os.makedirs(folder, exist_ok=True)
        run = run_slurmtune(binary, large, slurmtune_variant(method, earlier), seed, workers, budget, folder,
                            charged)
    run.table = None
    return (pair, workers, method), run


def slurmtune_variant(method, earlier):
    """(scheduler, sampler, sampler options) of a slurmtune method (not Optuna's), given the
    earlier study's results file."""
    scheduler, sampler, options = RECOMMENDED
    options = dict(options)
    if "warm_start" in method:
        options["warm_start"] = [earlier]
    if "prior" in method:
        options["prior"] = [earlier]
        # check: the prior's share follows its first-rung results (a prior's default since
        # 2026-12-04; set either way, so that every method keeps the meaning it was run with)
        options["prior_check"] = bool(re.search(r"prior[^,]* check\b", method))
        # model: the earlier study's observations in the GP as another task (prior_model)
        if re.search(r"prior[^,]* model\b", method):
            options["prior_model"] = True
    if "copula targets" in method:  # each study's losses through its own Gaussian copula
        options["target_transform"] = "copula"
    if "prior 0.5" in method:  # half the start-up draws and candidates from the prior
        options["prior_share"] = 0.5
    if (share := re.search(r"share ([0-9.]+)", method)):  # share X: prior_share = X
        options["prior_share"] = float(share.group(1))
    for key, word in (("prior_exact", "exact"), ("prior_startup", "startup")):
        # exact N: the first N start-ups are the earlier best N, as they were;
        # startup N: only the first N start-ups drawn by the prior
        if (count := re.search(word + r" (\d+)", method)):
            options[key] = int(count.group(1))
    if "eager promotion" in method:  # the earlier best, started first, runs on while its rung is short
        scheduler = dict(scheduler, eager_promotion=True)
    if "prior" in method:
        # trusted: the earlier best, started as they were, run to max_t (the default
        # with a prior since 2026-12-03); the other prior methods keep the meaning they
        # were recorded with
        trusted = options.get("prior_exact", 2) if "trusted" in method else 0
        if (count := re.search(r"trusted (\d+)", method)):  # trusted N: the first N, fewer than prior_exact
            trusted = int(count.group(1))
        # trust check: the trust ends in the worse half of a rung it passed (a prior's
        # default since 2026-12-04, set either way as prior_check is)
        scheduler = dict(scheduler, trusted_trials=trusted, trust_check="trust check" in method)
        if (share := re.search(r"trust check above ([0-9.]+)", method)):  # the rank that ends a trust
            scheduler["trust_check_above"] = float(share.group(1))
        # what keeps a low-ranked trust, and from which rung on (a prior's defaults: "gain" from
        # rung 1 since C18, 2026-12-04, "lesson" from rung 0 since C20; set either way, as
        # prior_check is)
        waiver = re.search(r"trust check (gain|overtake|lesson)", method)
        scheduler["trust_check_waiver"] = waiver.group(1) if waiver else "none"
        if waiver:
            rung = re.search(r"from rung (\d+)", method)
            scheduler["trust_check_waiver_from_rung"] = int(rung.group(1)) if rung else 0
    return scheduler, sampler, options


def lesson(pair):
    """How far the small table's lesson holds on the large one: the rank correlation of the
    configurations' best values, and how many of the small table's top 10 % are among the
    large table's top 10 %."""
    small, large = pair_table(pair, "small"), pair_table(pair, "large")
    best = lambda t: pd.Series([np.nanmin(r[0][1]) if t.mode == "min" else -np.nanmax(r[0][1])  # noqa: E731
                                for r in t.curves])
    a, b = best(small), best(large)
    top = max(1, len(a) // 10)
    shared = len(set(a.nsmallest(top).index) & set(b.nsmallest(top).index))
    return a.corr(b, method="spearman"), shared, top


def text(value):
    return "-" if value is None else f"{value:.3g}"


def floors_of(large):
    """The fastest recorded run's own time to each target, which no method can beat
    (target_floors.py); a method whose median is at it has no room left to beat."""
    return [(times_to_target(large, t) or [math.inf])[0] for t in large.targets]


@functools.cache
def bounds_of(pair, workers):
    """Each target's no-prior bound on the pair's large table (pooled_score.bound_of_cell):
    the least time a method that starts from a first wave drawn without knowledge can take,
    which only a prior can pass."""
    large = pair_table(pair, "large")
    return [bound_of_cell(large, target, workers, NO_PRIOR_DRAWS, no_prior_bound) for target in large.targets]


def report(pair, workers, runs, large, methods, mine):
    rng = np.random.default_rng(0)
    floors, bounds = floors_of(large), bounds_of(pair, workers)
    print(f"\n### {pair} at {workers} workers (large table: T1 = {large.targets[0]:.4g}, "
          f"T2 = {large.targets[1]:.4g}; floors {floors[0]:.3g} s and {floors[1]:.3g} s; "
          f"no-prior bounds {bounds[0]:.3g} s and {bounds[1]:.3g} s)\n")
    print("| method | T1 median [quartiles] | T2 median [quartiles] | seeds reaching T1 / T2 |")
    print("|---|---|---|---|")
    for method in methods:
        cells = []
        for i in range(2):
            q25, median, q75 = quartiles([r.times[i] for r in runs[method]])
            cells.append(f"{text(median)} [{text(q25)}, {text(q75)}]")
        reached = [sum(r.times[i] is not None for r in runs[method]) for i in range(2)]
        print(f"| {method} | {cells[0]} | {cells[1]} | {reached[0]} / {reached[1]} of {len(runs[method])} |")
    ours = runs[mine]
    seeds = sorted(r.seed for r in ours)
    print(f"\n| {mine}: speed-up over | T1 [95% CI] | T2 [95% CI] |")
    print("|---|---|---|")
    for method in methods:
        if method == mine:
            continue
        cells = []
        for i in range(2):
            point, low, high = speedup_interval(times_by_seed(ours, i, seeds),
                                                times_by_seed(runs[method], i, seeds), rng)
            cells.append(f"{point:.3g} [{low:.3g}, {high:.3g}]")
        print(f"| {method} | {cells[0]} | {cells[1]} |")
    sys.stdout.flush()


def censored(runs, target_index, seeds, budget):
    """Times by seed, a seed that never reached the target counted as the whole budget."""
    return np.minimum(times_by_seed(runs, target_index, seeds), budget)


def pooled_cells(pairs, workers, runs, mine, other, tables):
    """The cells (pair x target) of `pairs` at `workers`: mine's and other's censored
    times by seed, and the cell's floor (`tables`: each pair's large table)."""
    cells = []
    for pair in pairs:
        large = tables[pair]
        budget = large.total_seconds / workers
        by_method = runs[(pair, workers)]
        seeds = sorted(r.seed for r in by_method[mine])
        for i, floor in enumerate(floors_of(large)):
            cells.append(dict(table=pair, target=i, floor=floor, ours=censored(by_method[mine], i, seeds, budget),
                              theirs=censored(by_method[other], i, seeds, budget)))
    return cells


def unreached_cells(pairs, workers, runs, methods, tables):
    """The cells (pair, target index) that no run of any of `methods` reached: a table whose
    configurations that meet the target bloom late, which successive halving stops before
    they do, and whose configurations are all spent long before the budget is."""
    return {(pair, i) for pair in pairs for i in range(len(tables[pair].targets))
            if all(r.times[i] is None for m in methods for r in runs[(pair, workers)][m])}


def ceiling_of(cells):
    """The geometric mean over the cells of the other method's median over the floor: the
    most any method could gain over it there (nan without cells)."""
    if not cells:
        return math.nan
    return math.exp(np.mean([math.log(np.median(c["theirs"]) / c["floor"]) for c in cells]))


def ceiling_share(cells):
    """The share of the ceiling closed, in logs, with its paired-bootstrap interval: item 4's
    pooled score S (pooled_score.py) with the other method as the rival and each cell's floor
    as its bound, sum ln(theirs / mine) / sum ln(theirs / floor). 1: at the floors in every
    cell; 0: no sooner than the other method. Unlike the speed-up it can be read across sets
    of pairs whose ceilings differ."""
    return pooled_score([dict(table=c["table"], rival=c["theirs"], ours=c["ours"], bound=c["floor"])
                         for c in cells], np.random.default_rng(0))


def report_pooled(pairs, workers, runs, methods, mine, tables):
    """Issue #64 item 2's bar, pooled (pooled_score.py): over the pairs whose lesson holds,
    mine against every other method, beside the ceiling the floors leave; on the pair whose
    lesson is wrong, mine against no prior."""
    holds = [p for p in pairs if p not in WRONG_LESSONS]
    if holds:
        print(f"\n### Pooled at {workers} workers over {', '.join(holds)} (T1 and T2): "
              f"{mine}'s geometric-mean speed-up\n")
        unreached = unreached_cells(holds, workers, runs, methods, tables)
        print("| over | speed-up [95% CI] | ceiling (its medians over the floors) | "
              "ceiling over the cells some method reached | share of the ceiling closed [95% CI] |")
        print("|---|---|---|---|---|")
        for other in methods:
            if other == mine:
                continue
            cells = pooled_cells(holds, workers, runs, mine, other, tables)
            point, low, high = pooled_speedup(cells, np.random.default_rng(0))
            share, share_low, share_high = ceiling_share(cells)
            print(f"| {other} | {point:.3g} [{low:.3g}, {high:.3g}] | {ceiling_of(cells):.3g} | "
                  f"{ceiling_of([c for c in cells if (c['table'], c['target']) not in unreached]):.3g} | "
                  f"{share:.2f} [{share_low:.2f}, {share_high:.2f}] |")
        if unreached:
            names = ", ".join(f"{pair} T{i + 1}" for pair, i in sorted(unreached))
            print(f"\nNo method reached {names} on any seed: those cells are ties in every comparison "
                  f"above, and their ceilings are the whole budget over the floor, not room that a method "
                  f"run here showed it could use.")
        cells = pooled_cells(holds, workers, runs, mine, mine, tables)
        bounds = [b for pair in holds for b in bounds_of(pair, workers)]
        past = math.exp(np.mean([math.log(b / np.median(c["ours"])) for c, b in zip(cells, bounds)]))
        print(f"\n{mine} against the no-prior bounds there: {past:.3g}x (the geometric mean of each cell's "
              f"bound over its median; above 1, sooner than any method without a prior can be)")
    against_no_prior = NO_PRIOR in methods and mine != NO_PRIOR
    wrongs = [p for p in pairs if p in WRONG_LESSONS]
    for wrong in [p for p in wrongs if against_no_prior]:
        cells = pooled_cells([wrong], workers, runs, mine, NO_PRIOR, tables)
        point, low, high = pooled_speedup(cells, np.random.default_rng(0))
        print(f"\n{wrong} (the wrong lesson) at {workers} workers, T1 and T2 pooled: {mine} "
              f"{point:.3g}x [{low:.3g}, {high:.3g}] the speed of no prior")
    if len(wrongs) > 1:
        print(f"\n### Pooled at {workers} workers over {', '.join(wrongs)} (the wrong lessons, T1 and T2): "
              f"{mine}'s geometric-mean speed-up\n")
        print("| over | speed-up [95% CI] |")
        print("|---|---|")
        for other in methods:
            if other != mine:
                point, low, high = pooled_speedup(pooled_cells(wrongs, workers, runs, mine, other, tables),
                                                  np.random.default_rng(0))
                print(f"| {other} | {point:.3g} [{low:.3g}, {high:.3g}] |")
    sys.stdout.flush()


def load_merged(paths):
    """--merge: runs by (pair, workers) and method; the first file to hold one gives it."""
    merged = {}
    for path in paths:
        for key, methods in read_saved(path).items():
            pair, workers = key.rsplit("@", 1)
            for method, saved in methods.items():
                merged.setdefault((pair, int(workers)), {}).setdefault(method, [Run.from_json(r) for r in saved])
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build")
    parser.add_argument("--pairs", nargs="+", default=list(PAIRS),
                        choices=ALL_PAIRS,
                        help="the tuning pairs (default) or the claim pairs (%(choices)s)")
    parser.add_argument("--workers", nargs="+", type=int, default=[8, 32])
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds FIRST .. FIRST + SEEDS - 1")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                        help="the methods to run")
    parser.add_argument("--mine", choices=METHODS,
                        help="the method whose paired speed-ups over the others are printed "
                             "(default: the first of --methods with a prior)")
    parser.add_argument("--charged", action="store_true",
                        help="charge each decision's measured time (one job per idle core)")
    parser.add_argument("--save", help="write every run of every method to this JSON file")
    parser.add_argument("--merge", nargs="+", default=[], help="take the runs saved in these JSON files")
    args = parser.parse_args()
    mine = args.mine or next((m for m in args.methods if "prior" in m), args.methods[0])
    if mine not in args.methods:
        parser.error(f"--mine {mine!r} is not among --methods")
    binary = os.path.join(args.build, "src", "slurmtune")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    runs = {}
    for key, methods in load_merged(args.merge).items():
        for method, saved in methods.items():
            picked = [r for r in saved if r.seed in seeds]
            if key[0] in args.pairs and key[1] in args.workers and method in args.methods \
                    and len(picked) == len(seeds):
                runs.setdefault(key, {})[method] = picked
    with tempfile.TemporaryDirectory(prefix="slurmtune-transfer-") as work, \
            multiprocessing.Pool(args.jobs) as pool:
        cells = [(p, w, s) for p in args.pairs for w in args.workers for s in seeds
                 if any(m not in runs.get((p, w), {}) for m in args.methods)]
        earlier = dict(pool.imap_unordered(run_earlier, [(binary, p, w, s, work) for p, w, s in cells]))
        tasks = [(binary, p, w, s, m, earlier[(p, w, s)], work, args.charged) for p, w, s in cells
                 for m in args.methods if m not in runs.get((p, w), {})]
        for key, run in pool.imap_unordered(run_method, tasks):
            runs.setdefault(key[:2], {}).setdefault(key[2], []).append(run)
    if args.save:
        write_saved(args.save, {f"{p}@{w}": {m: [r.to_json() for r in rs] for m, rs in by_method.items()}
                                for (p, w), by_method in runs.items()})
    tables = {pair: pair_table(pair, "large") for pair in args.pairs}
    for pair in args.pairs:
        rho, shared, top = lesson(pair)
        print(f"\n## {pair}: rank correlation of the configurations' best values, small against large, "
              f"{rho:.2f}; {shared} of the small table's top {top} in the large table's top {top}")
        large = tables[pair]
        for workers in args.workers:
            for method_runs in runs[(pair, workers)].values():
                for run in method_runs:
                    run.table = large
            report(pair, workers, runs[(pair, workers)], large, args.methods, mine)
    for workers in args.workers:
        report_pooled(args.pairs, workers, runs, args.methods, mine, tables)


if __name__ == "__main__":
    main()
