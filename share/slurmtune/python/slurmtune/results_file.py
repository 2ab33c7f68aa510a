"""The results file's format as this package reads it (doc/hdf5-layout.md): its schema,
the fields each table of a schema has, the checks that refuse a file that is not one
(naming what is wrong), and the decoding of its rows into pandas. `slurmtune.study`
builds the Study on it; the dashboard's reader uses it too."""
from __future__ import annotations

import errno
import time

import h5py
import numpy as np
import pandas as pd

FORMAT = "slurmtune-study"
SCHEMA_VERSION = 11

CURVE_SLOTS = 128  # points of a trial's curve /curves keeps (src/store/file/curve_samples.hpp)


def curve_stride(reports: int) -> int:
    """The stride of a trial's curve in /curves after `reports` reports: slot m holds its
    report m * stride (the least power of two that keeps the points within CURVE_SLOTS)."""
    stride = 1
    while -(-reports // stride) > CURVE_SLOTS:
        stride *= 2
    return stride


def read_curve_samples(dataset, ids, known, trials, precision=float) -> dict:
    """{trial: (steps, values)} from /curves (`dataset`, schema 11 on) for those of `ids`
    below `known` (the committed trials): each row's kept points and, where they lack
    it, the trial's last report, taken from `trials` (/trials as a frame whose row label
    is the trial id: ``reports``, ``last_step``, ``last_value``) in `precision`. One read
    of those rows, whatever the number of reports."""
    dataset.refresh()
    known = min(known, dataset.shape[0])
    ids = sorted({int(t) for t in ids if 0 <= int(t) < known})
    if not ids:
        return {}
    out = {}
    for trial, row in zip(ids, dataset[ids, :]):  # h5py: one selection, increasing rows
        kept = np.isfinite(row["step"])
        steps, values = row["step"][kept].astype(precision), row["value"][kept].astype(precision)
        last = trials.loc[trial]
        reports = int(last["reports"])
        if reports and (len(steps) == 0 or (len(steps) - 1) * curve_stride(reports) != reports - 1):
            steps = np.r_[steps, precision(last["last_step"])]
            values = np.r_[values, precision(last["last_value"])]
        if len(steps):
            out[trial] = (steps, values)
    return out


class ResultsFileError(Exception):
    """The file is not a readable slurmtune results file."""


# How long an open waits for another process's lock on the file (errno 11): a writer
# holds it while it opens the file, until its SWMR mode starts (src/store/file/hdf5.hpp).
LOCK_WAIT_S = 30


def _lock_held(error: OSError) -> bool:
    """Whether h5py's error says another process holds the file's lock (EWOULDBLOCK), not
    that the file system refused flock()."""
    return "unable to lock file" in str(error) and f"errno = {errno.EWOULDBLOCK}," in str(error)


def _open_swmr(path: str) -> h5py.File:
    """h5py.File(path, "r", swmr=True), waiting up to LOCK_WAIT_S while another process
    holds the file's lock (10 ms, doubling to half a second, between tries)."""
    slept, pause = 0.0, 0.01
    while True:
        try:
            return h5py.File(path, "r", swmr=True)
        except OSError as error:
            if not _lock_held(error) or slept + pause > LOCK_WAIT_S:
                raise
            time.sleep(pause)
            slept, pause = slept + pause, min(pause * 2, 0.5)


def open_results_file(path: str) -> h5py.File:
    """The results file opened in SWMR-read mode; ResultsFileError when it is not HDF5,
    not a slurmtune results file, or of a newer schema than this module reads."""
    try:
        file = _open_swmr(path)
    except OSError as error:
        if _lock_held(error):
            raise ResultsFileError(
                f"{path}: another process holds HDF5's lock on the file, still after "
                f"{LOCK_WAIT_S} s ({error}): a program that has it open without SWMR (h5py's "
                "File(path) without swmr=True, HDFView, h5dump) or a writer of it; close "
                "that program and try again") from None
        if "unable to lock file" in str(error):
            # Some Lustre, GPFS and DVS mounts refuse flock() (errno 38 or 524).
            raise ResultsFileError(
                f"{path}: the file system refused HDF5's file lock ({error}); set "
                "HDF5_USE_FILE_LOCKING=FALSE in the environment before h5py is imported, "
                "or read a copy on a file system with locks (doc/slurm.md)") from None
        raise ResultsFileError(f"{path}: cannot open as a results file (HDF5): {error}") from None
    try:
        _check_file(file, path)
    except ResultsFileError:
        file.close()
        raise
    return file


# /commit's figures of the coordinator's loop (schema 9 on), read by Study.loop and the
# dashboard: they are not row counts.
LOOP_FIELDS = ["loop_recent_ms", "loop_recent_work", "loop_recent_busy", "loop_longest_ms",
               "loop_longest_work", "loop_turns", "loop_over_10ms", "loop_over_100ms", "loop_over_1s"]


def loop_figures(commit_row, names):
    """The loop's figures of a /commit row (schema 9 on; None before, or when no loop
    turned: a simulation), with the work enums as their names."""
    if "loop_turns" not in names or int(commit_row["loop_turns"]) == 0:
        return None
    works = h5py.check_enum_dtype(commit_row.dtype["loop_recent_work"]) or {}
    by_code = {code: name for name, code in works.items()}
    figures = {}
    for name in LOOP_FIELDS:
        value = commit_row[name]
        key = name[len("loop_"):]
        figures[key] = by_code.get(int(value), "?") if name.endswith("_work") else \
            (int(value) if name in ("loop_turns", "loop_over_10ms", "loop_over_100ms", "loop_over_1s")
             else float(value))
    return figures


# The fields every table has in a file of a schema (src/store/schema.cpp's StudyLayout):
# a file without one was altered, or not written by slurmtune, and is refused by name
# instead of failing somewhere in pandas.
_TABLE_FIELDS = {
    "trials": ["id", "status", "bracket", "rung", "retries", "start_time", "end_time", "last_step",
               "last_value", "best_value", "best_step", "reports", "nodes", "error"],
    "metrics": ["seq", "trial", "step", "time"],
    "events": ["seq", "time", "trial", "kind", "rung", "step", "milestone", "value", "cutoff"],
    "checkpoints": ["trial", "step", "time", "size", "path"],
    "sessions": ["started", "host", "slurm_job_id", "version", "first_seq"],
    "commit": ["next_seq", "trials", "metrics", "events", "checkpoints", "sessions", "time"],
    "exploits": ["seq", "time", "trial", "step", "donor", "donor_step", "operations"],
    "improvements": ["seq", "trial", "time", "value"],
}
_TABLE_SINCE = {"exploits": 3, "improvements": 11}  # tables that came with a schema
_NEWER_FIELDS = {  # (table, schema): fields that came with that schema
    ("trials", 2): ["origin", "sampler_words", "startup_words"],
    ("events", 5): ["predicted_at", "predicted_mean", "predicted_lower", "predicted_upper"],
    ("commit", 3): ["exploits"],
    ("commit", 9): LOOP_FIELDS,
    ("trials", 10): ["best_seq"],  # and objective/<metric> per objective (_check_file)
    ("commit", 10): ["removed_checkpoints"],
    ("trials", 11): ["last_time"],
    ("commit", 11): ["improvements"],
}


def _text_list(attrs, name, default):
    """A root attribute that is a list of text (or one text), or None when it is not."""
    value = attrs.get(name, default)
    values = [value] if isinstance(value, (bytes, str)) else value
    try:
        return [_text(v) for v in values] if all(isinstance(v, (bytes, str)) for v in values) else None
    except TypeError:  # not iterable
        return None


def _check_objectives(attrs, path):
    """The study's metric, objectives and modes agree with the metrics /metrics holds."""
    metric = _text(attrs["metric"])
    metrics = _text_list(attrs, "metrics", [metric])
    objectives = _text_list(attrs, "objectives", [metric])
    modes = _text_list(attrs, "modes", [attrs["mode"]])
    for name, values in (("metrics", metrics), ("objectives", objectives), ("modes", modes)):
        if not values:
            raise ResultsFileError(f"{path}: corrupted: the root attribute {name} is not a list of text")
    if metric not in metrics or not set(objectives) <= set(metrics):
        raise ResultsFileError(f"{path}: corrupted: the study's metric {metric!r} and objectives "
                               f"{objectives} are not all among its metrics {metrics}")
    if len(modes) != len(objectives) or not set(modes) <= {"min", "max"}:
        raise ResultsFileError(f"{path}: corrupted: modes {modes} do not give min or max for each "
                               f"of the objectives {objectives}")


def _table_fields(name: str, schema: int) -> list:
    fields = list(_TABLE_FIELDS[name])
    for (table, since), more in _NEWER_FIELDS.items():
        if table == name and schema >= since:
            fields += more
    return fields


def _check_file(file: h5py.File, path: str):
    """Refuses, naming what is wrong, a file that is not a results file this module
    reads: its format and schema, the root attributes every reader uses, and each table's
    shape and fields."""
    attrs = file.attrs
    if _text(attrs.get("format", "")) != FORMAT:
        raise ResultsFileError(f"{path}: an HDF5 file, but not a slurmtune results file")
    try:
        schema = int(attrs["schema_version"])
    except (KeyError, TypeError, ValueError):
        raise ResultsFileError(f"{path}: corrupted: the root attribute schema_version is missing "
                               "or not a whole number") from None
    if schema < 1:
        raise ResultsFileError(f"{path}: corrupted: schema_version {schema} (versions start at 1)")
    if schema > SCHEMA_VERSION:
        raise ResultsFileError(f"{path}: written with results-file schema {schema}; this module "
                               f"reads schema {SCHEMA_VERSION} and older")
    for name in ("study_name", "metric", "mode"):
        if not isinstance(attrs.get(name), (bytes, str)):
            raise ResultsFileError(f"{path}: corrupted: the root attribute {name} is missing or "
                                   "not text")
    _check_objectives(attrs, path)
    tables = [t for t in _TABLE_FIELDS if schema >= _TABLE_SINCE.get(t, 1)]
    for name in tables:
        dataset = file.get(name)
        if not isinstance(dataset, h5py.Dataset):
            raise ResultsFileError(f"{path}: corrupted or incomplete: it has no /{name} table")
        if dataset.ndim != 1 or dataset.dtype.names is None:
            raise ResultsFileError(f"{path}: corrupted: /{name} is not a table of rows")
        fields = _table_fields(name, schema)
        if name == "metrics":
            fields += _text_list(attrs, "metrics", [attrs["metric"]])
        if name == "trials" and schema >= 10:
            fields += ["objective/" + o for o in _text_list(attrs, "objectives", [attrs["metric"]])]
        missing = [f for f in fields if f not in dataset.dtype.names]
        if missing:
            raise ResultsFileError(f"{path}: corrupted: /{name} has no field {missing[0]!r}, which "
                                   f"schema {schema} files have")
    if file["commit"].shape[0] < 1:
        raise ResultsFileError(f"{path}: corrupted: /commit has no row")
    curves = file.get("curves")
    if schema >= 11 and not (isinstance(curves, h5py.Dataset) and curves.ndim == 2 and
                             set(curves.dtype.names or ()) >= {"step", "value"}):
        raise ResultsFileError(f"{path}: corrupted or incomplete: /curves is not a table of "
                               "trials by points (step, value), which schema 11 files have")


# The name before 0.2 (when the HDF5 file was also called a study file); kept for old scripts.
StudyFileError = ResultsFileError


def _text(value):
    """Text from the file. slurmtune writes UTF-8 cut at character boundaries; files of
    older versions may hold a character cut in two, which reads as U+FFFD instead of
    failing the whole table."""
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _decode_frame(array: np.ndarray) -> pd.DataFrame:
    """Structured array -> DataFrame with enums as categories and byte strings as str."""
    frame = pd.DataFrame(array)
    for name in array.dtype.names:
        enum = h5py.check_enum_dtype(array.dtype[name])
        if enum:
            labels = {value: label for label, value in enum.items()}
            if set(labels.values()) == {"FALSE", "TRUE"}:
                frame[name] = frame[name].map(lambda v: labels[v] == "TRUE")
            else:
                frame[name] = pd.Categorical(frame[name].map(labels),
                                             categories=[labels[k] for k in sorted(labels)])
        elif array.dtype[name].kind == "S":
            frame[name] = frame[name].map(_text)
    return frame


def _check_trial_ids(ids: np.ndarray, path: str):
    """/trials holds trial i in row i: other ids were written by something else."""
    wrong = np.flatnonzero(ids != np.arange(len(ids), dtype=ids.dtype))
    if len(wrong):
        raise ResultsFileError(f"{path}: corrupted: /trials row {wrong[0]} has id {ids[wrong[0]]} "
                               "(trial i is row i)")


def _absent_where_inactive(frame: pd.DataFrame) -> pd.DataFrame:
    """A conditional parameter's ``config/<name>`` is missing in the trials that do not
    have it (schema 6: its ``active/<name>`` column is False there): NaN for numbers
    (integers become floats), None for booleans, NaN in a category; the ``active/*``
    columns themselves are dropped."""
    for column in [c for c in frame.columns if c.startswith("active/")]:
        name = "config/" + column[len("active/"):]
        active = frame[column].astype(bool).to_numpy()
        values = frame[name]
        if pd.api.types.is_bool_dtype(values):
            frame[name] = values.astype(object).where(active, None)
        elif pd.api.types.is_integer_dtype(values):
            frame[name] = values.astype(float).where(active)
        else:
            frame[name] = values.where(active)
        frame = frame.drop(columns=column)
    return frame
