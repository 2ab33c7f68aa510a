"""Issue #58's first study, on real trials (tests/run/check_run.py first-study): the shape
a newcomer tries first, with the recommended setting (asha_promotion, which picks MOBSTER
with Hyper-Tune; grace 1, rf 3, max_t 20 off the geometric ladder), 6 trials on 4 workers
and 16 on 2, one configuration that reports the study's lowest loss at its first step and
then crashes. Then a study whose script is missing.

- The best trial (the run's summary line, `status`, `best`, Study.best_trial) is a
  completed one that ran to max_t = 20, never the crashed one.
- Run again with max_trials raised to 9 and --allow-changes, the trials dropped when the
  study ended wait at their rungs again and the study goes on.
- The missing script stops the study after its first alike failures: `run` exits 1 and
  its log names the missing file; few attempts were made, not the whole budget.
"""
import json
import os
import re
import subprocess
import sys

from run_harness import FAULT_TRIAL, Study, expect, read, study_toml, wait_for

MAX_T = 20
CRASHING = 1  # the trial id whose configuration crashes after the best first report


def first_study(runner, name, trials, workers):
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=%d" % MAX_T, "--sleep=0.02",
               "--faults=%d:crash-best" % CRASHING]
    study = runner.write(name + ".toml", study_toml(
        name, command, max_trials=trials, max_t=MAX_T, grace=1, rf=3, scheduler="asha_promotion",
        trial_extra="max_failures = 1"))
    validated = subprocess.run([runner.slurmtune, "validate", study], capture_output=True,
                               text=True, check=True).stdout
    expect("pauses at 1, 3, 9, 20 (the last is max_t)" in validated,
           "validate shows no rungs ending at max_t:\n" + validated)
    path = os.path.join(runner.workdir, name + ".h5")
    rc, log = runner.run(study, path, extra=["--slots", str(workers)],
                         sbatch_args=["-N", str(workers // 2 or 1), "--ntasks-per-node",
                                      "2" if workers > 1 else "1"], timeout=400)
    expect(rc == 0, "the run failed:\n" + log)
    with Study(path) as s:
        t = s.trials
        best = s.best_trial
        crashed = t[t.id == CRASHING].iloc[0]
        expect(crashed.status == "failed", "trial %d did not fail: %s" % (CRASHING, crashed.status))
        expect(crashed.best_value == -100.0, "the crashing trial's first report is missing")
        expect(int(best.id) != CRASHING, "the crashed trial is Study.best_trial")
        expect(best.status == "completed" and best.last_step == MAX_T,
               "the best trial %d is %s at step %g, not completed at max_t:\n%s"
               % (best.id, best.status, best.last_step, t[["id", "status", "last_step", "best_value"]]))
        at_max_t = int((t.last_step == MAX_T).sum())
        included = int(s.best(include_failed=True).id)
    expect(included == CRASHING, "best(include_failed=True) is trial %d" % included)
    summary = re.findall(r"best loss \S+ \(trial (\d+)", log)
    expect(summary and int(summary[-1]) == int(best.id),
           "the run's last best line names trial %s, not %d:\n%s" % (summary[-1:], best.id, log))
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True,
                            check=True).stdout
    expect("Best trial %d:" % best.id in status, "status names another best:\n" + status)
    expect(re.search(r"rung 3 @ 20: \d+ judged, 0 stopped, 0 paused, \d+ completed", status),
           "status counts completions at max_t otherwise:\n" + status)
    best_json = subprocess.run([runner.slurmtune, "best", path, "--format", "json"],
                               capture_output=True, text=True, check=True).stdout
    expect(json.loads(best_json)["x"] == best["config/x"], "best prints another configuration")
    best_command = subprocess.run([runner.slurmtune, "best", path, "--format", "command"],
                                  capture_output=True, text=True, check=True).stdout
    expect(FAULT_TRIAL in best_command and "--x=" in best_command and "--steps=%d" % MAX_T in best_command,
           "best --format command:\n" + best_command)
    expect("Failures (1 of 1" in status and re.search(r"trial %d: exit status 3.*: simulated crash" % CRASHING, status),
           "status shows no failure with its cause:\n" + status)
    expect("simulated crash of trial %d" % CRASHING in log, "the failure line has no stderr:\n" + log)
    print("%s: %d trials on %d workers, %d ran to max_t, best trial %d (completed at %d); "
          "the crashed trial %d is never best" % (name, trials, workers, at_max_t, best.id,
                                                  MAX_T, CRASHING))
    return study, path


def dropped_trials(path):
    """Trials that ended while paused below max_t: dropped when the study ended."""
    with Study(path) as s:
        t = s.trials
        return sorted(int(i) for i in t[(t.status == "stopped") & (t.last_step < MAX_T)].id)


