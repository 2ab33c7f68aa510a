"""Post-hoc analysis of a slurmtune results file (HDF5, schemas 1 to 11).

    from slurmtune.study import Study
    s = Study("mlp-digits.h5")
    s.trials          # one row per trial: status, bracket, rung, times, best value, config/*
    s.metrics         # one row per report: trial, step, time, one column per metric
    s.best_trial      # the row of the best trial
    s.best_config     # its configuration as a dict
    s.history         # scheduler decisions and lifecycle events (why each trial stopped)
    s.plot_curves("curves.png")
    s.elapsed(s.metrics["time"])    # seconds since the study started (also the *_s columns)

    from slurmtune import plots     # outcomes, best so far, rungs, parallel coordinates,
    plots.curves_by_outcome(s, "curves.svg")    # slices, parameter importance

    # Population Based Training (schema 3): who cloned whom, and each trial's schedule
    s.exploits                 # one row per exploit: trial, step, donor, donor_step, config/*
    s.config_history(3)        # trial 3's configurations, from the step each took effect
    s.plot_schedule("lr.png", "lr")
    s.plot_lineage("lineage.png")

    from slurmtune.study import plot_anytime
    plot_anytime(["asha.csv", "hyperband.csv"], "anytime.png")   # simulate --curve-out

The file is opened in HDF5's SWMR-read mode, so it can be read while ``slurmtune run``
is still writing it, and after a writer crashed. Only rows of the last complete flush
(the ``/commit`` row) are read, so every table is consistent with every other.
Requires Debian's python3-h5py and python3-pandas (and python3-matplotlib for plots),
which Debian's interpreter ``/usr/bin/python3`` sees.
"""
from __future__ import annotations

import h5py
import numpy as np
import pandas as pd

from slurmtune.results_file import (  # noqa: F401  (names this module has always had)
    CURVE_SLOTS, FORMAT, LOOP_FIELDS, SCHEMA_VERSION, ResultsFileError, StudyFileError,
    _absent_where_inactive, _check_file, _check_trial_ids, _decode_frame, _text, curve_stride,
    loop_figures, open_results_file, read_curve_samples)

__all__ = ["Study", "ResultsFileError", "StudyFileError", "read_anytime", "plot_anytime"]

ANYTIME_COLUMNS = ["series", "label", "time_s", "best_q25", "best_median", "best_q75", "runs_with_value"]


def _new_figure(size):
    """A matplotlib figure with one set of axes, drawn off screen (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=size)


def _save(figure, path):
    """Writes the figure to `path` and returns the path; with no path, returns the figure.
    Every text is drawn as written: names from a results file are the user's (a metric
    `cost_$_usd_$` is no mathtext formula), so mathtext parsing is off for the figure's
    texts and for the tick labels drawn while it is laid out and saved."""
    import matplotlib
    import matplotlib.pyplot as plt
    import matplotlib.text
    from matplotlib.ticker import FuncFormatter, NullFormatter
    # Log axes label their ticks in mathtext ("$\\mathdefault{10^{-4}}$"), which is drawn
    # raw with parsing off: such axes get plain numbers instead (0.0001, 0.001, ...).
    for ax in figure.get_axes():
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
                axis.set_minor_formatter(NullFormatter())
    for text in figure.findobj(matplotlib.text.Text):
        text.set_parse_math(False)
    with matplotlib.rc_context({"text.parse_math": False}):
        figure.tight_layout()
        if path is None:
            return figure
        figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _last_values(metrics: pd.DataFrame, name: str, index) -> pd.Series:
    """Each trial's last reported (non-NaN) value of metric `name`."""
    reported = metrics.dropna(subset=[name])
    return reported.groupby("trial")[name].last().reindex(index)


def _parse_constraint(text: str):
    """'mem_gb <= 40' -> ('mem_gb', '<=', 40.0), as the study file reader reads it: the
    operator is the last '<=' or '>=' (a metric name may hold either)."""
    at = max(text.rfind("<="), text.rfind(">="))
    if at < 0:
        raise ResultsFileError(f"constraint {text!r} reads neither <= nor >=")
    return text[:at].strip(), text[at:at + 2], float(text[at + 2:])


