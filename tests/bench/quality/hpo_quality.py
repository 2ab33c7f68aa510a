#!/usr/bin/python3
"""HPO quality on recorded learning curves: slurmtune's schedulers against Optuna's
samplers and pruners, in one virtual-time harness, on the same tables, seeds and workers.

    /usr/bin/python3 tests/bench/quality/hpo_quality.py [--slurmtune build/src/slurmtune]
        [--tables digits-mlp cancer-gbdt] [--seeds 60] [--workers 4 [32 ...]] [--methods WORD ...]
        [--charged [--selection-seeds 60]] [--save runs.json] [--merge runs.json ...] [--plot doc/img/tuning-tables/regret]

Every method runs on each table (tests/bench/data/NAME.csv with NAME.toml, built by
make_curve_tables.py) with `--workers` workers in virtual time: a step takes the seconds
it took when the table was recorded. A configuration is drawn at most once. A
suggestion is mapped to the nearest configuration of the table not yet drawn (unit cube:
log scale for log domains, slot centre for choices): every Optuna sampler and slurmtune's
model samplers, start-up included; slurmtune's random sampler draws uniformly among the
configurations not yet drawn instead (draw_mechanism.py measures what that changes).
  - slurmtune: `slurmtune simulate NAME.toml --seed S -o run.h5` with fifo, asha (Ray's
    and Optuna's semantics), asha_promotion and hyperband with the random sampler, and
    the model-based samplers (tpe, bohb, mobster), the reports read back with h5py.
  - Optuna (the one imported: Debian's 3.1, or a newer copy on PYTHONPATH): RandomSampler,
    TPESampler and, where the version has it, GPSampler x no pruner, SuccessiveHalving
    (min_resource 1, reduction factor 3) and Hyperband (1, max_t, 3), driven through
    ask/report/should_prune/tell by a discrete-event loop of the same workers.
  - top-K (Egele et al. 2023): every configuration of the table, in a random order, trains
    one step; the K best then train to max_t.
Decision cost: by default decisions are free (a seed gives the same run everywhere).
Methods named "[measured]" charge each decision's measured time to the virtual clock:
`simulate --decision-cost measured` for slurmtune, the seconds of ask/should_prune/tell
for Optuna, so a model's own time counts as it would for a user.
`--charged` runs every Optuna variant "[measured]" and picks Optuna's best among them, and
ends with the claim cells: per (table, target, workers) the recommended setting's speed-up
(decisions charged) over Optuna's best charged variant and over random search with the same
scheduler (asha_promotion [measured]), the geometric means of both, and the largest speed-up
over Optuna's best that any method without prior knowledge of the table can have
(target_floors.py's no-prior bound) (issue #43). Then issue #64's score
(pooled_score.py): Optuna's charged variants also run on --selection-seeds other seeds
(from 1000 on; rows "[selection seeds]"), the rival of each cell is the best of them
there, and it is scored on the scoring seeds; each cell's no-prior bound B_c is printed
before any method runs on its table; S = sum ln(O_c / M_c) / sum ln(O_c / B_c) with its
paired-bootstrap interval, per worker count and over all cells, and each cell's bar.
Protocol: the same seeds for every method (paired); two targets per table, the 2nd and
10th percentiles of the curves' best values; per target the median [quartiles] virtual
time to reach it (a seed that never does counts as worst) and the speed-up over Optuna's
best variant at that target (its median over ours) with a paired bootstrap 95 % interval;
the regret (best so far minus the table's best) at 2 %, 10 % and 50 % of the budget. The
budget is the time random search without stopping needs to run the whole table.
`--save` writes every run to JSON and `--merge` adds runs saved by another invocation (a
newer Optuna on PYTHONPATH runs in its own process: see ../shared/notes and
doc/performance.md); keys are TABLE@WORKERS. `--plot PREFIX` writes PREFIX-TABLE.png (PREFIX-TABLE-W.png
with several worker counts): median regret over time.
"""
import argparse
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import optuna
from quality_runs import ROOT, TARGET_PERCENTILES, Run, Table, read_saved, run_optuna, run_slurmtune, run_top_k
from quality_stats import fmt, ordinal, plot_regret, quartiles, speedup_interval, times_by_seed
from pooled_score import bound_of_cell, cell_verdict, pooled_score
from target_floors import no_prior_bound


