#!/usr/bin/env python3
"""Checks slurmtune's core TPE sampler against the real Optuna 3.1 TPESampler.

Random scenarios (every distribution kind: float, log, stepped, int, log int, stepped
int, categorical; min and max; sequential and parallel workers with and without
constant_liar; independent and multivariate; completed, pruned with and without reports, NaN reports, failed trials;
random n_startup_trials, n_ei_candidates, prior weight, endpoints) drive Optuna through
ask / report / tell. The same operations go to tests/python/tpe_probe (slurmtune's
core::tpe::TpeSampler); every suggested value must be identical, bit for bit.
CTest runs it with numpy's AVX-512 kernels disabled (NPY_DISABLE_CPU_FEATURES): their
exp/log round differently from libm's, which slurmtune and numpy elsewhere use.
Usage: check_tpe.py SLURMTUNE_BINARY TPE_PROBE
"""
import json
import math
import random
import subprocess
import sys
import warnings

import optuna

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
warnings.simplefilter("ignore", UserWarning)  # Optuna adjusting float ranges to the step
D = optuna.distributions


def random_space(rng):
    space = {}
    for i in range(rng.randint(1, 4)):
        kind = rng.choice(["float", "log", "fstep", "int", "logint", "intstep", "cat"])
        if kind == "float":
            low = rng.uniform(-5, 5)
            space[f"p{i}"] = D.FloatDistribution(low, low + rng.uniform(0.1, 10))
        elif kind == "log":
            low = 10 ** rng.uniform(-6, 0)
            space[f"p{i}"] = D.FloatDistribution(low, low * 10 ** rng.uniform(0.5, 5), log=True)
        elif kind == "fstep":
            step = rng.choice([0.1, 0.25, 0.5, 2.0])
            low = rng.randint(-4, 4) * step
            space[f"p{i}"] = D.FloatDistribution(low, low + step * rng.randint(2, 40), step=step)
        elif kind == "int":
            low = rng.randint(-10, 10)
            space[f"p{i}"] = D.IntDistribution(low, low + rng.randint(1, 300))
        elif kind == "logint":
            low = rng.randint(1, 16)
            space[f"p{i}"] = D.IntDistribution(low, low * rng.randint(2, 200), log=True)
        elif kind == "intstep":
            step = rng.choice([2, 4, 8])
            low = rng.randint(0, 8)
            space[f"p{i}"] = D.IntDistribution(low, low + step * rng.randint(1, 30), step=step)
        else:
            space[f"p{i}"] = D.CategoricalDistribution(list(range(rng.randint(2, 5))))
    return space


def probe_distribution(d):
    if isinstance(d, D.CategoricalDistribution):
        return {"kind": "categorical", "choices": len(d.choices)}
    kind = "int" if isinstance(d, D.IntDistribution) else "float"
    step = d.step if isinstance(d, D.IntDistribution) or d.step is not None else None
    return {"kind": kind, "low": d.low, "high": d.high, "log": d.log, "step": step}


def objective(rng, params, space, step):
    value = 0.0
    for name, d in space.items():
        x = d.to_internal_repr(params[name])
        if isinstance(d, D.CategoricalDistribution):
            value += 0.3 * x
        else:
            lo, hi = (math.log(d.low), math.log(d.high)) if d.log else (d.low, d.high)
            u = ((math.log(x) if d.log else x) - lo) / max(hi - lo, 1e-12)
            value += (u - 0.3) ** 2
    return value + 1.0 / (1 + step) + rng.gauss(0, 0.01)


def scenario(rng, number):
    space = random_space(rng)
    options = dict(seed=rng.randrange(2**32), maximize=rng.random() < 0.5,
                   constant_liar=rng.random() < 0.4, consider_endpoints=rng.random() < 0.3,
                   n_startup_trials=rng.choice([0, 1, 3, 10]), n_ei_candidates=rng.choice([1, 5, 24, 31]),
                   prior_weight=rng.choice([1.0, 0.5, 2.0]), multivariate=rng.random() < 0.4)
    sampler = optuna.samplers.TPESampler(
        seed=options["seed"], constant_liar=options["constant_liar"],
        consider_endpoints=options["consider_endpoints"], n_startup_trials=options["n_startup_trials"],
        n_ei_candidates=options["n_ei_candidates"], prior_weight=options["prior_weight"],
        multivariate=options["multivariate"])
    study = optuna.create_study(direction="maximize" if options["maximize"] else "minimize", sampler=sampler)
    header = dict(options, space=[probe_distribution(d) for d in space.values()])
    ops, expected = [json.dumps(header)], []
    workers, total = rng.randint(1, 4), rng.randint(5, 45)
    running, asked = {}, 0
    while asked < total or running:
        if asked < total and (len(running) < workers or not running):
            trial = study.ask(space)
            ops.append(json.dumps({"op": "ask", "trial": trial.number}))
            expected.append([space[n].to_internal_repr(trial.params[n]) for n in space])
            running[trial.number] = (trial, 0)
            asked += 1
            continue
        number_ = rng.choice(list(running))
        trial, step = running[number_]
        r = rng.random()
        if r < 0.6 and step < 9:
            step += rng.randint(1, 3)
            value = float("nan") if rng.random() < 0.03 else objective(rng, trial.params, space, step)
            trial.report(value, step)
            ops.append(json.dumps({"op": "report", "trial": number_, "step": step, "value": value}))
            running[number_] = (trial, step)
        elif r < 0.8:
            value = objective(rng, trial.params, space, 10)
            study.tell(trial, value)
            ops.append(json.dumps({"op": "tell", "trial": number_, "state": "complete", "value": value}))
            del running[number_]
        elif r < 0.95:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            ops.append(json.dumps({"op": "tell", "trial": number_, "state": "pruned"}))
            del running[number_]
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            ops.append(json.dumps({"op": "tell", "trial": number_, "state": "fail"}))
            del running[number_]
    return ops, expected, header


def main():
    probe = sys.argv[2]
    rng = random.Random(20261122)
    suggestions = mismatches = 0
    for number in range(200):
        ops, expected, header = scenario(rng, number)
        out = subprocess.run([probe], input="\n".join(ops) + "\n", capture_output=True, text=True)
        assert out.returncode == 0, f"scenario {number}: tpe_probe failed: {out.stderr}"
        got = [json.loads(line) for line in out.stdout.splitlines()]
        assert len(got) == len(expected), f"scenario {number}: {len(got)} suggestions, expected {len(expected)}"
        for t, (g, e) in enumerate(zip(got, expected)):
            suggestions += len(e)
            if [float(x) for x in g] != [float(x) for x in e]:
                mismatches += 1
                print(f"scenario {number} trial {t}: slurmtune {g}, optuna {e}; {header}")
                if mismatches > 5:
                    sys.exit(1)
    assert mismatches == 0, f"{mismatches} suggestions differ"
    print(f"tpe: 200 scenarios, {suggestions} suggested values identical to Optuna {optuna.__version__}")


if __name__ == "__main__":
    main()
