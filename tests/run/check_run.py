#!/usr/bin/env python3
"""End-to-end checks of `slurmtune run`, with real processes and a real study file.

    check_run.py SLURMTUNE SCENARIO --launcher local|slurm [--cpp-trial P] [--mpi-trial P]

Scenarios: python (the numpy MLP example), cpp (a C++ client trial), mpi (a 2-node,
4-rank MPI trial whose rank 0 reports), faults (segfault, failing exit, a trial that
hangs after being told to stop, a step cancelled with scancel, a client with a wrong
token, a client that sends garbage), term (the orchestrator SIGUSR1ed: exit 75, the job
requeues itself and resumes), cancel (SIGTERM locally, `scancel JOB` under Slurm: the
job ends for good, the file is consistent, a new run resumes), kill (the orchestrator
SIGKILLed, then resumed).

With --launcher slurm the study runs as `sbatch sbatch/submit-hpo.sbatch` on the local
test cluster (SLURM_CONF set by run_with_cluster.sh). Every run is checked with h5py:
every trial, every report, and every ASHA decision against an independent model.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
from asha_model import RayModel  # noqa: E402
from slurmtune.study import Study  # noqa: E402

TEMPLATE = os.path.join(ROOT, "sbatch", "submit-hpo.sbatch")
FAULT_TRIAL = os.path.join(HERE, "trials", "fault_trial.py")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def study_toml(name, command, *, max_trials, max_t=9, grace=1, rf=3, metrics=("loss",),
               resources="", trial_extra="", study_extra="", scheduler="asha"):
    quoted = ", ".join('"%s"' % part for part in command)
    return f"""[study]
name = "{name}"
metric = "{metrics[0]}"
metrics = [{", ".join('"%s"' % m for m in metrics)}]
mode = "min"
seed = 11
max_trials = {max_trials}
{study_extra}
[search]
x = {{ uniform = [-1.0, 1.0] }}

[scheduler]
type = "{scheduler}"
grace_period = {grace}
reduction_factor = {rf}
max_t = {max_t}