BUDGET_FRACTIONS = (0.02, 0.1, 0.5)

ASHA_RAY = {"type": "asha", "semantics": "ray", "grace_period": 1, "reduction_factor": 3}
HYPERBAND_RAY = {"type": "hyperband", "semantics": "ray", "reduction_factor": 3}
ASHA_PREDICT = {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3, "predict": True}
ASHA_PROMOTION = {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3}
# The recommended setting for "a good configuration as soon as possible" (doc/schedulers.md):
# of the candidates run on the tuning tables digits-mlp and cancer-gbdt only, the one with
# the highest geometric mean of its four speed-ups over Optuna's best (two tables x two
# targets; doc/performance.md).
RECOMMENDED = (ASHA_PROMOTION, "mobster", {"rung_weighting": "hyper-tune"})
# Freeze-thaw (issue #43, item 1): the model chooses between starting and resuming.
FREEZE_THAW = {"type": "freeze_thaw", "grace_period": 1, "reduction_factor": 3}
# (label, [scheduler] keys, sampler, [sampler] keys); the random sampler unless named.
SLURMTUNE_VARIANTS = [
    ("fifo", {"type": "fifo"}),
    ("asha (ray)", ASHA_RAY),
    ("asha (optuna)", {"type": "asha", "semantics": "optuna", "min_resource": 1, "reduction_factor": 3}),
    ("asha_promotion", ASHA_PROMOTION),
    ("asha_promotion [measured]", ASHA_PROMOTION),
    # Random search drawing as the model samplers and Optuna do: the configuration nearest
    # to a random point, not uniformly among the table's (draw_mechanism.py).
    ("fifo, nearest draws", {"type": "fifo"}, "random", {"nearest_draws": True}),
    ("asha_promotion, nearest draws", ASHA_PROMOTION, "random", {"nearest_draws": True}),
    ("asha_promotion, nearest draws [measured]", ASHA_PROMOTION, "random", {"nearest_draws": True}),
    ("hyperband (ray)", HYPERBAND_RAY),
    ("hyperband (optuna)", {"type": "hyperband", "semantics": "optuna", "min_resource": 1, "reduction_factor": 3}),
    ("tpe + asha (ray)", ASHA_RAY, "tpe"),
    ("tpe + hyperband (ray)", HYPERBAND_RAY, "tpe"),
    ("tpe binned + asha (ray)", ASHA_RAY, "tpe", {"semantics": "binned", "bins": 32}),
    ("bohb + asha (ray)", ASHA_RAY, "bohb"),
    ("bohb + hyperband (ray)", HYPERBAND_RAY, "bohb"),
    ("mobster + asha (ray)", ASHA_RAY, "mobster"),
    ("mobster + asha_promotion", ASHA_PROMOTION, "mobster"),
    ("mobster + hyperband (ray)", HYPERBAND_RAY, "mobster"),
    ("mobster hyper-tune + asha_promotion", ASHA_PROMOTION, "mobster", {"rung_weighting": "hyper-tune"}),
    ("mobster hyper-tune + asha (ray)", ASHA_RAY, "mobster", {"rung_weighting": "hyper-tune"}),
    ("mobster hyper-tune + hyperband (ray)", HYPERBAND_RAY, "mobster", {"rung_weighting": "hyper-tune"}),
    ("asha_promotion predict", ASHA_PREDICT),
    ("mobster + asha_promotion predict", ASHA_PREDICT, "mobster"),
    ("freeze_thaw", FREEZE_THAW, "mobster", {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw [measured]", FREEZE_THAW, "mobster", {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw, cost seconds", {**FREEZE_THAW, "cost": "seconds"}, "mobster", {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw, cost seconds [measured]", {**FREEZE_THAW, "cost": "seconds"}, "mobster",
     {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw, cost none", {**FREEZE_THAW, "cost": "none"}, "mobster", {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw, mix 0.5", {**FREEZE_THAW, "promotion_mix": 0.5}, "mobster", {"rung_weighting": "hyper-tune"}),
    ("freeze_thaw, mix 0.1", {**FREEZE_THAW, "promotion_mix": 0.1}, "mobster", {"rung_weighting": "hyper-tune"}),
    ("recommended", *RECOMMENDED),
    ("recommended [measured]", *RECOMMENDED),
    # A candidate (issue #43): the kernel's length scales expected to grow with the inputs.
    ("recommended, dimension-scaled prior", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "length_scale_prior": "dimension-scaled"}),
    ("recommended, dimension-scaled prior [measured]", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "length_scale_prior": "dimension-scaled"}),
    # Candidates screened together (issue #43; rule in doc/performance.md, "Start-up,
    # random share and candidates"): more random start-up trials, a larger random share,
    # and a denser search of the acquisition.
    *[(label + suffix, ASHA_PROMOTION, "mobster", {**RECOMMENDED[2], **options})
      for label, options in (("recommended, 20 start-up trials", {"n_startup_trials": 20}),
                             ("recommended, random fraction 0.25", {"random_fraction": 0.25}),
                             ("recommended, 1000 candidates", {"num_candidates": 1000,
                                                               "local_candidates": 200}),
                             ("recommended, input warping", {"input_warping": True}),
                             ("recommended, exchangeable choices", {"exchangeable_choices": True}),
                             ("recommended, copula targets", {"target_transform": "copula"}),
                             ("recommended, Sobol start-up", {"startup_design": "sobol"}),
                             ("recommended, greedy mean", {"acquisition": "mean"}),
                             ("recommended, cost exponent 0.5", {"cost_exponent": 0.5}))
      for suffix in ("", " [measured]")],
    # A candidate (issue #43): a short rung's leader runs on instead of pausing.
    ("recommended, eager promotion", {**ASHA_PROMOTION, "eager_promotion": True}, "mobster", RECOMMENDED[2]),
    ("recommended, eager promotion [measured]", {**ASHA_PROMOTION, "eager_promotion": True}, "mobster",
     RECOMMENDED[2]),
    # What fantasising only the pending trials started last costs (issue #62): at 32 workers
    # a cap of 8 binds as the default 64 binds at 256 workers (no launch waves: `wave`
    # came later, and past 8 pending its default would make them).
    ("recommended, 8 fantasies", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "max_pending": 8, "wave": 0}),
    # What launch waves cost (issue #61, `wave`): past 8 pending, blocks of 8 trials share
    # one scoring, as blocks of 64 do past 64 pending at thousands of workers.
    ("recommended, 8 fantasies, waves of 8", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "max_pending": 8, "wave": 8}),
    # What making each suggestion right after the previous start costs (issue #62,
    # suggest_ahead): it does not see what happened between the two starts.
    ("recommended, suggestions ahead", ASHA_PROMOTION, "mobster", {**RECOMMENDED[2], "suggest_ahead": True}),
    ("recommended, suggestions ahead [measured]", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "suggest_ahead": True}),
    # Candidates of issue #64, item 3 (rule in doc/performance/search-screening.md): Thompson
    # draws instead of expected improvement with fantasies of the pending trials; cost
    # cooling (CArBO: expected improvement per predicted second a step to a power that falls
    # from 1 to 0 over the study's time budget); SMAC's random forest as the surrogate.
    *[(label + suffix, ASHA_PROMOTION, "mobster", {**RECOMMENDED[2], **options})
      for label, options in (("recommended, Thompson draws", {"acquisition": "thompson"}),
                             ("recommended, cost cooling", {"cost_exponent": 1, "cost_cooling_s": "budget"}),
                             ("recommended, random forest", {"surrogate": "random-forest"}),
                             # Issue #64, item 4 ("Greedy picks on copula targets"): the two
                             # screened apart (0.960 and 1.029), never together.
                             ("recommended, copula targets, greedy mean",
                              {"target_transform": "copula", "acquisition": "mean"}),
                             # Issue #64, item 4 ("Half the model trials greedy, on copula
                             # targets"): a hedge between the two acquisitions; at a share of 1
                             # it is the row above (the build check of its rule).
                             ("recommended, copula targets, greedy half",
                              {"target_transform": "copula", "greedy_share": 0.5}),
                             ("recommended, copula targets, greedy share 1",
                              {"target_transform": "copula", "greedy_share": 1}),
                             # Issue #64, item 4 ("A sparse length-scale prior"): SAAS's
                             # shrinkage of the inverse squared length scales, at its mode.
                             ("recommended, sparse prior", {"length_scale_prior": "sparse"}))
      for suffix in ("", " [measured]")],
    # A candidate of issue #64, item 4 (rule in doc/performance/search-screening.md, "A trust
    # region around the incumbent"): TuRBO-1's box around the best first-rung trial.
    # Then half the candidates from the box, half from the whole space; then a box along
    # the short inputs only ("A trust region along the short inputs only").
    *[(label + suffix, ASHA_PROMOTION, "mobster", {**RECOMMENDED[2], "trust_region": True, **options})
      for label, options in (("recommended, trust region", {}),
                             ("recommended, trust region share 0.5", {"trust_region_share": 0.5}),
                             ("recommended, trust region short inputs", {"trust_region_inputs": "short"}))
      for suffix in ("", " [measured]")],
    # What conditioning on at most max_observations (200) costs in quality: no subsampling.
    ("recommended, every observation", ASHA_PROMOTION, "mobster",
     {**RECOMMENDED[2], "max_observations": 100000}),
]
OPTUNA_SAMPLERS = ("random", "tpe", "gp")  # gp: GPSampler, where the Optuna imported has it
OPTUNA_PRUNERS = ("none", "sha", "hyperband")
OPTUNA_MEASURED = (("tpe", "sha"), ("random", "sha"), ("gp", "sha"))  # rows also run "[measured]"
TOP_K = 3


