#!/usr/bin/env python3
"""The [checkpoints] scenario of tests/run/check_run.py (issue #63, item 4): trials that
save a checkpoint file after every report, under keep_per_trial = 1 and keep_ended = 2,
into the study's checkpoint folder (`folder`, outside the study's folder, as a scratch
file system is): nothing lands in STUDY.trials, the results file records the paths
whole, and another study cannot claim the folder.
While the study runs the files on disk stay within the policy's bound; at its end the
checkpoints left are the newest of the two best trials that did not fail, every other
recorded checkpoint is gone and recorded in /removed_checkpoints with its reason; a
resumed session under keep_ended = 1 removes the second best's at once."""
import os
import subprocess
import shutil
import sys
import tempfile
import threading

import h5py

from run_harness import FAULT_TRIAL, Study, check_complete, expect, study_toml

SLOTS = 3


def checkpoint_files(trials_dir):
    """The ckpt-STEP.json files under `trials_dir` (STUDY.trials or the checkpoint
    folder), by trial folder."""
    found = {}
    for folder in os.listdir(trials_dir):
        if folder.startswith("trial-"):
            files = [f for f in os.listdir(os.path.join(trials_dir, folder))
                     if f.startswith("ckpt-") and f.endswith(".json")]
            if files:
                found[int(folder[len("trial-"):])] = sorted(files)
    return found


class FileCounter(threading.Thread):
    """Counts the checkpoint files on disk every 50 ms while the study runs: the most
    seen at once."""

    def __init__(self, trials_dir):
        super().__init__(daemon=True)
        self.trials_dir, self.most, self.done = trials_dir, 0, threading.Event()

    def run(self):
        while not self.done.wait(0.05):
            try:
                count = sum(len(files) for files in checkpoint_files(self.trials_dir).values())
            except FileNotFoundError:  # a folder made or removed meanwhile
                continue
            self.most = max(self.most, count)


def recorded(path):
    """/checkpoints and /removed_checkpoints as (trial, path) sets, the reasons by trial,
    and each trial's status and best value."""
    with h5py.File(path, "r") as f:
        saved = {(int(r["trial"]), r["path"].decode()) for r in f["checkpoints"][:]}
        table = f["removed_checkpoints"]
        names = {v: k for k, v in h5py.check_enum_dtype(table.dtype["reason"]).items()}
        removed = {(int(r["trial"]), r["path"].decode()) for r in table[:]}
        reasons = {}
        for r in table[:]:
            reasons.setdefault(int(r["trial"]), set()).add(names[int(r["reason"])])
        bytes_removed = int(table["size"].sum()) if len(table) else 0
        status_names = {v: k for k, v in h5py.check_enum_dtype(f["trials"].dtype["status"]).items()}
        trials = {int(t["id"]): (status_names[int(t["status"])], float(t["best_value"]))
                  for t in f["trials"][:]}
    return saved, removed, reasons, bytes_removed, trials


def best_trials(trials, k):
    ranked = sorted((best, trial) for trial, (status, best) in trials.items()
                    if status != "failed" and best == best)
    return [trial for _, trial in ranked[:k]]


def check_files_follow_the_record(runner, path, keep, scratch):
    """What is on disk is what /checkpoints recorded less what /removed_checkpoints says
    went: the newest checkpoint of each of the `keep` best trials that did not fail, all
    in the checkpoint folder `scratch` and recorded by their absolute paths there."""
    saved, removed, reasons, bytes_removed, trials = recorded(path)
    study_dir = runner.workdir
    outside = [p for _, p in saved if not p.startswith(scratch + os.sep)]
    expect(not outside, "checkpoints recorded outside the checkpoint folder %s: %s" % (scratch, outside))
    expect(not checkpoint_files(os.path.join(study_dir, "study.trials")),
           "checkpoints in STUDY.trials: %s" % checkpoint_files(os.path.join(study_dir, "study.trials")))
    for trial, relative in removed:
        expect(not os.path.exists(os.path.join(study_dir, relative)),
               "trial %d: %s is recorded as removed but is still there" % (trial, relative))
    kept = saved - removed
    for trial, relative in kept:
        expect(os.path.exists(os.path.join(study_dir, relative)),
               "trial %d: %s is neither removed nor on disk" % (trial, relative))
    on_disk = checkpoint_files(scratch)
    best = best_trials(trials, keep)
    expect(sorted(on_disk) == sorted(best) and all(len(f) == 1 for f in on_disk.values()),
           "checkpoints on disk %s; the %d best trials that did not fail: %s"
           % (on_disk, keep, best))
    return saved, removed, reasons, bytes_removed, trials