def raised_max_trials(runner, name, study, path, workers):
    """Issue #58 item 2: the study run again with a larger max_trials and --allow-changes
    reopens the trials dropped when it ended: they wait at their rungs again (the log says
    which, the file records a `reopen` event for each), new trials start, and the results
    file's own log replays decision for decision."""
    dropped = dropped_trials(path)
    expect(dropped, "%s: no trial was dropped when the study ended; nothing to reopen" % name)
    with open(study) as f:
        text = f.read()
    raised = runner.write(name + "-raised.toml", text.replace("max_trials = 6", "max_trials = 9"))
    rc, log = runner.run(raised, path, extra=["--slots", str(workers), "--allow-changes"],
                         sbatch_args=["-N", str(workers // 2 or 1), "--ntasks-per-node", "2"],
                         timeout=400)
    expect(rc == 0, "the raised study failed:\n" + log)
    said = re.search(r"reopened (\d+) trial\(s\) dropped when the study ended \(([\d, ]+)\)", log)
    expect(said and [int(i) for i in said.group(2).split(", ")] == dropped,
           "the log does not name the reopened trials %s:\n%s" % (dropped, log))
    with Study(path) as s:
        events, t = s.events, s.trials
        best = s.best_trial
    reopened = sorted(int(i) for i in events[events.kind == "reopen"].trial)
    expect(reopened == dropped, "reopen events for %s, dropped were %s" % (reopened, dropped))
    expect(len(t) == 9, "the raised study has %d trials, not 9" % len(t))
    expect(not (t.status.isin(["paused", "running"])).any(), "trials left unfinished:\n%s" % t)
    expect(best.status == "completed" and best.last_step == MAX_T,
           "the best trial %d is %s at step %g" % (best.id, best.status, best.last_step))
    exported = subprocess.run([runner.slurmtune, "export", path, "--table", "replay"],
                              capture_output=True, text=True, check=True).stdout
    expect(exported.count('"type":"reopen"') == len(dropped), "export leaves the reopenings out")
    replayed = subprocess.run([runner.slurmtune, "replay", raised, "-"], input=exported,
                              capture_output=True, text=True)
    expect(replayed.returncode == 0, "replay refused the reopened study's log:\n" + replayed.stderr[-3000:])
    resumed = sum(1 for i in dropped if ((events.kind == "resume") & (events.trial == i)
                                         & (events.seq > events[events.kind == "reopen"].seq.min())).any())
    print("%s raised to 9 trials: reopened %s, %d of them resumed; best trial %d completed at %d; "
          "the file's log replays" % (name, dropped, resumed, best.id, MAX_T))


def missing_script(runner):
    study = runner.write("missing.toml", study_toml(
        "missing", [sys.executable, "no_such_train.py", "--x={x}"], max_trials=50, max_t=MAX_T,
        scheduler="asha_promotion", trial_extra="max_failures = 2"))
    path = os.path.join(runner.workdir, "missing.h5")
    rc, log = runner.run(study, path, extra=["--slots", "2"],
                         sbatch_args=["-N", "1", "--ntasks-per-node", "2"])
    expect(rc != 0, "a study whose script is missing exited 0:\n" + log)
    expect("the first 3 attempts failed alike" in log and "no_such_train.py" in log,
           "the log does not name the missing script:\n" + log)
    with Study(path) as s:
        started = len(s.trials)
    expect(started <= 4, "%d of 50 trials started before the study stopped" % started)
    print("missing script: exit %d after %d trial(s), the cause in the log" % (rc, started))


def silent_mistakes(runner):
    """Issue #58 item 7 on real trials: a trial paused without a checkpoint resumes from
    scratch with a line that says so; a trial that stays silent is named on the progress
    line with a pointer to report_timeout_s (locally: the study would wait for ever, so
    it is cancelled once the line is seen)."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.02", "--never-checkpoint"]
    study = runner.write("nockpt.toml", study_toml("nockpt", command, max_trials=4, max_t=9,
                                                   scheduler="asha_promotion"))
    rc, log = runner.run(study, os.path.join(runner.workdir, "nockpt.h5"), extra=["--slots", "2"],
                         sbatch_args=["-N", "1", "--ntasks-per-node", "2"])
    expect(rc == 0, "the study without checkpoints failed:\n" + log)
    expect(re.search(r"trial \d+ resumes from scratch: it saved no checkpoint when it paused at step", log),
           "no line about a resumption without a checkpoint:\n" + log)
    if runner.launcher != "local":
        return
    silent = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=3", "--faults=0:silent"]
    study = runner.write("silent.toml", study_toml("silent", silent, max_trials=1, max_t=3))
    handle = runner.start(study, os.path.join(runner.workdir, "silent.h5"),
                          extra=["--silent-after", "1", "--slots", "1"])
    hint = "(a hung trial is never ended: set [trial] report_timeout_s to end and retry it)"
    try:
        wait_for(lambda: hint in read(handle[2]), 120, "the silent trial's progress line")
    finally:
        handle[1].terminate()
        handle[1].wait(timeout=120)
    print("silent mistakes: a resumption without a checkpoint said so; a silent trial named with "
          "a pointer to report_timeout_s")


def scenario_first_study(runner, args):
    study, path = first_study(runner, "six-on-four", 6, 4)
    raised_max_trials(runner, "six-on-four", study, path, 4)
    first_study(runner, "sixteen-on-two", 16, 2)
    missing_script(runner)
    silent_mistakes(runner)
