"""Statistics and plots of tests/bench/quality/hpo_quality.py: quartiles with missing values
counted as worst, the paired bootstrap interval of a speed-up, number formatting and the
regret plot."""
import math

import numpy as np

BOOTSTRAP_RESAMPLES = 4000


def quartiles(values, lower_is_better=True):
    """Median and quartiles with missing values counted as worst (as `simulate --repeat`)."""
    n = len(values)
    present = sorted(v for v in values if v is not None)
    if not lower_is_better:
        present.reverse()

    def at(p):
        pos = p * (n - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        if hi >= len(present):
            return None
        return present[lo] + (pos - lo) * (present[hi] - present[lo])
    return at(0.25), at(0.5), at(0.75)


def times_by_seed(runs, target_index, seeds):
    """Times to a target in seed order; a seed that never reaches it counts as infinite."""
    by_seed = {r.seed: r.times[target_index] for r in runs}
    return np.array([math.inf if by_seed.get(s) is None else by_seed[s] for s in seeds])


def speedup_interval(ours, theirs, rng):
    """Median of theirs over median of ours, with a paired (same seeds) bootstrap 95 %
    percentile interval. Infinite medians (half the seeds never reached the target) give
    inf or 0; both infinite, nan."""
    with np.errstate(invalid="ignore", divide="ignore"):
        point = float(np.median(theirs) / np.median(ours))
        picks = rng.integers(0, len(ours), size=(BOOTSTRAP_RESAMPLES, len(ours)))
        ratios = np.median(theirs[picks], axis=1) / np.median(ours[picks], axis=1)
    ratios = ratios[~np.isnan(ratios)]
    if not len(ratios):
        return point, math.nan, math.nan
    low, high = np.percentile(ratios, [2.5, 97.5])
    return point, float(low), float(high)


def plot_regret(path, table, budget, results, names):
    """Median regret against virtual time, one line per method (log scale)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    grid = np.geomspace(budget / 3000, budget, 300)  # log time: the early part is what differs
    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = ["-", "--", ":", "-."]
    for k, name in enumerate(names):
        if name not in results:
            continue
        runs = results[name][2]
        medians = [quartiles([r.regret_at(t, table.best) for r in runs])[1] for t in grid]
        ax.plot(grid, [m if m is not None else np.nan for m in medians], label=name,
                linestyle=styles[k % len(styles)], linewidth=1.6 if "recommended" in name else 1.1)
    ax.set_yscale("symlog", linthresh=1e-4)
    ax.set_xscale("log")
    ax.set_xlabel("virtual seconds")
    ax.set_ylabel(f"median regret ({table.metric})")
    ax.set_title(f"{table.name}: median over {len(next(iter(results.values()))[2])} seeds")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ordinal(n):
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def fmt(value, digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"
