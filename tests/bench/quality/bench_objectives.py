#!/usr/bin/env python3
"""Several objectives: the front's hypervolume under each sampler and early stopping, and
the cost of a suggestion against Optuna's (doc/performance.md, "Several objectives").

1. Hypervolume: `slurmtune simulate --repeat SEEDS --json` of a synthetic study of two
   objectives (tests/bench/data/studies/two-objectives.toml: the first a learning curve, the
   second a cost with another optimum) for nsga2, tpe (MOTPE) and random, with MO-ASHA
   and without early stopping, each beside the same seeds of random search without early
   stopping; the hypervolume of each run's completed trials measured to one reference
   point per row. Nothing here was tuned on this table.
2. Suggestion cost: Optuna's NSGAIISampler and TPESampler (MOTPE) run N asks and tells on
   the same synthetic two-objective function; the event log goes through `slurmtune
   replay`, which suggests the same N configurations (checked). Time per suggestion,
   Optuna's ask against slurmtune's replay (which also reads and writes JSON).

Usage: bench_objectives.py SLURMTUNE [--seeds 40] [--trials 300]
(run with NPY_DISABLE_CPU_FEATURES as the conformance tests do, so the suggestions match)
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STUDY = os.path.join(ROOT, "tests", "bench", "data", "studies", "two-objectives.toml")


def hypervolume_rows(binary, seeds, scratch):
    with open(STUDY) as f:
        text = f.read()
    rows = []
    for sampler in ("nsga2", "tpe", "random"):
        for scheduler in ("asha", "fifo"):
            variant = re.sub(r'sampler = "\w+"', f'sampler = "{sampler}"', text)
            if scheduler == "fifo":  # no rungs: every trial runs to max_t
                variant = re.sub(r'type = "asha"\ngrace_period = \d+\nreduction_factor = \d+\n',
                                 'type = "fifo"\n', variant)
            if sampler != "nsga2":
                variant = re.sub(r"\[sampler\]\n[^\[]*", "", variant)
            path = os.path.join(scratch, f"{sampler}-{scheduler}.toml")
            with open(path, "w") as f:
                f.write(variant)
            out = subprocess.run([binary, "simulate", path, "--repeat", str(seeds), "--json"],
                                 capture_output=True, text=True, check=True).stdout
            d = json.loads(out)
            rows.append((sampler, scheduler, d["study_runs"]["hypervolume"],
                         d["baseline"]["hypervolume"], d["study_runs"]["compute_worker_s"],
                         d["baseline"]["compute_worker_s"]))
    return rows


def synthetic(x, y, z):
    """Two conflicting objectives of three parameters (ZDT-like)."""
    f1 = (x - 0.2) ** 2 + 0.5 * (z - 0.5) ** 2
    f2 = (x - 0.8) ** 2 + (y - 0.3) ** 2
    return f1, f2


def suggestion_cost(binary, kind, trials, scratch):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = (optuna.samplers.NSGAIISampler(seed=7, population_size=20) if kind == "nsga2"
               else optuna.samplers.TPESampler(seed=7))
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    events, asking = [], 0.0
    for number in range(trials):
        start = time.perf_counter()
        trial = study.ask()
        config = {n: trial.suggest_float(n, 0.0, 1.0) for n in ("x", "y", "z")}
        asking += time.perf_counter() - start
        f1, f2 = synthetic(**config)
        events.append({"type": "start", "trial": number, "config": config})
        events.append({"type": "report", "trial": number, "step": 1, "value": f1,
                       "metrics": {"cost": f2}})
        study.tell(trial, [f1, f2])
        events.append({"type": "end", "trial": number, "state": "completed"})
    options = "[sampler]\npopulation_size = 20\n" if kind == "nsga2" else ""
    toml = (f'[study]\nname = "bench"\nmetric = ["loss", "cost"]\nmode = ["min", "min"]\n'
            f'seed = 7\nsampler = "{kind}"\n{options}[search]\n'
            'x = { uniform = [0.0, 1.0] }\ny = { uniform = [0.0, 1.0] }\nz = { uniform = [0.0, 1.0] }\n')
    path = os.path.join(scratch, f"cost-{kind}.toml")
    with open(path, "w") as f:
        f.write(toml)
    log = "\n".join(json.dumps(e) for e in events) + "\n"
    start = time.perf_counter()
    out = subprocess.run([binary, "replay", path, "-"], input=log, capture_output=True, text=True,
                         check=True).stdout
    replaying = time.perf_counter() - start
    matched = sum('"matches":true' in line for line in out.splitlines())
    assert matched == trials, f"{kind}: {matched} of {trials} suggestions matched Optuna's"
    return asking / trials, replaying / trials


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--trials", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(f"Hypervolume of the completed trials' front, {args.seeds} seeds "
              f"(median [quartiles]); the baseline is random search without early stopping")
        print("| sampler | scheduler | hypervolume | baseline's | compute, worker-s | baseline's |")
        print("|---|---|---|---|---|---|")

        def q(x, digits=3):
            return f"{x['median']:.{digits}f} [{x['q25']:.{digits}f}, {x['q75']:.{digits}f}]"
        for sampler, scheduler, hv, base, compute, base_compute in hypervolume_rows(
                args.slurmtune, args.seeds, scratch):
            print(f"| {sampler} | {'MO-ASHA' if scheduler == 'asha' else 'fifo'} | {q(hv)} | {q(base)} "
                  f"| {q(compute, 0)} | {q(base_compute, 0)} |")
        print(f"\nTime per suggestion, {args.trials} trials, two objectives, three parameters")
        print("| sampler | Optuna 3.1 ask | slurmtune replay |")
        print("|---|---|---|")
        for kind in ("nsga2", "tpe"):
            optuna_s, ours_s = suggestion_cost(args.slurmtune, kind, args.trials, scratch)
            print(f"| {kind} | {optuna_s * 1e3:.2f} ms | {ours_s * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
