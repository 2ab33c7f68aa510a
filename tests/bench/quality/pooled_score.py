"""Issue #64's bar for the claim tables, fixed before any run: a method's times to the
targets against the rival's (Optuna's best charged variant per cell, chosen on other seeds)
and against the cell's no-prior bound B_c (target_floors.py: the least median time any
method that starts from a random first wave can take).

    S = sum_c ln(O_c / M_c) / sum_c ln(O_c / B_c)

with O_c and M_c the rival's and the method's median times in cell c (a seed that never
reaches the target counts as infinite): the log of the geometric-mean speed-up over the
log of the geometric-mean room. S = 0: no sooner than the rival; S = 1: every cell at its
bound; S < 0: later. Its 95 % interval is a paired bootstrap: per table one resample of
the seeds, shared by that table's cells (both targets, every worker count), the bounds
fixed. Per cell: never measurably later than the rival (the upper end of the speed-up's
interval at least 1.0), and where the room O_c / B_c is at least 2, measurably sooner
(its lower end at least 1.0).

Item 2 (priors) in the same pooled form, fixed before any claim pair is recorded: at each
worker count, the prior's speed-up over a baseline is the geometric mean over the cells of
the pairs whose lesson holds (pair x {T1, T2}) of the baseline's median time over the
prior's (`pooled_speedup`), with the same per-table paired bootstrap. A per-cell 2x cannot
be a bar: where the baseline starts the earlier best first and it is the fastest route, the
baseline's median is the target's floor and no method is sooner at all."""
import math

import numpy as np

from quality_stats import BOOTSTRAP_RESAMPLES

ROOM_THAT_MUST_BE_USED = 2.0  # a cell with this much room must be measurably sooner


def bound_of_cell(table, target, workers, draws, no_prior_bound):
    """B_c: the lower of the uniform and the nearest first waves' no-prior bounds."""
    return min(no_prior_bound(table, target, workers, draws, "uniform"),
               no_prior_bound(table, target, workers, draws, "nearest"))


def _score(rival_medians, ours_medians, bounds):
    with np.errstate(divide="ignore", invalid="ignore"):
        gained = np.sum(np.log(rival_medians / ours_medians))
        room = np.sum(np.log(rival_medians / bounds))
        return float(gained / room) if room > 0 else math.nan


def pooled_score(cells, rng, resamples=BOOTSTRAP_RESAMPLES):
    """(S, low, high) over `cells`: dicts with `table`, `ours` and `rival` (times by seed,
    the same seeds in the same order within a table) and `bound`."""
    with np.errstate(invalid="ignore"):  # medians of infinite times
        return _pooled_score(cells, rng, resamples)


def _seed_counts(cells, keys):
    """Seeds per table; every cell of a table must hold the same seeds under each key."""
    tables = sorted({c["table"] for c in cells})
    seeds = {t: len(next(c[keys[0]] for c in cells if c["table"] == t)) for t in tables}
    for c in cells:
        if any(len(c[k]) != seeds[c["table"]] for k in keys):
            raise ValueError(f"{c['table']}: every cell of a table needs the same seeds")
    return seeds


def _bootstrap(statistic, cells, keys, rng, resamples):
    """(point, low, high): `statistic` of the cells' medians under `keys`, and its 95 %
    paired-bootstrap interval (per table one resample of the seeds, shared by its cells)."""
    seeds = _seed_counts(cells, keys)

    def medians(picks=None):  # per key, the cells' medians over the seeds picked (all: None)
        return [np.array([np.median(c[k] if picks is None else c[k][picks[c["table"]]]) for c in cells])
                for k in keys]
    point = statistic(*medians())
    draws = []
    for _ in range(resamples):
        picks = {t: rng.integers(0, n, size=n) for t, n in seeds.items()}
        draws.append(statistic(*medians(picks)))
    draws = np.array(draws)
    draws = draws[~np.isnan(draws)]
    if not len(draws):
        return point, math.nan, math.nan
    low, high = np.percentile(draws, [2.5, 97.5])
    return point, float(low), float(high)


def _pooled_score(cells, rng, resamples):
    bounds = np.array([c["bound"] for c in cells], dtype=float)
    return _bootstrap(lambda rival, ours: _score(rival, ours, bounds), cells, ("rival", "ours"), rng, resamples)


def pooled_speedup(cells, rng, resamples=BOOTSTRAP_RESAMPLES):
    """Issue #64 item 2's speed-up pooled over a set of cells (table pairs x targets at one
    worker count): the geometric mean over the cells of their median time over ours, with
    its paired-bootstrap 95 % interval. `cells`: dicts with `table`, `ours` and `theirs`,
    finite times by seed (the caller counts a seed that never reached the target as the
    study's whole budget, so that a cell that neither side reaches is a tie, not nan)."""
    def geometric_mean(theirs, ours):
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.exp(np.mean(np.log(theirs / ours))))
    return _bootstrap(geometric_mean, cells, ("theirs", "ours"), rng, resamples)


def cell_verdict(speedup, room):
    """Whether one cell meets the per-cell bar: `speedup` is (point, low, high) of the
    rival's median over ours; `room` is O_c / B_c."""
    _, low, high = speedup
    if not high >= 1.0:
        return "measurably later than the rival"
    if room >= ROOM_THAT_MUST_BE_USED and not low >= 1.0:
        return f"room {room:.2f}x, not measurably sooner"
    return "meets the bar"