[trial]
command = [{quoted}]
{trial_extra}
[resources]
{resources}
"""


class Runner:
    """Runs a study with the local launcher, or as an sbatch job of the template."""

    def __init__(self, args, workdir):
        self.slurmtune, self.launcher, self.workdir = args.slurmtune, args.launcher, workdir
        self.build = os.path.dirname(os.path.dirname(os.path.abspath(self.slurmtune)))

    def write(self, name, text):
        path = os.path.join(self.workdir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def command(self, study, output, extra):
        return [self.slurmtune, "run", study, "-o", output, "--progress-interval", "1",
                "--stop-grace", "1", "--kill-grace", "1", "--shutdown-grace", "5"] + extra

    def start(self, study, output, extra=(), sbatch_args=()):
        """Starts the run; returns a handle for wait()."""
        if self.launcher == "local":
            log = open(os.path.join(self.workdir, "run.log"), "ab")
            proc = subprocess.Popen(self.command(study, output, ["--launcher", "local"] + list(extra)),
                                    cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT)
            return ("local", proc, log.name)
        env = dict(os.environ, STUDY=study, OUTPUT=output, SLURMTUNE_BUILD=self.build,
                   SLURMTUNE_RUN_ARGS=" ".join(self.command(study, output, list(extra))[5:]))
        out = subprocess.run(["sbatch", "--parsable", "--chdir", self.workdir,
                              "--output", os.path.join(self.workdir, "job-%j.out")] +
                             list(sbatch_args) + [TEMPLATE],
                             env=env, capture_output=True, text=True)
        expect(out.returncode == 0, "sbatch failed: " + out.stderr)
        job = out.stdout.strip().split(";")[0]
        return ("slurm", job, os.path.join(self.workdir, "job-%s.out" % job))

    def wait(self, handle, timeout=240):
        kind, what, log = handle
        deadline = time.time() + timeout
        if kind == "local":
            try:
                rc = what.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                what.kill()
                fail("slurmtune run did not finish in %d s; log:\n%s" % (timeout, read(log)))
            return rc, read(log)
        while time.time() < deadline:
            state = job_state(what)
            if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
                if state != "COMPLETED":  # say why, for the test log
                    print(subprocess.run(["scontrol", "show", "job", what], capture_output=True,
                                         text=True).stdout)
                return (0 if state == "COMPLETED" else 1), read(log)
            time.sleep(0.5)
        subprocess.run(["scancel", what])
        fail("job %s did not finish in %d s; log:\n%s" % (what, timeout, read(log)))

    def run(self, study, output, extra=(), sbatch_args=(), timeout=240):
        return self.wait(self.start(study, output, extra, sbatch_args), timeout)


def job_state(job):
    out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
    for word in out.split():
        if word.startswith("JobState="):
            return word.split("=", 1)[1]
    return "UNKNOWN"


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def check_asha(path, grace, rf, max_t, metric="loss", mode="min"):
    """Every recorded decision equals the Ray ASHA model fed the same reports in order."""
    study = Study(path)
    metrics, events = study.metrics, study.events
    model = RayModel(grace, rf, max_t, 1, True, -1.0 if mode == "min" else 1.0)
    decided = {(int(e.trial), float(e.step)): (e.kind, int(e.rung)) for e in events.itertuples()
               if e.kind in ("continue", "stop", "pause")}
    ends = events[events.kind.isin(["completed", "stopped", "failed"])]
    stream = sorted([(int(m.seq), "report", int(m.trial), float(m.step), float(getattr(m, metric)))
                     for m in metrics.itertuples()] +
                    [(int(e.seq), e.kind, int(e.trial), float(e.step), float(e.value))
                     for e in ends.itertuples()])
    judged = 0
    for seq, kind, trial, step, value in stream:
        model.bracket_of.setdefault(trial, 0)
        if kind != "report":
            if not np.isnan(step):
                model.end(trial, kind, step, value)
            continue
        decision, rung, _, _ = model.report(trial, step, value)
        got = decided.get((trial, step))
        if rung is None and decision == "continue":
            expect(got is None, "trial %d step %g: recorded %s, the model made no decision"
                   % (trial, step, got))
            continue
        expect(got == (decision, -1 if rung is None else rung),
               "trial %d step %g: recorded %s, the model says %s at rung %s"
               % (trial, step, got, decision, rung))
        judged += 1
    study.close()
    return judged


def check_complete(path, trials):
    """Every trial ended; report counts agree between /trials and /metrics; no step twice."""
    study = Study(path)
    t, m, e = study.trials, study.metrics, study.events
    expect(len(t) == trials, "%d trials recorded, expected %d" % (len(t), trials))
    unfinished = t[~t.status.isin(["completed", "stopped", "failed"])]
    expect(unfinished.empty, "trials not ended:\n%s" % unfinished[["id", "status"]])
    for row in t.itertuples():
        rows = m[m.trial == row.id]
        expect(len(rows) == row.reports, "trial %d: %d metric rows, /trials says %d"
               % (row.id, len(rows), row.reports))
        expect(rows.step.is_unique, "trial %d reported a step twice: %s" % (row.id, list(rows.step)))
    starts = e[e.kind == "start"].trial
    expect(starts.is_unique and len(starts) == trials, "a trial started twice: %s" % list(starts))
    study.close()
    return t


def scenario_python(runner, args):
    example = os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp")
    for name in ("train.py", "study.toml"):
        shutil.copy(os.path.join(example, name), runner.workdir)
    study = os.path.join(runner.workdir, "study.toml")
    rc, log = runner.run(study, os.path.join(runner.workdir, "study.h5"),
                         sbatch_args=["-N", "2", "--ntasks-per-node", "2"])
    expect(rc == 0, "run failed:\n" + log)
    path = os.path.join(runner.workdir, "study.h5")
    trials = check_complete(path, 12)
    judged = check_asha(path, 1, 3, 27, "val_loss")
    with h5py.File(path, "r") as f:
        checkpoints = f["checkpoints"][:]
    expect(len(checkpoints) > 0, "no checkpoint was indexed")
    for c in checkpoints:
        relative = c["path"].decode()
        expect(os.path.exists(os.path.join(runner.workdir, relative)), "missing checkpoint " + relative)
    print("python: %d trials (%s), %d ASHA decisions equal the model, %d checkpoints"
          % (len(trials), dict(trials.status.value_counts()), judged, len(checkpoints)))


def scenario_cpp(runner, args):
    # Trial 4 sends itself SIGTERM once: the client turns it into a checkpoint and an
    # interrupted attempt, which is retried from that checkpoint.
    study = runner.write("study.toml", study_toml("cpp", [args.cpp_trial, "9", "4"], max_trials=10,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=["--slots", "2"], sbatch_args=["-N", "2", "--ntasks-per-node", "2"])
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 10).set_index("id")
    interrupted = trials.loc[4]
    output = read(os.path.join(runner.workdir, "study.trials", "trial-4", "stdout.log"))
    expect(interrupted.retries == 1 and "interrupted by SIGTERM after step 2" in interrupted.error
           and "resumed from step 2" in output and interrupted.status == "completed",
           "trial 4 after its SIGTERM: %s\n%s" % (interrupted.to_dict(), output))
    judged = check_asha(path, 1, 3, 9)
    print("cpp: %d trials (%s), trial 4 checkpointed on SIGTERM and resumed; %d ASHA decisions "
          "equal the model" % (len(trials), dict(trials.status.value_counts()), judged))


def scenario_mpi(runner, args):
    resources = "nodes = 2\nntasks_per_node = 2\n"
    # max_failures: a step whose PMIx wire-up stalls (seen under heavy load on 2 cores) times
    # out (SLURM_PMIX_TIMEOUT) and is retried like any failed trial.
    study = runner.write("study.toml", study_toml("mpi", [args.mpi_trial, "9"], max_trials=6,
                                                   metrics=("loss", "ranks"), resources=resources,
                                                   trial_extra="max_failures = 2\n"))
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=["--slots", "4"],
                         sbatch_args=["-N", "4", "--ntasks-per-node", "2"], timeout=400)
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 6)
    expect((trials.status != "failed").all(), "failed MPI trials:\n%s" % trials[["status", "error"]])
    study_ = Study(path)
    ranks = set(study_.metrics.ranks)
    expect(ranks == {4.0}, "MPI world sizes reported: %s, expected 4" % ranks)
    if runner.launcher == "slurm":
        for row in trials.itertuples():
            expect(row.nodes.count(",") == 1 or "[" in row.nodes,
                   "trial %d ran on %r, expected 2 nodes" % (row.id, row.nodes))
    study_.close()
    judged = check_asha(path, 1, 3, 9)
    print("mpi: %d trials of 4 ranks on %s, %d ASHA decisions equal the model"
          % (len(trials), sorted(set(trials.nodes)), judged))


def scenario_groups(runner, args, kill=False, layout="split", hang=False):
    """[trial] mode = "mpi": one step split into trial groups that run trials back to back
    (layout "steps": one step per group). With kill, a rank of trial 5 dies: its step is
    relaunched and the trials resume from their checkpoints. With hang, trial 5 stops
    reporting: report_timeout_s ends its step, which is relaunched the same way."""
    groups = args.ranks // 2 if layout == "split" else 1  # groups per step
    if runner.launcher == "slurm":
        resources, extra, sbatch = "nodes = 2\n", [], ["-N", str(args.ranks), "--ntasks-per-node", "1"]
    elif layout == "split":
        resources, extra, sbatch = "ranks_per_trial = 2\n", ["--slots", str(args.ranks)], []
    else:
        resources, extra, sbatch = "ntasks_per_node = 2\n", ["--slots", str(args.ranks)], []
    text = study_toml("groups", ["unused"], max_trials=8, metrics=("loss", "ranks", "mixed", "start"),
                      resources=resources,
                      trial_extra="max_failures = 2\n" + ("report_timeout_s = 4\n" if hang else ""))
    program = '["%s"%s]' % (args.group_trial, ', "--kill-trial=5"' if kill else
                            ', "--hang-trial=5"' if hang else "")
    text = text.replace('command = ["unused"]', 'mode = "mpi"\nlayout = "%s"\nprogram = %s'
                        % (layout, program))
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=extra, sbatch_args=sbatch, timeout=400)
    expect(rc == 0, "run failed:\n" + log)
    step_err = read(os.path.join(runner.workdir, "study.trials", "step-1.err"))
    expect("%d group(s) of 2 rank(s)" % groups in step_err, "partition: " + step_err)
    expect(("placement from " + ("mpi-shared" if args.placement == "mpi" else "pmix")) in step_err,
           "placement source: " + step_err)
    partition = [line for line in step_err.splitlines() if "placement from" in line][0]
    expect("using MPI collectives" in step_err, "no NCCL fallback message: " + step_err)
    trials = check_complete(path, 8).set_index("id")
    study_ = Study(path)
    m = study_.metrics
    study_.close()
    expect(set(m.ranks) == {2.0}, "trial sizes: %s" % set(m.ranks))
    expect(set(m.mixed) == {0.0}, "a trial's communicator mixed ranks of other trials")
    failed = trials.loc[2]
    expect(failed.retries == 1 and "injected failure" in failed.error and failed.status != "failed",
           "trial 2: %s" % failed.to_dict())
    with h5py.File(path, "r") as f:
        checkpoints = [c["path"].decode() for c in f["checkpoints"][:]]
    expect(checkpoints, "no collective checkpoint was indexed")
    for relative in checkpoints:
        with h5py.File(os.path.join(runner.workdir, relative), "r") as ckpt:
            expect("weights" in ckpt and len(ckpt["weights.counts"]) == 2,
                   "checkpoint %s: %s" % (relative, list(ckpt)))
    if kill and layout == "steps":
        expect("trial 5 failed" in log, "the killed step was not noticed:\n" + log)
        others = trials.drop(index=[2, 5])
        expect((others.retries == 0).all(), "a crash in one step failed other groups' trials:\n%s"
               % others[["retries", "error"]])
        expect(trials.loc[5].retries >= 1, "trial 5: %s" % trials.loc[5].to_dict())
        outcome = "one step per group; the killed rank took down its own group only"
    elif hang:
        expect("trial 5: no report or heartbeat for 4.0 s" in log and "terminating it" in log and
               "report_timeout_s" in trials.loc[5].error and "MPI step 2" in log,
               "the hung trial's step was not ended and relaunched:\n%s\n%s" % (log, trials.loc[5].error))
        expect((m[m.trial == 5].start > 1).any(), "trial 5 did not resume from its checkpoint")
        outcome = "hung trial 5 ended by report_timeout_s; its step relaunched, trials resumed"
    elif kill:
        expect("MPI step 2" in log and "relaunching it" in log, "the step was not relaunched:\n" + log)
        expect(trials.loc[5].retries >= 1, "trial 5: %s" % trials.loc[5].to_dict())
        resumed = sorted(set(m[m.start > 1].trial))
        expect(resumed, "no trial resumed from a checkpoint after the relaunch")
        outcome = "step killed and relaunched; trials %s resumed from checkpoints" % resumed
    elif layout == "split":
        expect("MPI step 2" not in log, "trials should run back to back in one step:\n" + log)
        outcome = "one MPI step"
    judged = check_asha(path, 1, 3, 9)
    print("%s: 8 trials, %s; %s on %s (%s); trial 2 failed once and was retried; "
          "%d collective HDF5 checkpoints; %d ASHA decisions equal the model"
          % (args.scenario, partition.split("slurmtune: ")[-1], outcome, sorted(set(trials.nodes)),
             dict(trials.status.value_counts()), len(checkpoints), judged))


def scenario_promotion(runner, args):
    """Trial groups under asha_promotion: paused trials are resumed later, in whichever
    group is free, from their collective checkpoints (restored byte for byte)."""
    text = study_toml("promotion", ["unused"], max_trials=9, metrics=("loss", "ranks", "mixed", "start"),
                      resources="ranks_per_trial = 2\n", trial_extra="max_failures = 1\n",
                      scheduler="asha_promotion")
    text = text.replace('command = ["unused"]', 'mode = "mpi"\nprogram = ["%s"]' % args.group_trial)
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    extra = ["--slots", "4"] if runner.launcher == "local" else []
    sbatch = ["-N", "4", "--ntasks-per-node", "1"]
    if runner.launcher == "slurm":
        text = text.replace("ranks_per_trial = 2", "nodes = 2")
        runner.write("study.toml", text)
    rc, log = runner.run(study, path, extra=extra, sbatch_args=sbatch, timeout=400)
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 9)
    study_ = Study(path)
    events, m = study_.events, study_.metrics
    study_.close()
    resumed = sorted(set(events[events.kind == "resume"].trial))
    expect(resumed, "asha_promotion resumed no paused trial")
    for trial in resumed:
        after = m[m.trial == trial]
        expect((after.start > 1).any(), "trial %d was resumed but did not restore its checkpoint" % trial)
    print("promotion: trials %s paused and resumed from their checkpoints (restored byte for "
          "byte); %s" % (resumed, dict(trials.status.value_counts())))


def scenario_groups_term(runner, args):
    """Trial groups and a graceful stop: SIGTERM (locally) or USR1 through the template
    (Slurm, then the requeued job) suspends the running trials at their next report; they
    checkpoint, the run exits 75, and the next run restarts them from the checkpoints."""
    text = study_toml("groups-term", ["unused"], max_trials=8, metrics=("loss", "ranks", "mixed", "start"),
                      resources="ranks_per_trial = 2\n" if runner.launcher == "local" else "nodes = 2\n",
                      trial_extra="max_failures = 1\n")
    text = text.replace('command = ["unused"]', 'mode = "mpi"\nprogram = ["%s", "--sleep-ms=300"]'
                        % args.group_trial)
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    extra = ["--slots", "4"] if runner.launcher == "local" else []
    sbatch = ["-N", "4", "--ntasks-per-node", "1"]
    handle = runner.start(study, path, extra=extra, sbatch_args=sbatch)
    wait_for(lambda: reports_so_far(handle[2]) >= 6, 120, "a few reports")
    interrupt_gracefully(runner, handle)
    study_ = Study(path)
    unfinished = study_.trials[~study_.trials.status.isin(["completed", "stopped", "failed"])]
    study_.close()
    expect(len(unfinished) > 0, "nothing was left to resume")
    if runner.launcher == "slurm":
        release_requeued(handle[1])
        rc, log = rerun_requeued(runner, handle, study, path, extra, sbatch)
    else:
        rc, log = runner.run(study, path, extra=extra, sbatch_args=sbatch)
    expect(rc == 0, "resumed run failed:\n" + log)
    trials = check_complete(path, 8)
    study_ = Study(path)
    m = study_.metrics
    study_.close()
    restored = sorted(t for t in unfinished.id if (m[m.trial == t].start > 1).any())
    expect(restored, "no suspended trial restored its checkpoint: %s" % list(unfinished.id))
    print("groups-term: %d trials suspended, %s restored from collective checkpoints after the "
          "resume; %s" % (len(unfinished), restored, dict(trials.status.value_counts())))


def scenario_digits(runner, args):
    """The mlp-digits example: a data-parallel MLP tuned with ASHA in trial groups of 2
    ranks (2 nodes per trial under Slurm); the best trial must pass 95 % accuracy."""
    example = os.path.join(ROOT, "share", "slurmtune", "examples", "mlp-digits", "study.toml")
    text = read(example).replace('program = ["mlp_digits"]', 'program = ["%s"]' % args.digits)
    if runner.launcher == "slurm":
        text = text.replace("ranks_per_trial = 2", "nodes = 2")
        extra, sbatch = [], ["-N", "4", "--ntasks-per-node", "1"]
    else:
        extra, sbatch = ["--slots", "4"], []
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=extra, sbatch_args=sbatch, timeout=500)
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 12)
    study_ = Study(path)
    best = study_.best_trial
    study_.close()
    expect(best.best_value > 0.95, "best validation accuracy %.4f, expected > 0.95" % best.best_value)
    judged = check_asha(path, 2, 3, 18, "val_accuracy", "max")
    print("digits: best val_accuracy %.4f (trial %d: %s); %s; %d ASHA decisions equal the model"
          % (best.best_value, best.name, {c: best[c] for c in trials.columns if c.startswith("config/")},
             dict(trials.status.value_counts()), judged))


def bad_clients(address):
    """A client with a wrong token and one that sends garbage; both must be shut out."""
    host, port = address.rsplit(":", 1)
    results = []
    hello = json.dumps({"token": "0" * 64, "trial": 0, "rank": 0}).encode()
    for payload in (struct.pack(">2sBBI", b"ST", 1, 1, len(hello)) + hello,
                    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(payload)
            data = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                fail("the coordinator kept a bad connection open")
            results.append(data)
    return results


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    fail("timed out waiting for " + what)


def control_address(log_path):
    for line in read(log_path).splitlines():
        if "control plane on " in line:
            return line.split("control plane on ")[1].split(",")[0]
    return None


def scenario_faults(runner, args):
    faults = "1:segv,2:exit,5:hang,3:slow"
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=6", "--sleep=0.3",
               "--faults=" + faults]
    study = runner.write("study.toml", study_toml("faults", command, max_trials=8, max_t=6,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    handle = runner.start(study, path, extra=["--slots", "3"], sbatch_args=["-N", "3", "--ntasks-per-node", "1"])
    address = wait_for(lambda: control_address(handle[2]), 60, "the control plane address")
    replies = bad_clients(address)
    expect(b"wrong or missing token" in replies[0], "wrong token: reply %r" % replies[0])
    expect(replies[1] == b"" or b"magic" in replies[1] or replies[1].startswith(b"ST"),
           "garbage: reply %r" % replies[1])
    # Trial 3's first attempt is interrupted. Under Slurm its step is scancelled (Slurm
    # kills a cancelled step's tasks outright) and the attempt is retried. Locally it gets
    # SIGTERM: its client notes it, the next report ends the attempt with a checkpoint,
    # and the retry resumes from there.
    if runner.launcher == "slurm":
        cancelled = cancel_a_step(handle[1], runner.workdir)
    else:
        cancelled = terminate_trial(runner.workdir, 3)
    rc, log = runner.wait(handle)
    expect(rc == 0, "run failed:\n" + log)
    expect("wrong or missing token" in log and "closing connection" in log,
           "the log does not record the refused clients:\n" + log)
    trials = check_complete(path, 8).set_index("id")
    segv, exited, hung = trials.loc[1], trials.loc[2], trials.loc[5]
    expect(segv.retries == 1 and "SIGSEGV" in segv.error and segv.status != "failed",
           "segfaulting trial: %s" % segv.to_dict())
    expect(exited.status == "failed" and exited.retries == 1 and "exit status 3" in exited.error
           and "simulated failure" in exited.error, "failing trial: %s" % exited.to_dict())
    expect(hung.status == "stopped", "hanging trial: %s" % hung.to_dict())
    hung_pid = read(os.path.join(runner.workdir, "study.trials", "trial-5", "pid")).strip()
    expect(not alive(hung_pid), "the hanging trial (pid %s) still runs" % hung_pid)
    # Locally slurmtune escalates to SIGKILL itself; under Slurm, srun's own step
    # termination may get there first.
    expect(runner.launcher == "slurm" or "ignored SIGTERM; sending SIGKILL" in log,
           "the hanging trial was not killed:\n" + log)
    row = trials.loc[cancelled]
    expect(row.retries >= 1, "trial %d, its step cancelled, was not retried: %s"
           % (cancelled, row.to_dict()))
    output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % cancelled, "stdout.log"))
    expect(runner.launcher == "slurm" or
           ("interrupted by SIGTERM" in output and "resumed from" in output and
            "interrupted by SIGTERM" in row.error),
           "trial %d did not checkpoint on SIGTERM and resume:\n%s\n%s" % (cancelled, output, row.error))
    judged = check_asha(path, 1, 3, 6)
    print("faults: %s; segv retried, exit 3 failed after %d retries, hang killed, "
          "bad clients refused%s; %d ASHA decisions equal the model"
          % (dict(trials.status.value_counts()), exited.retries,
             ", trial %d checkpointed on SIGTERM (%s) and resumed"
             % (cancelled, "its step scancelled" if runner.launcher == "slurm" else "signalled"),
             judged))


def terminate_trial(workdir, trial):
    """Sends SIGTERM to the first attempt of `trial` once it has reported."""
    trial_dir = os.path.join(workdir, "study.trials", "trial-%d" % trial)
    wait_for(lambda: os.path.exists(os.path.join(trial_dir, "pid")), 120, "trial %d to start" % trial)
    time.sleep(2)  # after its first report (1.5 s a step)
    os.kill(int(read(os.path.join(trial_dir, "pid")).strip()), signal.SIGTERM)
    return trial


def scenario_limits(runner, args):
    """[trial] time_limit_s and report_timeout_s: a trial that never reports is ended as
    hung (and fails after its retry), one that overruns the time limit is ended (it
    checkpoints on the SIGTERM and its retry resumes), one whose long step sends
    heartbeats is left alone; the progress line names the silent trial."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=6", "--sleep=0.3",
               "--faults=1:silent,2:overrun,3:heartbeat,4:shell-heartbeat",
               "--slurmtune=" + os.path.abspath(runner.slurmtune)]
    study = runner.write("study.toml", study_toml(
        "limits", command, max_trials=6, max_t=6,
        trial_extra="max_failures = 1\ntime_limit_s = 8\nreport_timeout_s = 3\n"))
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=["--slots", "3"],
                         sbatch_args=["-N", "3", "--ntasks-per-node", "1"])
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 6).set_index("id")
    silent, overrun = trials.loc[1], trials.loc[2]
    expect(silent.status == "failed" and silent.retries == 1 and
           "no report or heartbeat for 3.0 s after its launch" in silent.error,
           "silent trial: %s" % silent.to_dict())
    expect("silent: trial 1 (" in log, "the progress line never named the silent trial:\n" + log)
    output = read(os.path.join(runner.workdir, "study.trials", "trial-2", "stdout.log"))
    expect(overrun.status == "completed" and overrun.retries == 1 and
           "time limit of 8.0 s exceeded" in overrun.error and "resumed from" in output,
           "overrunning trial: %s\n%s" % (overrun.to_dict(), output))
    for beating in (trials.loc[3], trials.loc[4]):  # the Python and the shell client
        expect(beating.status == "completed" and beating.retries == 0,
               "heartbeating trial: %s" % beating.to_dict())
    judged = check_asha(path, 1, 3, 6)
    print("limits: silent trial failed as hung after %d retry; overrunning trial ended at the "
          "time limit, checkpointed and resumed; Python and shell heartbeats kept 4 s steps "
          "alive; %s; %d ASHA "
          "decisions equal the model" % (silent.retries, dict(trials.status.value_counts()), judged))


