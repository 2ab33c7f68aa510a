#!/usr/bin/env python3
"""The screening score (tests/bench/quality/screen_score.py) on cells whose answer is known:
a candidate equal to the base scores 1, one twice as fast 2 with an interval above 1; a cell
that neither method reaches in half the seeds is left out, not turned into a score of nan;
one that only the base reaches counts as the candidate never being sooner (speed-up 0).

    check_screen_score.py SLURMTUNE   (the argument every python.* test gets; unused)"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "quality"))
from screen_score import measured_cells, score  # noqa: E402


def expect(ok, what):
    if not ok:
        sys.exit("FAIL: " + what)


def cell(table, target, base, candidate):
    return dict(table=table, target=target, base=np.array(base, float), candidate=np.array(candidate, float))


def main():
    rng = np.random.default_rng(0)
    seeds = np.linspace(1.0, 3.0, 40)
    never = np.full(40, math.inf)
    cells = [cell("a", 0, seeds, seeds), cell("a", 1, seeds, seeds / 2),
             cell("b", 0, never, never), cell("b", 1, seeds, seeds)]
    measured = measured_cells(cells, rng)
    expect([(c["table"], c["target"]) for c in measured] == [("a", 0), ("a", 1), ("b", 1)],
           "the cell neither reaches is the one left out: %s" % [(c["table"], c["target"]) for c in measured])
    expect(math.isnan(cells[2]["point"]), "the left-out cell keeps no point: %s" % cells[2]["point"])
    expect(cells[1]["point"] == 2.0 and cells[1]["low"] > 1.0, "twice as fast: %s" % cells[1])
    point, low, high = score(measured, rng)
    expect(abs(point - 2 ** (1 / 3)) < 1e-12, "geometric mean of 1, 2, 1: %s" % point)
    expect(low <= point <= high and math.isfinite(low), "the interval holds the point: %s" % ((low, high),))
    equal, _, _ = score(measured_cells([cell("c", 0, seeds, seeds)], rng), rng)
    expect(equal == 1.0, "a candidate equal to the base scores 1: %s" % equal)
    only_base = measured_cells([cell("d", 0, seeds, never)], rng)
    expect(len(only_base) == 1 and only_base[0]["point"] == 0.0,
           "a cell only the base reaches is measured, as 0: %s" % only_base)
    print("screen_score: equal 1, twice as fast 2, a cell neither reaches left out, one only the base reaches 0")


if __name__ == "__main__":
    main()