@dataclass
class Method:
    """A row of the table: how to run one seed of it."""
    name: str
    kind: str  # "slurmtune", "optuna" or "top-k"
    args: tuple = ()
    measured: bool = False  # charge decisions' measured time to the virtual clock


def summarise(runs, table, budget):
    per_target = []
    for i in range(len(table.targets)):
        q25, median, q75 = quartiles([r.times[i] for r in runs])
        per_target.append(dict(median=median, q25=q25, q75=q75, reached=sum(r.times[i] is not None for r in runs),
                               seeds=len(runs)))
    regrets = [quartiles([r.regret_at(f * budget, table.best) for r in runs])[1] for f in BUDGET_FRACTIONS]
    return dict(targets=per_target, regrets=regrets, started=float(np.median([r.started for r in runs])),
                decision_s=float(np.median([r.decision_s for r in runs])))


def run_task(task):
    """One (method, seed) in a worker process: (name, run, wall seconds)."""
    method, seed, args, table, workers, budget, work = task
    started = time.time()
    if method.kind == "slurmtune":
        folder = os.path.join(work, f"{table.name}-{workers}-{method.name.replace(' ', '_')}-{seed}")
        os.makedirs(folder, exist_ok=True)
        run = run_slurmtune(args.slurmtune, table, method.args, seed, workers, budget, folder, method.measured)
    elif method.kind == "optuna":
        run = run_optuna(table, *method.args, seed, workers, budget, method.measured)
    else:
        run = run_top_k(table, method.args[0], seed, workers, budget)
    run.table = None  # sent back without the table
    return method.name, run, time.time() - started


