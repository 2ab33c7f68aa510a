"""The recorded tables of tests/bench/quality/hpo_quality.py and the ways it runs a method on one:
a table's curves, targets and budget (`Table`), one run's best-so-far trace and times to
the targets (`Run`), and the drivers: `slurmtune simulate` on the table, Optuna's samplers
and pruners in a discrete-event loop of the same workers, and the top-K baseline. An
Optuna suggestion is mapped to the nearest configuration of the table not yet drawn (unit
cube: log scale for log domains, slot centre for choices), as `slurmtune simulate` maps
its model samplers' suggestions; its random sampler draws uniformly among the
configurations not yet drawn (draw_mechanism.py)."""
import heapq
import json
import lzma
import math
import os
import random
import subprocess
import sys
import time
import tomllib

import h5py
import numpy as np
import optuna
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")  # tests/bench/data: the recorded tables
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
optuna.logging.set_verbosity(optuna.logging.ERROR)

DURATION_COLUMNS = ("step_seconds", "elapsed_seconds")
TARGET_PERCENTILES = (2, 10)  # of the curves' best values (mirrored for mode = "max")


class Table:
    """The recorded curves of one benchmark, as the harness needs them."""

    def __init__(self, name):
        self.name = name
        with open(os.path.join(DATA, name + ".toml"), "rb") as f:
            self.study = tomllib.load(f)
        self.toml_path = os.path.join(DATA, name + ".toml")
        self.metric = self.study["study"]["metric"]
        self.mode = self.study["study"].get("mode", "min")
        self.max_t = self.study["scheduler"]["max_t"]
        self.space = self.study["search"]
        self.params = list(self.space)
        # The curves beside the study file (a name may lie in a folder: "transfer/mlp-data-large").
        self.curves_path = os.path.join(os.path.dirname(self.toml_path), self.study["simulate"]["curves"])
        frame = pd.read_csv(self.curves_path)
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
        # A run that never reports a finite value (it diverged at once) counts as the worst.
        worst = math.inf if self.mode == "min" else -math.inf
        bests = [worst if np.isnan(v).all() else (np.nanmin(v) if self.mode == "min" else np.nanmax(v))
                 for runs in self.curves for _, v, _ in runs]
        self.best = min(bests) if self.mode == "min" else max(bests)
        self.targets = [float(np.percentile(bests, p if self.mode == "min" else 100 - p))
                        for p in TARGET_PERCENTILES]
        self.total_seconds = sum(s.sum() for runs in self.curves for _, _, s in runs) / \
            np.mean([len(runs) for runs in self.curves])

    def better(self, a, b):
        return a < b if self.mode == "min" else a > b

    def reached(self, value, target):
        return value <= target if self.mode == "min" else value >= target

    def draw_curve(self, config, picker):
        """One recorded run of a configuration (a random repeat where there are several)."""
        runs = self.curves[config]
        return runs[picker.randrange(len(runs))] if len(runs) > 1 else runs[0]


def read_saved(path):
    """Runs saved by hpo_quality.py --save: a JSON file, or one compressed with xz (the
    screening's base runs kept in tests/bench/data/screening/)."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


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


def nearest_config(table, point, unused=None):
    """The table's configuration nearest to a point of the unit cube (`unit` of each
    parameter), among the unused ones where `unused` is given: how every sampler's
    suggestion becomes a recorded configuration here, as in slurmtune's simulate."""
    distance = ((table.units - point) ** 2).sum(axis=1)
    if unused is not None:
        distance[~unused] = np.inf
    return int(np.argmin(distance))


def trial_configs(trials, params):
    """Each row of a results file's `trials` (a structured array) as a parameter dict. A
    choice of strings is stored as an HDF5 enum: its names are the values."""
    labels = {}
    for p in params:
        enum = h5py.check_enum_dtype(trials.dtype["config/" + p])
        labels[p] = {code: name for name, code in enum.items()} if enum else None

    def value(p, stored):
        if labels[p]:
            return labels[p][int(stored)]
        stored = stored.item()
        return stored.decode() if isinstance(stored, bytes) else stored
    return [{p: value(p, t["config/" + p]) for p in params} for t in trials]


