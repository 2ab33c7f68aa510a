#!/usr/bin/python3
"""What slurmtune's GP knows after n observations, and what an acquisition picks with it.
For each table: n configurations drawn at random, their first-step values observed; the
GP (tests/bench/gp_predict: MOBSTER's kernel, priors and fit; inputs encoded as MOBSTER
encodes them: unit interval, log scale for log domains, one-hot choices) fitted on them,
then asked about every other configuration of the table.

    /usr/bin/python3 tests/bench/model_predictiveness.py build/tests/bench/gp_predict
        [--tables digits-mlp ...] [--sizes 10 16 24] [--repeats 60]

Printed per table and n (the mean over repeats):
  - rho: the rank correlation of the GP's mean with the held-out configurations' first-step
    values (how well it ranks what it has not seen; compare oracle_headroom.py's levels);
  - per acquisition (the posterior mean, expected improvement over the best observed, the
    lower confidence bound mu - sigma), the pick among the held-out configurations: its
    quality percentile (0 % is the table's best configuration by its best value, 50 % what
    a random pick gets on average) and how often it is in the table's best 10 %.
"""
import argparse
import subprocess

import numpy as np
from scipy.stats import norm, spearmanr

import hpo_quality


def encoded(table):
    """One row per configuration, as MOBSTER's ConfigurationEncoder makes it."""
    columns = []
    for p in table.params:
        kind, args = hpo_quality.domain_kind(table.space[p])
        values = [c[p] for c in table.configs]
        if kind == "choice":
            columns += [[1.0 if v == choice else 0.0 for v in values] for choice in args]
        elif kind != "constant":
            columns.append([hpo_quality.unit(table.space[p], v) for v in values])
    return np.array(columns).T


def first_and_best(table):
    """Each configuration's first-step value and best value, means over its repeats, sign
    turned so that lower is better; a non-finite value counts as the worst seen."""
    sign = 1.0 if table.mode == "min" else -1.0
    first = np.array([np.mean([sign * v[0] for _, v, _ in runs]) for runs in table.curves])
    best = np.array([np.mean([np.nanmin(sign * v) for _, v, _ in runs]) for runs in table.curves])
    for a in (first, best):
        a[~np.isfinite(a)] = np.max(a[np.isfinite(a)])
    return first, best


def gp_predict(binary, x, y, points):
    rows = [f"{x.shape[1]} {len(x)} {len(points)}"]
    rows += [" ".join(map(repr, [*row, target])) for row, target in zip(x.tolist(), y.tolist())]
    rows += [" ".join(map(repr, row)) for row in points.tolist()]
    out = subprocess.run([binary], input="\n".join(rows) + "\n", capture_output=True, text=True, check=True)
    predictions = np.array(out.stdout.split(), float).reshape(-1, 2)
    return predictions[:, 0], predictions[:, 1]


def picks(mean, sd, incumbent):
    """The index each acquisition picks (lower is better)."""
    z = (incumbent - mean) / np.maximum(sd, 1e-12)
    improvement = (incumbent - mean) * norm.cdf(z) + sd * norm.pdf(z)
    return {"mean": int(np.argmin(mean)), "EI": int(np.argmax(improvement)), "LCB": int(np.argmin(mean - sd))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gp_predict")
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10, 16, 24])
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| table | n | rho | mean: percentile / in best 10 % | EI | LCB |\n|---|---|---|---|---|---|")
    for name in args.tables:
        table = hpo_quality.Table(name)
        x = encoded(table)
        first, best = first_and_best(table)
        percentile = np.argsort(np.argsort(best, kind="stable"), kind="stable") / len(best)
        for n in args.sizes:
            rho, picked = [], {"mean": [], "EI": [], "LCB": []}
            for _ in range(args.repeats):
                order = rng.permutation(len(x))
                seen, unseen = order[:n], order[n:]
                mean, sd = gp_predict(args.gp_predict, x[seen], first[seen], x[unseen])
                rho.append(spearmanr(mean, first[unseen]).correlation)
                for acquisition, k in picks(mean, sd, first[seen].min()).items():
                    picked[acquisition].append(percentile[unseen[k]])
            cells = [f"{100 * np.mean(p):.0f} % / {100 * np.mean(np.array(p) < 0.1):.0f} %" for p in picked.values()]
            print(f"| {name} | {n} | {np.nanmean(rho):.2f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
