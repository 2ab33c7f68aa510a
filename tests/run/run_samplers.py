#!/usr/bin/env python3
"""The model-based sampler scenarios of tests/run/check_run.py (tpe-resume,
mobster-resume, recommended): a TPE or MOBSTER study interrupted (SIGUSR1 locally;
`scancel --signal=USR1` of the job under Slurm, which requeues it) and resumed suggests
exactly the configurations an uninterrupted run suggests, and `slurmtune replay` on the
results file's log agrees with every recorded suggestion. `recommended` runs the
recommended setting of doc/schedulers.md (share/slurmtune/examples/numpy-mlp/fast.toml)
on the real numpy MLP, replayed with identical suggestions and decisions; then the same
[sampler] and [scheduler] with learning-curve prediction (predict = true) interrupted and
resumed: suggestions, decisions and predictions identical to an uninterrupted run and to
replay."""
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter

import h5py

from run_harness import (FAULT_TRIAL, ROOT, Study, check_asha, check_complete, expect, next_session,
                         read, study_toml, wait_for)
from run_reliability import interrupt_gracefully

TRIALS, STARTUP = 10, 4


def started_so_far(log_path, offset):
    # The log may hold the uninterrupted run before `offset` (local runs append to one).
    counts = re.findall(r"progress: .* (\d+)/\d+ started", read(log_path)[offset:])
    return int(counts[-1]) if counts else 0


SAMPLER_OPTIONS_OF_MOBSTER = {"num_candidates": 200, "random_fraction": 0.3}
SAMPLER_OPTIONS = {"tpe": "constant_liar = true\n",
                   "mobster": "".join("%s = %s\n" % o for o in SAMPLER_OPTIONS_OF_MOBSTER.items())}


EXAMPLE = os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp")


def toml_lines(table):
    return "".join("%s = %s\n" % (k, json.dumps(v)) for k, v in table.items())


def sampler_study(runner, sampler, options=None, scheduler=None):
    """A study of the fault trial (deterministic in x); `options` replace the sampler's
    test options, `scheduler` the ASHA keys ([scheduler] of another study, less max_t)."""
    # With another [scheduler], 9 steps: rungs 1, 3 and 9, so that a rung below the top
    # (3) has the three reports a learning-curve prediction needs.
    steps = 9 if scheduler else 6
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=%d" % steps,
               "--sleep=%s" % (0.3 if scheduler else 0.4)]
    # One slot: each suggestion sees every earlier trial ended, so the uninterrupted and
    # the interrupted run see the same histories (the trial is deterministic in x).
    text = study_toml(sampler, command, max_trials=TRIALS, max_t=steps,
                      study_extra='sampler = "%s"\n' % sampler)
    if scheduler:
        keys = {k: v for k, v in scheduler.items() if k not in ("max_t", "resource")}
        text = re.sub(r"\[scheduler\]\n(.*\n)*?max_t = %d\n" % steps,
                      "[scheduler]\n" + toml_lines(keys) + "max_t = %d\n" % steps, text)
    extra = (toml_lines({k: v for k, v in options.items() if k != "n_startup_trials"}) if options is not None
             else SAMPLER_OPTIONS[sampler])
    text += "\n[sampler]\nn_startup_trials = %d\n%s" % (STARTUP, extra)
    return runner.write("study.toml", text)


def trials_of(path):
    study = Study(path)
    trials = study.trials.sort_index()
    study.close()
    return trials


def scenario_tpe_resume(runner, args):
    resume_scenario(runner, "tpe")


def scenario_mobster_resume(runner, args):
    resume_scenario(runner, "mobster")


