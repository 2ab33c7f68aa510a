#!/usr/bin/env python3
"""Checks slurmtune's samplers for several objectives and constraints on whole study
files against the real Optuna 3.1: `sampler = "nsga2"` against NSGAIISampler, and
`sampler = "tpe"` against TPESampler with several objectives (MOTPE) or with
constraints on one.

Random study files with one (tpe with constraints), two or three objectives in mixed
directions (`[study] metric = [...]`, `mode = [...]`), random [sampler] options (nsga2:
population size, mutation, crossover and swapping probabilities; tpe: startup trials,
candidates, prior weight, endpoints, multivariate, group, constant liar), sometimes
constraints on reported metrics (`constraints = ["mem <= 4.5"]`, Optuna's
constraints_func), conditional spaces and `[[enqueue]]`, are run through Optuna's
sampler define-by-run with parallel workers and completed, pruned and failed trials.
Reports may carry a subset of the metrics; a trial's values are the last reported of
each, which is what Optuna is told. `slurmtune replay STUDY EVENTS` must suggest every
trial's configuration exactly as Optuna did.
Usage: check_optuna_objectives.py SLURMTUNE_BINARY
"""
import random
import sys
import tempfile
import warnings

import optuna

from check_optuna_study import (add_conditions, ask, check_replay, random_enqueued, random_parameter,
                                toml_value)

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
warnings.simplefilter("ignore", UserWarning)

OBJECTIVES = ["loss", "cost", "size"]


def objective_value(rng, params, k):
    """A value that depends on the configuration, ties included (rounded values)."""
    base = sum(len(str(v)) % (5 + k) for v in params.values()) / 7 + rng.gauss(0, 0.5)
    return round(base, 1) if rng.random() < 0.3 else base


def mem_value(rng):
    """A constrained metric; whole numbers half the time, so that infeasible trials tie
    on their violation (Optuna then keeps the second of two candidates)."""
    return float(rng.randint(0, 4)) if rng.random() < 0.5 else round(rng.uniform(0, 4), 2)


def sampler_options(rng, sampler, n_objectives, conditional):
    if sampler == "nsga2":
        options = {"population_size": rng.choice([2, 3, 4, 6, 10])}
        if rng.random() < 0.4:
            options["mutation_prob"] = rng.choice([0.0, 0.1, 0.5, 1.0])
        if rng.random() < 0.4:
            options["crossover_prob"] = rng.choice([0.0, 0.5, 1.0])
        if rng.random() < 0.3:
            options["swapping_prob"] = rng.choice([0.0, 0.2, 0.8])
        return options
    options = dict(n_startup_trials=rng.choice([0, 1, 3, 10]), n_ei_candidates=rng.choice([1, 5, 24]),
                   prior_weight=rng.choice([1.0, 0.5, 2.0]), consider_endpoints=rng.random() < 0.3,
                   multivariate=rng.random() < 0.4, constant_liar=rng.random() < 0.4)
    if conditional and options["multivariate"]:
        options["constant_liar"] = False  # refused (Optuna 3.1 fails there)
        options["group"] = rng.random() < 0.6
    return options


def toml_option(value):
    return str(value).lower() if isinstance(value, bool) else repr(value)


