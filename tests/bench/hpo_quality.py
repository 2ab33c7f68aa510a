#!/usr/bin/python3
"""HPO quality on recorded learning curves: slurmtune's schedulers against Optuna's
samplers and pruners, in one virtual-time harness, on the same tables, seeds and workers.

    /usr/bin/python3 tests/bench/hpo_quality.py [--slurmtune build/src/slurmtune]
        [--tables digits-mlp cancer-gbdt] [--seeds 20] [--workers 4] [--markdown]

Every method runs on each table (tests/bench/data/NAME.csv with NAME.toml, built by
make_curve_tables.py) with `--workers` workers in virtual time: a step takes the seconds
it took when the table was recorded. A configuration is drawn at most once.
  - slurmtune: `slurmtune simulate NAME.toml --seed S -o run.h5` with fifo, asha (Ray's
    and Optuna's semantics), asha_promotion and hyperband with the random sampler, and
    asha and hyperband with the tpe and bohb samplers (default options); the reports are
    read back from the study file with h5py. A model's suggestion is mapped to the
    nearest configuration of the table not yet drawn, as for Optuna below.
  - Optuna (Debian's python3-optuna): RandomSampler and TPESampler x no pruner,
    SuccessiveHalvingPruner (min_resource 1, reduction factor 3) and HyperbandPruner
    (1, max_t, 3), driven through ask/report/should_prune/tell by a discrete-event loop
    of the same workers. Optuna samples the table's search space; each sample is mapped
    to the nearest configuration of the table not yet drawn (unit cube: log scale for
    log domains, slot centre for choices) and reports that configuration's curve.
Figures per method, over seeds: median [quartiles] virtual time to reach the table's
target (the 2nd percentile of the curves' best values; a seed that never reaches it
counts as worst), the regret (best so far minus the table's best value) at 2 %, 10 % and
50 % of the budget, and trials started. The budget is the time random search without
stopping needs to run the whole table on the workers. Ratios: time to target over that
of random search without stopping (slurmtune fifo), and over Optuna's best variant.
"""
import argparse
import heapq
import json
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import tomllib

import h5py
import numpy as np
import optuna
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
optuna.logging.set_verbosity(optuna.logging.ERROR)

DURATION_COLUMNS = ("step_seconds", "elapsed_seconds")
RESERVED = {"step", "seed", "repeat", "status"} | set(DURATION_COLUMNS)
BUDGET_FRACTIONS = (0.02, 0.1, 0.5)

ASHA_RAY = {"type": "asha", "semantics": "ray", "grace_period": 1, "reduction_factor": 3}
HYPERBAND_RAY = {"type": "hyperband", "semantics": "ray", "reduction_factor": 3}
ASHA_PREDICT = {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3, "predict": True}
# (label, [scheduler] keys, sampler); the random sampler unless named.
SLURMTUNE_VARIANTS = [
    ("fifo", {"type": "fifo"}),
    ("asha (ray)", {"type": "asha", "semantics": "ray", "grace_period": 1, "reduction_factor": 3}),
    ("asha (optuna)", {"type": "asha", "semantics": "optuna", "min_resource": 1, "reduction_factor": 3}),
    ("asha_promotion", {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3}),
    ("hyperband (ray)", {"type": "hyperband", "semantics": "ray", "reduction_factor": 3}),
    ("hyperband (optuna)", {"type": "hyperband", "semantics": "optuna", "min_resource": 1, "reduction_factor": 3}),
    ("tpe + asha (ray)", ASHA_RAY, "tpe"),
    ("tpe + hyperband (ray)", HYPERBAND_RAY, "tpe"),
    ("tpe binned + asha (ray)", ASHA_RAY, "tpe", {"semantics": "binned", "bins": 32}),
    ("bohb + asha (ray)", ASHA_RAY, "bohb"),
    ("bohb + hyperband (ray)", HYPERBAND_RAY, "bohb"),
    ("mobster + asha (ray)", ASHA_RAY, "mobster"),
    ("mobster + asha_promotion", {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3}, "mobster"),
    ("mobster + hyperband (ray)", HYPERBAND_RAY, "mobster"),
    ("asha_promotion predict", ASHA_PREDICT),
    ("mobster + asha_promotion predict", ASHA_PREDICT, "mobster"),
]
OPTUNA_SAMPLERS = ("random", "tpe")
OPTUNA_PRUNERS = ("none", "sha", "hyperband")