class Study:
    """A results file, read consistently as of its last complete flush."""

    def __init__(self, path):
        self.path = str(path)
        self._file = open_results_file(self.path)
        attrs = self._file.attrs
        self.schema_version = int(attrs["schema_version"])
        self.name = _text(attrs["study_name"])
        self.metric = _text(attrs["metric"])
        self.mode = _text(attrs["mode"])
        # Schema 7 on: every objective with its mode, and constraints as written.
        self.objectives = [_text(v) for v in attrs.get("objectives", [self.metric])]
        self.modes = [_text(v) for v in attrs.get("modes", [self.mode])]
        self.constraints = [_text(v) for v in attrs.get("constraints", [])]
        self.attrs = {key: (_text(v) if isinstance(v, (bytes, str)) else v) for key, v in attrs.items()}
        self.refresh()

    def refresh(self):
        """Re-reads the tables as of the writer's latest complete flush."""
        commit = self._file["commit"]
        commit.refresh()
        row = commit[0]
        self.committed = {name: int(row[name]) for name in commit.dtype.names
                          if name != "time" and name not in LOOP_FIELDS}
        self._loop = loop_figures(row, commit.dtype.names)
        self._cache = {}

    @property
    def loop(self) -> dict | None:
        """The coordinator loop's figures at the last flush (schema 9 on; None for older
        files and simulations): ``recent_ms``, the longest turn of about the last minute,
        ``recent_work`` what filled it, ``recent_busy`` the share of that minute the loop
        worked; ``longest_ms`` and ``longest_work`` the session's longest turn, ``turns``
        and ``over_10ms``, ``over_100ms``, ``over_1s`` how many turns it had and how many
        took longer than those."""
        return self._loop

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            dataset = self._file[name]
            dataset.refresh()
            rows = min(self.committed[name], dataset.shape[0])
            frame = _decode_frame(dataset[:rows])
            if name == "trials":
                _check_trial_ids(frame["id"].to_numpy(), self.path)
                frame = _absent_where_inactive(frame)
            else:
                for column in ("time", "start_time", "end_time"):
                    if column in frame:
                        frame[column.replace("time", "s") if column != "time" else "time_s"] = \
                            self.elapsed(frame[column].to_numpy())
            self._cache[name] = frame
        return self._cache[name]

    @property
    def started(self) -> float:
        """When the study's first trial started, in the file's clock (Unix seconds, or
        virtual seconds for a simulation): the origin of every ``*_s`` column."""
        if "started" not in self._cache:
            trials = self._table("trials")
            starts = trials["start_time"].to_numpy(dtype=float) if len(trials) else np.array([])
            self._cache["started"] = float(np.nanmin(starts)) if np.isfinite(starts).any() else 0.0
        return self._cache["started"]

    def elapsed(self, times) -> np.ndarray:
        """Times of the file (Unix or virtual seconds) as seconds since ``started``."""
        return np.asarray(times, dtype=float) - self.started

    @property
    def start(self) -> pd.Timestamp | None:
        """When the study started, as a UTC timestamp (None for a simulation's virtual clock)."""
        if self.attrs.get("clock", "unix") != "unix":
            return None
        return pd.Timestamp(self.started, unit="s", tz="UTC")

    @property
    def trials(self) -> pd.DataFrame:
        """One row per trial, indexed by trial id; parameters in ``config/<name>`` columns;
        ``start_s`` and ``end_s``: seconds since the study started (``start_time`` and
        ``end_time`` keep the file's clock)."""
        if "trials_view" not in self._cache:
            frame = self._table("trials").set_index("id", drop=False)
            frame["start_s"] = self.elapsed(frame["start_time"].to_numpy())
            frame["end_s"] = self.elapsed(frame["end_time"].to_numpy())
            self._cache["trials_view"] = frame
        return self._cache["trials_view"]

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per report, in the order they arrived (``time_s``: seconds since the
        study started)."""
        return self._table("metrics")

    def scan_metrics(self, fields, chunk_rows: int = 1 << 21):
        """The committed rows of /metrics, `fields` only, as numpy structured arrays of at
        most `chunk_rows` rows, in the order they were written (which is ``seq`` order):
        for readers whose memory must not grow with the reports (a study of a billion
        has 20 GB of them; ``metrics`` loads them all)."""
        dataset = self._file["metrics"]
        dataset.refresh()
        rows = min(self.committed["metrics"], dataset.shape[0])
        view = dataset.fields(list(fields))
        for first in range(0, rows, chunk_rows):
            yield view[first:min(rows, first + chunk_rows)]

    @property
    def events(self) -> pd.DataFrame:
        return self._table("events")

    @property
    def sessions(self) -> pd.DataFrame:
        """One row per writer session (a requeued study has several): when it started
        (Unix seconds), on which host, in which Slurm job, with which version."""
        return self._table("sessions")

    @property
    def checkpoints(self) -> pd.DataFrame:
        return self._table("checkpoints")

    @property
    def removed_checkpoints(self) -> pd.DataFrame:
        """The checkpoints [checkpoints] removed (schema 10 on; empty before): trial,
        step, time (when removed), size, path, reason (superseded, ended, outranked)."""
        if "removed_checkpoints" not in self._file:
            return pd.DataFrame(columns=["trial", "step", "time", "size", "path", "reason"])
        return self._table("removed_checkpoints")

    @property
    def exploits(self) -> pd.DataFrame:
        """PBT's exploits in the order they happened: `trial`, exploited at its `step`,
        continued from `donor`'s checkpoint at `donor_step`, with the configuration in ``config/*``
        (`operations` says how it was explored). Empty for other studies and older files."""
        if "exploits" not in self._file:
            return pd.DataFrame(columns=["seq", "time", "trial", "step", "donor", "donor_step",
                                         "operations"] + self.config_columns)
        return self._table("exploits")

    def config_history(self, trial: int) -> pd.DataFrame:
        """The configurations trial `trial` ran with, in order: its first (from step 0,
        `donor` missing) and one per exploit (from the donor's step). ``seq`` orders them
        against the reports in ``metrics``."""
        first = self.trials.loc[trial]
        rows = [{"seq": -1, "step": 0.0, "donor": pd.NA, "donor_step": np.nan, "operations": "",
                 **{c: first[c] for c in self.config_columns}}]
        exploits = self.exploits
        for _, e in exploits[exploits["trial"] == trial].iterrows():
            rows.append({"seq": int(e["seq"]), "step": float(e["step"]), "donor": int(e["donor"]),
                         "donor_step": float(e["donor_step"]), "operations": e["operations"],
                         **{c: e[c] for c in self.config_columns}})
        return pd.DataFrame(rows)

    @property
    def history(self) -> pd.DataFrame:
        """Every scheduler decision at a rung and every trial's end: the story of each stop
        and promotion (kind, rung, milestone, the trial's value and the cutoff it met)."""
        events = self.events
        return events[events["kind"] != "start"].reset_index(drop=True)

    @property
    def predictions(self) -> pd.DataFrame:
        """Each trial's latest learning-curve prediction (`asha_promotion` with
        ``predict = true``; schema 5 on): the `step` it was made at, the `decision` it
        led to, and the value predicted at `predicted_at` (max_t) with its 10-90 %
        interval. Indexed by trial; empty for other studies and older files."""
        columns = ["step", "decision", "predicted_at", "predicted_mean", "predicted_lower",
                   "predicted_upper"]
        events = self.events
        if "predicted_mean" not in events.columns:
            return pd.DataFrame(columns=columns, index=pd.Index([], name="trial"))
        made = events[events["kind"] != "resume"].dropna(subset=["predicted_mean"])
        latest = made.rename(columns={"kind": "decision"}).groupby("trial").tail(1).set_index("trial")
        return latest[columns].astype({"decision": str})

    @property
    def resumptions(self) -> pd.DataFrame:
        """Every resumption of a paused trial, in order: the `step` it had reached, the
        rung it resumed for (`until`), and under ``freeze_thaw`` why: `rule` "model" (its
        expected improvement per unit of resource, `improvement`, beat a new
        configuration's, `start_improvement`; the model expected `expected_mean` in
        [`expected_lower`, `expected_upper`] at `until`) or "promotion"."""
        events = self.events
        resumed = events[events["kind"] == "resume"]
        out = pd.DataFrame({"trial": resumed["trial"].astype(int), "step": resumed["step"],
                            "until": resumed["milestone"]})
        by_model = resumed["value"].notna()
        out["rule"] = np.where(by_model, "model", "promotion")
        out["improvement"] = resumed["value"]
        out["start_improvement"] = resumed["cutoff"]
        for part in ("mean", "lower", "upper"):
            column = "predicted_" + part
            out["expected_" + part] = resumed[column] if column in resumed.columns else np.nan
        return out.reset_index(drop=True)

    def prediction_text(self, trial: int) -> str:
        """``trial 41: predicted 0.013 [0.012, 0.015] at epoch 27`` (the latest prediction),
        or ``trial 41: no prediction``."""
        predictions = self.predictions
        if trial not in predictions.index:
            return f"trial {trial}: no prediction"
        p = predictions.loc[trial]
        return (f"trial {trial}: predicted {p.predicted_mean:.4g} [{p.predicted_lower:.4g}, "
                f"{p.predicted_upper:.4g}] at {_text(self.attrs.get('resource', 'step'))} {p.predicted_at:g}")

    @property
    def config_columns(self):
        return [c for c in self._table("trials").columns if c.startswith("config/")]

    @property
    def standings(self) -> pd.DataFrame:
        """Per trial (indexed by id): the last reported value of every objective
        (``objective/<metric>``), each constraint's value (``constraint/<text>``, <= 0
        holds; NaN where its metric was never reported) and ``feasible`` (every constraint
        holds; True without constraints), as `slurmtune status` and `best` decide. A file
        of schema 10 on keeps all of it in /trials; older ones are read from every report
        (``standings_from_metrics``)."""
        if "standings" not in self._cache:
            if self.schema_version < 10:
                self._cache["standings"] = self.standings_from_metrics()
            else:
                trials = self.trials
                columns = ["objective/" + name for name in self.objectives] + \
                          ["constraint/" + text for text in self.constraints]
                frame = trials[columns].copy()
                frame["feasible"] = True
                for text in self.constraints:
                    frame["feasible"] &= frame["constraint/" + text].le(0)
                self._cache["standings"] = frame[columns[:len(self.objectives)] + ["feasible"] +
                                                 columns[len(self.objectives):]]
        return self._cache["standings"]

    def standings_from_metrics(self) -> pd.DataFrame:
        """``standings`` computed from every report of /metrics, whatever the schema
        (what the summaries of a schema-10 /trials agree with)."""
        metrics = self.metrics
        frame = pd.DataFrame(index=self.trials.index)
        for name in self.objectives:
            frame["objective/" + name] = _last_values(metrics, name, frame.index)
        frame["feasible"] = True
        for text in self.constraints:
            name, bound, limit = _parse_constraint(text)
            last = _last_values(metrics, name, frame.index)
            value = last - limit if bound == "<=" else limit - last
            frame["constraint/" + text] = value
            frame["feasible"] &= value.le(0).fillna(False)
        return frame

    def pareto_front(self) -> pd.DataFrame:
        """The trials no other beats on every objective: completed, feasible, with every
        objective reported, by id; their objective values and configurations."""
        trials, standings = self.trials, self.standings
        values = [c for c in standings.columns if c.startswith("objective/")]
        candidates = standings[(trials["status"] == "completed") & standings["feasible"] &
                               standings[values].notna().all(axis=1)]
        loss = candidates[values].to_numpy(dtype=float) * np.array(
            [-1.0 if mode == "max" else 1.0 for mode in self.modes])
        on_front = [not any((other <= point).all() and (other != point).any() for other in loss)
                    for point in loss]
        front = candidates[on_front]
        return pd.concat([trials.loc[front.index, ["id"] + self.config_columns], front[values]],
                         axis=1).sort_index()

    @property
    def best_trial(self) -> pd.Series:
        """The trial with the best value of the study's metric at any report, among the
        trials that did not fail (and the feasible ones, with constraints): a crashed
        configuration is never recommended. best(include_failed=True) also considers
        failed trials. A study of several objectives has a Pareto front instead:
        pareto_front()."""
        return self.best()

    def best(self, include_failed: bool = False) -> pd.Series:
        """best_trial, and with include_failed=True failed trials count too."""
        if len(self.objectives) > 1:
            raise ValueError(f"{self.path}: {len(self.objectives)} objectives have no one best "
                             "trial; see pareto_front()")
        # Without constraints every trial is feasible: no need for the standings (which an
        # older file computes from every report).
        keep = self.standings["feasible"] if self.constraints else \
            pd.Series(True, index=self.trials.index)
        if not include_failed:
            keep = keep & (self.trials["status"] != "failed")
        trials = self.trials[keep].dropna(subset=["best_value"])
        if trials.empty:
            raise ValueError(f"{self.path}: no {'' if include_failed else 'trial that did not fail '}"
                             f"{'trial ' if include_failed else ''}has reported {self.metric} yet")
        index = trials["best_value"].idxmin() if self.mode == "min" else trials["best_value"].idxmax()
        return trials.loc[index]

    @property
    def best_config(self) -> dict:
        """The configuration the best trial had when it made its best report (PBT may
        have changed it since it started)."""
        best = self.best_trial
        source = best
        history = self.config_history(int(best["id"]))
        if len(history) > 1:
            if "best_seq" in best.index:  # schema 10 on: /trials keeps it
                seq = int(best["best_seq"])
            else:
                metrics = self.curve(int(best["id"]))
                hit = metrics[(metrics["step"] == best["best_step"]) &
                              (metrics[self.metric] == best["best_value"])]
                seq = int(hit["seq"].iloc[0])
            source = history[history["seq"] < seq].iloc[-1]
        config = {}
        for column in self.config_columns:
            value = source[column]
            if pd.isna(value):
                continue  # a conditional parameter the best trial does not have
            config[column[len("config/"):]] = value.item() if hasattr(value, "item") else value
        return config

    @property
    def has_curve_samples(self) -> bool:
        """Schema 11 on: /curves keeps each trial's curve of the study's metric thinned to
        at most CURVE_SLOTS points, and /improvements the best-so-far line, so that plots
        draw them without a pass over /metrics."""
        return self.schema_version >= 11

    def curve_samples(self, trials) -> dict:
        """{trial: (steps, values)} of the study's metric for `trials` from /curves (schema
        11 on): evenly spaced reports of each (every report up to CURVE_SLOTS, then between
        half and all of CURVE_SLOTS), its first among them, and its last report where it
        is not. One read of those rows, whatever the number of reports."""
        if not self.has_curve_samples:
            raise ValueError(f"{self.path}: schema {self.schema_version} has no /curves "
                             "(schema 11 on)")
        return read_curve_samples(self._file["curves"], trials, self.committed["trials"], self.trials)

    @property
    def improvements(self) -> pd.DataFrame:
        """Every report that bettered the best value of the study's metric so far, in order
        (schema 11 on; empty before): seq, trial, time, value. The best-so-far line."""
        if not self.has_curve_samples:
            return pd.DataFrame(columns=["seq", "trial", "time", "value", "time_s"])
        return self._table("improvements")

    def curve(self, trial: int) -> pd.DataFrame:
        """The reports of one trial (every field of /metrics, and ``time_s``), in order.
        /metrics streams by in chunks (``scan_metrics``): memory holds the trial's rows,
        not the study's (``metrics`` loads them all), but the time is a pass over every
        report; ``curve_samples`` draws from one row per trial."""
        if "metrics" in self._cache:
            metrics = self._cache["metrics"]
            return metrics[metrics["trial"] == trial].reset_index(drop=True)
        names = list(self._file["metrics"].dtype.names)
        parts = [chunk[chunk["trial"] == trial] for chunk in self.scan_metrics(names)]
        rows = np.concatenate(parts) if parts else self._file["metrics"][:0]
        frame = _decode_frame(rows)
        frame["time_s"] = self.elapsed(frame["time"].to_numpy())
        return frame

    def plot_curves(self, path, metric=None, trials=None, top=20):
        """Learning curves (metric against step) of the `top` best trials, or of `trials`,
        written as an image to `path` (from /curves for the study's metric, schema 11 on:
        at most 129 points each). Returns the path."""
        metric = metric or self.metric
        if trials is None:
            ranked = self.trials.dropna(subset=["best_value"]).sort_values(
                "best_value", ascending=self.mode == "min")
            trials = list(ranked["id"][:top])
        figure, axes = _new_figure((8, 5))
        if self.has_curve_samples and metric == self.metric:  # one row each, not every report
            curves = self.curve_samples(trials)
        else:
            metrics = self.metrics
            curves = {t: (rows["step"], rows[metric]) for t in trials
                      for rows in [metrics[metrics["trial"] == t]]}
        for trial in trials:
            steps, values = curves.get(trial, ([], []))
            axes.plot(steps, values, label=f"trial {trial}", linewidth=1)
        axes.set_xlabel(self.attrs.get("resource", "step"))
        axes.set_ylabel(metric)
        axes.set_title(f"{self.name}: {len(trials)} learning curves")
        if len(trials) <= 10:
            axes.legend(fontsize="small")
        return _save(figure, path)

    def plot_schedule(self, path, parameter, trials=None):
        """PBT: parameter `parameter` against step for each trial (or `trials`), as a
        step plot of its configuration history; written to `path`. Returns the path (the
        figure when `path` is None)."""
        column = "config/" + parameter
        if column not in self.config_columns:
            raise ValueError(f"{self.path}: no parameter {parameter!r} in the study")
        trials = list(self.trials["id"]) if trials is None else trials
        figure, axes = _new_figure((8, 5))
        last_steps = self.trials["last_step"]  # not a pass over every report
        for trial in trials:
            history = self.config_history(trial)
            last = last_steps.get(trial, np.nan)
            steps = list(history["step"]) + [last if pd.notna(last) else history["step"].iloc[-1]]
            values = list(history[column]) + [history[column].iloc[-1]]
            line, = axes.step(steps, values, where="post", linewidth=1, label=f"trial {trial}")
            line.set_gid(f"trial-{trial}")
        axes.set_xlabel(self.attrs.get("resource", "step"))
        axes.set_ylabel(parameter)
        if self.trials[column].dtype.kind == "f" and (self.trials[column] > 0).all():
            axes.set_yscale("log")
        axes.set_title(f"{self.name}: schedule of {parameter} ({len(self.exploits)} exploits)")
        if len(trials) <= 10:
            axes.legend(fontsize="small")
        return _save(figure, path)

    def plot_lineage(self, path):
        """PBT: the population's family tree: one line per trial along its steps, an arrow
        from the donor's checkpoint to each exploit; written to `path`. Returns the path."""
        figure, axes = _new_figure((9, 0.35 * len(self.trials) + 2))
        for trial, row in self.trials.iterrows():
            if row["reports"] > 0:
                axes.plot([0, row["last_step"]], [trial, trial], color="0.75", linewidth=2)
        for _, e in self.exploits.iterrows():
            axes.annotate("", xy=(e["step"], e["trial"]), xytext=(e["donor_step"], e["donor"]),
                          arrowprops={"arrowstyle": "->", "color": "tab:blue", "linewidth": 0.8})
        best = self.best_trial
        axes.plot([best["best_step"]], [best["id"]], marker="*", markersize=12, color="tab:red",
                  label=f"best: trial {int(best['id'])}")
        axes.set_xlabel(self.attrs.get("resource", "step"))
        axes.set_ylabel("trial")
        axes.set_title(f"{self.name}: lineage ({len(self.exploits)} exploits)")
        axes.legend(fontsize="small")
        return _save(figure, path)

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"Study({self.path!r}: {self.name}, {self.committed['trials']} trials, "
                f"{self.committed['metrics']} reports, {self.metric} {self.mode})")



def read_anytime(path) -> pd.DataFrame:
    """The any-time curve ``slurmtune simulate --curve-out`` wrote: best-so-far quartiles
    over seeds against virtual time, one row per (series, time)."""
    frame = pd.read_csv(path)
    missing = [c for c in ANYTIME_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a `slurmtune simulate --curve-out` file (no column {missing[0]!r})")
    return frame


def plot_anytime(curves, path, labels=None, metric="best value", log_time=True, title=None):
    """Best-so-far against virtual time for one or several simulations side by side:
    each series' median as a line and its quartiles as a band. ``curves`` are paths of
    ``--curve-out`` files or frames from read_anytime(); ``labels`` name each file
    (default: its file name). Writes a PNG to ``path`` and returns it."""
    import os

    if isinstance(curves, (str, os.PathLike, pd.DataFrame)):
        curves = [curves]
    figure, axes = _new_figure((8, 5))
    for i, curve in enumerate(curves):
        frame = curve if isinstance(curve, pd.DataFrame) else read_anytime(curve)
        name = labels[i] if labels else (os.path.basename(str(curve)) if not isinstance(curve, pd.DataFrame) else "")
        for series, rows in frame.groupby("series", sort=False):
            label = f"{name}: {rows['label'].iloc[0]}" if name else rows["label"].iloc[0]
            style = "--" if series == "baseline" else "-"
            line, = axes.plot(rows["time_s"], rows["best_median"], style, label=label, linewidth=1.5)
            axes.fill_between(rows["time_s"], rows["best_q25"], rows["best_q75"], color=line.get_color(),
                              alpha=0.2, linewidth=0)
    if log_time:
        axes.set_xscale("log")
    axes.set_xlabel("virtual time (s)")
    axes.set_ylabel(f"{metric} so far (median, quartiles over seeds)")
    axes.set_title(title or "any-time performance")
    axes.legend(fontsize="small")
    return _save(figure, path)