def all_methods(args):
    methods = [Method("slurmtune " + v[0], "slurmtune", v[1:], v[0].endswith("[measured]")) for v in SLURMTUNE_VARIANTS]
    samplers = [s for s in OPTUNA_SAMPLERS if s != "gp" or hasattr(optuna.samplers, "GPSampler")]
    label = f"optuna {optuna.__version__}"
    methods += [Method(f"{label} {s} + {p}", "optuna", (s, p)) for s in samplers for p in OPTUNA_PRUNERS]
    measured = [(s, p) for s in samplers for p in OPTUNA_PRUNERS] if args.charged else OPTUNA_MEASURED
    methods += [Method(f"{label} {s} + {p} [measured]", "optuna", (s, p), True)
                for s, p in measured if s in samplers]
    methods.append(Method(f"top-{args.top_k} after one step", "top-k", (args.top_k,)))
    if args.methods:  # fifo (random search) stays as the reference
        methods = [m for m in methods if m.name == "slurmtune fifo" or any(w in m.name for w in args.methods)]
    if args.only:
        unknown = set(args.only) - {m.name for m in methods}
        if unknown:
            sys.exit(f"--only: no method named {', '.join(sorted(unknown))}")
        methods = [m for m in methods if m.name in args.only]
    return methods


SELECTION = " [selection seeds]"  # the rows Optuna's best is chosen on (issue #64)
SELECTION_FIRST_SEED = 1000  # seeds no scoring run has


