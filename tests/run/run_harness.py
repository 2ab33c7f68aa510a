#!/usr/bin/env python3
"""What every `slurmtune run` end-to-end scenario shares (tests/run/check_run.py): the
Runner that starts a study with the local launcher or as an sbatch job of the template,
waiting with bounds, and the checks of a results file read back with h5py."""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "peers"))
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
from asha_model import RayModel  # noqa: E402
from slurmtune.study import Study  # noqa: E402

TEMPLATE = os.path.join(ROOT, "sbatch", "submit-hpo.sbatch")
FAULT_TRIAL = os.path.join(HERE, "trials", "fault_trial.py")
IMPOSTOR = os.path.join(HERE, "trials", "impostor.py")


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
                # SIGTERM first: slurmtune run then ends its trials (their own process
                # groups) within its graces. A SIGKILL alone left a hung trial's mpirun
                # and ranks running for half an hour after the test, holding its port.
                what.terminate()
                try:
                    what.wait(timeout=60)
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


def run_on_four_ranks(runner, study, path):
    """Runs an MPI-step study on 4 ranks: `mpirun -np 4` locally, 4 nodes x 1 rank under
    Slurm."""
    extra = ["--slots", "4"] if runner.launcher == "local" else []
    return runner.run(study, path, extra=extra, sbatch_args=["-N", "4", "--ntasks-per-node", "1"],
                      timeout=400)


def check_group_trials(path, count):
    """The trials (by id) and metrics of a completed trial-group study whose trials report
    `ranks` (2 each) and `mixed` (0: the communicator held the trial's ranks only)."""
    trials = check_complete(path, count).set_index("id")
    study = Study(path)
    m = study.metrics
    study.close()
    expect(set(m.ranks) == {2.0}, "trial sizes: %s" % set(m.ranks))
    expect(set(m.mixed) == {0.0}, "a trial's communicator mixed ranks of other trials")
    return trials, m


def check_one_group_step(log, why):
    """Every trial group that connected came from one MPI step. An earlier step may have
    died before any group connected (Open MPI's TCP wire-up on loopback has crashed at
    start-up under load, PC 0, rarely); the coordinator relaunches such a step by design."""
    steps = set(re.findall(r"trial group (\d+)\.\d+ ready", log))
    expect(len(steps) == 1, "%s: groups came from MPI steps %s:\n%s" % (why, sorted(steps), log))
    relaunches = re.findall(r"MPI step \d+ ended \([^)]*\)+ (.*?): relaunching it", log)
    expect(all(r.startswith("before any trial group connected") for r in relaunches),
           "%s: a step with groups was relaunched:\n%s" % (why, log))


def check_relaunched(log, trials, m, killed=5):
    """After a rank of trial `killed` died: its MPI step was relaunched, the trial retried,
    and trials resumed from their checkpoints (metric `start` > 1); returns those."""
    expect("MPI step 2" in log and "relaunching it" in log, "the step was not relaunched:\n" + log)
    expect(trials.loc[killed].retries >= 1, "trial %d: %s" % (killed, trials.loc[killed].to_dict()))
    resumed = sorted(set(m[m.start > 1].trial))
    expect(resumed, "no trial resumed from a checkpoint after the relaunch")
    return resumed


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
    """Every trial ended; report counts agree between /trials and /metrics; no step twice
    (PBT: no step twice between two exploits of a trial, which go back to a donor's step)."""
    study = Study(path)
    t, m, e, x = study.trials, study.metrics, study.events, study.exploits
    expect(len(t) == trials, "%d trials recorded, expected %d" % (len(t), trials))
    unfinished = t[~t.status.isin(["completed", "stopped", "failed"])]
    expect(unfinished.empty, "trials not ended:\n%s" % unfinished[["id", "status"]])
    for row in t.itertuples():
        rows = m[m.trial == row.id]
        expect(len(rows) == row.reports, "trial %d: %d metric rows, /trials says %d"
               % (row.id, len(rows), row.reports))
        exploited_at = sorted(x[x.trial == row.id].seq)
        segment = rows.seq.map(lambda seq: sum(1 for at in exploited_at if at < seq))
        expect(not pd.DataFrame({"segment": segment, "step": rows.step}).duplicated().any(),
               "trial %d reported a step twice: %s" % (row.id, list(rows.step)))
    starts = e[e.kind == "start"].trial
    expect(starts.is_unique and len(starts) == trials, "a trial started twice: %s" % list(starts))
    check_loop_figures(study)
    study.close()
    return t