def scenario_checkpoints(runner, args):
    scratch = os.path.realpath(tempfile.mkdtemp(prefix="slurmtune-scratch-"))
    try:
        check_retention(runner, os.path.join(scratch, "retention"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check_retention(runner, scratch):
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.05",
               "--checkpoint-each-step", "--faults=4:crash-best"]
    policy = "[checkpoints]\nkeep_per_trial = 1\nkeep_ended = %d\nfolder = \"" + scratch + "\"\n"
    toml = study_toml("retention", command, max_trials=12, max_t=9)
    study = runner.write("study.toml", toml + policy % 2)
    path = os.path.join(runner.workdir, "study.h5")
    counter = FileCounter(scratch)
    counter.start()
    rc, log = runner.run(study, path, extra=["--slots", str(SLOTS)])
    counter.done.set()
    counter.join()
    expect(rc == 0, "run failed:\n" + log)
    check_complete(path, 12)
    saved, removed, reasons, bytes_removed, trials = check_files_follow_the_record(runner, path, 2, scratch)
    expect(trials[4][0] == "failed" and trials[4][1] == -100.0 and reasons.get(4) == {"ended"},
           "the crashed trial with the lowest loss: %s, its removals %s"
           % (trials[4], reasons.get(4)))
    every = set().union(*reasons.values())
    expect({"superseded", "ended"} <= every, "removal reasons: %s" % every)
    # Each running trial may hold its newest and the one it just wrote (the coordinator
    # removes the older once told of the newer), and the two best ended ones one each.
    bound = 2 * SLOTS + 2
    expect(0 < counter.most <= bound, "%d checkpoint files at once, the bound is %d"
           % (counter.most, bound))
    # Resumed under a tighter policy (a safe change): the second best's go at once,
    # `outranked` if the best ended after it (as an uninterrupted run would say), else
    # `ended`.
    best, second = best_trials(trials, 2)
    with h5py.File(path, "r") as f:
        ended_at = {int(t["id"]): float(t["end_time"]) for t in f["trials"][:]}
    reason = "outranked" if ended_at[best] > ended_at[second] else "ended"
    study = runner.write("study.toml", toml + policy % 1)
    rc, log = runner.run(study, path, extra=["--slots", str(SLOTS), "--allow-changes"])
    expect(rc == 0, "the resumed session failed:\n" + log)
    _, removed_after, reasons_after, _, _ = check_files_follow_the_record(runner, path, 1, scratch)
    expect(removed_after - removed == {p for p in saved - removed if p[0] == second} and
           reason in reasons_after[second],
           "the resumed session removed %s, %s (the second best is trial %d: %s expected)"
           % (sorted(removed_after - removed), reasons_after.get(second), second, reason))
    # The Python module and `status` read the same record.
    with Study(path) as s:
        frame = s.removed_checkpoints
        expect(len(frame) == len(removed_after) and
               set(frame.reason.astype(str)) == set().union(*reasons_after.values()),
               "Study.removed_checkpoints:\n%s" % frame)
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True,
                            check=True, timeout=60).stdout
    expect("Checkpoints removed %d " % len(removed_after) in status, status)
    # The folder is this study's: another results file is refused before anything runs.
    rc, log = runner.run(study, os.path.join(runner.workdir, "other.h5"), extra=["--slots", str(SLOTS)])
    expect(rc != 0 and "[checkpoints] folder" in log and "holds the checkpoints of the study" in log and
           not os.path.exists(os.path.join(runner.workdir, "other.h5")),
           "another study given the same checkpoint folder: exit %d\n%s" % (rc, log))
    print("checkpoints: %d saved in the checkpoint folder, %d removed (%d bytes; %s), at most "
          "%d files at once (bound %d); the two best trials kept their newest, the crashed best "
          "none; resumed with keep_ended = 1, trial %d's went; another study refused the folder"
          % (len(saved), len(removed), bytes_removed, ", ".join(sorted(every)), counter.most, bound,
             second))