def scenario_ahead_resume(runner, args):
    """suggest_ahead (issue #62): MOBSTER making each suggestion right after the previous
    trial starts, on the sampler's thread. On one slot, interrupted and resumed: the
    configurations of an uninterrupted run (the resume makes the suggestion made ahead
    where the interrupted run made it), and replay suggests every one. On 4 slots to the
    end, where launches wait for suggestions still being made: replay suggests every
    configuration and makes every decision the run made."""
    options = dict(SAMPLER_OPTIONS_OF_MOBSTER, suggest_ahead=True)
    resume_scenario(runner, "mobster", options)
    study = sampler_study(runner, "mobster", options)
    path = os.path.join(runner.workdir, "slots.h5")
    rc, log = runner.run(study, path, extra=["--slots", "4"],
                         sbatch_args=["-N", "1", "--ntasks-per-node", "4"])
    expect(rc == 0, "the 4-slot run failed:\n" + log)
    check_complete(path, TRIALS)
    suggestions, replayed = replayed_decisions(runner, study, path, slots=4)
    expect(suggestions == TRIALS, "replay made %d suggestions for %d trials" % (suggestions, TRIALS))
    same_decisions(decisions(path), replayed, "4 slots: replay against the run")
    print("ahead, 4 slots: %d configurations and %d decisions replayed identically"
          % (TRIALS, len(replayed)))


def scenario_prior_resume(runner, args):
    """[sampler] prior (issue #64): MOBSTER starting where an earlier study (a simulated
    one of the same space and metric) did best, on asha_promotion, interrupted and resumed:
    the configurations and decisions of an uninterrupted run, every start-up (STARTUP, fewer
    than prior_exact's 5) one of the earlier study's best as they were and trusted
    (trusted_trials follows prior_exact since C18), the first two of them training to max_t
    unpaused while others stop short, and replay suggests and decides as the run did. With
    prior_model, so that the model's picks after the start-ups, which the earlier study's
    observations move, are resumed too."""
    earlier = os.path.join(runner.workdir, "earlier.h5")
    out = subprocess.run([args.slurmtune, "simulate", sampler_study(runner, "mobster"), "-o", earlier,
                          "-q", "--max-trials", "30"], capture_output=True, text=True)
    expect(out.returncode == 0, "the earlier study failed:\n" + out.stderr)
    options = dict(SAMPLER_OPTIONS_OF_MOBSTER, prior=[earlier], prior_model=True)
    promotion = {"type": "asha_promotion", "grace_period": 1, "reduction_factor": 3}
    resume_scenario(runner, "mobster", options, promotion)
    with h5py.File(earlier, "r") as f:
        past = sorted(f["trials"][:], key=lambda t: (-float(t["last_step"]), float(t["last_value"])))
    ran = trials_of(os.path.join(runner.workdir, "study.h5"))
    expect(list(ran["config/x"][:STARTUP]) == [float(t["config/x"]) for t in past[:STARTUP]],
           "the %d start-ups are not the earlier study's best %d: %s, %s"
           % (STARTUP, STARTUP, list(ran["config/x"][:STARTUP]), [float(t["config/x"]) for t in past[:STARTUP]]))
    expect(list(ran.last_step[:2]) == [9, 9] and (ran.last_step[2:] < 9).any(),
           "trusted: the earlier best two did not run to max_t (9) while others stopped short: %s"
           % list(ran.last_step))
    print("prior: the %d start-ups were the earlier study's best %d, the first two trained to max_t, trusted"
          % (STARTUP, STARTUP))


CONDITIONAL_SEARCH = ("opt = { choice = [\"sgd\", \"adam\"] }\n"
                      "momentum = { uniform = [0.0, 0.9], when = { opt = \"sgd\" } }\n"
                      "nesterov = { choice = [true, false], when = { opt = \"sgd\" } }\n"
                      "warmup = { randint = [0, 5], when = { nesterov = true } }\n")


def tpe_study_text(name, command, trials, search, tail):
    """A tpe study of `trials` trials of `command`: [search] gains `search` before x, the
    file ends with `tail`."""
    text = study_toml(name, command, max_trials=trials, max_t=3, study_extra='sampler = "tpe"\n')
    return text.replace("[search]\n", "[search]\n" + search) + tail


