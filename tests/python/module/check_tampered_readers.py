#!/usr/bin/env python3
"""Results files altered by hand or by a tool (issue #59): every reader answers with one
line naming the file and what is wrong, never a Python traceback, and `status` never
writes a terminal escape it read from the file.

- A table without a field, a table that is not a table, a missing table or root
  attribute, trial ids out of order: `status` (where it reads that table) and `html` say
  "corrupted" and name the table or attribute; so does slurmtune.study.Study.
- Values no writer records (a session started at NaN): `html` still draws its page.
- Values that break a plot (a start time of -1e308): `html` exits 1 with one line.
- A host attribute holding ESC: `status` shows it as \\u001B.

    check_tampered_readers.py SLURMTUNE
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "share", "slurmtune", "python"))
from check_tampered import expect, simulated  # noqa: E402  (this folder's: the shared setup)
from check_tampered import tampered as tampered_copy  # noqa: E402
from slurmtune.study import ResultsFileError, Study  # noqa: E402

STUDY = """[study]
name = "tamper"
metric = "loss"
metrics = ["acc"]
max_trials = 12
[search]
x = { uniform = [0, 1] }
lr = { loguniform = [1e-4, 1e-1] }
[scheduler]
type = "asha_promotion"
max_t = 9
[trial]
command = ["true"]
"""


def without_field(table, field):
    def change(f):
        rows = f[table][...]
        names = [n for n in rows.dtype.names if n != field]
        kept = np.empty(rows.shape, dtype=[(n, rows.dtype[n]) for n in names])
        for n in names:
            kept[n] = rows[n]
        del f[table]
        f.create_dataset(table, data=kept, maxshape=(None,), chunks=True)
    return change


def set_value(table, field, row, value):
    def change(f):
        rows = f[table][...]
        rows[field][row] = value
        f[table][...] = rows
    return change


def scalar(table):
    def change(f):
        del f[table]
        f.create_dataset(table, data=5)
    return change


def removed(name, attribute=False):
    def change(f):
        if attribute:
            del f.attrs[name]
        else:
            del f[name]
    return change


def set_attribute(name, value):
    def change(f):
        f.attrs[name] = value
    return change


# (case, the change, what `status` must say when it refuses, what html must say)
REFUSED = [
    ("events-without-time", without_field("events", "time"), "corrupted: /events has no field 'time'"),
    ("metrics-without-loss", without_field("metrics", "loss"), "corrupted: /metrics has no field 'loss'"),
    ("metrics-scalar", scalar("metrics"), "corrupted: /metrics is not a table of rows"),
    ("commit-without-trials", without_field("commit", "trials"), "corrupted: /commit has no field 'trials'"),
    ("no-sessions", removed("sessions"), "no /sessions"),
    ("trial-id-twice", set_value("trials", "id", 5, 0), "corrupted: /trials row 5 has id 0"),
    ("no-metric-attribute", removed("metric", attribute=True), "the root attribute metric is missing"),
    ("objectives-elsewhere", set_attribute("objectives", ["nope"]), "are not all among its metrics"),
]


def run(slurmtune, *args):
    return subprocess.run([slurmtune, *args], capture_output=True, text=True, errors="replace",
                          timeout=300)


def one_line(out, command):
    text = out.stderr.strip()
    expect("Traceback" not in out.stderr + out.stdout and len(text.splitlines()) == 1
           and text.startswith("slurmtune " + command + ":"),
           f"{command} did not answer in one line (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return text


def main():
    slurmtune = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="slurmtune-tampered-readers-")
    try:
        _, original = simulated(slurmtune, work, STUDY)

        def tampered(name, change):
            return tampered_copy(work, original, name, change)

        for name, change, said in REFUSED:
            path = tampered(name, change)
            page = run(slurmtune, "html", path, "-o", os.path.join(work, name + ".html"))
            line = one_line(page, "html")
            expect(page.returncode == 1 and said in line and name + ".h5" in line,
                   f"html of {name}: exit {page.returncode}, not a refusal saying {said!r}: {line}")
            status = run(slurmtune, "status", path)
            expect("internal error" not in status.stderr and "Traceback" not in status.stderr,
                   f"status of {name}:\n{status.stderr}")
            if status.returncode != 0:
                expect(name + ".h5" in status.stderr and said in status.stderr,
                       f"status of {name} refused without naming it: {status.stderr}")
            try:
                Study(path).trials
                Study(path).events
                Study(path).metrics
                expect(False, f"Study read {name} without a word")
            except ResultsFileError as error:
                expect(said in str(error), f"Study's refusal of {name}: {error}")
        # Values a plot cannot draw: one line, or the page.
        path = tampered("session-at-nan", set_value("sessions", "started", 0, np.nan))
        page = run(slurmtune, "html", path, "-o", os.path.join(work, "nan.html"))
        expect(page.returncode == 0, f"html of a session started at NaN: {page.stderr[-3000:]}")
        with open(os.path.join(work, "nan.html"), encoding="utf-8") as f:
            expect("unknown" in f.read(), "the page does not say the session's start is unknown")
        path = tampered("start-far-past", set_value("trials", "start_time", 3, -1e308))
        page = run(slurmtune, "html", path, "-o", os.path.join(work, "far.html"))
        if page.returncode != 0:
            line = one_line(page, "html")
            expect("cannot draw a page from this results file" in line, f"html of -1e308: {line}")
        # Text from the file reaches the terminal visible, never as an escape.
        path = tampered("escape-host", set_attribute("host", "evil\x1b]0;owned\x07host"))
        status = run(slurmtune, "status", path)
        expect(status.returncode == 0 and "\x1b" not in status.stdout and "\\u001B" in status.stdout,
               f"status of a host with ESC:\n{status.stdout!r}")
        print(f"tampered readers: {len(REFUSED)} altered files refused in one line by html, "
              "status and Study, naming what is wrong; a NaN session start drawn as unknown; "
              "a plot that cannot be drawn is one line; an escape in the file shown, not sent")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
