#!/usr/bin/env python3
"""How well a rung ranks the configurations by their best value, on each recorded table
(doc/performance.md, "What the rungs keep").

    /usr/bin/python3 tests/bench/quality/rung_survival.py [--tables ...] [--etas 3 4 5]

Per table, from its curves alone (no search is run): for each rung r = 1, eta, eta^2, ...
below the last step, the Spearman correlation between the value at r and the best value
of the whole curve, and how many of the configurations that meet T1 in a recorded run rank
in the best 1/eta at r, i.e. would be promoted by a rung that held every configuration.
Tables with several runs per configuration (data seeds) use the mean curve.
"""
import argparse

import numpy as np
import pandas as pd

from quality_runs import Table

TABLES = ("digits-mlp", "cancer-gbdt", "diabetes-sgd", "digits-deep",
          "digits-torch12", "digits-cnn", "wine-noisy", "digits-xgb")


def curves_by_configuration(table):
    """Configurations x steps (the mean of a configuration's recorded runs), oriented so
    that lower is better, and whether any of its runs meets T1."""
    sign = 1.0 if table.mode == "min" else -1.0
    rows, meets = [], []
    for runs in table.curves:
        steps = runs[0][0]
        rows.append(pd.Series(sign * np.mean([values for _, values, _ in runs], axis=0), index=steps))
        meets.append(any(table.reached(np.nanmin(v) if table.mode == "min" else np.nanmax(v), table.targets[0])
                         for _, v, _ in runs))
    return pd.DataFrame(rows), np.array(meets)


def rungs(eta, last_step):
    r = 1
    while r < last_step:
        yield r
        r *= eta


def spearman(a, b):
    """Over the configurations whose curves reach the rung (some end early: diverged)."""
    both = a.notna() & b.notna()
    return float(np.corrcoef(a[both].rank(), b[both].rank())[0, 1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES))
    parser.add_argument("--etas", nargs="+", type=int, default=[3, 4, 5])
    args = parser.parse_args()
    print("| table | eta | per rung: step, Spearman with the best value, configurations meeting T1 in the rung's top 1/eta |")
    print("|---|---|---|")
    for name in args.tables:
        curves, top = curves_by_configuration(Table(name))
        best = curves.min(axis=1)
        for eta in args.etas:
            cells = []
            for r in rungs(eta, curves.columns.max()):
                at = curves[r]
                promoted = at <= at.quantile(1.0 / eta)
                cells.append(f"{r}: {spearman(at, best):.2f}, {int((top & promoted.to_numpy()).sum())}/{int(top.sum())}")
            print(f"| {name} | {eta} | {'; '.join(cells)} |")


if __name__ == "__main__":
    main()
