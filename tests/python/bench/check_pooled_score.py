#!/usr/bin/env python3
"""Issue #64's score (tests/bench/quality/pooled_score.py) on cells whose answer is known:
a method at every cell's bound scores 1, one no sooner than the rival 0, one later below 0,
one halfway in log terms 0.5; the interval holds the point and narrows with agreeing seeds;
a seed that never reaches a target counts as infinite; each cell's bar.

    check_pooled_score.py SLURMTUNE   (the argument every python.* test gets; unused)"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "quality"))
from pooled_score import cell_verdict, pooled_score  # noqa: E402


def expect(ok, what):
    if not ok:
        sys.exit("FAIL: " + what)


def cell(table, rival, ours, bound):
    return dict(table=table, rival=np.array(rival, float), ours=np.array(ours, float), bound=bound)


def score(cells, resamples=400):
    return pooled_score(cells, np.random.default_rng(1), resamples)


rng = np.random.default_rng(7)
rival = [100 * rng.uniform(0.8, 1.25, 30) for _ in range(4)]
bounds = [10.0, 20.0, 40.0, 50.0]
tables = ["a", "a", "b", "b"]  # two targets of two tables

at_bound = score([cell(t, r, np.full(30, b), b) for t, r, b in zip(tables, rival, bounds)])
expect(abs(at_bound[0] - 1) < 1e-12, "every cell at its bound: S = %r, not 1" % (at_bound,))
same = score([cell(t, r, r, b) for t, r, b in zip(tables, rival, bounds)])
expect(abs(same[0]) < 1e-12 and same[1] <= 0 <= same[2], "the rival's own times: S = %r, not 0" % (same,))
later = score([cell(t, r, r * 1.5, b) for t, r, b in zip(tables, rival, bounds)])
expect(later[0] < 0 and later[2] < 0, "50 %% later everywhere: S = %r, not measurably below 0" % (later,))
# Halfway in log terms: ours = sqrt(O * B) in every cell.
halfway = [cell(t, r, np.sqrt(r * np.median(r) * b) / np.sqrt(np.median(r)), b)
           for t, r, b in zip(tables, rival, bounds)]
mid = score(halfway)
expect(abs(mid[0] - 0.5) < 0.02 and mid[1] <= mid[0] <= mid[2], "halfway: S = %r, not 0.5" % (mid,))

# A seed that never reaches the target is infinite: more than half of them, an infinite median.
never = np.full(30, math.inf)
never[:10] = 20
reached_rarely = score([cell("a", rival[0], never, 10.0), cell("a", rival[1], rival[1], 20.0)])
expect(reached_rarely[0] == -math.inf, "a median that never reaches: S = %r, not -inf" % (reached_rarely,))

# Seeds are resampled per table: a table whose cells have other seed counts is refused.
try:
    score([cell("a", rival[0], rival[0][:20], 10.0), cell("a", rival[1], rival[1], 20.0)])
    sys.exit("FAIL: cells of one table with different seeds were scored")
except ValueError as e:
    expect("same seeds" in str(e), "the refusal says why: %s" % e)

expect(cell_verdict((1.2, 1.05, 1.4), 3.0) == "meets the bar", "sooner with room: meets")
expect(cell_verdict((1.1, 0.9, 1.3), 1.5) == "meets the bar", "not later, little room: meets")
expect(cell_verdict((1.1, 0.9, 1.3), 2.5).startswith("room 2.50x"), "room 2.5x, not measurably sooner: fails")
expect(cell_verdict((0.8, 0.6, 0.95), 1.2) == "measurably later than the rival", "measurably later: fails")
print("pooled score: bound 1, rival 0, later %.3f [%.3f, %.3f], halfway %.3f [%.3f, %.3f]; cell bars"
      % (later + mid))