def check_loop_figures(study):
    """The last commit holds the coordinator loop's figures (issue #62, item 4), and they
    hold together: the recent longest turn is one of the session's, the counts nest."""
    loop = study.loop
    works = {"messages", "decisions", "suggestions", "launches", "exits", "results", "checkpoints", "periodic"}
    expect(loop is not None and loop["turns"] > 0, "no loop figures in /commit: %s" % loop)
    expect(0 <= loop["recent_ms"] <= loop["longest_ms"] and 0 <= loop["recent_busy"] <= 1 and
           loop["over_1s"] <= loop["over_100ms"] <= loop["over_10ms"] <= loop["turns"] and
           {loop["recent_work"], loop["longest_work"]} <= works, "loop figures do not hold together: %s" % loop)


def as_impostor(runner, command):
    """`command` wrapped in tests/run/trials/impostor.py: each trial's (or trial group's)
    rank 0 first claims identities its credential does not cover."""
    out = os.path.join(runner.workdir, "impostors")
    os.makedirs(out, exist_ok=True)
    return ["/usr/bin/python3", IMPOSTOR, out] + list(command)


# A node agent refuses, before the coordinator sees it, a claim for what does not run on
# its node (a trial elsewhere, a worker, a group step); a claim it passes on is checked
# by the coordinator as any.
AGENT_REFUSALS = ("node agent: trial ", "node agent: a node agent carries only trials' connections")


def check_impostors(runner, at_least):
    """Every claim of impostor.py was refused for its credential (issue #41, item 1): a
    token for another trial, attempt or step, or a proof for a worker, never opens a
    connection, and the coordinator never proved the prober's own credential to it.
    Returns how many holders probed."""
    out = os.path.join(runner.workdir, "impostors")
    files = sorted(f for f in os.listdir(out) if f.endswith(".json"))
    expect(len(files) >= at_least, "%d holders probed, expected %d or more" % (len(files), at_least))
    for name in files:
        with open(os.path.join(out, name)) as f:
            for probe, answer in json.load(f).items():
                proving = "coordinator_proved_our_credential" in answer
                wanted = "wrong proof of the credential for " if proving else \
                    "wrong or missing credential for "
                expect(answer["kind"] == "ERROR" and
                       (answer["error"] or "").startswith((wanted,) + AGENT_REFUSALS)
                       and not answer.get("coordinator_proved_our_credential"),
                       "%s, %s: %s" % (name, probe, answer))
    return len(files)


def wait_for(predicate, timeout, what, interval=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    fail("timed out waiting for " + what)


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
    # The template logs its requeue before slurmctld has carried it out; a release that
    # comes first is undone by the requeue's own hold, and the job then waits its ~2
    # minutes (CI, under load, took 168 s for run.slurm.clock instead of 26 s).
    wait_for(lambda: job_state(job) == "PENDING", 60, "job %s to be requeued (pending)" % job)
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


def next_session(runner, handle, study, path, extra, sbatch):
    """The session after a graceful interrupt (USR1): under Slurm the template requeued
    the job, which resumes the study itself once released; locally a new run resumes it."""
    if runner.launcher == "slurm":
        release_requeued(handle[1])
        return rerun_requeued(runner, handle, study, path, extra, sbatch)
    return runner.run(study, path, extra=extra, sbatch_args=sbatch)


def alive(pid):
    try:
        os.kill(int(pid), 0)
        with open("/proc/%s/stat" % pid) as f:
            return f.read().split()[2] != "Z"
    except (OSError, ValueError):
        return False