def config_row(table, config):
    """The table's configuration nearest to `config` (a parameter dict): the row a simulated
    trial of that configuration ran."""
    return nearest_config(table, np.array([unit(table.space[p], config[p]) for p in table.params]))


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
    """One method on one seed: its best-so-far trace, times to the targets and counts."""

    def __init__(self, table, seed):
        self.table, self.seed, self.trace, self.started = table, seed, [], 0
        self.times = [None] * len(table.targets)
        self.decision_s = 0.0
        self.crashed = None  # what ended the study early, as a user's study would have ended

    def report(self, time_s, value):
        if math.isnan(value):
            return
        if not self.trace or self.table.better(value, self.trace[-1][1]):
            self.trace.append((time_s, value))
        for i, target in enumerate(self.table.targets):
            if self.times[i] is None and self.table.reached(value, target):
                self.times[i] = time_s

    def regret_at(self, time_s, table_best):
        best = None
        for t, v in self.trace:
            if t > time_s:
                break
            best = v
        return None if best is None else abs(best - table_best)

    def to_json(self):
        data = dict(seed=self.seed, trace=self.trace, started=self.started, times=self.times,
                    decision_s=self.decision_s)
        if self.crashed:
            data["crashed"] = self.crashed
        return data

    @staticmethod
    def from_json(data):
        run = Run.__new__(Run)
        run.table, run.seed, run.started = None, data["seed"], data["started"]
        run.trace = [tuple(p) for p in data["trace"]]
        run.times, run.decision_s = data["times"], data["decision_s"]
        run.crashed = data.get("crashed")
        return run


def simulate_slurmtune(binary, table, variant, seed, workers, budget, work, measured):
    """Runs `slurmtune simulate` on the table; returns the results file's path and the summary."""
    scheduler, sampler = variant[0], variant[1] if len(variant) > 1 else "random"
    sampler_options = dict(variant[2]) if len(variant) > 2 else {}
    # "budget": the run's time budget (cost_cooling_s cools over the whole of it).
    sampler_options = {k: budget if v == "budget" else v for k, v in sampler_options.items()}
    # Not a [sampler] key: the random sampler's draws mapped as every suggestion is.
    nearest_draws = ["--nearest-draws"] if sampler_options.pop("nearest_draws", False) else []
    lines, section = [], None
    with open(table.toml_path) as f:
        for line in f:
            if line.strip().startswith("["):
                section = line.strip()
            if line.strip().startswith("sampler ="):
                line = f'sampler = "{sampler}"\n'
            if section != "[scheduler]":
                lines.append(line.replace(f'curves = "{os.path.basename(table.curves_path)}"',
                                          f'curves = "{table.curves_path}"'))
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
                          repr(budget), "--json", "-o", h5, "--decision-cost", "measured" if measured else "free",
                          *nearest_draws],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"slurmtune simulate failed: {out.stderr}")
    return h5, json.loads(out.stdout)


def run_slurmtune(binary, table, variant, seed, workers, budget, work, measured):
    h5, summary = simulate_slurmtune(binary, table, variant, seed, workers, budget, work, measured)
    run = Run(table, seed)
    with h5py.File(h5, "r") as f:
        rows = int(f["commit"][0]["metrics"])
        metrics = f["metrics"][:rows]
    for row in np.sort(metrics, order="seq"):
        run.report(float(row["time"]), float(row[table.metric]))
    run.started = summary["started"]
    run.decision_s = summary.get("decision_s", 0.0)
    return run


def optuna_sampler(name, seed):
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    return optuna.samplers.RandomSampler(seed=seed)


