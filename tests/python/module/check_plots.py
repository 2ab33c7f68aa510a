#!/usr/bin/env python3
"""Issue #58's matplotlib plots (slurmtune.plots, the HTML report's figures): a log
domain gets a log axis in plots.slices, log axes print their ticks as plain numbers (not
raw mathtext such as "$\\mathdefault{10^{-4}}$", which the report's text-only setting
printed), and a completed trial's stop at max_t is not marked "stopped here".

    check_plots.py SLURMTUNE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "share", "slurmtune", "python"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text, as in the report
from slurmtune import plots  # noqa: E402
from slurmtune.study import Study  # noqa: E402

STUDY = """[study]
name = "plots"
metric = "loss"
max_trials = {trials}
[search]
lr = {{ loguniform = [1e-5, 1e-1] }}
width = {{ randint = [16, 256] }}
[scheduler]
type = "asha_promotion"
grace_period = 1
reduction_factor = 3
max_t = 9
[simulate]
objective = "bowl"
"""


def expect(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def simulate(slurmtune, work, trials):
    toml = os.path.join(work, f"s{trials}.toml")
    with open(toml, "w") as f:
        f.write(STUDY.format(trials=trials))
    path = os.path.join(work, f"s{trials}.h5")
    subprocess.run([slurmtune, "simulate", toml, "-q", "-o", path], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    return path


def main():
    slurmtune = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="slurmtune-plots-")
    try:
        with matplotlib.rc_context({"text.parse_math": False}), Study(simulate(slurmtune, work, 30)) as s:
            figure = plots.slices(s)
            lr = next(ax for ax in figure.get_axes() if ax.get_xlabel() == "lr")
            expect(lr.get_xscale() == "log", f"lr's slice is {lr.get_xscale()}, not log")
            svg = plots.slices(s, os.path.join(work, "slices.svg"))
            text = open(svg, encoding="utf-8").read()
            expect("mathdefault" not in text and "$" not in text, "raw mathtext in the slices' ticks")
            expect(re.search(r">0\.001<|>0\.0001<|>1e-05<", text), "no plain log tick in the slices")
        with matplotlib.rc_context({"text.parse_math": False}), Study(simulate(slurmtune, work, 1)) as s:
            # One trial, run to max_t and completed: its stop at the top rung ends its course.
            expect(list(s.trials["status"]) == ["completed"], f"statuses {list(s.trials['status'])}")
            figure = plots.curves_by_outcome(s)
            labels = [t.get_text() for ax in figure.get_axes() for t in ax.get_legend().get_texts()
                      if ax.get_legend()]
            expect(not any("stopped here" in label for label in labels),
                   f"a completed trial is marked stopped: {labels}")
        print("plots: a log domain on a log axis with plain ticks; a completed trial never "
              "marked stopped")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
