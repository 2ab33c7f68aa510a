#!/usr/bin/python3
"""How often the recommended setting's model suggestions land at a bound (issue #43,
item 3): within 1 % of either end of a numeric parameter's range (on the log scale for
log domains). The search spaces of the four tuning tables in tests/bench/data and of
share/slurmtune/examples/numpy-mlp/fast.toml, each under fast.toml's setting (MOBSTER
with Hyper-Tune, asha_promotion) against the simulator's `bowl` objective, whose
optimum lies inside the range (each coordinate in [0.2, 0.8] of it): there, a bound is
never where the good configurations are, except for the first parameter, which also sets
how fast a trial learns (doc/simulation.md: a fast learner is better at a finite max_t,
and looks better still at the early rungs), so it is marked apart. `slurmtune simulate` records each trial's
configuration as suggested and where it came from (`origin`), so the model's suggestions
and the random ones (start-up, random fraction) are counted apart.

    /usr/bin/python3 tests/bench/quality/bench_bound_share.py build/src/slurmtune [--seeds 20] [--trials 60] [--workers 8]
        [--sampler-option 'input_warping = true' ...]
"""
import argparse
import math
import os
import subprocess
import tempfile
import tomllib

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SPACES = [os.path.join(os.path.dirname(HERE), "data", name + ".toml")
          for name in ("diabetes-sgd", "digits-mlp", "cancer-gbdt", "digits-deep")] + \
         [os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp", "fast.toml")]
NUMERIC = {"uniform": False, "loguniform": True, "randint": False, "lograndint": True,
           "quniform": False, "qloguniform": True, "qrandint": False}
SETTING = """[study]
name = "bounds"
metric = "loss"
mode = "min"
seed = {seed}
max_trials = {trials}
sampler = "mobster"
[sampler]
rung_weighting = "hyper-tune"
{sampler_options}[scheduler]
type = "asha_promotion"
grace_period = 1
reduction_factor = 3
max_t = 27
[simulate]
objective = "bowl"
step_time_s = 1.0
"""


def toml_value(value):
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value).lower() if isinstance(value, bool) else repr(value)


def numeric_bounds(search):
    """{parameter: (low, high, log)} of the numeric parameters of a [search] table."""
    out = {}
    for name, domain in search.items():
        kind = next((k for k in domain if k in NUMERIC), None)
        if kind:
            low, high = domain[kind][0], domain[kind][1]
            out[name] = (float(low), float(high), NUMERIC[kind])
    return out


def at_bound(values, low, high, log):
    if log:
        values, low, high = np.log(values), math.log(low), math.log(high)
    position = (values - low) / (high - low)
    return (position <= 0.01) | (position >= 0.99)


def measure(slurmtune, space_file, seeds, trials, workers, work, sampler_options=()):
    with open(space_file, "rb") as f:
        search = tomllib.load(f)["search"]
    bounds = numeric_bounds(search)
    space = "[search]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in search.items())
    counts = {"model": [0, 0], "random": [0, 0]}  # [values, at a bound]
    per_parameter = {name: [0, 0, 0, 0] for name in bounds}  # model values, at a bound; random ...
    for seed in range(seeds):
        study = os.path.join(work, "study.toml")
        with open(study, "w") as f:
            f.write(SETTING.format(seed=seed, trials=trials,
                                   sampler_options="".join(o + "\n" for o in sampler_options)) + space)
        out = os.path.join(work, f"{os.path.basename(space_file)}-{seed}.h5")
        subprocess.run([slurmtune, "simulate", study, "-w", str(workers), "-q", "-o", out],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        with h5py.File(out, "r") as f:
            rows = f["trials"][:]
            origins = {v: k for k, v in h5py.check_enum_dtype(f["trials"].dtype["origin"]).items()}
        origin = np.array([origins[o] for o in rows["origin"]])
        for name, (low, high, log) in bounds.items():
            values = rows["config/" + name].astype(float)
            if "active/" + name in rows.dtype.names:
                keep = rows["active/" + name] == 1
            else:
                keep = np.ones(len(rows), bool)
            hit = at_bound(values, low, high, log)
            for group, mask in (("model", origin == "model"), ("random", np.isin(origin, ["startup", "random"]))):
                counts[group][0] += int((mask & keep).sum())
                counts[group][1] += int((mask & keep & hit).sum())
            for offset, mask in ((0, origin == "model"), (2, np.isin(origin, ["startup", "random"]))):
                per_parameter[name][offset] += int((mask & keep).sum())
                per_parameter[name][offset + 1] += int((mask & keep & hit).sum())
    return counts, per_parameter


def search_names(space_file):
    with open(space_file, "rb") as f:
        return list(tomllib.load(f)["search"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sampler-option", action="append", default=[],
                        help="a line added to [sampler], e.g. 'input_warping = true'")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="slurmtune-bounds-")
    print("| search space | model suggestions at a bound | random ones at a bound | per parameter, model / random |")
    print("|---|---|---|---|")
    for space in SPACES:
        counts, per_parameter = measure(args.slurmtune, space, args.seeds, args.trials, args.workers, work,
                                        args.sampler_option)
        share = lambda c: f"{100 * c[1] / c[0]:.1f} % ({c[1]} of {c[0]})" if c[0] else "-"  # noqa: E731
        first = next(iter(search_names(space)))
        parameters = ", ".join(f"{n}{' (first)' if n == first else ''} {100 * c[1] / max(c[0], 1):.0f} / "
                               f"{100 * c[3] / max(c[2], 1):.0f} %" for n, c in per_parameter.items() if c[0])
        print(f"| {os.path.basename(space)} | {share(counts['model'])} | {share(counts['random'])} | {parameters} |",
              flush=True)


if __name__ == "__main__":
    main()
