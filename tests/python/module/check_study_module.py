#!/usr/bin/env python3
"""The Python analysis module (share/slurmtune/python/slurmtune/study.py) on results files
the C++ writer produced: a finished simulated study, and one read while the writer is
still appending. Usage: check_study_module.py SLURMTUNE KILLABLE_WRITER STUDY.toml PBT_STUDY.toml"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "share", "slurmtune", "python"))
from slurmtune.study import ResultsFileError, Study, StudyFileError  # noqa: E402


def record_and_summarise(slurmtune, study_toml, workers, path):
    """Simulates the study into `path`, then again for its JSON summary (deterministic:
    the same run), which it returns."""
    subprocess.run([slurmtune, "simulate", study_toml, "-w", str(workers), "-q", "-o", path],
                   check=True, stdout=subprocess.DEVNULL)
    return json.loads(subprocess.run([slurmtune, "simulate", study_toml, "-w", str(workers), "--json"],
                                     check=True, capture_output=True, text=True).stdout)


def check_summaries(s):
    """Schema 10: what /trials keeps of each trial (its standing, where its best report is)
    says what every report of /metrics says."""
    assert s.schema_version >= 10
    pd.testing.assert_frame_equal(s.standings, s.standings_from_metrics(), check_dtype=False)
    metrics = s.metrics
    reported = s.trials.dropna(subset=["best_value"])
    for trial in reported.itertuples():
        rows = metrics[(metrics["trial"] == trial.id) & (metrics["step"] == trial.best_step) &
                       (metrics[s.metric] == trial.best_value)]
        assert int(rows["seq"].iloc[0]) == trial.best_seq, (trial.id, rows, trial.best_seq)
    return len(reported)


def check_finished_study(slurmtune, study_toml, workdir):
    path = os.path.join(workdir, "finished.h5")
    summary = record_and_summarise(slurmtune, study_toml, 8, path)
    s = Study(path)
    assert s.name == summary["study"]
    assert len(s.trials) == summary["started"], (len(s.trials), summary)
    assert len(s.metrics) == summary["reports"]
    assert s.schema_version >= 9 and s.loop is None  # a simulation has no coordinator loop
    assert check_summaries(s) > 10
    counts = s.trials["status"].value_counts()
    assert counts["completed"] == summary["completed"] and counts["stopped"] == summary["stopped"]
    assert set(s.trials["config/optimizer"]) <= {"sgd", "adam"}
    assert s.trials["config/hidden"].between(16, 255).all()
    # The best configuration agrees with `slurmtune best` and the simulator's summary.
    best_cli = json.loads(subprocess.run([slurmtune, "best", path, "--format", "json"], check=True,
                                         capture_output=True, text=True).stdout)
    assert s.best_config == best_cli == summary["best_config"], (s.best_config, best_cli)
    assert abs(s.best_trial["best_value"] - summary["best_value"]) < 1e-12
    # Every report of a trial is in its curve, in step order.
    curve = s.curve(int(s.best_trial["id"]))
    assert len(curve) == s.best_trial["reports"] and curve["step"].is_monotonic_increasing
    # The history explains every early stop: a "stop" decision with its cutoff.
    history = s.history
    stops = history[(history["kind"] == "stop") & (history["rung"] >= 0)]  # not "reached max_t"
    stopped_early = s.trials[(s.trials["status"] == "stopped")]
    assert set(stops["trial"]) == set(stopped_early["id"])
    assert (stops["value"] > stops["cutoff"]).all()  # val_loss is minimised: worse is larger
    png = s.plot_curves(os.path.join(workdir, "curves.png"))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(png) > 5000
    # And the export agrees row for row.
    csv = subprocess.run([slurmtune, "export", path, "--table", "metrics"], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert len(csv) == len(s.metrics) + 1
    print(f"finished study: {len(s.trials)} trials, {len(s.metrics)} reports, best {s.best_config}")


def check_reading_while_writing(killable_writer, study_toml, workdir):
    path = os.path.join(workdir, "live.h5")
    writer = subprocess.Popen([killable_writer, study_toml, path, "0.05", "20000"], stdout=subprocess.PIPE)
    try:
        while "flushed" not in writer.stdout.readline().decode():
            pass
        seen = []
        with Study(path) as s:
            for _ in range(40):
                s.refresh()
                trials, metrics, events = s.trials, s.metrics, s.events
                # One consistent snapshot: every report and event belongs to a known trial,
                # and every committed row reads as written (HDF5 1.10's SWMR readers read
                # the last chunk of a growing table as garbage now and then when partial
                # chunks were stored raw: src/store/file/tables.cpp).
                assert metrics["trial"].max() < len(trials)
                assert events[events["kind"] == "start"]["trial"].max() < len(trials)
                assert events["kind"].notna().all() and events["rung"].between(-1, 64).all()
                assert metrics["seq"].is_monotonic_increasing and events["seq"].is_monotonic_increasing
                assert len(metrics) == s.committed["metrics"]
                seen.append(len(metrics))
                time.sleep(0.05)
        assert seen == sorted(seen) and seen[-1] > seen[0], seen
        print(f"read while writing: {len(seen)} snapshots, reports {seen[0]} -> {seen[-1]}")
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()


def check_bad_files(workdir):
    text = os.path.join(workdir, "text.h5")
    with open(text, "w") as f:
        f.write("not hdf5")
    for bad in (text, os.path.join(workdir, "missing.h5")):
        try:
            Study(bad)
        except ResultsFileError as error:
            assert bad in str(error)
        else:
            raise AssertionError(f"{bad} opened")
    assert StudyFileError is ResultsFileError  # the old name still catches it
    print("bad files: refused with the path in the message")


def check_pbt_study(slurmtune, pbt_toml, workdir):
    """A simulated PBT study: its exploits as recorded, as `replay` derives them again from
    the file's own log, and the configuration history and best configuration they imply."""
    path = os.path.join(workdir, "pbt.h5")
    summary = record_and_summarise(slurmtune, pbt_toml, 4, path)
    s = Study(path)
    exploits = s.exploits
    assert len(exploits) > 0, "no exploit in a PBT study"
    # The scheduler, fed the file's log again, makes the same exploits in the same order.
    log = subprocess.run([slurmtune, "export", path, "--table", "replay"], check=True,
                         capture_output=True, text=True).stdout
    replayed = subprocess.run([slurmtune, "replay", pbt_toml, "-"], input=log, check=True,
                              capture_output=True, text=True).stdout
    resumes = [json.loads(line) for line in replayed.splitlines() if '"resume":{' in line]
    assert [(r["trial"], r["resume"]["donor"], r["resume"]["donor_step"]) for r in resumes] == \
        [(int(e.trial), int(e.donor), float(e.donor_step)) for e in exploits.itertuples()], \
        (resumes[:3], exploits.head(3))
    for r, (_, e) in zip(resumes, exploits.iterrows()):
        assert r["resume"]["operations"] == e["operations"]
        assert abs(r["resume"]["config"]["lr"] - e["config/lr"]) <= 1e-12 * e["config/lr"]
        assert r["resume"]["config"]["batch"] == e["config/batch"]
    # A trial's history starts with its first configuration and adds one per exploit.
    trial = int(exploits["trial"].iloc[0])
    history = s.config_history(trial)
    assert len(history) == 1 + (exploits["trial"] == trial).sum()
    assert history["config/lr"].iloc[0] == s.trials.loc[trial, "config/lr"]
    # The best configuration is the one in force at the best report, as the CLI and the
    # simulator say.
    best_cli = json.loads(subprocess.run([slurmtune, "best", path, "--format", "json"], check=True,
                                         capture_output=True, text=True).stdout)
    assert s.best_config == best_cli == summary["best_config"], (s.best_config, best_cli, summary)
    check_summaries(s)  # best_config took best_seq from /trials
    for name, plot in (("schedule.png", lambda p: s.plot_schedule(p, "lr")),
                       ("lineage.png", s.plot_lineage)):
        target = os.path.join(workdir, name)
        plot(target)
        assert os.path.getsize(target) > 1000, name
    s.close()
    print(f"pbt: {len(exploits)} exploits recorded, replayed identically; best config agrees")


