#!/usr/bin/env python3
"""Checks `slurmtune simulate --curves` end to end with the real binary, h5py and pandas.

1. A FIFO study simulated into a results file, then simulated again with FIFO on that file
   as recorded curves: every configuration's reports (step, value, time since its start)
   are reproduced exactly.
2. ASHA on a recorded table (tests/bench/data/digits-mlp.csv): the simulation's reports
   are the table's values, and `slurmtune replay` of exactly those reports stops the same
   trials at the same steps.
3. Determinism: the repeated JSON summary equals the one recorded in
   tests/python/module/data/digits-mlp-repeat.json (computed on another machine).
4. --curve-out and slurmtune.study.plot_anytime draw a PNG.
Usage: check_recorded_curves.py SLURMTUNE_BINARY REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

BINARY, ROOT = sys.argv[1], sys.argv[2]
DATA = os.path.join(ROOT, "tests", "bench", "data")
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
from slurmtune.study import Study, plot_anytime, read_anytime  # noqa: E402

SYNTHETIC = """
[study]
name = "roundtrip"
metric = "loss"
mode = "min"
seed = 4
max_trials = 40
sampler = "halton"
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 256] }
act = { choice = ["relu", "gelu"] }
[scheduler]
type = "fifo"
max_t = 12
[simulate]
step_time_s = 2.0
"""


def simulate(*args):
    out = subprocess.run([BINARY, "simulate", *args], capture_output=True, text=True)
    assert out.returncode == 0, f"simulate {args}: {out.stderr}"
    return out.stdout


def curves_by_config(path):
    """{config tuple: [(step, value, time since the trial started)]}"""
    with Study(path) as s:
        trials, metrics = s.trials, s.metrics
        columns = s.config_columns
        result = {}
        for trial_id, rows in metrics.groupby("trial"):
            trial = trials.loc[trial_id]
            key = tuple(str(trial[c]) for c in columns)
            result[key] = [(r.step, r.loss, r.time - trial["start_time"]) for r in rows.itertuples()]
        return result, trials


def check_fifo_roundtrip(work):
    study = os.path.join(work, "fifo.toml")
    with open(study, "w") as f:
        f.write(SYNTHETIC)
    recorded, replayed = os.path.join(work, "recorded.h5"), os.path.join(work, "replayed.h5")
    simulate(study, "-w", "3", "-q", "-o", recorded)
    simulate(study, "-w", "5", "-q", "--curves", recorded, "-o", replayed)
    before, _ = curves_by_config(recorded)
    after, trials = curves_by_config(replayed)
    assert len(before) == 40 and set(before) == set(after), "the same 40 configurations"
    for key, points in before.items():
        again = after[key]
        assert [(s, v) for s, v, _ in again] == [(s, v) for s, v, _ in points], f"{key}: values differ"
        assert np.allclose([t for *_, t in again], [t for *_, t in points], rtol=1e-12, atol=1e-9), key
    assert (trials["status"] == "completed").all()
    check_study_file_errors(work, recorded)
    print(f"fifo round trip: 40 recorded curves reproduced exactly ({sum(map(len, before.values()))} reports)")


def check_study_file_errors(work, recorded):
    """A results file that does not fit the study is refused with the fix."""
    cases = [(SYNTHETIC.replace('metric = "loss"', 'metric = "acc"'), "records no metric 'acc' (it records: loss)"),
             (SYNTHETIC.replace("width =", "depth ="), "records no parameter 'depth'"),
             (SYNTHETIC.replace('act = { choice = ["relu", "gelu"] }\n', ""),
              "records the parameter 'act', which [search] does not declare")]
    for i, (text, message) in enumerate(cases):
        study = os.path.join(work, f"bad{i}.toml")
        with open(study, "w") as f:
            f.write(text)
        out = subprocess.run([BINARY, "simulate", study, "--curves", recorded], capture_output=True, text=True)
        assert out.returncode == 1 and recorded in out.stderr and message in out.stderr, out.stderr


def replay_events(path):
    """The simulation's own scheduler inputs, in order, as a `slurmtune replay` log."""
    with Study(path) as s:
        metrics = s.metrics.assign(kind="report")
        events = s.events
        starts = events[events["kind"] == "start"].assign(kind="start")
        ends = events[events["kind"].isin(["completed", "stopped", "failed"])]
        rows = pd.concat([metrics[["seq", "trial", "step", "val_loss", "kind"]],
                          starts[["seq", "trial", "kind"]],
                          ends[["seq", "trial", "kind", "step", "value"]].astype({"kind": str})])
        rows = rows.sort_values("seq", kind="stable")
        log = []
        for r in rows.itertuples():
            if r.kind == "start":
                log.append({"type": "start", "trial": int(r.trial)})
            elif r.kind == "report":
                log.append({"type": "report", "trial": int(r.trial), "step": r.step, "value": r.val_loss})
            else:
                log.append({"type": "end", "trial": int(r.trial), "state": r.kind})
        stops = {(int(r.trial), r.step) for r in events[events["kind"] == "stop"].itertuples()}
        return log, stops, s.metrics, s.trials, s.config_columns


