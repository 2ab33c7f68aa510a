"""Plots of a results file (``slurmtune.study.Study``), for a person looking at a study:

    from slurmtune.study import Study
    from slurmtune import plots
    s = Study("study.h5")
    plots.curves_by_outcome(s, "curves.svg")    # learning curves, rungs and stops marked
    plots.best_so_far(s, "best.svg")            # against wall time and against trials started
    plots.rung_occupancy(s, "rungs.svg")        # trials that reached each rung, over time
    plots.parallel_coordinates(s, "parallel.svg")
    plots.slices(s, "slices.svg")               # the metric against each parameter
    plots.importance(s)                         # a DataFrame; plots.plot_importance(s, path)

Each function writes `path` (PNG, SVG or PDF by its extension) and returns it, or, with
``path=None``, returns the matplotlib figure. Studies of any size draw in seconds: at most
``limit`` trials' curves (the best quarter and a fixed random sample of the rest) and 200
points per curve are drawn, and the figure's title says so. Each trial's line carries the
SVG id ``trial-<id>`` (the HTML report uses it). Times are seconds since the study's first
trial started (``Study.elapsed``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .study import _save as _finish  # tight layout; write and close, or return the figure

__all__ = ["OUTCOME_COLOURS", "curves_by_outcome", "best_so_far", "rung_occupancy",
           "parallel_coordinates", "slices", "importance", "plot_importance", "sample_trials"]

OUTCOME_COLOURS = {"completed": "#2ca02c", "stopped": "#ff7f0e", "paused": "#9467bd",
                   "failed": "#d62728", "running": "#1f77b4", "pending": "#7f7f7f"}
MAX_POINTS = 200


def _figure(size, ncols=1, nrows=1):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(nrows, ncols, figsize=size, squeeze=False)


def _nothing_yet(figure, ax, path, what):
    """An empty plot that says why (a study no trial has reported in yet)."""
    ax.text(0.5, 0.5, f"no {what} yet", ha="center", va="center", transform=ax.transAxes,
            color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])
    return _finish(figure, path)


def _ranked(study):
    """Trials with a value, best first."""
    trials = study.trials.dropna(subset=["best_value"])
    return trials.sort_values("best_value", ascending=study.mode == "min", kind="stable")


def sample_trials(study, limit):
    """At most `limit` trial ids to draw: the best quarter of the limit, then a fixed
    random sample (seed 0) of the others, and trials without a value last."""
    ids = study.trials["id"].to_numpy()
    if len(ids) <= limit:
        return list(ids)
    ranked = _ranked(study)["id"].to_numpy()
    best = list(ranked[: limit // 4])
    rest = np.setdiff1d(ids, best)
    picked = np.random.default_rng(0).choice(rest, size=limit - len(best), replace=False)
    return best + sorted(picked.tolist())


def _member(values, ids):
    """values in ids, for large integer arrays: a lookup table instead of a sort."""
    values = np.asarray(values, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    if len(values) == 0 or len(ids) == 0:
        return np.zeros(len(values), dtype=bool)
    table = np.zeros(max(values.max(), ids.max()) + 1, dtype=bool)
    table[ids] = True
    return table[values]


def _curves(study, metric, trials):
    """{trial: (steps, values)} for `trials`, each thinned to at most about MAX_POINTS
    points (every k-th report of a trial of k x MAX_POINTS, and its last) as /metrics
    streams by in chunks: memory grows with the trials drawn, not with the reports (a
    study may have a billion)."""
    trials = np.asarray(trials, dtype=np.int64)
    if len(trials) == 0:
        return {}
    if study.has_curve_samples and metric == study.metric:
        return study.curve_samples(trials)  # schema 11: one row per trial drawn
    size = int(max(trials.max(), len(study.trials))) + 1
    reports = np.zeros(size, dtype=np.int64)
    reports[study.trials["id"].to_numpy(dtype=np.int64)] = study.trials["reports"].to_numpy()
    stride = np.maximum(1, reports // MAX_POINTS)
    seen = np.zeros(size, dtype=np.int64)  # each trial's reports in the chunks before
    parts, last = [], {}
    for chunk in study.scan_metrics(["trial", "step", metric]):
        trial = chunk["trial"].astype(np.int64)
        keep = _member(trial, trials)
        if not keep.any():
            continue
        trial, steps, values = trial[keep], chunk["step"][keep], chunk[metric][keep]
        order = np.argsort(trial, kind="stable")  # grouped by trial, in file order within
        trial, steps, values = trial[order], steps[order], values[order]
        starts = np.r_[0, np.flatnonzero(np.diff(trial)) + 1]
        rank = np.arange(len(trial)) - np.repeat(starts, np.diff(np.r_[starts, len(trial)]))
        index = seen[trial] + rank
        taken = index % stride[trial] == 0
        parts.append((trial[taken], steps[taken], values[taken]))
        ends = np.r_[starts[1:], len(trial)] - 1
        for at in ends:  # each trial's last report so far
            last[int(trial[at])] = (steps[at], values[at], taken[at])
        np.add.at(seen, trial[starts], ends - starts + 1)
    if not parts:
        return {}
    trial = np.concatenate([p[0] for p in parts])
    steps = np.concatenate([p[1] for p in parts])
    values = np.concatenate([p[2] for p in parts])
    order = np.argsort(trial, kind="stable")
    trial, steps, values = trial[order], steps[order], values[order]
    bounds = np.r_[0, np.flatnonzero(np.diff(trial)) + 1, len(trial)]
    out = {}
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        t = int(trial[lo])
        step, value, was_taken = last[t]
        if was_taken:
            out[t] = (steps[lo:hi], values[lo:hi])
        else:
            out[t] = (np.r_[steps[lo:hi], step], np.r_[values[lo:hi], value])
    return out


def curves_by_outcome(study, path=None, metric=None, limit=1000, log_y=False):
    """Learning curves coloured by how each trial ended, with every rung's milestone as
    a dotted line and each stop decision as a cross at the report it judged. A trial
    stopped at its first report is a single dot, so it is seen too."""
    metric = metric or study.metric
    trials = study.trials
    drawn = sample_trials(study, limit)
    status = trials["status"].astype(str)
    figure, axes = _figure((9, 5.5))
    ax = axes[0][0]
    for trial, (steps, values) in _curves(study, metric, drawn).items():
        colour = OUTCOME_COLOURS.get(status.get(trial, "pending"), "#7f7f7f")
        line, = ax.plot(steps, values, color=colour, linewidth=0.8, alpha=0.7,
                        marker="." if len(steps) == 1 else None, markersize=4)
        line.set_gid(f"trial-{trial}")
    events = study.events
    for milestone in sorted(events["milestone"].dropna().unique()):
        ax.axvline(milestone, color="0.6", linestyle=":", linewidth=0.8)
    # A stop at the top rung ends a completed trial's course: not "stopped here".
    completed = trials.loc[status == "completed", "id"].to_numpy()
    stops = events[(events["kind"] == "stop") & (events["rung"] >= 0) &
                   _member(events["trial"].to_numpy(), drawn) &
                   ~_member(events["trial"].to_numpy(), completed)]
    if not stops.empty:
        ax.scatter(stops["step"], stops["value"], marker="x", s=18, color="black", linewidths=0.8,
                   label="stopped here", zorder=3)
    for outcome, colour in OUTCOME_COLOURS.items():
        count = int((status == outcome).sum())
        if count:
            ax.plot([], [], color=colour, label=f"{outcome} ({count})")
    ax.set_xlabel(study.attrs.get("resource", "step"))
    ax.set_ylabel(metric)
    if log_y:
        ax.set_yscale("log")
    shown = "" if len(drawn) == len(trials) else f" (showing {len(drawn)} of {len(trials)})"
    ax.set_title(f"{study.name}: learning curves by outcome{shown}")
    ax.legend(fontsize="small", loc="best")
    return _finish(figure, path)


def _best_curve(study):
    """Best value so far after each report: (elapsed seconds, trials started then, best).
    Only the reports that improved it, and the last: the same step curve, far fewer
    points. /metrics streams by in chunks (reports are stored in the order they arrived;
    a file that says otherwise is read whole and sorted)."""
    if study.has_curve_samples:
        return _best_curve_recorded(study)
    minimise = study.mode == "min"
    worst = np.inf if minimise else -np.inf
    carry, last_seq = worst, -1
    times, bests, final = [], [], None
    for chunk in study.scan_metrics(["seq", "time", study.metric]):
        seq = chunk["seq"].astype(np.int64)
        if len(seq) and (seq[0] <= last_seq or np.any(seq[1:] <= seq[:-1])):
            return _best_curve_sorted(study)
        if not len(seq):
            continue
        last_seq = int(seq[-1])
        values = chunk[study.metric]
        filled = np.r_[carry, np.where(np.isnan(values), worst, values)]
        best = (np.minimum if minimise else np.maximum).accumulate(filled)
        improved = np.isfinite(best[1:]) & (best[1:] != best[:-1])
        times.append(chunk["time"][improved])
        bests.append(best[1:][improved])
        carry = best[-1]
        if np.isfinite(carry):
            final = (chunk["time"][-1], carry)
    time = np.concatenate(times) if times else np.array([])
    best = np.concatenate(bests) if bests else np.array([])
    if final is not None and (not len(time) or time[-1] != final[0]):
        time, best = np.r_[time, final[0]], np.r_[best, final[1]]
    return _line_at(study, time, best)


def _line_at(study, time, best):
    """The best-so-far line (`best` from the file's times `time`) as _best_curve gives it:
    (elapsed seconds, trials started by then, best)."""
    elapsed = study.elapsed(time)
    starts = np.sort(study.elapsed(study.trials["start_time"].to_numpy()))
    return elapsed, np.searchsorted(starts, elapsed, side="right"), best


def _best_curve_recorded(study):
    """_best_curve of a file of schema 11 on, from /improvements (the reports that bettered
    the best so far) and the time of the last report: no pass over /metrics."""
    improvements = study.improvements
    time, best = improvements["time"].to_numpy(dtype=float), improvements["value"].to_numpy(dtype=float)
    last = study.trials["last_time"].to_numpy(dtype=float)
    last = np.nanmax(last) if np.isfinite(last).any() else np.nan
    if len(best) and np.isfinite(last) and last != time[-1]:  # the line goes on to the last report
        time, best = np.r_[time, last], np.r_[best, best[-1]]
    return _line_at(study, time, best)


def _best_curve_sorted(study):
    """_best_curve of a file whose reports are not stored in seq order: read whole."""
    metrics = study.metrics
    order = np.argsort(metrics["seq"].to_numpy(), kind="stable")
    values = metrics[study.metric].to_numpy()[order]
    filled = np.where(np.isnan(values), np.inf if study.mode == "min" else -np.inf, values)
    best = np.minimum.accumulate(filled) if study.mode == "min" else np.maximum.accumulate(filled)
    keep = np.isfinite(best) & np.r_[True, best[1:] != best[:-1]]
    keep[-1:] = np.isfinite(best[-1:])
    return _line_at(study, metrics["time"].to_numpy()[order][keep], best[keep])


def best_so_far(study, path=None):
    """The best value so far against wall time (seconds since the study started) and
    against the number of trials started."""
    elapsed, started, best = _best_curve(study)
    figure, axes = _figure((10, 4.5), ncols=2)
    for ax, x, label in ((axes[0][0], elapsed, "seconds since the study started"),
                         (axes[0][1], started, "trials started")):
        ax.step(x, best, where="post", color="#1f77b4", linewidth=1.5)
        ax.set_xlabel(label)
        ax.set_ylabel(f"best {study.metric} so far")
    axes[0][0].set_title(f"{study.name}: best {study.metric} over time")
    axes[0][1].set_title("... over trials started")
    return _finish(figure, path)


def rung_occupancy(study, path=None):
    """How many trials had reached each rung (been judged there) over time: the shape of
    the asynchronous successive halving. Studies without rungs get an empty plot."""
    events = study.events
    judged = events[events["kind"].isin(["continue", "pause", "stop"]) & (events["rung"] >= 0)]
    judged = judged.drop_duplicates(subset=["trial", "rung"])
    figure, axes = _figure((9, 4.5))
    ax = axes[0][0]
    for rung, rows in judged.groupby("rung"):
        times = np.sort(study.elapsed(rows["time"].to_numpy()))
        count = np.arange(1, len(times) + 1)
        stride = max(1, len(times) // 2000)  # a few thousand points draw the same curve
        times, count = np.r_[times[::stride], times[-1]], np.r_[count[::stride], count[-1]]
        milestone = rows["milestone"].iloc[0]
        ax.step(times, count, where="post",
                label=f"rung {rung} ({study.attrs.get('resource', 'step')} {milestone:g})")
    ax.set_xlabel("seconds since the study started")
    ax.set_ylabel("trials judged at the rung")
    ax.set_title(f"{study.name}: rung occupancy")
    if not judged.empty:
        ax.legend(fontsize="small")
    return _finish(figure, path)


def _encoded(study, trials):
    """Each parameter of `trials` as numbers in [0, 1], with its axis labels: numbers
    linearly (log where all are positive and span over 100x), categories by code."""
    out, ticks = {}, {}
    for column in study.config_columns:
        name = column[len("config/"):]
        values = trials[column]
        if values.dtype.kind in "fiu":
            x = values.to_numpy(dtype=float)
            lo, hi = np.nanmin(x), np.nanmax(x)
            if lo > 0 and hi / lo > 100:
                x, lo, hi = np.log10(x), np.log10(lo), np.log10(hi)
                name += " (log)"
            out[name] = (x - lo) / (hi - lo) if hi > lo else np.full(len(x), 0.5)
            ticks[name] = None
        else:  # a conditional parameter a trial does not have is a category of its own
            codes = pd.Categorical(values.astype(object).where(values.notna(), "(absent)").astype(str))
            span = max(len(codes.categories) - 1, 1)
            out[name] = codes.codes / span
            ticks[name] = list(codes.categories)
    return pd.DataFrame(out, index=trials.index), ticks


def parallel_coordinates(study, path=None, limit=2000):
    """One line per trial across its parameters (scaled to [0, 1]) and its best value,
    coloured by that value (darker is better)."""
    import matplotlib
    import matplotlib.cm as cm
    import matplotlib.colors as colors

    trials = study.trials.dropna(subset=["best_value"])
    trials = trials.loc[[t for t in sample_trials(study, limit) if t in trials.index]]
    # The best drawn last, on top.
    trials = trials.sort_values("best_value", ascending=study.mode != "min", kind="stable")
    if trials.empty:
        figure, axes = _figure((6, 3))
        return _nothing_yet(figure, axes[0][0], path, f"trial with a value of {study.metric}")
    encoded, ticks = _encoded(study, trials)
    values = trials["best_value"].to_numpy()
    encoded[study.metric] = (values - values.min()) / (np.ptp(values) or 1)
    norm = colors.Normalize(values.min(), values.max())
    cmap = matplotlib.colormaps["viridis" if study.mode == "min" else "viridis_r"]
    figure, axes = _figure((max(6, 1.6 * len(encoded.columns)), 5))
    ax = axes[0][0]
    xs = np.arange(len(encoded.columns))
    for trial, row, colour in zip(encoded.index, encoded.to_numpy(), cmap(norm(values))):
        line, = ax.plot(xs, row, color=colour, linewidth=0.6, alpha=0.6)
        line.set_gid(f"trial-{trial}")
    for x, name in zip(xs, encoded.columns):
        ax.axvline(x, color="0.3", linewidth=0.8)
        if ticks.get(name):
            for i, label in enumerate(ticks[name]):
                ax.text(x, i / max(len(ticks[name]) - 1, 1), f" {label}", fontsize=7, va="center")
    ax.set_xticks(xs, encoded.columns, rotation=20)
    ax.set_yticks([0, 1], ["low", "high"])
    figure.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label=f"best {study.metric}")
    ax.set_title(f"{study.name}: configurations ({len(trials)} trials)")
    return _finish(figure, path)


LOG_DOMAINS = ("loguniform", "qloguniform", "lograndint")


def log_domain_names(search):
    """Names of the parameters of a resolved [search] table whose domain is on a log scale."""
    return {name for name, domain in search.items()
            if isinstance(domain, dict) and any(key in domain for key in LOG_DOMAINS)}


def log_domains(study):
    """log_domain_names of the study's resolved [search] table."""
    import tomllib
    try:
        search = tomllib.loads(study.attrs.get("resolved_study", "")).get("search", {})
    except tomllib.TOMLDecodeError:
        return set()
    return log_domain_names(search)


def slices(study, path=None, limit=2000):
    """The best value of each trial against each parameter (one panel per parameter)."""
    trials = study.trials.dropna(subset=["best_value"])
    trials = trials.loc[[t for t in sample_trials(study, limit) if t in trials.index]]
    columns = study.config_columns
    ncols = min(3, max(len(columns), 1))
    nrows = max(1, -(-len(columns) // ncols))
    figure, axes = _figure((4 * ncols, 3.2 * nrows), ncols=ncols, nrows=nrows)
    for i, column in enumerate(columns):
        ax = axes[i // ncols][i % ncols]
        x = trials[column]
        if x.dtype.kind not in "fiu":
            x = x.astype(str)
        ax.scatter(x, trials["best_value"], s=6, alpha=0.5, color="#1f77b4")
        values = trials[column]
        name = column[len("config/"):]
        spans = values.dtype.kind in "fiu" and (values > 0).all() and values.max() / values.min() > 100
        if name in log_domains(study) or spans:
            ax.set_xscale("log")
        ax.set_xlabel(column[len("config/"):])
        ax.set_ylabel(f"best {study.metric}")
    for j in range(len(columns), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    figure.suptitle(f"{study.name}: {study.metric} against each parameter")
    return _finish(figure, path)


def importance(study, bins=10):
    """How much each parameter explains the trials' best values: the variance of the
    metric's mean over the parameter's bins (its marginal means; quantile bins for
    numbers, one per category), as a share of the metric's variance, the first-order
    term of a functional ANOVA. Shares do not add up to 1 (interactions and noise are
    the rest). A DataFrame by parameter, largest first; empty before two trials report."""
    trials = study.trials.dropna(subset=["best_value"])
    y = trials["best_value"].to_numpy(dtype=float)
    rows = []
    total = float(np.var(y)) if len(y) > 1 else 0.0
    for column in study.config_columns if len(y) > 1 else []:
        values = trials[column]
        if values.dtype.kind in "fiu" and values.nunique() > bins:
            groups = pd.qcut(values.rank(method="first"), bins, labels=False)
        else:
            groups = values.astype(str)
        means = pd.Series(y, index=trials.index).groupby(groups).agg(["mean", "size"])
        weights = means["size"] / means["size"].sum()
        explained = float((weights * (means["mean"] - y.mean()) ** 2).sum())
        rows.append({"parameter": column[len("config/"):],
                     "importance": explained / total if total > 0 else 0.0, "bins": len(means)})
    frame = pd.DataFrame(rows, columns=["parameter", "importance", "bins"])
    return frame.sort_values("importance", ascending=False, kind="stable").reset_index(drop=True)


def plot_importance(study, path=None):
    """importance() as horizontal bars."""
    frame = importance(study)
    figure, axes = _figure((7, 0.5 * len(frame) + 1.8))
    ax = axes[0][0]
    ax.barh(frame["parameter"][::-1], frame["importance"][::-1], color="#1f77b4")
    ax.set_xlabel(f"share of the variance of {study.metric} explained by the marginal means")
    ax.set_title(f"{study.name}: parameter importance")
    return _finish(figure, path)


def pareto(study, path=None):
    """Several objectives: every completed trial by its first two objectives, the Pareto
    front highlighted and joined, infeasible trials (constraints) apart as crosses."""
    trials, standings = study.trials, study.standings
    x_name, y_name = (f"objective/{name}" for name in study.objectives[:2])
    done = standings[(trials["status"] == "completed") &
                     standings[[x_name, y_name]].notna().all(axis=1)]
    figure, axes = _figure((7, 5))
    ax = axes[0][0]
    if done.empty:
        return _nothing_yet(figure, ax, path, "trial completed with every objective")
    front = study.pareto_front()
    feasible = done[done["feasible"]]
    infeasible = done[~done["feasible"]]
    ax.scatter(feasible[x_name], feasible[y_name], s=18, color="#9aa5b1", label="completed")
    if not infeasible.empty:
        ax.scatter(infeasible[x_name], infeasible[y_name], s=22, marker="x", color="#d62728",
                   label="infeasible")
    ordered = front.sort_values([x_name, y_name], kind="stable")
    ax.plot(ordered[x_name], ordered[y_name], "-o", color="#1f77b4", markersize=6,
            label="Pareto front")
    for trial_id, row in ordered.iterrows():
        ax.annotate(str(trial_id), (row[x_name], row[y_name]), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    modes = dict(zip(study.objectives, study.modes))
    ax.set_xlabel(f"{study.objectives[0]} ({modes[study.objectives[0]]})")
    ax.set_ylabel(f"{study.objectives[1]} ({modes[study.objectives[1]]})")
    more = f"; {len(study.objectives) - 2} more objective(s) not drawn" if len(study.objectives) > 2 else ""
    ax.set_title(f"{study.name}: {len(front)} trial(s) on the Pareto front{more}")
    ax.legend(loc="best", fontsize=8)
    return _finish(figure, path)