class Table:
    """The recorded curves of one benchmark, as the harness needs them."""

    def __init__(self, name):
        self.name = name
        with open(os.path.join(HERE, "data", name + ".toml"), "rb") as f:
            self.study = tomllib.load(f)
        self.toml_path = os.path.join(HERE, "data", name + ".toml")
        self.metric = self.study["study"]["metric"]
        self.mode = self.study["study"].get("mode", "min")
        self.max_t = self.study["scheduler"]["max_t"]
        self.space = self.study["search"]
        self.params = list(self.space)
        frame = pd.read_csv(os.path.join(HERE, "data", self.study["simulate"]["curves"]))
        repeat = next((c for c in ("seed", "repeat") if c in frame.columns), None)
        duration = next(c for c in DURATION_COLUMNS if c in frame.columns)
        self.configs, self.curves = [], []  # curves[i]: list of (steps, values, seconds) per repeat
        for key, rows in frame.groupby(self.params, sort=False):
            runs = []
            for _, run in (rows.groupby(repeat, sort=True) if repeat else [(None, rows)]):
                run = run.sort_values("step")
                seconds = run[duration].to_numpy(float)
                if duration == "elapsed_seconds":
                    seconds = np.diff(np.concatenate([[0.0], seconds]))
                runs.append((run["step"].to_numpy(float), run[self.metric].to_numpy(float), seconds))
            self.configs.append(dict(zip(self.params, key)))
            self.curves.append(runs)
        self.units = np.array([[unit(self.space[p], c[p]) for p in self.params] for c in self.configs])
        bests = [np.nanmin(v) if self.mode == "min" else np.nanmax(v) for runs in self.curves for _, v, _ in runs]
        self.best = min(bests) if self.mode == "min" else max(bests)
        self.target = float(np.percentile(bests, 2 if self.mode == "min" else 98))
        self.total_seconds = sum(s.sum() for runs in self.curves for _, _, s in runs) / \
            np.mean([len(runs) for runs in self.curves])

    def better(self, a, b):
        return a < b if self.mode == "min" else a > b

    def reached(self, value):
        return value <= self.target if self.mode == "min" else value >= self.target


def domain_kind(domain):
    if not isinstance(domain, dict):
        return "constant", domain
    (kind, args), = domain.items()
    return kind, args


def unit(domain, value):
    """A value's position in its domain (as slurmtune's Domain::to_unit)."""
    kind, args = domain_kind(domain)
    if kind in ("choice", "grid"):
        return (args.index(value) + 0.5) / len(args)
    if kind == "constant":
        return 0.5
    low, high = float(args[0]), float(args[1])
    if kind.startswith("log") or kind.startswith("qlog"):
        return (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))
    return (value - low) / (high - low)


def optuna_distribution(domain):
    kind, args = domain_kind(domain)
    if kind == "loguniform":
        return optuna.distributions.FloatDistribution(args[0], args[1], log=True)
    if kind == "uniform":
        return optuna.distributions.FloatDistribution(args[0], args[1])
    if kind == "randint":
        return optuna.distributions.IntDistribution(args[0], args[1] - 1)
    if kind == "lograndint":
        return optuna.distributions.IntDistribution(args[0], args[1] - 1, log=True)
    if kind == "choice":
        return optuna.distributions.CategoricalDistribution(args)
    raise ValueError(f"no Optuna distribution for {domain}")


class Run:
    """One method on one seed: its best-so-far trace and counts."""

    def __init__(self, table):
        self.table, self.trace, self.started, self.time_to_target = table, [], 0, None

    def report(self, time_s, value):
        if math.isnan(value):
            return
        if not self.trace or self.table.better(value, self.trace[-1][1]):
            self.trace.append((time_s, value))
        if self.time_to_target is None and self.table.reached(value):
            self.time_to_target = time_s

    def regret_at(self, time_s):
        best = None
        for t, v in self.trace:
            if t > time_s:
                break
            best = v
        return None if best is None else abs(best - self.table.best)


