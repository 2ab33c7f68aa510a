#!/usr/bin/env python3
"""The scenarios of tests/run/check_run.py for studies of several objectives:
two-objectives runs the worked example share/slurmtune/examples/numpy-mlp/two-objectives.toml
(the real numpy MLP: val_loss against n_params under NSGA-II and MO-ASHA, with a
constraint on val_accuracy) and checks that `best` in every format, `status`, `export`
and the Python module name the same Pareto front and the same infeasible trials, and
that replay of the results file's log suggests every configuration again and takes
every MO-ASHA decision again, each explained by the trial's place in its rung; nsga2-resume and motpe-resume
interrupt an NSGA-II study, or a multi-objective TPE study under MO-ASHA, with a
constraint (SIGUSR1; scancel --signal=USR1 under Slurm) and check that the resumed study
suggests and decides what an uninterrupted run does."""
import json
import os
import subprocess
import sys

from run_harness import ROOT, Study, expect
from run_samplers import (TRIALS, decisions, replayed_decisions, run_example, same_decisions,
                          straight_and_resumed, trials_of)

ARGV_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "argv_trial.py")


def run(runner, *args):
    return subprocess.run([runner.slurmtune, *args], capture_output=True, text=True,
                          check=True).stdout


def scenario_two_objectives(runner, args):
    study, path = run_example(runner, "two-objectives.toml", 30)
    python = Study(path)
    front = list(python.pareto_front().index)
    expect(front, "no trial on the Pareto front")
    from_json = [json.loads(line) for line in run(runner, "best", path, "-f", "json").splitlines()]
    expect([t["trial"] for t in from_json] == front,
           "best -f json: %s, Study.pareto_front(): %s" % ([t["trial"] for t in from_json], front))
    for t in from_json:
        for name in ("val_loss", "n_params"):
            expect(t["values"][name] == python.standings.loc[t["trial"], "objective/" + name],
                   "trial %d: best says %s = %s" % (t["trial"], name, t["values"][name]))
    toml = run(runner, "best", path)
    expect(toml.count("[[trial]]") == len(front), "best (toml) lists %d trials" % toml.count("[[trial]]"))
    flags = run(runner, "best", path, "-f", "flags").splitlines()
    expect(len(flags) == len(front) and all("--hidden=" in f for f in flags), "best -f flags:\n" + "\n".join(flags))
    status = run(runner, "status", path, "--all")
    expect("Pareto front: %d trial(s)" % len(front) in status, "status:\n" + status)
    shown = [int(line.split()[1].rstrip(":")) for line in status.splitlines()
             if line.startswith("  trial ") and "val_loss =" in line]
    expect(shown == front, "status shows the front %s, expected %s" % (shown, front))
    exported = subprocess.run([runner.slurmtune, "export", path, "-f", "json"], capture_output=True,
                              text=True, check=True).stdout
    rows = [json.loads(line) for line in exported.splitlines()]
    expect([r["id"] for r in rows if r["pareto"] == 1] == front, "export's pareto column differs")
    feasible = python.standings["feasible"]
    expect([bool(r["feasible"]) for r in rows] == list(feasible), "export's feasible column differs")
    expect(list(python.trials["feasible"]) == list(feasible),
           "the results file's feasible marks differ from the reports")
    infeasible = [r["id"] for r in rows if not r["feasible"]]
    expect(not set(infeasible) & set(front), "an infeasible trial on the front: %s" % infeasible)
    for trial in infeasible:
        expect(any(line.split()[:1] == [str(trial)] and "infeasible" in line
                   for line in status.splitlines()), "status does not mark trial %d infeasible" % trial)
    suggestions, replayed = replayed_decisions(runner, study, path)
    expect(suggestions == 30, "replay made %d suggestions for 30 trials" % suggestions)
    live = decisions(path)
    same_decisions(live, replayed, "MO-ASHA: replay against the run")
    stops = [k for k, v in live.items() if v[0] == "stop"]
    expect(stops, "MO-ASHA stopped no trial")
    explained = subprocess.run([runner.slurmtune, "replay", study, "-"], capture_output=True, text=True,
                               check=True, input=subprocess.run(
                                   [runner.slurmtune, "export", path, "--table", "replay"],
                                   capture_output=True, text=True, check=True).stdout).stdout
    for line in explained.splitlines():
        d = json.loads(line)
        if "rung" in d:
            expect((d["decision"] == "stop") == (d["position"] >= d["kept"]) and d["kept"] <= d["of"],
                   "a decision its standing does not explain: " + line)
    origins = dict(trials_of(path).origin.value_counts())
    # A trial started after population_size trials completed is bred; how many trials
    # MO-ASHA lets complete, and when, depends on the real trials' timing.
    events = python.events
    completions = events[events.kind == "completed"].seq.sort_values().tolist()
    starts_after = (events[events.kind == "start"].seq > completions[3]).sum() if len(completions) > 3 else 0
    expect(origins.get("model", 0) == starts_after,
           "%d configurations bred, %d trials started after generation 0 filled" % (origins.get("model", 0),
                                                                                    starts_after))
    print("two-objectives: 30 real trials (%s), %d MO-ASHA decisions (%d stops) replayed identically; "
          "Pareto front %s and %d infeasible trial(s) alike in best (toml, json, flags), status, export "
          "and the Python module" % ({k: v for k, v in origins.items() if v}, len(live), len(stops), front,
                                     len(infeasible)))


