#!/usr/bin/env python3
"""Checks slurmtune's `sampler = "tpe"` on whole study files against the real Optuna 3.1.

Random study files (every [search] domain TPE maps to an Optuna distribution, Optuna's
stepped floats `{ uniform = [low, high], step = q }` among them; random [sampler]
options) are run through Optuna's TPESampler define-by-run, one suggest_* call per
parameter in the file's order, with parallel workers, reports, completed, pruned and
failed trials. Every trial's start, reports and end go to an event log with the
configuration Optuna suggested; `slurmtune replay STUDY EVENTS` asks slurmtune's sampler
for each trial given the same history and must print "matches":true for every one.
Usage: check_optuna_study.py SLURMTUNE_BINARY
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings

import optuna

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)


def toml_number(x):
    return repr(float(x)) if isinstance(x, float) else str(x)


def random_parameter(rng):
    """One [search] entry: its TOML text and the Optuna call that suggests it."""
    kind = rng.choice(["uniform", "step", "step", "loguniform", "randint", "lograndint",
                       "qrandint", "choice", "constant"])
    if kind == "uniform":
        low = round(rng.uniform(-5, 5), 3)
        high = round(low + rng.uniform(0.1, 10), 3)
        return f"{{ uniform = [{low!r}, {high!r}] }}", ("float", low, high, {})
    if kind == "step":
        step = rng.choice([0.1, 0.2, 0.25, 0.5, 2.0, 0.05])
        k = rng.randint(-4, 4)
        low = round(k * step, 10)
        high = round(low + step * rng.randint(1, 40), 10)
        return (f"{{ uniform = [{low!r}, {high!r}], step = {step!r} }}",
                ("float", low, high, {"step": step}))
    if kind == "loguniform":
        low = float(f"{10 ** rng.uniform(-6, 0):.3g}")
        high = float(f"{low * 10 ** rng.uniform(0.5, 5):.3g}")
        return f"{{ loguniform = [{low!r}, {high!r}] }}", ("float", low, high, {"log": True})
    if kind == "randint":
        low = rng.randint(-10, 10)
        high = low + rng.randint(2, 300)
        return f"{{ randint = [{low}, {high}] }}", ("int", low, high - 1, {})
    if kind == "lograndint":
        low = rng.randint(1, 16)
        high = low * rng.randint(2, 200)
        return f"{{ lograndint = [{low}, {high}] }}", ("int", low, high - 1, {"log": True})
    if kind == "qrandint":
        q = rng.choice([2, 4, 8])
        low = rng.randint(0, 8)
        high = low + q * rng.randint(1, 30) + rng.randint(0, q - 1)
        top = low + (high - low) // q * q
        return f"{{ qrandint = [{low}, {high}, {q}] }}", ("int", low, top, {"step": q})
    if kind == "choice":
        # No 1 beside true (or 0 beside false): Python's 1 == True makes them one choice.
        values = rng.sample(["adam", "sgd", "rmsprop", 2, 3, 3.5, True], rng.randint(2, 4))
        text = ", ".join(json.dumps(v) for v in values)
        return f"{{ choice = [{text}] }}", ("categorical", values)
    return "7", None  # a constant: no suggestion


def suggest(trial, name, how):
    if how[0] == "float":
        return trial.suggest_float(name, how[1], how[2], **how[3])
    if how[0] == "int":
        return trial.suggest_int(name, how[1], how[2], **how[3])
    return trial.suggest_categorical(name, how[1])


def scenario(rng):
    params = {f"p{i}": random_parameter(rng) for i in range(rng.randint(1, 4))}
    options = dict(n_startup_trials=rng.choice([0, 1, 3, 10]),
                   n_ei_candidates=rng.choice([1, 5, 24]),
                   prior_weight=rng.choice([1.0, 0.5, 2.0]),
                   consider_endpoints=rng.random() < 0.3,
                   multivariate=rng.random() < 0.4,
                   constant_liar=rng.random() < 0.4)
    seed = rng.randrange(2**32)
    maximize = rng.random() < 0.5
    study_toml = "\n".join(
        ["[study]", 'name = "conformance"', 'metric = "loss"',
         f'mode = "{"max" if maximize else "min"}"', f"seed = {seed}", 'sampler = "tpe"',
         "", "[sampler]"] +
        [f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()] +
        ["", "[search]"] + [f"{name} = {text}" for name, (text, _) in params.items()]) + "\n"
    sampler = optuna.samplers.TPESampler(seed=seed, **options)
    study = optuna.create_study(direction="maximize" if maximize else "minimize",
                                sampler=sampler)
    events = []
    workers, total = rng.randint(1, 4), rng.randint(5, 40)
    running, asked = {}, 0
    while asked < total or running:
        if asked < total and (len(running) < workers or not running):
            trial = study.ask()
            config = {}
            for name, (_, how) in params.items():
                config[name] = 7 if how is None else suggest(trial, name, how)
            events.append({"type": "start", "trial": trial.number, "config": config})
            running[trial.number] = (trial, 0)
            asked += 1
            continue
        number = rng.choice(list(running))
        trial, step = running[number]
        r = rng.random()
        value = sum(hash(str(v)) % 97 for v in trial.params.values()) / 97 + rng.gauss(0, 0.1)
        if r < 0.5 and step < 9:
            step += rng.randint(1, 3)
            trial.report(value, step)
            events.append({"type": "report", "trial": number, "step": step, "value": value})
            running[number] = (trial, step)
        elif r < 0.8:
            # slurmtune's objective value is the last report: report it, then tell it.
            trial.report(value, step + 1)
            events.append({"type": "report", "trial": number, "step": step + 1, "value": value})
            study.tell(trial, value)
            events.append({"type": "end", "trial": number, "state": "completed"})
            del running[number]
        elif r < 0.93:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            events.append({"type": "end", "trial": number, "state": "stopped"})
            del running[number]
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            events.append({"type": "end", "trial": number, "state": "failed"})
            del running[number]
    return study_toml, events, asked


def main():
    binary = sys.argv[1]
    rng = random.Random(20261126)
    trials = 0
    with tempfile.TemporaryDirectory(prefix="slurmtune-optuna-study-") as scratch:
        for number in range(120):
            study_toml, events, asked = scenario(rng)
            study_path = os.path.join(scratch, "study.toml")
            with open(study_path, "w") as f:
                f.write(study_toml)
            log = "\n".join(json.dumps(e) for e in events) + "\n"
            out = subprocess.run([binary, "replay", study_path, "-"], input=log,
                                 capture_output=True, text=True)
            assert out.returncode == 0, f"scenario {number}: replay failed: {out.stderr}\n{study_toml}"
            lines = [json.loads(line) for line in out.stdout.splitlines() if '"matches"' in line]
            assert len(lines) == asked, f"scenario {number}: {len(lines)} suggestions, {asked} trials"
            wrong = [line for line in lines if not line["matches"]]
            if wrong:
                ran = {e["trial"]: e["config"] for e in events if e["type"] == "start"}
                sys.exit(f"scenario {number}: trial {wrong[0]['trial']}: slurmtune suggested "
                         f"{wrong[0]['suggested']}, Optuna {ran[wrong[0]['trial']]}\n{study_toml}")
            trials += asked
    print(f"tpe on study files: 120 scenarios, {trials} trials suggested as Optuna "
          f"{optuna.__version__} suggests them")


if __name__ == "__main__":
    main()