def run_tpe_study(runner, name, command, trials, search, tail, slots):
    """tpe_study_text run with `slots` slots to the end; (study file, results file, trials)."""
    study = runner.write("study.toml", tpe_study_text(name, command, trials, search, tail))
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=["--slots", str(slots)],
                         sbatch_args=["-N", "1", "--ntasks-per-node", str(slots)])
    expect(rc == 0, "the run failed:\n" + log)
    check_complete(path, trials)
    return study, path, trials_of(path)


def scenario_conditional(runner, args):
    """A conditional space (`when`, a chain included) on real trials under tpe: a trial
    gets exactly the parameters that exist for it, in argv (an argument naming an absent
    one is left out) and from the client; the results file, status and the Python module
    show the absent ones as absent; replay suggests every configuration that ran."""
    trial = os.path.join(os.path.dirname(FAULT_TRIAL), "argv_trial.py")
    record = os.path.join(runner.workdir, "argv-{trial_id}.json")
    command = [sys.executable, trial, "--x={x}", "--momentum={momentum}", "--warmup={warmup}",
               "--record=" + record]
    study, path, trials = run_tpe_study(
        runner, "conditional", command, 8, CONDITIONAL_SEARCH,
        "\n[sampler]\nn_startup_trials = 3\n"
        "\n[[enqueue]]\nopt = \"sgd\"\nnesterov = true\n"
        "\n[[enqueue]]\nopt = \"adam\"\n", slots=2)
    branches = set()
    for t in trials.itertuples():
        row = trials.loc[t.Index]
        sgd = row["config/opt"] == "sgd"
        nesterov = sgd and bool(row["config/nesterov"])
        with open(record.replace("{trial_id}", str(t.Index))) as f:
            given = json.load(f)
        flags = {a.split("=")[0] for a in given["argv"]}
        expect(("--momentum" in flags) == sgd and ("--warmup" in flags) == nesterov,
               "trial %d (opt %s, nesterov %s) got argv %s" % (t.Index, row["config/opt"],
                                                              row["config/nesterov"], given["argv"]))
        names = {"x", "opt"} | ({"momentum", "nesterov"} if sgd else set()) | ({"warmup"} if nesterov else set())
        expect(set(given["params"]) == names, "trial %d has parameters %s" % (t.Index, sorted(given["params"])))
        for name in ("momentum", "nesterov", "warmup"):
            absent = row["config/" + name] is None or row["config/" + name] != row["config/" + name]
            expect(absent == (name not in names), "trial %d: config/%s is %r" % (t.Index, name, row["config/" + name]))
        branches.add((sgd, nesterov))
    expect({(True, True), (False, False)} <= branches, "both branches did not run: %s" % branches)
    status = subprocess.run([runner.slurmtune, "status", path, "--all"], capture_output=True, text=True,
                            check=True).stdout
    expect(re.search(r"^  1 .* adam +- +- +- +[-0-9.e]+$", status, re.M),
           "status shows trial 1's absent ones:\n" + status)
    suggestions, _ = replayed_decisions(runner, study, path)
    expect(suggestions == 8, "replay made %d suggestions for 8 trials" % suggestions)
    print("conditional: 8 trials, branches %s; argv, client parameters, results file and status show "
          "exactly the parameters each has; replay matches all" % sorted(branches))


