#!/usr/bin/env python3
"""The model-based sampler scenarios of tests/run/check_run.py (tpe-resume,
mobster-resume): a TPE or MOBSTER study interrupted (SIGUSR1 locally; `scancel
--signal=USR1` of the job under Slurm, which requeues it) and resumed suggests exactly
the configurations an uninterrupted run suggests, and `slurmtune replay` on the study
file's log agrees with every recorded suggestion."""
import os
import re
import subprocess
import sys

from run_harness import (FAULT_TRIAL, Study, check_asha, check_complete, expect, next_session,
                         read, study_toml, wait_for)
from run_reliability import interrupt_gracefully

TRIALS, STARTUP = 10, 4


def started_so_far(log_path, offset):
    # The log may hold the uninterrupted run before `offset` (local runs append to one).
    counts = re.findall(r"progress: .* (\d+)/\d+ started", read(log_path)[offset:])
    return int(counts[-1]) if counts else 0


SAMPLER_OPTIONS = {"tpe": "constant_liar = true\n",
                   "mobster": "num_candidates = 200\nrandom_fraction = 0.3\n"}


def sampler_study(runner, sampler):
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=6", "--sleep=0.4"]
    # One slot: each suggestion sees every earlier trial ended, so the uninterrupted and
    # the interrupted run see the same histories (the trial is deterministic in x).
    text = study_toml(sampler, command, max_trials=TRIALS, max_t=6,
                      study_extra='sampler = "%s"\n' % sampler)
    text += "\n[sampler]\nn_startup_trials = %d\n%s" % (STARTUP, SAMPLER_OPTIONS[sampler])
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


def resume_scenario(runner, sampler):
    study = sampler_study(runner, sampler)
    sbatch = ["-N", "1", "--ntasks-per-node", "1"]
    extra = ["--slots", "1"]
    straight = os.path.join(runner.workdir, "straight.h5")
    rc, log = runner.run(study, straight, extra=extra, sbatch_args=sbatch)
    expect(rc == 0, "the uninterrupted run failed:\n" + log)
    path = os.path.join(runner.workdir, "study.h5")
    offset = len(log) if runner.launcher == "local" else 0
    handle = runner.start(study, path, extra=extra, sbatch_args=sbatch)
    wait_for(lambda: started_so_far(handle[2], offset) >= STARTUP + 2, 180,
             "trials past the startup ones")
    interrupt_gracefully(runner, handle)
    rc, log = next_session(runner, handle, study, path, extra, sbatch)
    expect(rc == 0, "resumed run failed:\n" + log)
    expect("resuming" in log, "the second run did not resume:\n" + log)
    check_complete(path, TRIALS)
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
    # Replaying the file's own log through the sampler suggests what ran, trial by trial.
    exported = subprocess.run([runner.slurmtune, "export", path, "--table", "replay"],
                              capture_output=True, text=True, check=True).stdout
    replayed = subprocess.run([runner.slurmtune, "replay", study, "-"], input=exported,
                              capture_output=True, text=True, check=True).stdout
    suggestions = [line for line in replayed.splitlines() if '"suggested"' in line]
    expect(len(suggestions) == TRIALS and all('"matches":true' in s for s in suggestions),
           "replay disagrees with the recorded suggestions:\n" + "\n".join(suggestions))
    print(sampler + "-resume: %d configurations identical to an uninterrupted run (%s); replay "
          "matches all; %d ASHA decisions equal the model"
          % (TRIALS, ", ".join("%d %s" % (n, o) for o, n in b.origin.value_counts().items()), judged))