def selection_runs(args, methods):
    """With --charged: Optuna's charged variants again, on --selection-seeds other seeds,
    so that the rival is not chosen on the seeds it is scored on (issue #64)."""
    if not (args.charged and args.selection_seeds):
        return []
    chosen = [Method(m.name + SELECTION, m.kind, m.args, m.measured) for m in methods
              if m.kind == "optuna" and m.measured]
    return [(m, seed) for m in chosen
            for seed in range(SELECTION_FIRST_SEED, SELECTION_FIRST_SEED + args.selection_seeds)]


def benchmark(args, table, workers, work, merged):
    """{method name: (summary, CPU seconds, runs)} over args.seeds seeds (and the
    selection rows' over --selection-seeds other seeds)."""
    budget = table.total_seconds / workers
    methods = all_methods(args)
    pairs = [(m, seed) for m in methods for seed in range(args.seeds)] + selection_runs(args, methods)
    for m, _ in pairs:
        if m.name not in {known.name for known in methods}:
            methods.append(m)
    tasks = [(m, seed, args, table, workers, budget, work) for m, seed in pairs]
    runs, walls = {m.name: [] for m in methods}, {m.name: 0.0 for m in methods}
    with multiprocessing.Pool(args.jobs) as pool:
        for name, run, wall in pool.imap_unordered(run_task, tasks):
            run.table = table
            runs[name].append(run)
            walls[name] += wall
    for name, saved in merged_runs(args, merged, table.name, workers).items():  # possibly fewer seeds
        if runs.get(name):
            continue  # run here: this invocation's seeds
        last = SELECTION_FIRST_SEED + args.selection_seeds if name.endswith(SELECTION) else args.seeds
        runs[name] = [Run.from_json(r) for r in saved["runs"] if r["seed"] < last]
        walls[name] = saved["cpu_s"]
        for run in runs[name]:
            run.table = table
    return budget, {name: (summarise(rs, table, budget), walls[name], rs) for name, rs in runs.items()}


def optuna_best(results, target_index, charged, selection=False):
    """Optuna's variant with the lowest median time to the target, among those whose
    decisions are charged (--charged) or among those deciding for free; with `selection`,
    among the rows of the selection seeds (the name returned is then the scoring row's)."""
    medians = {name: r["targets"][target_index]["median"] for name, (r, _, _) in results.items()
               if name.startswith("optuna") and ("[measured]" in name) == charged
               and name.endswith(SELECTION) == selection}
    if selection:
        medians = {n[:-len(SELECTION)]: m for n, m in medians.items() if n[:-len(SELECTION)] in results}
    reached = {n: m for n, m in medians.items() if m is not None}
    return min(reached, key=reached.get) if reached else None


def write_saved(path, saved):
    """--save: every run so far, replacing the file whole (a temporary file renamed)."""
    with open(path + ".tmp", "w") as f:
        json.dump(saved, f)
    os.replace(path + ".tmp", path)


def saved_key(name, workers):
    """A table's key in --save and --merge files: its name and the workers it ran with."""
    return f"{name}@{workers}"


def merged_runs(args, merged, name, workers):
    """The saved runs of one table at `workers`. Files written before keys always carried
    the workers hold a bare name; it is taken only when one worker count is asked for."""
    runs = merged.get(saved_key(name, workers))
    if runs is None and len(args.workers) == 1:
        runs = merged.get(name)
    return runs or {}


