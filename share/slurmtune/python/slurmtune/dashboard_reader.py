"""The reader of `slurmtune dashboard` (doc/dashboard.md): a child process of the server,
the only one that opens the results file, so that a damaged file (a SIGSEGV or SIGBUS
inside HDF5, as `slurmtune status` ends on) ends this process and not the server, which
says so on the page and starts a new reader.

It reads the file under SWMR as the writer flushes it, and incrementally: the trials
(`/trials`) from the first one still open (pending, running or paused: earlier rows no
longer change), the decisions (`/events`) from the row it last read. The curves come
from `/curves` (schema 11 on: each trial's thinned to at most 128 points, read for the
trials shown) and the best-so-far line from `/improvements`, so that neither time nor
memory grows with the reports (a study may have a billion). A file of an older schema
has neither: its reports (`/metrics`, append-only) are read from the row last read into
compact arrays (a trial, a step and each objective per report: 10 million reports hold
about 120 MB). A file replaced under the same name (another inode) is opened afresh.

Protocol: each line "snapshot" on stdin is answered by one JSON line on stdout: the
snapshot (below, `"ok": true`) or `{"ok": false, "error": ...}`; stdin's end ends it.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

import h5py
import numpy as np
import pandas as pd

from slurmtune.study import (LOOP_FIELDS, ResultsFileError, _absent_where_inactive, _decode_frame, _text,
                             loop_figures, open_results_file, read_curve_samples)

CURVES = 250           # trials whose learning curves are sent: best, running, a fixed sample
CURVE_POINTS = 120     # points per curve at most (evenly spaced reports)
PARALLEL = 1000        # trials drawn in parallel coordinates
SLICE_POINTS = 2000    # trials per parameter slice
IMPORTANCE_TRIALS = 20  # ended trials before importance is shown
DECISIONS = 100        # the latest scheduler decisions shown
BLOCK = 1 << 19        # reports read per HDF5 call
UPDATE_BUDGET_S = 0.8  # reports read per update, in seconds: the rest in the next ones
OPEN = ("pending", "running", "paused")
# Fields of /trials read at every update (the error text only for the failures shown).
TRIAL_FIELDS = ("id", "status", "rung", "retries", "start_time", "end_time", "last_step",
                "last_value", "best_value", "best_step", "reports", "nodes", "last_time")


def _finite(value):
    """A float for JSON, None where it is NaN or infinite (JSON has neither)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _plain(value):
    """A parameter's value for JSON: None where absent, numbers as numbers (pandas gives
    Python ints and floats when iterated, numpy scalars when indexed), else text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return _finite(value)
    return str(value)


def _sample_key(ids):
    """A fixed pseudo-random order of trial ids (Knuth's multiplicative hash), so the
    sampled trials stay the same from one update to the next."""
    return (np.asarray(ids, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(1 << 32)


class Reports:
    """Every report read so far, as arrays: trial, step and each objective (float32, which
    a plot needs), with the last report's time and objective values of each trial."""

    def __init__(self, objectives):
        self.objectives = objectives
        self.size = 0
        self.trial = np.empty(0, np.uint32)
        self.step = np.empty(0, np.float32)
        self.values = [np.empty(0, np.float32) for _ in objectives]
        self.last_time_by_trial = np.full(0, np.nan)   # by trial id
        self.value_by_trial = [np.full(0, np.nan) for _ in objectives]  # last values, by trial id
        self.best = (np.inf, [])  # the best signed first objective so far, and its improvements

    def reserve(self, rows, trials):
        """Room for `rows` reports and `trials` trials (doubling, so appends stay linear)."""
        if rows > len(self.trial):
            size = max(rows, 2 * len(self.trial))
            grow = lambda a: np.concatenate([a[:self.size], np.empty(size - self.size, a.dtype)])  # noqa: E731
            self.trial, self.step = grow(self.trial), grow(self.step)
            self.values = [grow(v) for v in self.values]
        if trials > len(self.last_time_by_trial):
            size = max(trials, 2 * len(self.last_time_by_trial))
            grow = lambda a: np.concatenate([a, np.full(size - len(a), np.nan)])  # noqa: E731
            self.last_time_by_trial = grow(self.last_time_by_trial)
            self.value_by_trial = [grow(v) for v in self.value_by_trial]

    def append(self, block, sign):
        """Reports in arrival order; `sign` makes the first objective one to minimise."""
        n = len(block)
        trial = block["trial"].astype(np.uint32)
        self.reserve(self.size + n, int(trial.max()) + 1 if n else 0)
        rows = slice(self.size, self.size + n)
        self.trial[rows], self.step[rows] = trial, block["step"]
        # The last report of each trial in this block: a hash-based drop of duplicates,
        # O(n), where a sort (np.unique) took most of a first read of 10 million reports.
        last = pd.Series(trial).drop_duplicates(keep="last").index.to_numpy()
        self.last_time_by_trial[trial[last]] = block["time"][last]
        for k, name in enumerate(self.objectives):
            column = block[name]
            self.values[k][rows] = column
            if len(self.objectives) == 1:
                continue  # last values make the Pareto front of several objectives
            known = np.flatnonzero(~np.isnan(column))
            last = known[pd.Series(trial[known]).drop_duplicates(keep="last").index.to_numpy()]
            self.value_by_trial[k][trial[last]] = column[last]
        self._improve(trial, block["time"], block[self.objectives[0]] * sign, sign)
        self.size += n

    def _improve(self, trial, times, signed, sign):
        """Extends the best-so-far trace with the reports of a block that improved it:
        [report time, value, trial] (drawn against the time since the study began, not
        the trial id, which says nothing of when a trial improved on the best)."""
        best, trace = self.best
        signed = np.where(np.isnan(signed), np.inf, signed)
        running = np.minimum.accumulate(np.r_[best, signed])
        better = np.flatnonzero(running[1:] < running[:-1])
        trace.extend([float(times[i]), _finite(running[i + 1] * sign), int(trial[i])] for i in better)
        self.best = (float(running[-1]), trace[-2000:])

    def last_time(self, trial):
        return float(self.last_time_by_trial[trial]) if trial < len(self.last_time_by_trial) else math.nan

    def last_values(self, count):
        return np.stack([lv[:count] if len(lv) >= count else np.r_[lv, np.full(count - len(lv), np.nan)]
                         for lv in self.value_by_trial], axis=1)

    def curves(self, ids):
        """{trial: [[step, value], ...]} of the first objective, at most CURVE_POINTS each."""
        if not len(ids) or not self.size:
            return {}
        mask = np.isin(self.trial[:self.size], np.asarray(ids, dtype=np.uint32))
        n = self.size
        trial, step, value = self.trial[:n][mask], self.step[:n][mask], self.values[0][:n][mask]
        order = np.argsort(trial, kind="stable")
        trial, step, value = trial[order], step[order], value[order]
        out = {}
        bounds = np.flatnonzero(np.diff(trial)) + 1
        for start, end in zip(np.r_[0, bounds], np.r_[bounds, len(trial)]):
            if end <= start:
                continue
            keep = np.unique(np.linspace(start, end - 1, min(CURVE_POINTS, end - start)).astype(int))
            out[int(trial[start])] = [[_finite(s), _finite(v)] for s, v in zip(step[keep], value[keep])]
        return out


class RecordedCurves:
    """What Reports gives, from the summaries a file of schema 11 on keeps: each trial's
    thinned curve (/curves), the best-so-far line (/improvements), each trial's last
    report time and objective values (/trials). Holds the line's last 2,000 points."""

    def __init__(self, file, objectives):
        self.file, self.objectives = file, objectives
        self.size = 0            # reports "read": all committed, none is needed
        self.improvements_read = 0
        self.best = (np.inf, [])
        self.trials = pd.DataFrame()

    def update(self, committed, trials, reports):
        """`reports`: the committed reports, which count as read (none is needed)."""
        self.trials, self.size = trials, reports
        improvements = self.file["improvements"]
        improvements.refresh()
        end = min(committed["improvements"], improvements.shape[0])
        if end > self.improvements_read:
            first = max(self.improvements_read, end - 2000)  # the line keeps its last 2,000
            rows = improvements[first:end]
            trace = self.best[1] + [[float(r["time"]), _finite(r["value"]), int(r["trial"])] for r in rows]
            self.best = (float(rows["value"][-1]), trace[-2000:])
            self.improvements_read = end

    def last_time(self, trial):
        t = self.trials
        return float(t["last_time"].iat[trial]) if trial < len(t) else math.nan

    def last_values(self, count):
        """Each trial's last value of every objective, as /trials keeps them."""
        t = self.trials
        return np.stack([t["objective/" + name].to_numpy(dtype=float)[:count] for name in self.objectives], axis=1)

    def curves(self, ids):
        """{trial: [[step, value], ...]}: /curves' points of `ids` and each one's last report."""
        # In single precision, the last report too: as the kept points (and the reports a
        # file of an older schema gives).
        curves = read_curve_samples(self.file["curves"], ids, len(self.trials), self.trials, np.float32)
        return {trial: [[_finite(a), _finite(b)] for a, b in zip(steps, values)]
                for trial, (steps, values) in curves.items()}


class LiveStudy:
    """One results file, followed as it grows."""

    def __init__(self, path):
        self.path = path
        self._file = None
        self._identity = None

    def close(self):
        if self._file is not None:
            self._file.close()
        self._file = None

    def _open(self):
        self.close()
        info = os.stat(self.path)
        self._identity = (info.st_dev, info.st_ino)
        self._file = open_results_file(self.path)
        attrs = self._file.attrs
        self.attrs = {k: (_text(v) if isinstance(v, (bytes, str)) else v) for k, v in attrs.items()}
        self.metric = _text(attrs["metric"])
        self.objectives = [_text(v) for v in attrs.get("objectives", [self.metric])]
        self.modes = [_text(v) for v in attrs.get("modes", [_text(attrs["mode"])])]
        self.constraints = [_text(v) for v in attrs.get("constraints", [])]
        self.resolved = self._resolved()
        names = self._file["trials"].dtype.names
        self.config_columns = [n for n in names if n.startswith("config/")]
        self.trial_fields = [n for n in TRIAL_FIELDS if n in names] + self.config_columns + \
            [n for n in names if n.startswith(("active/", "objective/")) or n == "feasible"]
        schema = int(self._file.attrs["schema_version"])
        self.reports = RecordedCurves(self._file, self.objectives) if schema >= 11 else Reports(self.objectives)
        self.trials = pd.DataFrame()
        self.first_open = 0
        self.sessions = []
        self.events_read, self.decisions, self.decided = 0, [], 0
        kinds = h5py.check_enum_dtype(self._file["events"].dtype["kind"]) or {}
        self.kind_names = np.array(["?"] * 256, dtype=object)
        for name, value in kinds.items():
            self.kind_names[value] = name
        self._importance = (None, [])
        self.loop = None

    def _resolved(self):
        try:
            import tomllib
            return tomllib.loads(self.attrs.get("resolved_study", ""))
        except (ImportError, ValueError):
            return {}

    def _replaced(self):
        info = os.stat(self.path)
        return (info.st_dev, info.st_ino) != self._identity

    def update(self, budget_s=None):
        """Reads what the writer committed since the last update: the trials, decisions
        and sessions whole, the reports for about `budget_s` seconds (None: all of them),
        so that a first view of a study of millions of reports comes before they are all
        read; `reports_behind` says how many are left for the next update."""
        started = time.monotonic()
        if self._file is None or self._replaced():
            self._open()
        commit = self._file["commit"]
        commit.refresh()
        row = commit[0]
        committed = {n: int(row[n]) for n in commit.dtype.names if n != "time" and n not in LOOP_FIELDS}
        self.commit_time = float(row["time"]) if "time" in commit.dtype.names else float("nan")
        self.loop = loop_figures(row, commit.dtype.names)
        trials = self._file["trials"]
        trials.refresh()
        count = min(committed["trials"], trials.shape[0])
        if count > self.first_open or len(self.trials) > self.first_open:
            fresh = _absent_where_inactive(_decode_frame(trials.fields(self.trial_fields)[self.first_open:count]))
            fresh.index = range(self.first_open, self.first_open + len(fresh))
            self.trials = pd.concat([self.trials.iloc[:self.first_open], fresh]) if len(self.trials) else fresh
            still_open = np.flatnonzero(self.trials["status"].astype(str).isin(OPEN).to_numpy())
            self.first_open = int(still_open[0]) if len(still_open) else len(self.trials)
        self._read_events(committed)
        sessions = self._file["sessions"]
        sessions.refresh()
        rows = sessions[:min(committed.get("sessions", sessions.shape[0]), sessions.shape[0])]
        self.sessions = [{"started": float(r["started"]), "host": _text(r["host"]),
                          "slurm_job_id": _text(r["slurm_job_id"]), "version": _text(r["version"])}
                         for r in rows]
        metrics = self._file["metrics"]
        metrics.refresh()
        end = min(committed["metrics"], metrics.shape[0])
        self.reports_committed = end
        if isinstance(self.reports, RecordedCurves):
            self.reports.update(committed, self.trials, end)
            return
        fields = ["trial", "step", "time"] + self.objectives
        sign = self._signs()[0]
        self.reports.reserve(end, 0)
        while self.reports.size < end and (budget_s is None or time.monotonic() - started < budget_s):
            stop = min(end, self.reports.size + BLOCK)
            self.reports.append(metrics.fields(fields)[self.reports.size:stop], sign)

    def _read_events(self, committed):
        """Keeps the latest decisions: stops and pauses, and a continue granted by a
        learning-curve prediction (as `html` lists them)."""
        events = self._file["events"]
        events.refresh()
        end = min(committed["events"], events.shape[0])
        while self.events_read < end:
            stop = min(end, self.events_read + BLOCK)
            block = events[self.events_read:stop]
            kind = self.kind_names[block["kind"].astype(np.intp)].astype(str)
            decided = np.isin(kind, ["stop", "pause"]) | ((kind == "continue") & np.isfinite(block["predicted_mean"]))
            self.decided += int(decided.sum())
            for row, name in zip(block[decided][-DECISIONS:], kind[decided][-DECISIONS:]):
                self.decisions.append({"time": float(row["time"]), "trial": int(row["trial"]), "kind": str(name),
                                       "rung": int(row["rung"]), "step": _finite(row["step"]),
                                       "milestone": _finite(row["milestone"]), "value": _finite(row["value"]),
                                       "cutoff": _finite(row["cutoff"]),
                                       "predicted": _finite(row["predicted_mean"]),
                                       "low": _finite(row["predicted_lower"]), "high": _finite(row["predicted_upper"]),
                                       "at": _finite(row["predicted_at"])})
            self.decisions = self.decisions[-DECISIONS:]
            self.events_read = stop

    # --- the snapshot ------------------------------------------------------------------

    def _signs(self):
        return np.array([-1.0 if m == "max" else 1.0 for m in self.modes])

    def _feasible(self):
        t = self.trials
        return t["feasible"].astype(bool).to_numpy() if "feasible" in t else np.ones(len(t), bool)

    def _config(self, row):
        return {c[len("config/"):]: _plain(row[c]) for c in self.config_columns
                if _plain(row[c]) is not None}

    def _ranked(self):
        """Trial ids with a best value, best first (feasible ones that did not fail only:
        a crashed configuration is never recommended)."""
        t = self.trials
        value = t["best_value"].to_numpy(dtype=float) * self._signs()[0]
        usable = np.isfinite(value) & self._feasible() & (t["status"].astype(str) != "failed").to_numpy()
        ids = t.index.to_numpy()[usable]
        return ids[np.argsort(value[usable], kind="stable")]

    def _front(self):
        """Completed feasible trials no other beats on every objective, and a sample of
        every completed trial's first two objectives."""
        t = self.trials
        ids = t.index.to_numpy()
        done = (t["status"].astype(str) == "completed").to_numpy() & self._feasible()
        values = self.reports.last_values(len(t)) if len(t) else np.empty((0, len(self.objectives)))
        usable = done & np.isfinite(values).all(axis=1)
        points, point_ids = values[usable] * self._signs(), ids[usable]
        order = np.lexsort(points.T[::-1])
        front = []
        for i in order:  # sorted by the first objective: a point is dominated only by earlier ones
            p = points[i]
            if not any((points[j] <= p).all() and (points[j] != p).any() for j in front):
                front.append(i)
        shown = point_ids[np.argsort(_sample_key(point_ids))][:SLICE_POINTS]
        index = {int(i): n for n, i in enumerate(point_ids)}
        return ([{"trial": int(point_ids[i]), "values": [_finite(v) for v in values[usable][i]]}
                 for i in sorted(front, key=lambda i: points[i][0])],
                [[int(i)] + [_finite(v) for v in values[usable][index[int(i)]][:2]] for i in shown])

    def _curve_ids(self, ranked):
        t = self.trials
        running = t.index.to_numpy()[(t["status"].astype(str) == "running").to_numpy()]
        ids = list(dict.fromkeys([int(i) for i in ranked[:CURVES // 4]] + [int(i) for i in running[:CURVES // 4]]))
        rest = t.index.to_numpy()
        rest = rest[np.argsort(_sample_key(rest), kind="stable")]
        for i in rest:
            if len(ids) >= CURVES:
                break
            if int(i) not in ids:
                ids.append(int(i))
        return ids

    def _parallel(self, ranked):
        """Each drawn trial's parameters on axes from 0 (the lowest value) to 1 (the
        highest; log where it spans over 100x; categories evenly), None where absent."""
        t = self.trials
        ids = t.index.to_numpy()
        scored = ids[np.isfinite(t["best_value"].to_numpy(dtype=float))]
        sample = scored[np.argsort(_sample_key(scored), kind="stable")]
        chosen = np.array(list(dict.fromkeys([int(i) for i in ranked[:PARALLEL // 4]] +
                                             [int(i) for i in sample[:PARALLEL]]))[:PARALLEL], dtype=int)
        rows = t.loc[chosen] if len(chosen) else t.iloc[:0]
        axes, columns = [], []
        for column in self.config_columns:
            values = t[column]
            axis = {"name": column[len("config/"):]}
            if values.dtype.kind in "fiu":
                numbers = values.to_numpy(dtype=float)
                known = numbers[np.isfinite(numbers)]
                low, high = (float(known.min()), float(known.max())) if len(known) else (0.0, 1.0)
                axis["log"] = bool(low > 0 and high / low > 100)
                chosen_values = rows[column].to_numpy(dtype=float)
                if axis["log"]:
                    low, high = math.log10(low), math.log10(high)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        chosen_values = np.log10(chosen_values)
                axis.update(low=low, high=high)
                span = high - low
                coords = (chosen_values - low) / span if span > 0 else np.where(np.isnan(chosen_values), np.nan, 0.5)
            else:
                categories = [str(c) for c in pd.unique(values.dropna().astype(str))][:50]
                axis["categories"] = categories
                position = {c: i / max(len(categories) - 1, 1) for i, c in enumerate(categories)}
                coords = np.array([position.get(str(v), np.nan) if v is not None and v == v else np.nan
                                   for v in rows[column]], dtype=float)
            axes.append(axis)
            columns.append(coords)
        matrix = np.stack(columns, axis=1) if columns else np.empty((len(rows), 0))
        matrix = np.round(matrix, 4)
        lines = [{"trial": int(i), "value": _finite(v),
                  "coords": [None if math.isnan(x) else x for x in row]}
                 for i, v, row in zip(chosen, rows["best_value"].to_numpy(dtype=float), matrix.tolist())]
        return {"axes": axes, "lines": lines}

    def _slices(self):
        t = self.trials
        done = t[np.isfinite(t["best_value"].to_numpy(dtype=float))]
        done = done.iloc[np.argsort(_sample_key(done.index.to_numpy()), kind="stable")[:SLICE_POINTS]]
        out = []
        from slurmtune.plots import log_domain_names
        logs = log_domain_names(self.resolved.get("search", {}))
        for column in self.config_columns:
            values = done[column]
            numeric = values.dtype.kind in "fiu"
            points = [[_plain(x) if numeric else str(x), _finite(y)]
                      for x, y in zip(values, done["best_value"]) if _plain(x) is not None]
            if numeric:  # sorted: Chart.js takes an axis's ends from the first and last point
                points.sort(key=lambda p: p[0])
            name = column[len("config/"):]
            out.append({"name": name, "numeric": bool(numeric), "log": name in logs, "points": points})
        return out


    def _importance_now(self):
        """First-order fANOVA shares (plots.importance), again only when trials ended; none
        before IMPORTANCE_TRIALS have (with a few trials every share is near 1: noise)."""
        ended = int((~self.trials["status"].astype(str).isin(OPEN)).sum()) if len(self.trials) else 0
        if ended < IMPORTANCE_TRIALS:
            return []
        if self._importance[0] != ended:
            from slurmtune import plots

            class View:  # what plots.importance reads of a Study
                trials, config_columns = self.trials, self.config_columns
            shares = plots.importance(View())
            self._importance = (ended, [[p, _finite(v)] for p, v in zip(shares["parameter"], shares["importance"])])
        return self._importance[1]

    def _failures(self):
        """The latest 20 trials that failed or were retried, with the end of their error."""
        t = self.trials
        failed = t[((t["status"].astype(str) == "failed") | (t["retries"] > 0)).to_numpy()]
        failed = failed.assign(at=failed["end_time"].fillna(failed["start_time"])).sort_values("at", kind="stable").tail(20)
        if not len(failed):
            return []
        errors = self._file["trials"].fields(["error"])[np.sort(failed.index.to_numpy())]
        text = {int(i): _text(e[0]) for i, e in zip(np.sort(failed.index.to_numpy()), errors)}
        return [{"trial": int(i), "status": str(r.status), "retries": int(r.retries),
                 "end_s": _finite(r.end_time - self._started()),
                 "error": text.get(int(i), "")} for i, r in failed.iterrows()][::-1]

    def _started(self):
        starts = self.trials["start_time"].to_numpy(dtype=float) if len(self.trials) else np.array([])
        return float(np.nanmin(starts)) if np.isfinite(starts).any() else 0.0

    def snapshot(self):
        t = self.trials
        started = self._started()  # once: a scan of every trial's start time
        unix = self.attrs.get("clock", "unix") == "unix"
        now = time.time() if unix else float("nan")
        status = t["status"].astype(str) if len(t) else pd.Series([], dtype=str)
        ranked = self._ranked() if len(t) else np.array([], int)
        several = len(self.objectives) > 1
        curve_ids = self._curve_ids(ranked) if len(t) else []
        curves = self.reports.curves(curve_ids)
        running = t[(status == "running").to_numpy()] if len(t) else t
        snapshot = {
            "ok": True,
            "study": {"name": self.attrs.get("study_name", ""), "objectives": self.objectives,
                      "modes": self.modes, "constraints": self.constraints,
                      "resource": self.attrs.get("resource", "step"),
                      "scheduler": self.resolved.get("scheduler", {}).get("type", "?"),
                      "sampler": self.attrs.get("sampler", "random"),
                      "max_trials": self.resolved.get("study", {}).get("max_trials"),
                      "clock": self.attrs.get("clock", "unix"), "sessions": len(self.sessions),
                      "path": os.path.abspath(self.path)},
            "counts": {"started": len(t), "reports": self.reports_committed,
                       "by_status": {s: int(n) for s, n in status.value_counts().items() if n}},
            "written_s_ago": _finite(now - self.commit_time) if unix else None,
            "loop": {k: (_finite(v) if isinstance(v, float) else v) for k, v in self.loop.items()}
            if self.loop else None,
            "best": None, "best_trials": [], "front": [], "points": [],
            "trace": [[_finite(at - started), value, trial] for at, value, trial in
                      self.reports.best[1]] if not several else [],
            "curves": [{"trial": i, "status": status.iloc[i] if i < len(status) else "?",
                        "config": self._config(t.loc[i]), "points": curves.get(i, [])} for i in curve_ids],
            "rungs": {str(int(k)): int(v) for k, v in t["rung"].value_counts().sort_index().items() if k >= 0} if len(t) else {},
            "running": [{"trial": int(i), "last_step": _finite(r.last_step), "last_value": _finite(r.last_value),
                         "since_s": _finite(now - self.reports.last_time(i)) if unix else None,
                         "nodes": r.nodes} for i, r in running.iterrows()][:200],
            "running_total": len(running),
            "failures": self._failures() if len(t) else [],
            "decisions": [dict(d, time_s=_finite(d.pop("time") - started)) for d in
                          [dict(x) for x in self.decisions]],
            "decided": self.decided,
            "slurm": {"sessions": self.sessions, "host": self.attrs.get("host", ""),
                      "job": self.attrs.get("slurm_job_id", ""),
                      "nodes": [[str(n), int(c)] for n, c in
                                t["nodes"].replace("", np.nan).dropna().value_counts().head(30).items()] if len(t) else [],
                      "node_count": int(t["nodes"].replace("", np.nan).dropna().nunique()) if len(t) else 0},
            "parallel": self._parallel(ranked) if len(t) else {"axes": [], "lines": []},
            "slices": self._slices() if len(t) else [],
            "importance": self._importance_now() if len(t) else [],
            "reports_behind": self.reports_committed - self.reports.size,
            "importance_trials": IMPORTANCE_TRIALS,
            "sampled": {"trials": len(t), "curves": len(curve_ids), "points": CURVE_POINTS,
                        "parallel": PARALLEL, "slices": SLICE_POINTS},
        }
        if several:
            snapshot["front"], snapshot["points"] = self._front() if len(t) else ([], [])
        for i in ranked[:20]:
            row = t.loc[i]
            snapshot["best_trials"].append({"trial": int(i), "status": str(row.status), "value": _finite(row.best_value),
                                            "step": _finite(row.best_step), "reports": int(row.reports),
                                            "config": self._config(row)})
        if len(snapshot["best_trials"]) and not several:
            snapshot["best"] = snapshot["best_trials"][0]
        return snapshot


def main():
    study = LiveStudy(sys.argv[1])
    for line in sys.stdin:
        if line.strip() != "snapshot":
            continue
        started = time.monotonic()
        try:
            study.update(UPDATE_BUDGET_S)
            reply = study.snapshot()
        except (OSError, ValueError, KeyError, ResultsFileError) as error:
            study.close()  # opened afresh next time: the file may be back by then
            reply = {"ok": False, "error": str(error) or type(error).__name__}
        reply["read_s"] = round(time.monotonic() - started, 4)
        sys.stdout.write(json.dumps(reply, allow_nan=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