def run_slurmtune(binary, table, variant, seed, workers, budget, work):
    scheduler, sampler = variant[0], variant[1] if len(variant) > 1 else "random"
    sampler_options = variant[2] if len(variant) > 2 else {}
    lines, section = [], None
    with open(table.toml_path) as f:
        for line in f:
            if line.strip().startswith("["):
                section = line.strip()
            if line.strip().startswith("sampler ="):
                line = f'sampler = "{sampler}"\n'
            if section != "[scheduler]":
                lines.append(line.replace(f'curves = "{table.name}.csv"',
                                          f'curves = "{os.path.join(HERE, "data", table.name + ".csv")}"'))
    resource = table.study["scheduler"].get("resource", "step")
    lines.append(f'\n[scheduler]\nresource = "{resource}"\nmax_t = {table.max_t}\n')
    lines += [f"{k} = {json.dumps(v)}\n" for k, v in scheduler.items()]
    if sampler_options:
        lines.append("\n[sampler]\n")
        lines += [f"{k} = {json.dumps(v)}\n" for k, v in sampler_options.items()]
    toml = os.path.join(work, "study.toml")
    with open(toml, "w") as f:
        f.writelines(lines)
    h5 = os.path.join(work, "run.h5")
    if os.path.exists(h5):
        os.remove(h5)
    out = subprocess.run([binary, "simulate", toml, "--seed", str(seed), "-w", str(workers), "--time-budget",
                          repr(budget), "--json", "-o", h5], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"slurmtune simulate failed: {out.stderr}")
    summary = json.loads(out.stdout)
    run = Run(table)
    with h5py.File(h5, "r") as f:
        rows = int(f["commit"][0]["metrics"])
        metrics = f["metrics"][:rows]
    for row in np.sort(metrics, order="seq"):
        run.report(float(row["time"]), float(row[table.metric]))
    run.started = summary["started"]
    return run


def run_optuna(table, sampler_name, pruner_name, seed, workers, budget):
    sampler = optuna.samplers.TPESampler(seed=seed) if sampler_name == "tpe" else optuna.samplers.RandomSampler(seed=seed)
    pruner = {"none": optuna.pruners.NopPruner(),
              "sha": optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3),
              "hyperband": optuna.pruners.HyperbandPruner(min_resource=1, max_resource=table.max_t,
                                                          reduction_factor=3)}[pruner_name]
    study = optuna.create_study(direction="minimize" if table.mode == "min" else "maximize", sampler=sampler,
                                pruner=pruner, study_name=f"{table.name}-{seed}")
    distributions = {p: optuna_distribution(table.space[p]) for p in table.params}
    unused = np.ones(len(table.configs), bool)
    picker = random.Random(seed)
    run = Run(table)
    events, sequence, running = [], 0, {}

    def launch(worker, now):
        nonlocal sequence
        if not unused.any() or now >= budget:
            return
        trial = study.ask(distributions)
        point = np.array([unit(table.space[p], trial.params[p]) for p in table.params])
        distance = ((table.units - point) ** 2).sum(axis=1)
        distance[~unused] = np.inf
        config = int(np.argmin(distance))
        unused[config] = False
        runs = table.curves[config]
        curve = runs[picker.randrange(len(runs))] if len(runs) > 1 else runs[0]
        running[worker] = [trial, curve, 0]
        run.started += 1
        heapq.heappush(events, (now + curve[2][0], sequence, worker))
        sequence += 1

    for worker in range(workers):
        launch(worker, 0.0)
    while events:
        now, _, worker = heapq.heappop(events)
        if now > budget:
            break
        trial, (steps, values, seconds), k = running[worker]
        value, step = float(values[k]), int(steps[k])
        run.report(now, value)
        trial.report(value, step)
        if pruner_name != "none" and trial.should_prune():
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        elif k + 1 == len(steps):
            study.tell(trial, value if not math.isnan(value) else None,
                       state=optuna.trial.TrialState.COMPLETE if not math.isnan(value) else optuna.trial.TrialState.FAIL)
        else:
            running[worker][2] = k + 1
            heapq.heappush(events, (now + seconds[k + 1], sequence, worker))
            sequence += 1
            continue
        launch(worker, now)
    return run


