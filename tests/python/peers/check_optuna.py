#!/usr/bin/env python3
"""Checks `slurmtune replay` with `semantics = "optuna"` against the real Optuna.

Random studies drive Optuna's SuccessiveHalvingPruner or HyperbandPruner through
trial.report / trial.should_prune, with trials interleaved as parallel workers would
interleave them; every report is also written to an event log. slurmtune's decisions on
that log must equal Optuna's. Usage: check_optuna.py SLURMTUNE_BINARY sha|hyperband
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import optuna

optuna.logging.set_verbosity(optuna.logging.ERROR)


def scenario(rng, kind):
    sc = dict(rf=rng.choice([2, 3, 4]), bootstrap=rng.choice([0, 0, 0, 1, 2]),
              mode=rng.choice(["min", "max"]), trials=rng.randint(5, 50),
              length=rng.choice([9, 20, 40, 120, 300]), ties=rng.random() < 0.3)
    if kind == "sha":
        sc["min_resource"] = rng.choice([1, 2, 3, "auto"])
        sc["rate"] = rng.choice([0, 0, 1])
    else:
        sc["min_resource"] = rng.choice([1, 1, 2])
        sc["max_resource"] = rng.choice([27, 81, 100, "auto"])
    if "auto" in (sc["min_resource"], sc.get("max_resource")):
        sc["bootstrap"] = 0  # Optuna (and slurmtune) refuse bootstrap with "auto"
    return sc


def make_pruner(kind, sc):
    if kind == "sha":
        return optuna.pruners.SuccessiveHalvingPruner(
            min_resource=sc["min_resource"], reduction_factor=sc["rf"],
            min_early_stopping_rate=sc["rate"], bootstrap_count=sc["bootstrap"])
    return optuna.pruners.HyperbandPruner(
        min_resource=sc["min_resource"], max_resource=sc["max_resource"],
        reduction_factor=sc["rf"], bootstrap_count=sc["bootstrap"])


def toml_value(v):
    return f'"{v}"' if isinstance(v, str) else str(v)


def write_study(path, kind, sc, name):
    lines = ["[study]", f'name = "{name}"', 'metric = "m"', f'mode = "{sc["mode"]}"', "",
             "[search]", "x = { uniform = [0, 1] }", "", "[scheduler]",
             f'type = "{"asha" if kind == "sha" else "hyperband"}"', 'semantics = "optuna"',
             f"reduction_factor = {sc['rf']}", f"bootstrap_count = {sc['bootstrap']}",
             f"min_resource = {toml_value(sc['min_resource'])}", f"max_t = {sc['length']}"]
    if kind == "sha":
        lines.append(f"min_early_stopping_rate = {sc['rate']}")
    else:
        lines.append(f"max_resource = {toml_value(sc['max_resource'])}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_scenario(binary, kind, rng, workdir, number):
    sc = scenario(rng, kind)
    name = f"check-{kind}-{number}"
    study = optuna.create_study(study_name=name, pruner=make_pruner(kind, sc),
                                direction="minimize" if sc["mode"] == "min" else "maximize")
    events, expected, active = [], [], {}
    started = 0
    while started < sc["trials"] or active:
        if started < sc["trials"] and (not active or rng.random() < 0.3):
            trial = study.ask()
            active[trial.number] = [trial, 0, rng.randint(1, sc["length"])]
            events.append({"type": "start", "trial": trial.number})
            started += 1
            continue
        number_ = rng.choice(sorted(active))
        trial, step, length = active[number_]
        step += rng.choice([1, 1, 1, 3, 10])
        active[number_][1] = step
        value = float(rng.randrange(4)) if sc["ties"] else rng.uniform(0, 10)
        if rng.random() < 0.02:
            value = float("nan")
        trial.report(value, step)
        pruned = trial.should_prune()
        events.append({"type": "report", "trial": number_, "step": step, "value": value})
        expected.append((number_, step, "stop" if pruned else "continue"))
        if pruned:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            events.append({"type": "end", "trial": number_, "state": "stopped", "step": step, "value": value})
            del active[number_]
        elif step >= length:
            study.tell(trial, value)
            events.append({"type": "end", "trial": number_, "state": "completed", "step": step, "value": value})
            del active[number_]

    study_path = os.path.join(workdir, f"{name}.toml")
    log = os.path.join(workdir, f"{name}.jsonl")
    write_study(study_path, kind, sc, name)
    with open(log, "w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    out = subprocess.run([binary, "replay", study_path, log], check=True, capture_output=True, text=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(got) == len(expected), f"{name}: {len(got)} decisions, expected {len(expected)}"
    for g, (trial, step, decision) in zip(got, expected):
        assert (g["trial"], g["step"], g["decision"]) == (trial, step, decision), \
            f"{name} {sc}: trial {trial} step {step}: slurmtune {g}, optuna {decision}"
    return len(expected)


def main():
    binary, kind = sys.argv[1], sys.argv[2]
    rng = random.Random(7 if kind == "sha" else 8)
    total = 0
    with tempfile.TemporaryDirectory() as workdir:
        for number in range(120):
            total += run_scenario(binary, kind, rng, workdir, number)
    print(f"optuna {kind}: 120 studies, {total} decisions identical to Optuna {optuna.__version__}")


if __name__ == "__main__":
    main()