SAMPLER_OPTIONS = {"nsga2": "population_size = 3", "tpe": "n_startup_trials = 3\nmultivariate = true"}
# MOTPE's study also stops trials early: MO-ASHA's rungs at steps 1 and 2 (and 4).
SCHEDULER = {"nsga2": 'type = "fifo"\nmax_t = 4',
             "tpe": 'type = "asha"\ngrace_period = 1\nreduction_factor = 2\nmax_t = 4'}


def scenario_nsga2_resume(runner, args):
    objectives_resume(runner, "nsga2")


def scenario_motpe_resume(runner, args):
    objectives_resume(runner, "tpe")


def objectives_resume(runner, sampler):
    command = [sys.executable, ARGV_TRIAL, "--x={x}", "--record=" + os.devnull, "--steps=4",
               "--sleep=0.25", "--cost"]
    quoted = ", ".join('"%s"' % part for part in command)
    text = f"""[study]
name = "{sampler}-objectives-resume"
metric = ["loss", "cost"]
mode = ["min", "min"]
metrics = ["mem"]
constraints = ["mem <= 2.0"]
seed = 5
max_trials = {TRIALS}
sampler = "{sampler}"

[sampler]
{SAMPLER_OPTIONS[sampler]}

[search]
x = {{ uniform = [-1.0, 1.0] }}
opt = {{ choice = ["a", "b", "c"] }}

[scheduler]
{SCHEDULER[sampler]}

[trial]
command = [{quoted}]
"""
    study = runner.write("study.toml", text)
    straight, path, _ = straight_and_resumed(runner, study)
    a, b = trials_of(straight), trials_of(path)
    columns = ["config/x", "config/opt"]
    expect(a[columns].values.tolist() == b[columns].values.tolist(),
           "the resumed study suggested otherwise:\n%s\n%s" % (a[columns], b[columns]))
    expect(list(a.origin) == list(b.origin), "origins differ: %s / %s" % (list(a.origin), list(b.origin)))
    same_decisions(decisions(straight), decisions(path), "resumed against uninterrupted")
    bred = int((b.origin == "model").sum())
    expect(bred > 0, "no configuration came from the model")
    suggestions, _ = replayed_decisions(runner, study, path)
    expect(suggestions == TRIALS, "replay made %d suggestions for %d trials" % (suggestions, TRIALS))
    resumed = Study(path)
    expect(list(resumed.trials["feasible"]) == list(resumed.standings["feasible"]),
           "the resumed results file's feasible marks differ from its reports")
    front = list(resumed.pareto_front().index)
    expect(front == list(Study(straight).pareto_front().index), "the fronts differ")
    print("%s-resume: %d configurations (%d from the model) identical to an uninterrupted run; "
          "replay matches all; front %s" % ("nsga2" if sampler == "nsga2" else "motpe", TRIALS, bred, front))