def scenario_conditional_resume(runner, args):
    """A conditional tpe study with group decomposition, interrupted (SIGUSR1) and resumed,
    suggests what an uninterrupted run suggests, the absent parameters included: the
    results file's active/* columns and the groups' order come back as they were."""
    trial = os.path.join(os.path.dirname(FAULT_TRIAL), "argv_trial.py")
    command = [sys.executable, trial, "--x={x}", "--momentum={momentum}", "--warmup={warmup}",
               "--record=" + os.devnull, "--sleep=0.25"]
    text = tpe_study_text("conditional-resume", command, TRIALS, CONDITIONAL_SEARCH,
                          "\n[sampler]\nn_startup_trials = %d\nmultivariate = true\ngroup = true\n"
                          % STARTUP)
    study = runner.write("study.toml", text)
    straight, path, _ = straight_and_resumed(runner, study)
    columns = ["config/" + n for n in ("opt", "x", "momentum", "nesterov", "warmup")]
    a, b = trials_of(straight), trials_of(path)
    same = a[columns].astype(str).values.tolist() == b[columns].astype(str).values.tolist()
    expect(same, "the resumed study suggested otherwise:\n%s\n%s" % (a[columns], b[columns]))
    expect(list(a.origin) == list(b.origin), "origins differ: %s / %s" % (list(a.origin), list(b.origin)))
    suggestions, _ = replayed_decisions(runner, study, path)
    expect(suggestions == TRIALS, "replay made %d suggestions for %d trials" % (suggestions, TRIALS))
    print("conditional-resume: %d configurations (%d with momentum) identical to an uninterrupted "
          "run; replay matches all" % (TRIALS, (b["config/opt"] == "sgd").sum()))


def run_example(runner, study_file, trials):
    """The numpy-mlp example `study_file` as shipped, with its train.py, run to the end on
    one node with two slots and checked complete; (study file, results file)."""
    for name in ("train.py", study_file):
        shutil.copy(os.path.join(EXAMPLE, name), runner.workdir)
    study = os.path.join(runner.workdir, study_file)
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, sbatch_args=["-N", "1", "--ntasks-per-node", "2"])
    expect(rc == 0, "the example failed:\n" + log)
    check_complete(path, trials)
    return study, path


def scenario_example_conditional(runner, args):
    """The worked example share/slurmtune/examples/numpy-mlp/conditional.toml as shipped:
    the real numpy MLP, a conditional momentum, two [[enqueue]] entries."""
    _, path = run_example(runner, "conditional.toml", 16)
    trials = trials_of(path)
    first = trials.iloc[0]
    expect((first["config/lr"], first["config/hidden"], first["config/optimizer"], first["config/momentum"],
            first.origin) == (0.3, 32, "momentum", 0.9, "enqueued"), "trial 0: %s" % dict(first))
    second = trials.iloc[1]
    expect((second["config/lr"], second["config/optimizer"]) == (0.5, "sgd")
           and second["config/momentum"] != second["config/momentum"], "trial 1: %s" % dict(second))
    sgd = trials["config/optimizer"] == "sgd"
    expect(trials.loc[sgd, "config/momentum"].isna().all() and trials.loc[~sgd, "config/momentum"].notna().all(),
           "momentum where it does not exist: %s" % list(zip(trials["config/optimizer"], trials["config/momentum"])))
    print("example-conditional: 16 trials (%d with momentum), trial 0 as enqueued, best val_loss %.4f"
          % ((~sgd).sum(), trials["best_value"].min()))