def run_optuna(table, sampler_name, pruner_name, seed, workers, budget, measured, sampler=None,
               enqueued=()):
    """Optuna's sampler by name (or `sampler`, an Optuna sampler object) with its pruner,
    driven by the discrete-event loop of `workers` workers; `enqueued` configurations
    (parameter dicts) are tried first, in order (Optuna's enqueue_trial)."""
    pruner = {"none": optuna.pruners.NopPruner(),
              "sha": optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3),
              "hyperband": optuna.pruners.HyperbandPruner(min_resource=1, max_resource=table.max_t,
                                                          reduction_factor=3)}[pruner_name]
    study = optuna.create_study(direction="minimize" if table.mode == "min" else "maximize",
                                sampler=sampler or optuna_sampler(sampler_name, seed), pruner=pruner,
                                study_name=f"{table.name}-{seed}")
    for params in enqueued:
        study.enqueue_trial(params)
    distributions = {p: optuna_distribution(table.space[p]) for p in table.params}
    unused = np.ones(len(table.configs), bool)
    picker = random.Random(seed)
    run = Run(table, seed)
    events, sequence, running = [], 0, {}

    def charged(since):
        """The decision's measured seconds when they count ([measured]), else 0."""
        cost = time.perf_counter() - since
        run.decision_s += cost
        return cost if measured else 0.0

    def launch(worker, now):
        nonlocal sequence
        if not unused.any() or now >= budget:
            return
        since = time.perf_counter()
        trial = study.ask(distributions)
        wait = charged(since)
        point = np.array([unit(table.space[p], trial.params[p]) for p in table.params])
        config = nearest_config(table, point, unused)
        unused[config] = False
        curve = table.draw_curve(config, picker)
        running[worker] = [trial, curve, 0]
        run.started += 1
        heapq.heappush(events, (now + wait + curve[2][0], sequence, worker))
        sequence += 1

    def drive():
        nonlocal sequence
        for worker in range(workers):
            launch(worker, 0.0)
        while events:
            now, _, worker = heapq.heappop(events)
            if now > budget:
                break
            trial, (steps, values, seconds), k = running[worker]
            value, step = float(values[k]), int(steps[k])
            run.report(now, value)
            since = time.perf_counter()
            trial.report(value, step)
            if pruner_name != "none" and trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            elif k + 1 == len(steps):
                study.tell(trial, value if not math.isnan(value) else None,
                           state=optuna.trial.TrialState.COMPLETE if not math.isnan(value)
                           else optuna.trial.TrialState.FAIL)
            else:
                running[worker][2] = k + 1
                heapq.heappush(events, (now + charged(since) + seconds[k + 1], sequence, worker))
                sequence += 1
                continue
            launch(worker, now + charged(since))

    # A sampler that raises ends the study there, as it would end a user's: the targets it
    # reached before count, the others are never reached (issue #64's rule for crashes,
    # fixed before the cell it was written for ran again: Optuna issue 5642).
    try:
        drive()
    except Exception as error:  # noqa: BLE001 - any failure of the peer's code ends its study
        run.crashed = f"{type(error).__name__}: {error}"
    return run


def run_top_k(table, k, seed, workers, budget):
    """Egele et al. 2023: every configuration trains one step, in a random order; once all
    have, the K best go on (from their checkpoint) to the end of their curves."""
    picker = random.Random(seed)
    order = list(range(len(table.configs)))
    picker.shuffle(order)
    curves = {c: table.draw_curve(c, picker) for c in order}
    run = Run(table, seed)
    first, waiting = {}, [(c, 0) for c in order]  # (configuration, index of its next step)
    events, sequence, idle = [], 0, list(range(workers))

    def assign(now):
        nonlocal sequence
        while idle and waiting:
            config, step = waiting.pop(0)
            run.started += step == 0
            heapq.heappush(events, (now + curves[config][2][step], sequence, idle.pop(), config, step))
            sequence += 1

    assign(0.0)
    while events:
        now, _, worker, config, step = heapq.heappop(events)
        if now > budget:
            break
        value = float(curves[config][1][step])
        run.report(now, value)
        if step + 1 < len(curves[config][0]) and step > 0:
            waiting.insert(0, (config, step + 1))
        elif step == 0:
            first[config] = value
            if len(first) == len(order):  # everything has trained one step: the K best go on
                sign = 1 if table.mode == "min" else -1
                ranked = sorted((c for c in first if not math.isnan(first[c])), key=lambda c: sign * first[c])
                waiting += [(c, 1) for c in ranked[:k] if len(curves[c][0]) > 1]
        idle.append(worker)
        assign(now)
    return run
