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
(its lower end at least 1.0)."""
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


def _pooled_score(cells, rng, resamples):
    rival = np.array([np.median(c["rival"]) for c in cells])
    ours = np.array([np.median(c["ours"]) for c in cells])
    bounds = np.array([c["bound"] for c in cells], dtype=float)
    point = _score(rival, ours, bounds)
    tables = sorted({c["table"] for c in cells})
    seeds = {t: len(next(c["ours"] for c in cells if c["table"] == t)) for t in tables}
    for c in cells:
        if len(c["ours"]) != seeds[c["table"]] or len(c["rival"]) != seeds[c["table"]]:
            raise ValueError(f"{c['table']}: every cell of a table needs the same seeds")
    scores = []
    for _ in range(resamples):
        picks = {t: rng.integers(0, seeds[t], size=seeds[t]) for t in tables}
        r = np.array([np.median(c["rival"][picks[c["table"]]]) for c in cells])
        o = np.array([np.median(c["ours"][picks[c["table"]]]) for c in cells])
        scores.append(_score(r, o, bounds))
    scores = np.array(scores)
    scores = scores[~np.isnan(scores)]
    if not len(scores):
        return point, math.nan, math.nan
    low, high = np.percentile(scores, [2.5, 97.5])
    return point, float(low), float(high)


def cell_verdict(speedup, room):
    """Whether one cell meets the per-cell bar: `speedup` is (point, low, high) of the
    rival's median over ours; `room` is O_c / B_c."""
    _, low, high = speedup
    if not high >= 1.0:
        return "measurably later than the rival"
    if room >= ROOM_THAT_MUST_BE_USED and not low >= 1.0:
        return f"room {room:.2f}x, not measurably sooner"
    return "meets the bar"