def scenario_enqueue(runner, args):
    """[[enqueue]] under tpe on real trials: a whole configuration runs first as written
    (origin "enqueued"), a partial one with its given value and the sampler's others;
    replay suggests every configuration that ran."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=3", "--sleep=0.1"]
    study, path, trials = run_tpe_study(
        runner, "enqueue", command, 6,
        "opt = { choice = [\"sgd\", \"adam\"] }\ndrop = { uniform = [0.0, 0.5], step = 0.1 }\n",
        "\n[sampler]\nn_startup_trials = 3\n"
        "\n[[enqueue]]\nx = 0.5\nopt = \"adam\"\ndrop = 0.2\n"
        "\n[[enqueue]]\nx = -0.25\n", slots=1)
    first, second = trials.iloc[0], trials.iloc[1]
    expect((first["config/x"], first["config/opt"], first["config/drop"], first.origin)
           == (0.5, "adam", 0.2, "enqueued"), "trial 0 did not run [[enqueue]] 1: %s" % dict(first))
    expect(second["config/x"] == -0.25 and second.origin == "startup",
           "trial 1 did not run x of [[enqueue]] 2: %s" % dict(second))
    drops = list(trials["config/drop"])
    expect(all(abs(d * 10 - round(d * 10)) < 1e-9 and 0 <= d <= 0.5 for d in drops),
           "a stepped value off its steps: %s" % drops)
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True,
                            check=True).stdout
    expect("Configurations: 1 enqueued, 2 startup, 3 model" in status, "status:\n" + status)
    suggestions, _ = replayed_decisions(runner, study, path)
    expect(suggestions == 6, "replay made %d suggestions for 6 trials" % suggestions)
    print("enqueue: trial 0 ran [[enqueue]] 1 as written, trial 1 its x with suggested opt=%s "
          "drop=%s; origins %s; replay matches all 6" % (second["config/opt"], second["config/drop"],
                                                         list(trials.origin)))


def decisions(path):
    """Every judged report's decision and prediction, by (trial, step)."""
    study = Study(path)
    events = study.events
    study.close()
    judged = events[events.kind.isin(["continue", "stop", "pause"])]
    return {(int(e.trial), float(e.step)): (e.kind, int(e.rung), round(float(e.predicted_mean), 12))
            for e in judged.itertuples()}


def replayed_log(runner, study, path, slots=1):
    """What `slurmtune replay` prints for the results file's own exported log, of a run on
    `slots` slots (a prior's first wave follows them)."""
    exported = subprocess.run([runner.slurmtune, "export", path, "--table", "replay"],
                              capture_output=True, text=True, check=True).stdout
    return subprocess.run([runner.slurmtune, "replay", study, "-", "--trials-at-once", str(slots)],
                          input=exported, capture_output=True, text=True, check=True).stdout


def replayed_decisions(runner, study, path, slots=1):
    """Replay of the results file's own log: every suggestion must match; its decisions
    (and predictions) by (trial, step), as decisions() reads them from the file."""
    replayed = replayed_log(runner, study, path, slots)
    suggestions, out = 0, {}
    for line in replayed.splitlines():
        d = json.loads(line)
        if "suggested" in d:
            expect(d["matches"], "replay suggests otherwise: " + line)
            suggestions += 1
        elif "decision" in d:
            if d["decision"] == "continue" and "rung" not in d:
                continue  # between rungs: the results file records no event there
            mean = d["predicted"]["mean"] if "predicted" in d else float("nan")
            out[(d["trial"], float(d["step"]))] = (d["decision"], d.get("rung", -1), round(mean, 12))
    return suggestions, out


def same_decisions(a, b, what):
    """Decisions equal, NaN predictions (none made) equal to each other."""
    def key(d):
        return {k: (v[0], v[1], "none" if v[2] != v[2] else v[2]) for k, v in d.items()}
    ka, kb = key(a), key(b)
    differ = sorted(k for k in set(ka) | set(kb) if ka.get(k) != kb.get(k))
    expect(not differ, "%s: %d decisions differ, e.g. %s" % (what, len(differ), [(k, ka.get(k), kb.get(k))
                                                                                   for k in differ[:3]]))