def scenario(rng, sampler):
    params = {f"p{i}": random_parameter(rng) for i in range(rng.randint(1, 4))}
    if rng.random() < 0.3:
        params = {"c0": ('{ choice = ["sgd", "adam", "rms"] }', ("categorical", ["sgd", "adam", "rms"])),
                  **params, "z": random_parameter(rng)}
    conditions = add_conditions(rng, params) if "c0" in params else {}
    n_objectives = rng.choice([1, 2, 2, 3] if sampler == "tpe" else [2, 2, 3])
    names = OBJECTIVES[:n_objectives]
    modes = [rng.choice(["min", "max"]) for _ in names]
    options = sampler_options(rng, sampler, n_objectives, bool(conditions))
    constraints = []
    if n_objectives == 1 or rng.random() < 0.4:  # on an extra metric, maybe on an objective
        constraints.append(("mem", rng.choice(["<=", ">="]), round(rng.uniform(1, 3), 2)))
        if rng.random() < 0.5:
            constraints.append((names[0], "<=", round(rng.uniform(0, 2), 2)))
    seed = rng.randrange(2**32)
    enqueued = random_enqueued(rng, params, conditions)
    metric_line = ("metric = [" + ", ".join(f'"{n}"' for n in names) + "]" if n_objectives > 1
                   else f'metric = "{names[0]}"')
    mode_line = ("mode = [" + ", ".join(f'"{m}"' for m in modes) + "]" if n_objectives > 1
                 else f'mode = "{modes[0]}"')
    study_toml = "\n".join(
        ["[study]", 'name = "nsga2-conformance"', metric_line, mode_line, 'metrics = ["mem"]',
         f"seed = {seed}", f'sampler = "{sampler}"'] +
        (["constraints = [" + ", ".join(f'"{m} {op} {lim!r}"' for m, op, lim in constraints) + "]"]
         if constraints else []) +
        ["", "[sampler]"] + [f"{k} = {toml_option(v)}" for k, v in options.items()] +
        ["", "[search]"] + [f"{name} = {text}" for name, (text, _) in params.items()] +
        [line for entry in enqueued for line in
         ["", "[[enqueue]]"] + [f"{n} = {toml_value(v)}" for n, v in entry.items()]]) + "\n"

    def constraint_values(last):
        return [last[m] - lim if op == "<=" else lim - last[m] for m, op, lim in constraints]

    kind = optuna.samplers.NSGAIISampler if sampler == "nsga2" else optuna.samplers.TPESampler
    study = optuna.create_study(
        directions=["maximize" if m == "max" else "minimize" for m in modes],
        sampler=kind(seed=seed, **options,
                     constraints_func=(lambda t: t.user_attrs["constraints"]) if constraints else None))
    for entry in enqueued:
        study.enqueue_trial(entry)
    events = []
    workers, total = rng.randint(1, 4), rng.randint(max(5, len(enqueued)), 70)
    running, asked = {}, 0
    while asked < total or running:
        if asked < total and (len(running) < workers or not running):
            trial, config = ask(study, params, conditions)
            events.append({"type": "start", "trial": trial.number, "config": config})
            running[trial.number] = (trial, 0, {})
            asked += 1
            continue
        number = rng.choice(list(running))
        trial, step, last = running[number]
        r = rng.random()
        # A report of some of the metrics (the first objective is its "value"; one
        # objective is in every report, as Optuna's intermediate values are).
        shown = [n for n in names + ["mem"]
                 if rng.random() < 0.6 or (n_objectives == 1 and n == names[0])]
        finishing = r >= 0.5 or step >= 9
        if finishing and r < 0.93:  # completes or is pruned: every value not reported yet
            shown += [n for n in names + ["mem"] if n not in last and n not in shown]
        values = {n: (objective_value(rng, trial.params, names.index(n)) if n in names
                      else mem_value(rng)) for n in shown}
        if values:
            step += 1
            report = {"type": "report", "trial": number, "step": step,
                      "value": values.get(names[0], float("nan"))}
            others = {n: v for n, v in values.items() if n != names[0]}
            if others:
                report["metrics"] = others
            events.append(report)
            last.update(values)
            if n_objectives == 1:
                trial.report(values[names[0]], step)
        if not finishing:
            running[number] = (trial, step, last)
            continue
        if r < 0.85:
            if constraints:
                trial.set_user_attr("constraints", constraint_values(last))
            study.tell(trial, [last[n] for n in names])
            events.append({"type": "end", "trial": number, "state": "completed"})
        elif r < 0.93:
            if constraints:  # Optuna evaluates constraints of pruned trials too
                trial.set_user_attr("constraints", constraint_values(last))
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            events.append({"type": "end", "trial": number, "state": "stopped"})
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            events.append({"type": "end", "trial": number, "state": "failed"})
        del running[number]
    return study_toml, events, asked


def main():
    binary = sys.argv[1]
    rng = random.Random(20261126)
    trials, counts = 0, {}
    per_sampler = {"nsga2": 150, "tpe": 150}
    plan = [s for s, n in per_sampler.items() for _ in range(n)]
    with tempfile.TemporaryDirectory(prefix="slurmtune-optuna-objectives-") as scratch:
        for number, sampler in enumerate(plan):
            study_toml, events, asked = scenario(rng, sampler)
            for what, present in (("three objectives", '"size"' in study_toml),
                                  ("one objective", "metric = \"" in study_toml),
                                  ("constrained", "constraints =" in study_toml),
                                  ("conditional", "when =" in study_toml),
                                  ("with [[enqueue]]", "[[enqueue]]" in study_toml)):
                counts[(sampler, what)] = counts.get((sampler, what), 0) + present
            check_replay(binary, scratch, number, study_toml, events, asked)
            trials += asked
    for sampler, n in per_sampler.items():
        shown = ", ".join(f"{counts[(s, what)]} {what}" for s, what in counts if s == sampler)
        print(f"{sampler} on study files: {n} scenarios ({shown})")
    print(f"{trials} trials suggested as Optuna {optuna.__version__} suggests them")


if __name__ == "__main__":
    main()