def scenario_clock(runner, args):
    """The allocation's clock: launches that cannot reach their next rung before the end
    are held; once nothing more fits and nothing runs, the session stops with work left
    (75: the template requeues) and the next session finishes the study. Locally the end
    is `--time-left 5`; under Slurm it is a 2-minute job (read with squeue) less
    `--end-margin 112`."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.5"]
    study = runner.write("study.toml", study_toml("clock", command, max_trials=8, max_t=9, grace=3,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    sbatch = ["-N", "2", "--ntasks-per-node", "1"]
    if runner.launcher == "local":
        rc, log = runner.run(study, path, extra=["--slots", "2", "--time-left", "5", "--end-margin", "0"])
        expect(rc == 75, "exit status %d, expected 75 (work held for the next session):\n%s" % (rc, log))
        source = "(--time-left)"
    else:
        handle = runner.start(study, path, extra=["--end-margin", "112"],
                              sbatch_args=sbatch + ["--time=2", "--signal=B:USR1@10"])
        wait_for(lambda: "requeueing job" in read(handle[2]), 180, "the requeue")
        log = read(handle[2])
        source = "(squeue)"
    expect("allocation ends in" in log and source in log, "no allocation clock in the log:\n" + log)
    expect("is held for the next session" in log and "stopping with work left" in log,
           "nothing was held for the allocation's end:\n" + log)
    study_ = Study(path)
    first = study_.trials
    study_.close()
    expect(len(first) < 8 or (first.status == "running").any(),
           "the first session did everything; nothing was held:\n%s" % first[["id", "status"]])
    if runner.launcher == "local":
        rc, log = runner.run(study, path, extra=["--slots", "2"])
    else:
        release_requeued(handle[1])
        rc, log = rerun_requeued(runner, handle, study, path, ["--end-margin", "0"], sbatch)
    expect(rc == 0, "the next session failed:\n" + log)
    trials = check_complete(path, 8)
    judged = check_asha(path, 3, 3, 9)
    print("clock: the first session started %d of 8 trials and held the rest for the "
          "allocation's end %s; the next session finished: %s; %d ASHA decisions equal the model"
          % (len(first), source, dict(trials.status.value_counts()), judged))


def cancel_a_step(job, workdir):
    """Cancels the job step of the slow trial 3 (first attempt) once it runs."""
    pid_file = os.path.join(workdir, "study.trials", "trial-3", "pid")
    wait_for(lambda: os.path.exists(pid_file), 120, "trial 3 to start")
    out = subprocess.run(["squeue", "-h", "-s", "-j", job, "-o", "%i %j"], capture_output=True,
                         text=True).stdout
    steps = [line.split()[0] for line in out.splitlines() if line.split()[0].count(".") == 1]
    for step in steps:
        env_file = "/proc/%s/environ" % read(pid_file).strip()
        environ = open(env_file, "rb").read().split(b"\0") if os.path.exists(env_file) else []
        if b"SLURM_STEP_ID=" + step.split(".")[1].encode() in environ:
            subprocess.run(["scancel", step], check=True)
            return 3
    fail("no job step found for trial 3 among %s" % steps)


def scenario_interrupt(runner, args, how):
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.4"]
    study = runner.write("study.toml", study_toml(how, command, max_trials=8, max_t=9,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    sbatch = ["-N", "2", "--ntasks-per-node", "2"]
    handle = runner.start(study, path, extra=["--slots", "3"], sbatch_args=sbatch)
    wait_for(lambda: "reports" in read(handle[2]) and reports_so_far(handle[2]) >= 6, 120,
             "a few reports")
    if how == "term":
        interrupt_gracefully(runner, handle)
    elif how == "cancel":
        cancel_run(runner, handle)
    else:
        durable = kill_orchestrator(runner, handle, path)
        print("kill: %d metric rows were durable when the orchestrator died" % len(durable))
    study_ = Study(path)
    unfinished = study_.trials[~study_.trials.status.isin(["completed", "stopped", "failed"])]
    study_.close()
    expect(len(unfinished) > 0, "nothing was left to resume")
    if how == "cancel":
        check_consistent(path)
        # Each interrupted trial that had reported saved a checkpoint at its last step
        # (told "pause" by the coordinator, or its client noticed the SIGTERM first).
        with h5py.File(path, "r") as f:
            saved = {(int(c["trial"]), float(c["step"])) for c in f["checkpoints"][:]}
        study_ = Study(path)
        m = study_.metrics
        study_.close()
        for t in unfinished.id:
            steps = m[m.trial == t].step
            expect(steps.empty or (t, float(steps.max())) in saved,
                   "trial %d did not checkpoint its last step %s before the cancel ended it; "
                   "checkpoints %s" % (t, None if steps.empty else steps.max(), sorted(saved)))
    if how == "term" and runner.launcher == "slurm":
        release_requeued(handle[1])
        rc, log = rerun_requeued(runner, handle, study, path, ["--slots", "3"], sbatch)
    else:
        rc, log = runner.run(study, path, extra=["--slots", "3"], sbatch_args=sbatch)
    expect(rc == 0, "resumed run failed:\n" + log)
    expect("resuming" in log, "the second run did not resume:\n" + log)
    trials = check_complete(path, 8)
    if how == "kill":
        with h5py.File(path, "r") as f:
            after = {(int(r["seq"]), int(r["trial"]), float(r["step"])) for r in f["metrics"][:]}
        expect(durable <= after, "rows flushed before the kill are gone: %s" % sorted(durable - after))
    restarted = [t for t in unfinished.id if "resumed from" in
                 read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))]
    judged = check_asha(path, 1, 3, 9)
    print("%s: %d trials were unfinished, %d restarted from their checkpoints; %s; "
          "%d ASHA decisions equal the model"
          % (how, len(unfinished), len(restarted), dict(trials.status.value_counts()), judged))


def reports_so_far(log_path):
    count = 0
    for line in read(log_path).splitlines():
        if "progress:" in line and " reports" in line:
            count = int(line.split(" reports")[0].split()[-1])
    return count


def release_requeued(job):
    """The template requeued the job; Slurm holds a requeued job for ~2 minutes
    (BeginTime). Release it once its nodes have finished completing the previous run (a
    launch onto completing nodes can fail), and the same job resumes the study itself."""
    wait_for(lambda: "comp" not in subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True,
                                                  text=True).stdout, 60, "nodes to finish completing")
    time.sleep(5)  # per-job state of the first run (PMIx dirs under TmpFS) is removed after
    subprocess.run(["scontrol", "update", "JobId=" + job, "StartTime=now"], check=True)


def rerun_requeued(runner, handle, study, path, extra, sbatch):
    """Waits for the released requeued job. Slurm on this 2-core test cluster has, rarely,
    failed to start a requeued job released early (exit 1 before the script's first line);
    then the test resubmits, as a user would, and says so: the resume is checked either way."""
    rc, log = runner.wait(handle)
    if "(restart 1)" in log:
        return rc, log
    print("NOTE: Slurm did not restart the requeued job %s; resubmitting" % handle[1])
    return runner.run(study, path, extra=extra, sbatch_args=sbatch)


def interrupt_gracefully(runner, handle):
    """Checkpoint and requeue: SIGUSR1 locally (exit 75); through the template under Slurm."""
    if runner.launcher == "local":
        handle[1].send_signal(signal.SIGUSR1)
        rc = handle[1].wait(timeout=60)
        expect(rc == 75, "SIGUSR1: exit status %d, expected 75; log:\n%s" % (rc, read(handle[2])))
        return
    # The template's trap forwards USR1 to slurmtune run, which exits 75, and the
    # template requeues the job; the requeued job resumes the study by itself.
    subprocess.run(["scancel", "--batch", "--signal=USR1", handle[1]], check=True)
    wait_for(lambda: "requeueing job" in read(handle[2]), 60, "the requeue")
    wait_for(lambda: job_state(handle[1]) == "PENDING", 30, "the job to be requeued")


def cancel_run(runner, handle):
    """Cancel means cancel: SIGTERM locally (exit 143); `scancel JOB` under Slurm ends the
    job for good (CANCELLED, never requeued) after the trials checkpointed."""
    if runner.launcher == "local":
        handle[1].send_signal(signal.SIGTERM)
        rc = handle[1].wait(timeout=60)
        log = read(handle[2])
        expect(rc == 143, "SIGTERM: exit status %d, expected 143; log:\n%s" % (rc, log))
        expect("cancelled with work left" in log, "no cancellation in the log:\n" + log)
        return
    job = handle[1]
    subprocess.run(["scancel", job], check=True)
    wait_for(lambda: job_state(job) == "CANCELLED", 90, "the job to be cancelled")
    # A requeue would show up as PENDING with Restarts=1 within seconds; give it longer.
    wait_for(lambda: "submit-hpo: job %s cancelled; not requeued" % job in read(handle[2]), 60,
             "the template's cancel line")
    time.sleep(10)
    details = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
    log = read(handle[2])
    expect(job_state(job) == "CANCELLED" and "Restarts=0" in details,
           "scancel did not end the job for good:\n%s\n%s" % (details, log))
    expect("requeueing" not in log, "the template requeued a cancelled job:\n" + log)
    expect("SIGTERM (cancel)" in log and "cancelled with work left: exit status 143" in log,
           "the orchestrator did not stop gracefully:\n" + log)


def check_consistent(path):
    """The study file of an interrupted run: every row counted in /trials is in /metrics,
    no step twice, and no trial ended that did not end."""
    with h5py.File(path, "r") as f:  # a reader without SWMR: the writer closed the file
        committed = int(f["commit"][0]["metrics"])
    study = Study(path)
    t, m = study.trials, study.metrics
    study.close()
    expect(committed == len(m) == t.reports.sum(),
           "metric rows: %d committed, %d read, %d counted in /trials" % (committed, len(m), t.reports.sum()))
    for row in t.itertuples():
        rows = m[m.trial == row.id]
        expect(len(rows) == row.reports and rows.step.is_unique,
               "trial %d: %d metric rows, /trials says %d" % (row.id, len(rows), row.reports))


def kill_orchestrator(runner, handle, path):
    if runner.launcher == "local":
        handle[1].kill()
        handle[1].wait()
        orchestrator_gone = True
    else:
        pids = subprocess.run(["pgrep", "-f", "slurmtune run .*" + runner.workdir],
                              capture_output=True, text=True).stdout.split()
        expect(pids, "no orchestrator process found")
        for pid in pids:
            os.kill(int(pid), signal.SIGKILL)
        orchestrator_gone = True
    expect(orchestrator_gone, "orchestrator still alive")
    with h5py.File(path, "r", swmr=True) as f:
        count = int(f["commit"][0]["metrics"])
        rows = f["metrics"][:count]
        durable = {(int(r["seq"]), int(r["trial"]), float(r["step"])) for r in rows}
    # Trials notice the lost coordinator at their next report and exit.
    pid_files = [os.path.join(root, "pid") for root, _, files in
                 os.walk(os.path.join(runner.workdir, "study.trials")) if "pid" in files]
    wait_for(lambda: not any(alive(read(p).strip()) for p in pid_files), 30,
             "trial processes to exit after losing the coordinator")
    if runner.launcher == "slurm":
        subprocess.run(["scancel", handle[1]])
        wait_for(lambda: job_state(handle[1]) in ("CANCELLED", "COMPLETED", "FAILED"), 60, "the job to end")
    return durable


def alive(pid):
    try:
        os.kill(int(pid), 0)
        with open("/proc/%s/stat" % pid) as f:
            return f.read().split()[2] != "Z"
    except (OSError, ValueError):
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("scenario", choices=["python", "cpp", "mpi", "faults", "limits", "clock", "term",
                                             "cancel", "kill",
                                             "groups", "groups-kill", "groups-hang", "groups-steps",
                                             "digits",
                                             "promotion", "groups-term"])
    parser.add_argument("--ranks", type=int, default=4, help="groups: ranks of the MPI step")
    parser.add_argument("--placement", choices=["pmix", "mpi"], default="pmix",
                        help="groups: mpi forces the MPI_Comm_split_type fallback")
    parser.add_argument("--launcher", choices=["local", "slurm"], default="local")
    parser.add_argument("--cpp-trial")
    parser.add_argument("--mpi-trial")
    parser.add_argument("--group-trial")
    parser.add_argument("--digits", help="the mlp_digits example program")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="slurmtune-%s-%s-" % (args.launcher, args.scenario))
    if args.placement == "mpi":
        os.environ["SLURMTUNE_PLACEMENT"] = "mpi"

    runner = Runner(args, workdir)
    if args.scenario in ("term", "kill", "cancel"):
        scenario_interrupt(runner, args, args.scenario)
    elif args.scenario == "groups-term":
        scenario_groups_term(runner, args)
    elif args.scenario.startswith("groups"):
        scenario_groups(runner, args, kill=args.scenario in ("groups-kill", "groups-steps"),
                        layout="steps" if args.scenario == "groups-steps" else "split",
                        hang=args.scenario == "groups-hang")
    else:
        globals()["scenario_" + args.scenario](runner, args)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