def scenario_recommended(runner, args):
    """The recommended setting on real trials (numpy-mlp/fast.toml), then resumed."""
    for name in ("train.py", "fast.toml"):
        shutil.copy(os.path.join(EXAMPLE, name), runner.workdir)
    study = os.path.join(runner.workdir, "fast.toml")
    with open(study, "rb") as f:
        setting = tomllib.load(f)
    path = os.path.join(runner.workdir, "fast.h5")
    rc, log = runner.run(study, path, sbatch_args=["-N", "2", "--ntasks-per-node", "1"], timeout=400)
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, setting["study"]["max_trials"])
    live = decisions(path)
    suggestions, replayed = replayed_decisions(runner, study, path)
    expect(suggestions == len(trials), "replay made %d suggestions for %d trials" % (suggestions, len(trials)))
    same_decisions(live, replayed, "real trials: replay against the run")
    origins = dict(trials.origin.value_counts())
    expect(origins.get("model", 0) > 0, "no configuration came from the model: %s" % origins)
    print("recommended: %d real trials (%s; %s), %d decisions replayed identically"
          % (len(trials), dict(trials.status.value_counts()), origins, len(live)))
    resume_scenario(runner, setting["study"]["sampler"], setting.get("sampler", {}),
                    dict(setting["scheduler"], predict=True))


def recorded_sampler(path):
    with h5py.File(path, "r") as f:
        value = f.attrs["sampler"]
    return value.decode() if isinstance(value, bytes) else str(value)


def scenario_default_sampler(runner, args):
    """Issue #43 item 6 on real trials: an asha_promotion study of one objective that names
    no sampler gets MOBSTER with Hyper-Tune (recorded so, configurations from the model);
    a results file written under the old default (resolved `sampler = "random"`, which is
    what such a file records) resumes with random from the same study file, naming none,
    and suggests what an uninterrupted random study suggests."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.1"]
    promotion = study_toml("default-sampler", command, max_trials=TRIALS, scheduler="asha_promotion")
    # [sampler] options need no sampler named now: they configure the default's.
    study = runner.write("study.toml", promotion + "\n[sampler]\nn_startup_trials = %d\n" % STARTUP)
    fresh = os.path.join(runner.workdir, "fresh.h5")
    rc, log = runner.run(study, fresh, extra=["--slots", "1"], sbatch_args=["-N", "1", "--ntasks-per-node", "1"])
    expect(rc == 0, "the run failed:\n" + log)
    check_complete(fresh, TRIALS)
    origins = list(trials_of(fresh).origin)
    expect(recorded_sampler(fresh) == "mobster" and "model" in origins,
           "a study naming no sampler ran %s, origins %s" % (recorded_sampler(fresh), origins))
    validated = subprocess.run([runner.slurmtune, "validate", study], capture_output=True, text=True,
                               check=True).stdout
    expect("rung_weighting = 'hyper-tune'" in validated, "validate:\n" + validated)
    # The old default's file: the same study with the sampler it resolved to, named (such a
    # study file could have no [sampler]: random takes no options).
    runner.write("study.toml", promotion.replace("max_trials = %d\n" % TRIALS,
                                                 "max_trials = %d\nsampler = \"random\"\n" % TRIALS))
    straight, path, log = straight_and_resumed(
        runner, study, started=3,
        before_resume=lambda: runner.write("study.toml", promotion))  # as written for the old default
    expect("resumes with the one it recorded, \"random\"" in log, "no word of the recorded sampler:\n" + log)
    a, b = trials_of(straight), trials_of(path)
    expect(recorded_sampler(path) == "random" and list(a["config/x"]) == list(b["config/x"]),
           "the old default's file resumed otherwise (%s):\n%s\n%s"
           % (recorded_sampler(path), list(a["config/x"]), list(b["config/x"])))
    print("default-sampler: no sampler named -> mobster (origins %s); the old default's file resumed "
          "with random, %d configurations identical to an uninterrupted run"
          % (dict(Counter(origins)), TRIALS))


def resumptions(path):
    """Every resumption in order: (trial, step, rung it resumes for, rule, the model's
    expected improvements and expected value), as slurmtune.Study reads the results file."""
    study = Study(path)
    resumed = study.resumptions
    study.close()
    rounded = lambda x: "none" if x != x else round(float(x), 9)
    return [(int(r.trial), float(r.step), rounded(r.until), r.rule, rounded(r.improvement),
             rounded(r.start_improvement), rounded(r.expected_mean)) for r in resumed.itertuples()]


def replayed_resumptions(runner, study, path):
    """The resumptions `slurmtune replay` decides on the file's own log, as resumptions()."""
    replayed = replayed_log(runner, study, path)
    rounded = lambda x: "none" if x is None else round(float(x), 9)
    out, last_step = [], {}
    for line in replayed.splitlines():
        d = json.loads(line)
        if "decision" in d:
            last_step[d["trial"]] = float(d["step"])
        elif "resumed" in d:
            r = d["resumed"]
            expected = r.get("expected", {}).get("mean")
            out.append((d["trial"], last_step[d["trial"]], rounded(r["until"]), r["rule"],
                        rounded(r.get("improvement")), rounded(r.get("start_improvement")), rounded(expected)))
    return out


