#!/usr/bin/python3
"""What slurmtune's GP knows after n observations, and what an acquisition picks with it.
For each table: n configurations drawn at random, their first-step values observed; the
GP (tests/bench/gp_predict: MOBSTER's kernel, priors and fit; inputs encoded as MOBSTER
encodes them: unit interval, log scale for log domains, one-hot choices) fitted on them,
then asked about every other configuration of the table.

    /usr/bin/python3 tests/bench/quality/model_predictiveness.py build/tests/bench/gp_predict
        [--tables digits-mlp ...] [--sizes 10 16 24] [--repeats 60] [--others]
        [--length-prior fixed|dimension-scaled|sparse]

Printed per table and n (the mean over repeats):
  - rho: the rank correlation of the GP's mean with the held-out configurations' first-step
    values (how well it ranks what it has not seen; compare oracle_headroom.py's levels);
  - per acquisition (the posterior mean, expected improvement over the best observed, the
    lower confidence bound mu - sigma), the pick among the held-out configurations: its
    quality percentile (0 % is the table's best configuration by its best value, 50 % what
    a random pick gets on average) and how often it is in the table's best 10 %.
--others adds the rho of other models on the same rows (scikit-learn's GP with an ARD
Matern-5/2 kernel and a noise term, extra trees, a random forest): is it the GP, or the
table, that ranks poorly?
"""
import argparse
import subprocess
import warnings
import zlib

import numpy as np
from scipy.stats import norm, spearmanr

import quality_runs


def encoded(table):
    """One row per configuration, as MOBSTER's ConfigurationEncoder makes it."""
    columns = []
    for p in table.params:
        kind, args = quality_runs.domain_kind(table.space[p])
        values = [c[p] for c in table.configs]
        if kind == "choice":
            columns += [[1.0 if v == choice else 0.0 for v in values] for choice in args]
        elif kind != "constant":
            columns.append([quality_runs.unit(table.space[p], v) for v in values])
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


def gp_predict(binary, x, y, points, length_prior):
    rows = [f"{x.shape[1]} {len(x)} {len(points)} {length_prior}"]
    rows += [" ".join(map(repr, [*row, target])) for row, target in zip(x.tolist(), y.tolist())]
    rows += [" ".join(map(repr, row)) for row in points.tolist()]
    out = subprocess.run([binary], input="\n".join(rows) + "\n", capture_output=True, text=True, check=True)
    predictions = np.array(out.stdout.split(), float).reshape(-1, 2)
    return predictions[:, 0], predictions[:, 1]


def other_models():
    """Scikit-learn regressors, each (x, y, points) -> means at the points."""
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    warnings.simplefilter("ignore", ConvergenceWarning)  # length scales at their bounds: expected here

    def sklearn_gp(x, y, points):
        kernel = ConstantKernel() * Matern(np.ones(x.shape[1]), (1e-2, 1e2), nu=2.5) + WhiteKernel(1e-3, (1e-6, 1))
        return GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(x, y).predict(points)
    return {"sklearn GP": sklearn_gp,
            "extra trees": lambda x, y, p: ExtraTreesRegressor(100, min_samples_leaf=2, random_state=0).fit(x, y).predict(p),
            "random forest": lambda x, y, p: RandomForestRegressor(100, min_samples_leaf=2, max_features=0.5,
                                                                   random_state=0).fit(x, y).predict(p)}


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
    parser.add_argument("--others", action="store_true", help="also the rho of scikit-learn models")
    parser.add_argument("--length-prior", default="fixed", choices=["fixed", "dimension-scaled", "sparse"],
                        help="the GP's length-scale prior ([sampler] length_scale_prior)")
    args = parser.parse_args()
    others = other_models() if args.others else {}
    print("| table | n | rho | mean: percentile / in best 10 % | EI | LCB |" + "".join(f" {o} rho |" for o in others))
    print("|---|---|---|---|---|---|" + "---|" * len(others))
    for name in args.tables:
        table = quality_runs.Table(name)
        rng = np.random.default_rng(zlib.crc32(name.encode()))  # a table's draws do not depend on the others
        x = encoded(table)
        first, best = first_and_best(table)
        percentile = np.argsort(np.argsort(best, kind="stable"), kind="stable") / len(best)
        for n in args.sizes:
            rho, picked = [], {"mean": [], "EI": [], "LCB": []}
            other_rho = {o: [] for o in others}
            for _ in range(args.repeats):
                order = rng.permutation(len(x))
                seen, unseen = order[:n], order[n:]
                mean, sd = gp_predict(args.gp_predict, x[seen], first[seen], x[unseen], args.length_prior)
                rho.append(spearmanr(mean, first[unseen]).correlation)
                for acquisition, k in picks(mean, sd, first[seen].min()).items():
                    picked[acquisition].append(percentile[unseen[k]])
                for o, model in others.items():
                    other_rho[o].append(spearmanr(model(x[seen], first[seen], x[unseen]), first[unseen]).correlation)
            cells = [f"{100 * np.mean(p):.0f} % / {100 * np.mean(np.array(p) < 0.1):.0f} %" for p in picked.values()]
            cells += [f"{np.nanmean(r):.2f}" for r in other_rho.values()]
            print(f"| {name} | {n} | {np.nanmean(rho):.2f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