def quartiles(values, lower_is_better=True):
    """Median and quartiles with missing values counted as worst (as `simulate --repeat`)."""
    n = len(values)
    present = sorted(v for v in values if v is not None)
    if not lower_is_better:
        present.reverse()

    def at(p):
        pos = p * (n - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        if hi >= len(present):
            return None
        return present[lo] + (pos - lo) * (present[hi] - present[lo])
    return at(0.25), at(0.5), at(0.75)


def fmt(value, digits=3):
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"


def summarise(runs, budget):
    q25, median, q75 = quartiles([r.time_to_target for r in runs])
    regrets = [quartiles([r.regret_at(f * budget) for r in runs])[1] for f in BUDGET_FRACTIONS]
    started = float(np.median([r.started for r in runs]))
    reached = sum(r.time_to_target is not None for r in runs)
    return dict(median=median, q25=q25, q75=q75, reached=reached, regrets=regrets, started=started)


def run_task(task):
    """One (method, seed) in a worker process: (name, run, wall seconds)."""
    name, method, seed, args, table, budget, work = task
    started = time.time()
    if name.startswith("slurmtune"):
        folder = os.path.join(work, f"{table.name}-{name.replace(' ', '_')}-{seed}")
        os.makedirs(folder, exist_ok=True)
        run = run_slurmtune(args.slurmtune, table, method, seed, args.workers, budget, folder)
    else:
        run = run_optuna(table, *method, seed, args.workers, budget)
    run.table = None  # sent back without the table
    return name, run, time.time() - started


def benchmark(args, table, work):
    budget = table.total_seconds / args.workers
    methods = [("slurmtune " + v[0], v[1:]) for v in SLURMTUNE_VARIANTS]
    methods += [(f"optuna {s} + {p}", (s, p)) for s in OPTUNA_SAMPLERS for p in OPTUNA_PRUNERS]
    if args.methods:  # fifo (random search) stays: the ratios are relative to it
        methods = [m for m in methods if m[0] == "slurmtune fifo" or any(w in m[0] for w in args.methods)]
    tasks = [(name, method, seed, args, table, budget, work) for name, method in methods for seed in range(args.seeds)]
    runs, walls = {name: [] for name, _ in methods}, {name: 0.0 for name, _ in methods}
    with multiprocessing.Pool(args.jobs) as pool:
        for name, run, wall in pool.imap_unordered(run_task, tasks):
            run.table = table
            runs[name].append(run)
            walls[name] += wall
    return budget, {name: (summarise(runs[name], budget), walls[name]) for name, _ in methods}


def print_table(args, table, budget, results):
    random_median = results["slurmtune fifo"][0]["median"]
    optuna_best = min((r["median"] for name, (r, _) in results.items() if name.startswith("optuna") and r["median"]),
                      default=None)
    curves = sum(len(r) for r in table.curves)
    print(f"\n### {table.name}: {len(table.configs)} configurations ({curves} curves) x {table.max_t} steps, "
          f"{args.workers} workers, {args.seeds} seeds")
    print(f"target {table.metric} {'<=' if table.mode == 'min' else '>='} {fmt(table.target, 4)} "
          f"(2nd percentile of the curves' best), table best {fmt(table.best, 4)}, budget {budget:.1f} s virtual\n")
    header = ["method", "time to target s, median [q25, q75]", "reached",
              *[f"regret @{int(f * 100)}%" for f in BUDGET_FRACTIONS], "trials", "vs random", "vs Optuna best", "CPU s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, (r, wall) in results.items():
        vs_random = fmt(random_median / r["median"], 3) + "x" if r["median"] and random_median else "-"
        vs_optuna = fmt(r["median"] / optuna_best, 3) if r["median"] and optuna_best else "-"
        print(f"| {name} | {fmt(r['median'])} [{fmt(r['q25'])}, {fmt(r['q75'])}] | {r['reached']}/{args.seeds} | "
              + " | ".join(fmt(x) for x in r["regrets"])
              + f" | {r['started']:.0f} | {vs_random} | {vs_optuna} | {wall:.1f} |")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slurmtune", default=os.path.join(ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt"])
    parser.add_argument("--methods", nargs="+", help="only the methods whose names contain one of these words")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes running seeds in parallel")
    args = parser.parse_args()
    print(f"slurmtune {subprocess.run([args.slurmtune, '--version'], capture_output=True, text=True).stdout.split()[-1]}"
          f", Optuna {optuna.__version__}; `vs random`: how many times sooner than random search without "
          f"stopping (slurmtune fifo); `vs Optuna best`: median time to target over that of Optuna's best variant")
    with tempfile.TemporaryDirectory() as work:
        for name in args.tables:
            table = Table(name)
            budget, results = benchmark(args, table, work)
            print_table(args, table, budget, results)


if __name__ == "__main__":
    main()
