#!/usr/bin/env python3
"""Checks `slurmtune replay` against an independent Python model of Ray Tune's
AsyncHyperBandScheduler decisions, with numpy's nanpercentile computing every cutoff.

Random studies (modes, reduction factors, brackets, stop_last_trials, NaN, +-inf, ties,
skipped rungs, failures) are written as event logs; the decisions slurmtune prints must
equal the model's. Usage: check_ray_asha.py SLURMTUNE_BINARY
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from asha_model import RayModel, milestones  # noqa: E402

warnings.simplefilter("ignore", RuntimeWarning)  # nanpercentile of all-NaN rungs


def draw_value(rng, ties):
    r = rng.random()
    if r < 0.03:
        return float("nan")
    if r < 0.05:
        return rng.choice([float("inf"), float("-inf")])
    return float(rng.randrange(5)) if ties else rng.uniform(0, 10)


def scenario(rng):
    rf = rng.choice([2, 3, 4])
    grace = rng.choice([1, 2])
    max_t = rng.choice([8, 9, 16, 27, 30])
    n_rungs = len(milestones(grace, rf, max_t, 0))
    return dict(rf=rf, grace=grace, max_t=max_t, brackets=rng.randint(1, min(3, n_rungs)),
                stop_last=rng.random() < 0.7, mode=rng.choice(["min", "max"]),
                ties=rng.random() < 0.3, trials=rng.randint(5, 60))


def write_study(path, sc):
    with open(path, "w") as f:
        f.write(f"""[study]
name = "ray-check"
metric = "m"
mode = "{sc['mode']}"

[search]
x = {{ uniform = [0, 1] }}

[scheduler]
type = "asha"
grace_period = {sc['grace']}
reduction_factor = {sc['rf']}
max_t = {sc['max_t']}
brackets = {sc['brackets']}
stop_last_trials = {'true' if sc['stop_last'] else 'false'}
""")


def run_scenario(binary, rng, workdir, number):
    sc = scenario(rng)
    model = RayModel(sc["grace"], sc["rf"], sc["max_t"], sc["brackets"], sc["stop_last"],
                     -1 if sc["mode"] == "min" else 1)
    events, expected = [], []
    active = {}
    next_trial = 0
    while next_trial < sc["trials"] or active:
        if next_trial < sc["trials"] and (not active or rng.random() < 0.3):
            bracket = rng.randrange(sc["brackets"])
            model.bracket_of[next_trial] = bracket
            active[next_trial] = [0, rng.randint(1, sc["max_t"] + 3), None]
            events.append({"type": "start", "trial": next_trial, "bracket": bracket})
            next_trial += 1
            continue
        trial = rng.choice(sorted(active))
        state = active[trial]
        if rng.random() < 0.03 and state[2] is not None:
            events.append({"type": "end", "trial": trial, "state": "failed"})
            model.end(trial, "failed", None, None)
            del active[trial]
            continue
        state[0] += rng.choice([1, 1, 1, 2, 5])  # sometimes jump over milestones
        value = draw_value(rng, sc["ties"])
        state[2] = value
        events.append({"type": "report", "trial": trial, "step": state[0], "value": value})
        decision = model.report(trial, state[0], value)
        expected.append((trial, state[0]) + decision)
        if decision[0] == "stop" or state[0] >= state[1]:
            end_state = "stopped" if decision[0] == "stop" else "completed"
            events.append({"type": "end", "trial": trial, "state": end_state,
                           "step": state[0], "value": value})
            model.end(trial, end_state, state[0], value)
            del active[trial]

    study = os.path.join(workdir, f"study{number}.toml")
    log = os.path.join(workdir, f"events{number}.jsonl")
    write_study(study, sc)
    with open(log, "w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    out = subprocess.run([binary, "replay", study, log], check=True, capture_output=True, text=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(got) == len(expected), f"scenario {number}: {len(got)} decisions, expected {len(expected)}"
    for g, (trial, step, decision, rung, milestone, cutoff) in zip(got, expected):
        where = f"scenario {number} {sc}: trial {trial} step {step}: got {g}"
        assert g["trial"] == trial and g["step"] == step, where
        assert g["decision"] == decision, where + f", expected {decision}"
        assert g.get("rung") == rung, where + f", expected rung {rung}"
        assert g.get("milestone") == milestone, where + f", expected milestone {milestone}"
        if cutoff is None:
            assert "cutoff" not in g, where
        elif math.isnan(cutoff):
            assert math.isnan(g["cutoff"]), where + f", expected cutoff {cutoff}"
        else:
            assert math.isclose(g["cutoff"], cutoff, rel_tol=1e-12, abs_tol=1e-12) or g["cutoff"] == cutoff, \
                where + f", expected cutoff {cutoff}"
    return len(expected)


def main():
    binary = sys.argv[1]
    rng = random.Random(20261122)
    total = 0
    with tempfile.TemporaryDirectory() as workdir:
        for number in range(300):
            total += run_scenario(binary, rng, workdir, number)
    print(f"ray asha: 300 scenarios, {total} decisions identical to the numpy model")


if __name__ == "__main__":
    main()