def scenario_freeze_thaw(runner, args):
    """freeze_thaw, the model choosing what trains next, on real trials (the numpy MLP of
    fast.toml with its scheduler swapped, step costs in seconds), interrupted by SIGUSR1
    and resumed: replay of the file's log, real times and the session boundary included,
    resumes the same trials for the same reasons; then (costs by resource, which no clock
    sways) a study interrupted and resumed decides as an uninterrupted one."""
    shutil.copy(os.path.join(EXAMPLE, "train.py"), runner.workdir)
    text = read(os.path.join(EXAMPLE, "fast.toml")).replace(
        'type = "asha_promotion"', 'type = "freeze_thaw"\ncost = "seconds"')
    study = runner.write("fast.toml", text)
    with open(study, "rb") as f:
        setting = tomllib.load(f)
    path = os.path.join(runner.workdir, "fast.h5")
    # One slot: the events, and so the model's choices, come in one order every time.
    sbatch, extra = ["-N", "1", "--ntasks-per-node", "1"], ["--slots", "1"]
    handle = runner.start(study, path, extra=extra, sbatch_args=sbatch)
    wait_for(lambda: started_so_far(handle[2], 0) >= 14, 240, "14 trials started")
    interrupt_gracefully(runner, handle)
    rc, log = next_session(runner, handle, study, path, extra, sbatch)
    expect(rc == 0, "the resumed run failed:\n" + log)
    expect("resuming" in log, "the second run did not resume:\n" + log)
    trials = check_complete(path, setting["study"]["max_trials"])
    live = decisions(path)
    suggestions, replayed = replayed_decisions(runner, study, path)
    expect(suggestions == len(trials), "replay made %d suggestions for %d trials" % (suggestions, len(trials)))
    same_decisions(live, replayed, "real trials: replay against the run")
    recorded = resumptions(path)
    by_model = [r for r in recorded if r[3] == "model"]  # how many depends on real step times
    again = replayed_resumptions(runner, study, path)
    expect(again == recorded, "replay resumes otherwise than the run:\n%s\n%s" % (recorded, again))
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True,
                            check=True).stdout
    expect("Resumptions: %d, %d chosen by the model" % (len(recorded), len(by_model)) in status,
           "status does not explain the resumptions:\n" + status)
    print("freeze-thaw: %d real trials (%s) over two sessions, %d resumptions (%d by the model, "
          "costs in seconds), replayed identically"
          % (len(trials), dict(trials.status.value_counts()), len(recorded), len(by_model)))
    resume_scenario(runner, setting["study"]["sampler"], setting.get("sampler", {}),
                    dict(setting["scheduler"], cost="resource"))


