#!/usr/bin/python3
"""Learning-curve predictions (asha_promotion, predict = true) through every output.

    check_predictions.py SLURMTUNE STUDY.toml

`slurmtune simulate -o` records a MOBSTER study whose scheduler predicts: the results file's
/events carry each judged report's predicted final value and interval (schema 5);
`slurmtune replay` of the file's own log predicts exactly the same values at the same
reports with the same decisions (the prediction is a function of the events); a second
simulation records the same predictions (determinism); `status` lists them; the Python
module reads them (Study.predictions, Study.prediction_text). Some predictions must have
let a trial run on (continue) and some must have stopped one below the top rung, or the
rule was never exercised.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "share", "slurmtune", "python"))
from slurmtune.study import Study  # noqa: E402


def run(*argv, stdin=None):
    out = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def recorded(path):
    with h5py.File(path, "r") as f:
        assert int(f.attrs["schema_version"]) >= 5, "schema 5 records predictions"
        rows = int(f["commit"][0]["events"])
        events = f["events"][:rows]
        kinds = h5py.check_enum_dtype(f["events"].dtype["kind"])
    names = {v: k for k, v in kinds.items()}
    out = {}
    for e in events:
        if not np.isnan(e["predicted_mean"]):
            out[(int(e["trial"]), float(e["step"]))] = (
                names[int(e["kind"])], float(e["predicted_at"]), float(e["predicted_mean"]),
                float(e["predicted_lower"]), float(e["predicted_upper"]), int(e["rung"]))
    return out


def main():
    slurmtune, study = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="slurmtune-predictions-")
    try:
        first, second = os.path.join(work, "a.h5"), os.path.join(work, "b.h5")
        run(slurmtune, "simulate", study, "-q", "--decision-cost", "free", "-o", first)
        run(slurmtune, "simulate", study, "-q", "--decision-cost", "free", "-o", second)
        live = recorded(first)
        assert live, "no prediction recorded"
        assert live == recorded(second), "two simulations of one study predicted differently"
        # The top rung is never predicted: a stop with a prediction is the rule's.
        continued = [k for k, v in live.items() if v[0] == "continue"]
        stopped = [k for k, v in live.items() if v[0] == "stop"]
        assert continued and stopped, f"the rule never acted: {len(continued)} continues, {len(stopped)} stops"

        # replay of the file's own log: the same predictions at the same reports.
        log = run(slurmtune, "export", first, "--table", "replay")
        replayed = {}
        for line in run(slurmtune, "replay", study, "-", stdin=log).splitlines():
            d = json.loads(line)
            if "predicted" in d:
                p = d["predicted"]
                replayed[(d["trial"], float(d["step"]))] = (d["decision"], p["at"], p["mean"], p["lower"], p["upper"])
        assert set(replayed) == set(live), \
            f"replay predicted at {len(replayed)} reports, the live run at {len(live)}"
        for key, value in live.items():
            assert replayed[key] == value[:5], f"{key}: replay {replayed[key]}, results file {value[:5]}"

        # status and the Python module.
        status = run(slurmtune, "status", first)
        assert re.search(r"^Predicted val_loss \(\d+ of \d+ trials", status, re.M), status
        lines = re.findall(r"^  trial (\d+): predicted \S+ \[\S+, \S+\] at epoch 27 \(made at epoch \d+: \w+\)$",
                           status, re.M)
        assert lines, status
        s = Study(first)
        predictions = s.predictions
        assert len(predictions) == len({k[0] for k in live}), "one latest prediction per trial"
        trial = int(lines[0])
        latest = max((k for k in live if k[0] == trial), key=lambda k: k[1])
        assert predictions.loc[trial, "predicted_mean"] == live[latest][2]
        assert re.fullmatch(rf"trial {trial}: predicted \S+ \[\S+, \S+\] at epoch 27", s.prediction_text(trial))
        assert s.prediction_text(10**6) == f"trial {10**6}: no prediction"
        s.close()
        print(f"{len(live)} predictions recorded ({len(continued)} let a trial run on, {len(stopped)} "
              f"stopped one below the top rung); replay and a second simulation identical; "
              f"status and slurmtune.study show them")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
