#!/usr/bin/python3
"""Does the earlier study see its late bloomers start slowly too (issue #64, item 2)? For
each transfer pair, the small table's best configurations (by the best value of their
curves) with, beside each, its rank among the table's configurations at each of the first
rungs' steps on the small table and on the large one (0 is the best), its rank by best value
on the large table, and its own time to the large table's targets when run alone. A
configuration that ranks low at a rung on both tables is a late bloomer the earlier study
saw as such; one that ranks high on the small table and low on the large is a lesson that
broke. Table-wide ranks, not a study's: a study ranks a trial among the trials that reached
the rung.

    /usr/bin/python3 tests/bench/quality/priors/rung_lessons.py [--pairs gbdt-data rff-cancer-shift] [--top 16]
"""
import argparse
import math
import os
import sys

# The shared harness lies one folder up (tests/bench/quality).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import target_floors  # noqa: E402
import transfer_quality as tq  # noqa: E402
from lesson_reference import small_table_order  # noqa: E402  (this folder)

RUNG_STEPS = (1, 3, 9)  # asha_promotion's first rungs with grace 1 and reduction factor 3


def score(table, value):
    """Smaller is better, whatever the table's mode; a missing or diverged value is worst."""
    if not math.isfinite(value):
        return math.inf
    return value if table.mode == "min" else -value


def ranks_at(table, step):
    """Each configuration's rank by its first run's value at `step` (1-based)."""
    def at(c):
        values = table.curves[c][0][1]
        return score(table, values[step - 1]) if step <= len(values) else math.inf
    order = sorted(range(len(table.configs)), key=lambda c: (at(c), c))
    return {c: i for i, c in enumerate(order)}


def report(pair, top):
    small, large = tq.pair_table(pair, "small"), tq.pair_table(pair, "large")
    small_order = small_table_order(small)
    large_rank = {c: i for i, c in enumerate(small_table_order(large))}  # the same order on the large
    print(f"\n## {pair}: the small table's best {top} (of {len(small.configs)}), ranks from 0\n")
    steps = " | ".join(f"step {s}: small → large" for s in RUNG_STEPS)
    print(f"| configuration | rank by best value, small → large | {steps} | alone to T1 / T2 on the large, s |")
    print("|---" * (3 + len(RUNG_STEPS)) + "|")
    at = {s: (ranks_at(small, s), ranks_at(large, s)) for s in RUNG_STEPS}
    for i, c in enumerate(small_order[:top]):
        _, values, seconds = large.curves[c][0]
        alone = [target_floors.time_to_target(large, t, values, seconds) for t in large.targets]
        cells = " | ".join(f"{at[s][0][c]} → {at[s][1][c]}" for s in RUNG_STEPS)
        times = " / ".join("-" if math.isinf(t) else f"{t:.3g}" for t in alone)
        print(f"| {c} | {i} → {large_rank[c]} | {cells} | {times} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", nargs="+", default=["mlp-width", "mlp-data", "gbdt-data", "mlp-shift",
                                                        "rff-cancer-shift"])
    parser.add_argument("--top", type=int, default=16)
    args = parser.parse_args()
    for pair in args.pairs:
        report(pair, args.top)


if __name__ == "__main__":
    main()
