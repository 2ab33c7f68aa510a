#!/usr/bin/env python3
"""Checks slurmtune's `sampler = "tpe"` on whole study files against the real Optuna 3.1.

Random study files (every [search] domain TPE maps to an Optuna distribution, Optuna's
stepped floats `{ uniform = [low, high], step = q }` among them; random [sampler]
options; configurations to try first, whole or partial, as `[[enqueue]]` and Optuna's
enqueue_trial; conditional spaces with `when`, Optuna's define-by-run `if`; a
`[sampler] warm_start` from an earlier study simulated by slurmtune, which Optuna gets by
add_trial) are run through Optuna's TPESampler define-by-run, one suggest_* call per
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
D = optuna.distributions
warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)


def toml_number(x):
    return repr(float(x)) if isinstance(x, float) else str(x)


def random_parameter(rng):
    """One [search] entry: its TOML text and the Optuna call that suggests it."""
    kind = rng.choice(["uniform", "step", "step", "loguniform", "randint", "lograndint",
                       "qrandint", "choice", "constant", "single"])
    if kind == "single":  # one value: Optuna takes it without asking its sampler
        return rng.choice([("{ randint = [4, 5] }", ("int", 4, 4, {})),
                           ('{ choice = ["only"] }', ("categorical", ["only"])),
                           ("{ qrandint = [0, 3, 4] }", ("int", 0, 0, {"step": 4}))])
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


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else json.dumps(v)


def enqueued_value(rng, how):
    """A value a user might enqueue for a parameter Optuna suggests by `how`."""
    if how[0] == "categorical":
        return rng.choice(how[1])
    low, high, extra = how[1], how[2], how[3]
    step = extra.get("step")
    if how[0] == "int":
        return low + rng.randint(0, (high - low) // (step or 1)) * (step or 1)
    if step:  # a value on the step grid as a user writes it
        return round(low + rng.randint(0, round((high - low) / step)) * step, 10)
    if extra.get("log"):
        return float(f"{low * (high / low) ** rng.random():.4g}")
    return round(rng.uniform(low, high), 4)


def random_enqueued(rng, params, conditions):
    sampled = [name for name, (_, how) in params.items() if how is not None and name not in conditions]
    entries = []
    for _ in range(rng.choice([0, 0, 1, 2, 3]) if sampled else 0):
        names = rng.sample(sampled, rng.randint(1, len(sampled)))
        entries.append({n: enqueued_value(rng, params[n][1]) for n in sampled if n in names})
    return entries


def suggest(trial, name, how):
    if how[0] == "float":
        return trial.suggest_float(name, how[1], how[2], **how[3])
    if how[0] == "int":
        return trial.suggest_int(name, how[1], how[2], **how[3])
    return trial.suggest_categorical(name, how[1])


def add_conditions(rng, params):
    """Makes some parameters conditional (`when`) on an earlier choice, chains included:
    the define-by-run `if optimizer == "sgd": momentum = trial.suggest_float(...)`."""
    conditions = {}
    names = list(params)
    for i, name in enumerate(names):
        choices = [n for n in names[:i] if params[n][1] and params[n][1][0] == "categorical"]
        if not choices or rng.random() < 0.4:
            continue
        parent = rng.choice(choices)
        values = rng.sample(params[parent][1][1], rng.randint(1, len(params[parent][1][1]) - 1 or 1))
        conditions[name] = (parent, values)
        text, how = params[name]
        when = toml_value(values[0]) if len(values) == 1 else "[" + ", ".join(toml_value(v) for v in values) + "]"
        clause = f"when = {{ {parent} = {when} }}"
        params[name] = ((text[:-1] + ", " + clause + " }") if text.startswith("{") else
                        f"{{ constant = {text}, {clause} }}", how)
    return conditions


def active(name, config, conditions):
    if name not in conditions:
        return True
    parent, values = conditions[name]
    return parent in config and any(config[parent] == v and type(config[parent]) is type(v)
                                    for v in values)


def ask(study, params, conditions):
    """study.ask() and the define-by-run suggestions of every active parameter, in the
    file's order (a constant is 7, suggested by no one); (trial, configuration)."""
    trial = study.ask()
    config = {}
    for name, (_, how) in params.items():
        if active(name, config, conditions):
            config[name] = 7 if how is None else suggest(trial, name, how)
    return trial, config


def distribution(how):
    if how[0] == "float":
        return D.FloatDistribution(how[1], how[2], **how[3])
    if how[0] == "int":
        return D.IntDistribution(how[1], how[2], **how[3])
    return D.CategoricalDistribution(how[1])