def straight_and_resumed(runner, study, started=STARTUP + 2, before_resume=None):
    """`study` run through once (straight.h5), then again interrupted once `started` trials
    started, past the startup ones by default (SIGUSR1; scancel --signal=USR1 under Slurm),
    and resumed (study.h5) after `before_resume()`, one slot each; (straight, resumed, the
    resumed session's log)."""
    sbatch, extra = ["-N", "1", "--ntasks-per-node", "1"], ["--slots", "1"]
    straight = os.path.join(runner.workdir, "straight.h5")
    rc, log = runner.run(study, straight, extra=extra, sbatch_args=sbatch)
    expect(rc == 0, "the uninterrupted run failed:\n" + log)
    path = os.path.join(runner.workdir, "study.h5")
    offset = len(log) if runner.launcher == "local" else 0
    handle = runner.start(study, path, extra=extra, sbatch_args=sbatch)
    wait_for(lambda: started_so_far(handle[2], offset) >= started, 180, "%d trials started" % started)
    interrupt_gracefully(runner, handle)
    if before_resume:
        before_resume()
    rc, log = next_session(runner, handle, study, path, extra, sbatch)
    expect(rc == 0, "resumed run failed:\n" + log)
    expect("resuming" in log, "the second run did not resume:\n" + log)
    check_complete(path, TRIALS)
    return straight, path, log


def resume_scenario(runner, sampler, options=None, scheduler=None):
    study = sampler_study(runner, sampler, options, scheduler)
    straight, path, log = straight_and_resumed(runner, study)
    # The interrupted session's last flush wrote a decision snapshot; the resume starts
    # from it (suggest_ahead keeps none: the suggestion made ahead at the last start).
    ahead = bool((options or {}).get("suggest_ahead"))
    expect(("after the decision snapshot at seq" in log) != ahead,
           "the resume %s a decision snapshot:\n%s" % ("used" if ahead else "did not use", log))
    if scheduler:  # not Ray's ASHA: decisions and predictions as the uninterrupted run's
        same_decisions(decisions(straight), decisions(path), "resumed against uninterrupted")
        expect(resumptions(straight) == resumptions(path),
               "the resumed study resumed otherwise:\n%s\n%s" % (resumptions(straight), resumptions(path)))
        if scheduler["type"] == "freeze_thaw":  # deterministic here: one slot, no clock in the costs
            expect(replayed_resumptions(runner, study, path) == resumptions(path),
                   "replay resumes otherwise than the resumed study")
            expect(any(r[3] == "model" for r in resumptions(path)),
                   "the model chose no resumption: %s" % resumptions(path))
        judged = len(decisions(path))
        if scheduler.get("predict"):
            expect(any(v[2] == v[2] for v in decisions(path).values()), "no decision carried a prediction")
    else:
        judged = check_asha(path, 1, 3, 6)
    a, b = trials_of(straight), trials_of(path)
    expect(list(a["config/x"]) == list(b["config/x"]),
           "the resumed study suggested other configurations:\n%s\n%s"
           % (list(a["config/x"]), list(b["config/x"])))
    expect(list(a.origin) == list(b.origin), "origins differ: %s / %s" % (list(a.origin), list(b.origin)))
    # mobster draws a random_fraction of its later configurations at random.
    later = {"model", "random"} if sampler == "mobster" else {"model"}
    expect(list(b.origin[:STARTUP]) == ["startup"] * STARTUP and set(b.origin[STARTUP:]) <= later
           and "model" in set(b.origin[STARTUP:]), "origins: %s" % list(b.origin))
    # Replaying the file's own log through the sampler suggests what ran, trial by trial,
    # and decides as the run did.
    suggestions, replayed = replayed_decisions(runner, study, path)
    expect(suggestions == TRIALS, "replay made %d suggestions for %d trials" % (suggestions, TRIALS))
    same_decisions(decisions(path), replayed, "resumed: replay against the run")
    print((scheduler["type"] + ", resumed" if scheduler else sampler + "-resume") + ": %d configurations identical to an uninterrupted run (%s); replay "
          "matches all; %d decisions %s"
          % (TRIALS, ", ".join("%d %s" % (n, o) for o, n in b.origin.value_counts().items()), judged,
             "and predictions identical" if scheduler else "equal the ASHA model"))