def check_plots(slurmtune, study_toml, workdir):
    """slurmtune.plots on a finished study: every plot is written, curves carry their
    trials' SVG ids, times are seconds since the study started, and importance ranks a
    parameter that decides the metric above one that does not."""
    import numpy as np
    import pandas as pd
    from slurmtune import plots

    path = os.path.join(workdir, "plots.h5")
    subprocess.run([slurmtune, "simulate", study_toml, "-w", "8", "-q", "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    s = Study(path)
    assert s.trials["start_s"].min() == 0 and (s.metrics["time_s"] >= 0).all()
    assert (s.trials["end_s"] >= s.trials["start_s"]).all()
    for name in ("curves_by_outcome", "best_so_far", "rung_occupancy", "parallel_coordinates",
                 "slices", "plot_importance"):
        out = getattr(plots, name)(s, os.path.join(workdir, name + ".svg"))
        with open(out) as f:
            text = f.read()
        assert text.lstrip().startswith("<?xml") and "<svg" in text, name
        if name in ("curves_by_outcome", "parallel_coordinates"):
            drawn = len(re.findall(r'<g id="trial-\d+"', text))
            assert drawn == len(s.trials), (name, drawn, len(s.trials))
    small = plots.curves_by_outcome(s, None, limit=10)
    assert "showing 10 of %d" % len(s.trials) in small.axes[0].get_title()
    ranked = plots.importance(s)
    assert sorted(ranked["parameter"]) == sorted(c[len("config/"):] for c in s.config_columns)
    assert ranked["importance"].between(0, 1).all() and ranked["importance"].is_monotonic_decreasing

    class Known:  # best value = x^2 + noise; z is noise: importance must say so
        rng = np.random.default_rng(1)
        x, z = rng.uniform(-1, 1, 2000), rng.uniform(-1, 1, 2000)
        trials = pd.DataFrame({"best_value": x ** 2 + 0.01 * rng.normal(size=2000),
                               "config/x": x, "config/z": z})
        config_columns = ["config/x", "config/z"]
    known = plots.importance(Known).set_index("parameter")["importance"]
    assert known["x"] > 0.9 and known["z"] < 0.02, known
    print(f"plots: 6 plots of {len(s.trials)} trials; importance {dict(zip(ranked.parameter, ranked.importance.round(3)))}")


def check_streamed_curves(workdir):
    """For a file of schema 10 or older, the html page's curves and best-so-far line
    stream /metrics in chunks (issue #63, item 2): with chunks of 997 rows (boundaries
    everywhere) they are what the whole table, read at once, says: each drawn trial's
    every k-th report and its last, and each report that improved the best."""
    import numpy as np
    from slurmtune import plots
    s = Study(os.path.join(workdir, "finished.h5"))
    s.schema_version = 10  # read as a file without /curves and /improvements
    whole = s.scan_metrics
    s.scan_metrics = lambda fields, chunk_rows=997: whole(fields, chunk_rows)
    metrics = s.metrics.sort_values("seq", kind="stable")
    drawn = list(s.trials["id"][::3])
    for points in (4, 1000):
        plots.MAX_POINTS = points
        curves = plots._curves(s, s.metric, drawn)
        for trial in drawn:
            rows = metrics[metrics["trial"] == trial]
            if rows.empty:
                assert trial not in curves
                continue
            stride = max(1, len(rows) // points)
            index = sorted(set(range(0, len(rows), stride)) | {len(rows) - 1})
            steps, values = curves[trial]
            assert list(steps) == list(rows["step"].iloc[index]), (trial, points, list(steps))
            assert np.array_equal(values, rows[s.metric].iloc[index].to_numpy(), equal_nan=True)
    elapsed, _, best = plots._best_curve(s)
    running = (metrics[s.metric].cummin() if s.mode == "min" else metrics[s.metric].cummax())
    improved = running.ne(running.shift()) & running.notna()
    expected = list(running[improved]) + ([] if improved.iloc[-1] else [running.iloc[-1]])
    assert list(best) == expected, (list(best)[:5], expected[:5])
    assert len(elapsed) == len(best)
    s.close()
    print(f"streamed curves: {len(drawn)} trials and {len(best)} best-so-far points equal the "
          "whole table's")
    return elapsed, best


LONG_CURVES = """
[study]
name = "long-curves"
metric = "loss"
max_trials = 12
[search]
lr = { loguniform = [1e-4, 1e-1] }
[scheduler]
type = "fifo"
max_t = 700
"""


def check_recorded_curves(slurmtune, workdir, name, streamed=None):
    """Schema 11: the curves come from /curves (one row per trial: report m * stride in
    slot m, and the trial's last report) and the best-so-far line from /improvements,
    equal to what every report of /metrics says; no pass over /metrics. `name`: a study
    of this folder, or LONG_CURVES (trials of 700 reports, thinned to stride 8)."""
    import numpy as np
    from slurmtune import plots
    from slurmtune.study import curve_stride
    if name == LONG_CURVES:
        with open(os.path.join(workdir, "long.toml"), "w") as out:
            out.write(LONG_CURVES)
        name = "long.h5"
        subprocess.run([slurmtune, "simulate", os.path.join(workdir, "long.toml"), "-w", "3", "-q",
                        "-o", os.path.join(workdir, name)], check=True, stdout=subprocess.DEVNULL)
    s = Study(os.path.join(workdir, name))
    if streamed is None:  # the streamed path's line, for a file of an older schema
        s.schema_version = 10
        streamed = plots._best_curve(s)[::2]
        s.schema_version = 11
    assert s.has_curve_samples
    metrics = s.metrics.sort_values("seq", kind="stable")
    s.scan_metrics = None  # a pass over /metrics would fail
    drawn = list(s.trials["id"])
    curves = plots._curves(s, s.metric, drawn)
    thinned = 0
    for trial in drawn:
        rows = metrics[metrics["trial"] == trial]
        if rows.empty:
            assert trial not in curves
            continue
        stride = curve_stride(len(rows))
        index = sorted(set(range(0, len(rows), stride)) | {len(rows) - 1})
        thinned += stride > 1
        steps, values = curves[trial]
        expected = rows.iloc[index]
        assert np.array_equal(steps.astype(np.float32), expected["step"].to_numpy(np.float32)), (trial, steps)
        assert np.array_equal(values.astype(np.float32), expected[s.metric].to_numpy(np.float32),
                              equal_nan=True), (trial, values)
        last = s.trials.loc[trial]
        assert last["last_time"] == rows["time"].iloc[-1], (trial, last["last_time"])
    elapsed, _, best = plots._best_curve(s)
    assert list(best) == list(streamed[1]) and np.array_equal(elapsed, streamed[0]), (best[:5], streamed[1][:5])
    assert thinned or name != "long.h5"
    s.close()
    with Study(os.path.join(workdir, name)) as fresh:  # curve() streams /metrics by chunks
        for trial in drawn[:3]:
            expected = metrics[metrics["trial"] == trial].sort_values("seq").reset_index(drop=True)
            pd.testing.assert_frame_equal(fresh.curve(trial), expected, check_dtype=False)
        assert "metrics" not in fresh._cache
    print(f"recorded curves: {len(drawn)} trials from /curves ({thinned} thinned) and "
          f"{len(best)} best-so-far points from /improvements equal /metrics")


def check_dashboard_reader(workdir, name):
    """The dashboard's reader of a schema-11 file (its curves from /curves, its line from
    /improvements, last times and values from /trials: no report read) shows what it
    shows of the same file read as schema 10 (every report read): the same counts,
    best trials, line and trials, the same curves where a trial has at most 120 reports
    (both keep all of them), and where it has more, points of its own reports."""
    import shutil
    import h5py
    import numpy as np
    from slurmtune import dashboard_reader
    path = os.path.join(workdir, name)
    older = os.path.join(workdir, "older-" + name)
    shutil.copyfile(path, older)
    with h5py.File(older, "r+") as f:
        del f["curves"], f["improvements"]
        f.attrs["schema_version"] = np.int64(10)
    views = []
    for file in (path, older):
        live = dashboard_reader.LiveStudy(file)
        live.update(None)
        recorded = isinstance(live.reports, dashboard_reader.RecordedCurves)
        assert recorded == (file == path), file
        snapshot = live.snapshot()
        snapshot["last_values"] = live.reports.last_values(len(live.trials)).tolist()
        views.append(snapshot)
        live.close()
    new, old = views
    assert old["reports_behind"] == new["reports_behind"] == 0
    for key in ("counts", "best", "best_trials", "trace", "rungs", "decisions", "parallel", "slices"):
        assert new[key] == old[key], (key, new[key], old[key])
    with Study(path) as s:
        metrics = s.metrics
        # Each trial's last reported value (the Pareto front's, with several objectives).
        last = metrics.dropna(subset=[s.metric]).groupby("trial")[s.metric].last()
        expected = last.reindex(range(len(s.trials))).to_numpy()
        assert np.array_equal(np.array(new["last_values"], float)[:, 0], expected, equal_nan=True)
        for new_curve, old_curve in zip(new["curves"], old["curves"]):
            assert new_curve["trial"] == old_curve["trial"]
            reports = int(s.trials.loc[new_curve["trial"], "reports"])
            if reports <= dashboard_reader.CURVE_POINTS:
                assert new_curve["points"] == old_curve["points"], new_curve["trial"]
            else:
                rows = metrics[metrics["trial"] == new_curve["trial"]]
                known = set(zip(rows["step"].astype(np.float32).astype(float),
                                rows[s.metric].astype(np.float32).astype(float)))
                assert set(map(tuple, new_curve["points"])) <= known and \
                    new_curve["points"][-1] == old_curve["points"][-1], new_curve["trial"]
    print(f"dashboard reader: {name} from /curves and /improvements shows what every report shows "
          f"({len(new['curves'])} curves, {len(new['trace'])} best-so-far points)")


def main():
    slurmtune, killable_writer, study_toml, pbt_toml = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as workdir:
        check_finished_study(slurmtune, study_toml, workdir)
        check_plots(slurmtune, study_toml, workdir)
        check_recorded_curves(slurmtune, workdir, "finished.h5", check_streamed_curves(workdir))
        check_recorded_curves(slurmtune, workdir, LONG_CURVES)
        check_dashboard_reader(workdir, "finished.h5")
        check_dashboard_reader(workdir, "long.h5")
        check_pbt_study(slurmtune, pbt_toml, workdir)
        check_reading_while_writing(killable_writer, study_toml, workdir)
        check_bad_files(workdir)


if __name__ == "__main__":
    main()