def warm_start(rng, binary, scratch, params, maximize, study):
    """An earlier study of the same objective (slurmtune simulate, random sampler, ASHA,
    maybe one parameter fewer) added to Optuna's study as finished trials (add_trial), as
    `[sampler] warm_start` gives it to slurmtune's sampler; returns that key's line."""
    parents = {t.split("when = { ")[1].split(" ")[0] for t, _ in params.values() if "when = {" in t}
    droppable = [n for n, (t, how) in params.items()
                 if how is not None and n not in parents and "when" not in t]
    sampled = [n for n, (_, how) in params.items() if how is not None]
    dropped = rng.choice(droppable) if droppable and len(sampled) > 1 and rng.random() < 0.5 else None
    if not sampled:
        return None  # nothing to learn: slurmtune refuses such a warm start
    past_toml = "\n".join(
        ["[study]", 'name = "past"', 'metric = "loss"', f'mode = "{"max" if maximize else "min"}"',
         f"seed = {rng.randrange(2**32)}", f"max_trials = {rng.randint(3, 30)}", "",
         "[search]"] + [f"{n} = {t}" for n, (t, _) in params.items() if n != dropped] +
        ["", "[scheduler]", 'type = "asha"', "max_t = 9", "grace_period = 1"]) + "\n"
    name = os.path.join(scratch, "past-%d" % len(os.listdir(scratch)))
    with open(name + ".toml", "w") as f:
        f.write(past_toml)
    past = name + ".h5"
    out = subprocess.run([binary, "simulate", name + ".toml", "-o", past, "-q"],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"simulate failed: {out.stderr}\n{past_toml}"
    log = subprocess.run([binary, "export", past, "--table", "replay"], check=True,
                         capture_output=True, text=True).stdout
    trials = {}
    for line in log.splitlines():
        e = json.loads(line)
        if e.get("type") == "start":
            trials[e["trial"]] = {"config": e["config"], "reports": {}, "end": None}
        elif e.get("type") == "report":
            trials[e["trial"]]["reports"][e["step"]] = e["value"]
        elif e.get("type") == "end":
            trials[e["trial"]]["end"] = e["state"]
    states = {"completed": optuna.trial.TrialState.COMPLETE,
              "stopped": optuna.trial.TrialState.PRUNED, "failed": optuna.trial.TrialState.FAIL}
    for number in sorted(trials):
        t = trials[number]
        config = {n: v for n, v in t["config"].items() if params[n][1] is not None}
        last = t["reports"][max(t["reports"])] if t["reports"] else None
        state = states[t["end"]]
        if state == optuna.trial.TrialState.COMPLETE and last is None:
            state = optuna.trial.TrialState.FAIL  # slurmtune: no last report, no value
        study.add_trial(optuna.trial.create_trial(
            state=state, value=last if state == optuna.trial.TrialState.COMPLETE else None,
            params=config, distributions={n: distribution(params[n][1]) for n in config},
            intermediate_values=t["reports"]))
    return f'warm_start = ["{past}"]'


def scenario(rng, binary=None, scratch=None):
    params = {f"p{i}": random_parameter(rng) for i in range(rng.randint(1, 4))}
    if rng.random() < 0.5:  # a conditional space: a choice first, then what depends on it
        params = {"c0": ('{ choice = ["sgd", "adam", "rms"] }', ("categorical", ["sgd", "adam", "rms"])),
                  **params,
                  "c1": ('{ choice = [true, false] }', ("categorical", [True, False])),
                  "z": random_parameter(rng)}
    conditions = add_conditions(rng, params) if "c0" in params else {}
    conditional = bool(conditions)
    options = dict(n_startup_trials=rng.choice([0, 1, 3, 10]),
                   n_ei_candidates=rng.choice([1, 5, 24]),
                   prior_weight=rng.choice([1.0, 0.5, 2.0]),
                   consider_endpoints=rng.random() < 0.3,
                   multivariate=rng.random() < 0.4,
                   constant_liar=rng.random() < 0.4)
    if conditional and options["multivariate"]:
        # Optuna 3.1 fails there (a running trial lacking a relative parameter becomes a
        # NaN index); slurmtune refuses the combination.
        options["constant_liar"] = False
        options["group"] = rng.random() < 0.6  # Optuna's group decomposition
    seed = rng.randrange(2**32)
    maximize = rng.random() < 0.5
    enqueued = random_enqueued(rng, params, conditions)
    study_toml = "\n".join(
        ["[study]", 'name = "conformance"', 'metric = "loss"',
         f'mode = "{"max" if maximize else "min"}"', f"seed = {seed}", 'sampler = "tpe"',
         "", "[sampler]"] +
        [f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()
         if k != "group" or v] +
        ["", "[search]"] + [f"{name} = {text}" for name, (text, _) in params.items()] +
        [line for entry in enqueued for line in
         ["", "[[enqueue]]"] + [f"{n} = {toml_value(v)}" for n, v in entry.items()]]) + "\n"
    sampler = optuna.samplers.TPESampler(seed=seed, **options)  # group: Optuna's same option
    study = optuna.create_study(direction="maximize" if maximize else "minimize",
                                sampler=sampler)
    if binary and rng.random() < 0.3:  # learns from an earlier study first
        line = warm_start(rng, binary, scratch, params, maximize, study)
        if line:
            study_toml = study_toml.replace("[sampler]\n", "[sampler]\n" + line + "\n")
    offset = len(study.trials)  # Optuna numbers the added trials first; slurmtune's start at 0
    for entry in enqueued:
        study.enqueue_trial(entry)
    events = []
    workers, total = rng.randint(1, 4), rng.randint(max(5, len(enqueued)), 40)
    running, asked = {}, 0
    while asked < total or running:
        if asked < total and (len(running) < workers or not running):
            trial, config = ask(study, params, conditions)
            events.append({"type": "start", "trial": trial.number - offset, "config": config})
            running[trial.number] = (trial, 0)
            asked += 1
            continue
        number = rng.choice(list(running))
        trial, step = running[number]
        r = rng.random()
        value = sum(len(str(v)) % 7 for v in trial.params.values()) / 7 + rng.gauss(0, 0.3)
        if r < 0.5 and step < 9:
            step += rng.randint(1, 3)
            trial.report(value, step)
            events.append({"type": "report", "trial": number - offset, "step": step, "value": value})
            running[number] = (trial, step)
        elif r < 0.8:
            # slurmtune's objective value is the last report: report it, then tell it.
            trial.report(value, step + 1)
            events.append({"type": "report", "trial": number - offset, "step": step + 1,
                           "value": value})
            study.tell(trial, value)
            events.append({"type": "end", "trial": number - offset, "state": "completed"})
            del running[number]
        elif r < 0.93:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            events.append({"type": "end", "trial": number - offset, "state": "stopped"})
            del running[number]
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            events.append({"type": "end", "trial": number - offset, "state": "failed"})
            del running[number]
    return study_toml, events, asked


def check_replay(binary, scratch, number, study_toml, events, asked):
    """`slurmtune replay` of scenario `number`'s log must suggest each of its `asked`
    trials as Optuna did; exits naming the first that differs (KEEP=PREFIX keeps the
    study file and log as PREFIX.toml and PREFIX.jsonl)."""
    study_path = os.path.join(scratch, "study.toml")
    with open(study_path, "w") as f:
        f.write(study_toml)
    log = "\n".join(json.dumps(e) for e in events) + "\n"
    out = subprocess.run([binary, "replay", study_path, "-"], input=log, capture_output=True,
                         text=True)
    assert out.returncode == 0, f"scenario {number}: replay failed: {out.stderr}\n{study_toml}"
    lines = [json.loads(line) for line in out.stdout.splitlines() if '"matches"' in line]
    assert len(lines) == asked, f"scenario {number}: {len(lines)} suggestions, {asked} trials"
    wrong = [line for line in lines if not line["matches"]]
    if not wrong:
        return
    if os.environ.get("KEEP"):
        for suffix, text in ((".toml", study_toml), (".jsonl", log)):
            with open(os.environ["KEEP"] + suffix, "w") as f:
                f.write(text)
    ran = {e["trial"]: e["config"] for e in events if e["type"] == "start"}
    sys.exit(f"scenario {number}: trial {wrong[0]['trial']}: slurmtune suggested "
             f"{wrong[0]['suggested']}, Optuna {ran[wrong[0]['trial']]}\n{study_toml}")


def main():
    binary = sys.argv[1]
    rng = random.Random(20261126)
    trials = enqueued = conditional = grouped = warm = 0
    with tempfile.TemporaryDirectory(prefix="slurmtune-optuna-study-") as scratch:
        for number in range(120):
            study_toml, events, asked = scenario(rng, binary, scratch)
            enqueued += "[[enqueue]]" in study_toml
            conditional += "when =" in study_toml
            grouped += "group = true" in study_toml
            warm += "warm_start" in study_toml
            check_replay(binary, scratch, number, study_toml, events, asked)
            trials += asked
    print(f"tpe on study files: 120 scenarios ({enqueued} with [[enqueue]], {conditional} "
          f"conditional, {grouped} of them with group, {warm} warm-started), {trials} trials "
          f"suggested as Optuna {optuna.__version__} suggests them")


if __name__ == "__main__":
    main()