def paired_speedup(runs, theirs, target_index, rng):
    """(point, low, high): their median time over ours, on the seeds both ran."""
    seeds = sorted({r.seed for r in runs} & {r.seed for r in theirs})
    return speedup_interval(times_by_seed(runs, target_index, seeds), times_by_seed(theirs, target_index, seeds), rng)


def print_table(args, table, workers, budget, results):
    rng = np.random.default_rng(0)
    curves = sum(len(r) for r in table.curves)
    print(f"\n### {table.name}: {len(table.configs)} configurations ({curves} curves) x {table.max_t} steps, "
          f"{workers} workers, {args.seeds} seeds")
    relation = "<=" if table.mode == "min" else ">="
    print("targets " + ", ".join(f"T{i + 1}: {table.metric} {relation} {fmt(t, 4)} ({ordinal(p)} percentile of the "
                                 f"curves' best)" for i, (t, p) in enumerate(zip(table.targets, TARGET_PERCENTILES)))
          + f"; table best {fmt(table.best, 4)}; budget {budget:.1f} s virtual")
    bests = [optuna_best(results, i, args.charged) for i in range(len(table.targets))]
    print("Optuna's best variant: " + ", ".join(f"T{i + 1} {b}" for i, b in enumerate(bests)) + "\n")
    header = ["method"]
    for i in range(len(table.targets)):
        header += [f"T{i + 1} time s, median [q25, q75]", "reached", f"T{i + 1} speed-up vs Optuna best [95% CI]"]
    header += [f"regret @{int(f * 100)}%" for f in BUDGET_FRACTIONS] + ["trials", "decisions s", "CPU s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, (r, wall, runs) in results.items():
        cells = [name]
        for i, t in enumerate(r["targets"]):
            cells += [f"{fmt(t['median'])} [{fmt(t['q25'])}, {fmt(t['q75'])}]", f"{t['reached']}/{t['seeds']}"]
            if bests[i] is None or name.endswith(SELECTION):  # a selection row shares no seed
                cells.append("-")
                continue
            point, low, high = paired_speedup(runs, results[bests[i]][2], i, rng)
            cells.append(f"{fmt(point)} [{fmt(low)}, {fmt(high)}]")
        cells += [fmt(x) for x in r["regrets"]] + [f"{r['started']:.0f}", fmt(r["decision_s"]), f"{wall:.1f}"]
        print("| " + " | ".join(cells) + " |")
    for name, (_, _, runs) in results.items():
        crashed = [run for run in runs if run.crashed]
        if crashed:
            print(f"\n{name}: {len(crashed)} of {len(runs)} studies crashed and stopped there (a target "
                  f"not reached before counts as never reached); seed {crashed[0].seed}: {crashed[0].crashed}")
    sys.stdout.flush()


CLAIMED = "slurmtune recommended [measured]"  # the setting judged, decisions charged
NO_PRIOR_DRAWS = 4000  # random first waves behind a cell's no-prior bound (target_floors.py)
SAME_SCHEDULER = "slurmtune asha_promotion [measured]"  # random search with its scheduler


def published_bounds(args, table, workers):
    """Issue #64's B_c of each target, printed before any method runs on the table."""
    bounds = [bound_of_cell(table, target, workers, NO_PRIOR_DRAWS, no_prior_bound) for target in table.targets]
    print(f"\nno-prior bounds of {table.name} at {workers} workers, published before the runs (s): " +
          ", ".join(f"T{i + 1} {fmt(b)}" for i, b in enumerate(bounds)))
    sys.stdout.flush()
    return bounds


def claim_cells(args, table, workers, results, bounds):
    """The issue #43 cells of one table: per target, the recommended setting's speed-up over
    Optuna's best charged variant and over random + asha_promotion, with 95 % intervals;
    with issue #64's rival (chosen on the selection seeds), room and bound."""
    rng = np.random.default_rng(0)
    cells = []
    if CLAIMED not in results:
        return cells
    ours = results[CLAIMED][2]
    for i in range(len(table.targets)):
        chosen_apart = args.selection_seeds > 0
        best = optuna_best(results, i, True, selection=chosen_apart)
        versus_optuna = paired_speedup(ours, results[best][2], i, rng) if best else (math.nan,) * 3
        versus_random = paired_speedup(ours, results[SAME_SCHEDULER][2], i, rng) \
            if SAME_SCHEDULER in results else (math.nan,) * 3
        # The largest speed-up over Optuna's best that any method without prior knowledge
        # of the table can have (target_floors.py: its median over the no-prior bound).
        theirs = results[best][2] if best else []
        most = float(np.median(times_by_seed(theirs, i, sorted({r.seed for r in theirs})))) / \
            no_prior_bound(table, table.targets[i], workers, NO_PRIOR_DRAWS) if theirs else math.nan
        seeds = sorted({r.seed for r in ours} & {r.seed for r in theirs})
        rival_times, our_times = times_by_seed(theirs, i, seeds), times_by_seed(ours, i, seeds)
        room = float(np.median(rival_times)) / bounds[i] if theirs else math.nan
        cells.append(dict(table=table.name, target=f"T{i + 1}", workers=workers, optuna_best=best,
                          versus_optuna=versus_optuna, versus_random=versus_random, most_possible=most,
                          ours=our_times, rival=rival_times, bound=bounds[i], room=room,
                          chosen_apart=chosen_apart, verdict=cell_verdict(versus_optuna, room)))
    return cells


def print_claim_cells(cells):
    """Every cell, then the issue's three bars: geometric mean of the speed-ups over Optuna's
    best >= 1.5, no lower end below 1.0 there, no upper end below 1.0 against random."""
    interval = lambda c: f"{fmt(c[0])} [{fmt(c[1])}, {fmt(c[2])}]"  # noqa: E731
    print("\n### Claim cells: `recommended [measured]` against Optuna's best charged variant and against "
          "random + asha_promotion [measured]\n")
    print("| table | target | workers | vs Optuna's best [95% CI] | Optuna's best | vs random + asha_promotion [95% CI] "
          "| most possible vs Optuna's best |")
    print("|---|---|---|---|---|---|---|")
    for c in cells:
        print(f"| {c['table']} | {c['target']} | {c['workers']} | {interval(c['versus_optuna'])} | "
              f"{c['optuna_best']} | {interval(c['versus_random'])} | {fmt(c['most_possible'])} |")
    def geomean(key):
        finite = [p for p in (c[key][0] for c in cells) if 0 < p < math.inf]
        return fmt(math.exp(sum(map(math.log, finite)) / len(finite)) if finite else math.nan), len(finite)

    (versus_optuna, counted), (versus_random, _) = geomean("versus_optuna"), geomean("versus_random")
    print(f"\ngeometric mean over {counted} of {len(cells)} cells (finite, positive): {versus_optuna} against "
          f"Optuna's best, {versus_random} against random + asha_promotion; "
          f"cells whose interval against Optuna's best starts below 1.0: "
          f"{sum(c['versus_optuna'][1] < 1.0 for c in cells)}; cells later than random + asha_promotion "
          f"(upper end below 1.0): {sum(c['versus_random'][2] < 1.0 for c in cells)}")
    print_pooled_score(cells)


def print_pooled_score(cells):
    """Issue #64's score S with its interval, and each cell against its bar."""
    scored = [c for c in cells if c["optuna_best"]]
    if not scored:
        return
    apart = all(c["chosen_apart"] for c in scored)
    chosen = ("chosen on the selection seeds" if apart
              else "chosen on the scoring seeds (this flatters it: --selection-seeds 0)")
    print(f"\n### Issue #64's score: the rival {chosen}, the bounds published before the runs\n")
    print("| table | target | workers | rival | rival's median s | bound s | room | speed-up [95% CI] | bar |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in scored:
        point, low, high = c["versus_optuna"]
        print(f"| {c['table']} | {c['target']} | {c['workers']} | {c['optuna_best']} | "
              f"{fmt(float(np.median(c['rival'])))} | {fmt(c['bound'])} | {fmt(c['room'])} | "
              f"{fmt(point)} [{fmt(low)}, {fmt(high)}] | {c['verdict']} |")
    for workers in sorted({c["workers"] for c in scored}) + [None]:
        group = [c for c in scored if workers is None or c["workers"] == workers]
        # The seeds resampled per table: a table's cells at every worker count share them.
        try:
            score, low, high = pooled_score(group, np.random.default_rng(0))
        except ValueError as e:  # a cell missing seeds: said, not fatal after hours of runs
            print(f"\nS ({'all cells' if workers is None else f'{workers} workers'}): not computed: {e}", end="")
            continue
        print(f"\nS ({'all cells' if workers is None else f'{workers} workers'}, {len(group)} cells) = "
              f"{fmt(score)} [{fmt(low)}, {fmt(high)}]", end="")
    met = sum(c["verdict"] == "meets the bar" for c in scored)
    print(f"\ncells that meet their bar: {met} of {len(scored)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slurmtune", default=os.path.join(ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--tables", nargs="+", default=["digits-mlp", "cancer-gbdt"])
    parser.add_argument("--methods", nargs="+", help="only the methods whose names contain one of these words")
    parser.add_argument("--only", nargs="+", help="only the methods of exactly these names")
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--workers", type=int, nargs="+", default=[4], help="one benchmark per worker count")
    parser.add_argument("--charged", action="store_true",
                        help="every Optuna variant charged; Optuna's best among them; the claim cells at the end")
    parser.add_argument("--selection-seeds", type=int, default=60,
                        help="--charged: Optuna's best is chosen on this many other seeds (0: on the scoring seeds)")
    parser.add_argument("--top-k", type=int, default=TOP_K, help="K of the top-K baseline")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes running seeds in parallel")
    parser.add_argument("--save", help="write every run of every method to this JSON file")
    parser.add_argument("--merge", nargs="+", default=[], help="add the runs saved in these JSON files")
    parser.add_argument("--plot", help="write PREFIX-TABLE.png: median regret against virtual time")
    args = parser.parse_args()
    merged = {}
    for path in args.merge:  # the first file to hold a method gives its runs
        for table, methods in read_saved(path).items():
            for name, saved in methods.items():
                merged.setdefault(table, {}).setdefault(name, saved)
    version = subprocess.run([args.slurmtune, "--version"], capture_output=True, text=True).stdout.split()
    print(f"slurmtune {version[-1] if version else '?'}, Optuna {optuna.__version__}; `speed-up`: Optuna's best "
          f"variant's median time to the target over the method's (> 1: sooner)")
    saved, cells = {}, []
    with tempfile.TemporaryDirectory() as work:
        for name in args.tables:
            table = Table(name)
            for workers in args.workers:
                bounds = published_bounds(args, table, workers) if args.charged else None
                budget, results = benchmark(args, table, workers, work, merged)
                print_table(args, table, workers, budget, results)
                key = saved_key(name, workers)
                saved[key] = {n: dict(cpu_s=w, runs=[r.to_json() for r in rs]) for n, (_, w, rs) in results.items()}
                if args.save:  # after every table: an hour-long run interrupted keeps what it finished
                    write_saved(args.save, saved)
                cells += claim_cells(args, table, workers, results, bounds) if args.charged else []
                if args.plot:
                    best = optuna_best(results, 0, args.charged)
                    names = ["slurmtune recommended", "slurmtune recommended [measured]",
                             "slurmtune mobster hyper-tune + asha_promotion", "slurmtune asha (ray)",
                             "slurmtune asha_promotion [measured]", "slurmtune fifo",
                             f"top-{args.top_k} after one step", best] + \
                        [n for n in results if "gp +" in n and "sha" in n]
                    suffix = f"-{workers}" if len(args.workers) > 1 else ""  # PREFIX-TABLE[-W].png
                    plot_regret(f"{args.plot}-{os.path.basename(name)}{suffix}.png", table, budget, results,
                                list(dict.fromkeys(n for n in names if n in results)))
    if cells:
        print_claim_cells(cells)


if __name__ == "__main__":
    main()