def check_asha_against_replay(work):
    table = pd.read_csv(os.path.join(DATA, "digits-mlp.csv"))
    study = os.path.join(work, "asha.toml")
    with open(os.path.join(DATA, "digits-mlp.toml")) as f:
        text = f.read().replace('curves = "digits-mlp.csv"', f'curves = "{os.path.join(DATA, "digits-mlp.csv")}"')
    with open(study, "w") as f:
        f.write(text.replace("max_trials = 500", "max_trials = 200"))
    result = os.path.join(work, "asha.h5")
    simulate(study, "-w", "8", "-q", "-o", result)
    log, stops, metrics, trials, columns = replay_events(result)
    # Every simulated report is the table's value of that configuration at that step.
    params = [c[len("config/"):] for c in columns]
    indexed = table.set_index(params + ["step"])["val_loss"]
    for r in metrics.itertuples():
        trial = trials.loc[r.trial]
        key = tuple(trial[f"config/{p}"] for p in params) + (r.step,)
        assert indexed.loc[key] == r.val_loss or (np.isnan(r.val_loss) and np.isnan(indexed.loc[key])), key
    log_path = os.path.join(work, "asha.jsonl")
    with open(log_path, "w") as f:
        for e in log:
            f.write(json.dumps(e) + "\n")
    out = subprocess.run([BINARY, "replay", study, log_path], capture_output=True, text=True, check=True)
    decisions = [json.loads(line) for line in out.stdout.splitlines()]
    replay_stops = {(d["trial"], d["step"]) for d in decisions if d["decision"] == "stop"}
    assert replay_stops == stops, f"replay stops {sorted(replay_stops - stops)[:5]}, simulate {sorted(stops - replay_stops)[:5]}"
    last_step = metrics.groupby("trial")["step"].max()
    for trial, step in stops:
        assert last_step[trial] == step, f"trial {trial} reported past its stop at {step}"
    early = sum(1 for _, step in stops if step < 27)
    assert early > 100, f"ASHA stopped only {early} of 200 trials early"
    print(f"asha on digits-mlp.csv: {len(metrics)} reports equal the table; replay stops the same "
          f"{len(stops)} trials at the same steps ({early} before max_t)")


def summary_without_wall_time(args):
    out = json.loads(simulate(*args))
    out.pop("wall_s", None)
    return out


def check_determinism(work):
    study = os.path.join(DATA, "digits-mlp.toml")
    args = [study, "-w", "4", "--repeat", "3", "--json"]
    got = summary_without_wall_time(args)
    got["objective"]["curves"] = os.path.basename(got["objective"]["curves"])
    golden_path = os.path.join(ROOT, "tests", "python", "module", "data", "digits-mlp-repeat.json")
    if os.environ.get("SLURMTUNE_UPDATE_GOLDEN"):
        with open(golden_path, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(golden_path) as f:
        golden = json.load(f)
    assert got == golden, f"summary differs from {golden_path}:\n{json.dumps(got, sort_keys=True)}"
    print("determinism: --repeat 3 summary on digits-mlp.csv equals the recorded one")


def check_anytime_plot(work):
    study = os.path.join(DATA, "digits-mlp.toml")
    csvs = []
    for scheduler in ["asha", "hyperband"]:
        path = os.path.join(work, f"{scheduler}.csv")
        toml = os.path.join(work, f"{scheduler}.toml")
        with open(study) as f:
            text = f.read().replace('type = "asha"', f'type = "{scheduler}"')
        with open(toml, "w") as f:
            f.write(text.replace('curves = "digits-mlp.csv"', f'curves = "{os.path.join(DATA, "digits-mlp.csv")}"'))
        simulate(toml, "-w", "4", "--repeat", "5", "--curve-out", path)
        frame = read_anytime(path)
        assert set(frame["series"]) == {"study", "baseline"}
        both = frame.dropna(subset=["best_q25", "best_median", "best_q75"])
        assert len(both) > 100 and (both["best_q25"] <= both["best_median"]).all() and \
            (both["best_median"] <= both["best_q75"]).all()
        # best so far never gets worse with time
        for _, rows in frame.groupby("series"):
            median = rows["best_median"].dropna().values
            assert (np.diff(median) <= 1e-12).all(), "the median best-so-far rises"
        csvs.append(path)
    png = plot_anytime(csvs, os.path.join(work, "anytime.png"), labels=["asha", "hyperband"])
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    print(f"any-time curves: 2 simulations x 2 series plotted to a PNG ({os.path.getsize(png)} bytes)")


def main():
    with tempfile.TemporaryDirectory() as work:
        check_fifo_roundtrip(work)
        check_asha_against_replay(work)
        check_determinism(work)
        check_anytime_plot(work)


if __name__ == "__main__":
    main()
