#!/usr/bin/env python3
"""The hostile scenario of tests/run/check_run.py (local launcher): a coordinator whose
descriptor limit is low (ulimit -n 96) is flooded with idle connections that never say
HELLO while a study runs, and one trial probes every numeric field of the control plane
with NaN, ±Infinity, huge, negative and fractional numbers and checkpoint paths out of
its folder (tests/run/trials/hostile_trial.py). The coordinator must answer each probe
with an ERROR naming the field, stay within a bounded CPU and log, and record every
report of every trial."""
import json
import os
import resource
import socket
import subprocess
import time

from run_harness import (ROOT, Study, as_impostor, check_asha, check_complete, check_impostors, expect,
                         read, study_toml, wait_for)
from run_reliability import control_address

HOSTILE_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "hostile_trial.py")
DESCRIPTORS = 96
EXTRA = 12  # hostile_trial.py's EXTRA_CONNECTIONS
FLOOD = 400


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    fields = read("/proc/%d/stat" % pid).rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood(address, seconds):
    """Opens FLOOD connections that never say HELLO and holds them for `seconds`; returns
    how many connections were made."""
    host, port = address.rsplit(":", 1)
    held = []
    deadline = time.time() + seconds
    while len(held) < FLOOD and time.time() < deadline:
        try:
            held.append(socket.create_connection((host, int(port)), timeout=2))
        except OSError:
            time.sleep(0.01)
    time.sleep(max(0.0, deadline - time.time()))
    for s in held:
        s.close()
    return len(held)


def scenario_hostile(runner, args):
    steps = 6
    command = as_impostor(runner, ["/usr/bin/python3", HOSTILE_TRIAL, "--x={x}", "--steps=%d" % steps,
                                   "--sleep=0.4", "--probe-trial=0"])
    study = runner.write("study.toml", study_toml("hostile", command, max_trials=8, max_t=steps,
                                                  trial_extra="max_failures = 2\n"))
    path = os.path.join(runner.workdir, "study.h5")
    log_path = os.path.join(runner.workdir, "run.log")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(runner.command(study, path, ["--launcher", "local", "--slots", "2"]),
                                cwd=runner.workdir, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: resource.setrlimit(
                                    resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS)))
    address = wait_for(lambda: control_address(log_path), 60, "the control plane address")
    probes_path = os.path.join(runner.workdir, "study.trials", "trial-0", "probes.json")
    wait_for(lambda: os.path.exists(probes_path), 120, "trial 0's probes")
    cpu_before, started = cpu_seconds(proc.pid), time.time()
    made = flood(address, 6)
    cpu, wall = cpu_seconds(proc.pid) - cpu_before, time.time() - started
    try:
        rc = proc.wait(timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        expect(False, "slurmtune run did not finish; log:\n" + read(log_path))
    log = read(log_path)
    expect(rc == 0, "run failed:\n" + log)
    # A coordinator that spins on a failing accept burns a whole core and writes a line
    # per try (millions); a healthy one does a little work per connection.
    expect(cpu < 0.5 * wall, "the coordinator used %.1f s of CPU in %.1f s of flood" % (cpu, wall))
    lines = log.count("\n")
    expect(lines < 400 and len(log) < 200_000,
           "the log grew to %d lines, %d bytes under the flood" % (lines, len(log)))
    expect("similar line(s) left out" in log, "no throttled log line:\n" + log[-3000:])
    trials = check_complete(path, 8).set_index("id")
    impostors = check_impostors(runner, 8)
    # A trial that connected in the middle of the flood may have lost its connection
    # before its HELLO was read (the oldest connections without HELLO make room): its
    # client connects again, and past 7 tries the attempt is retried. None may fail for
    # good, and no report may be lost.
    expect((trials.status != "failed").all(),
           "a trial failed under the flood: %s" % trials[["status", "retries", "error"]])
    study_ = Study(path)
    metrics = study_.metrics
    study_.close()
    for t, row in trials.iterrows():  # every report of every trial was recorded
        steps_seen = sorted(metrics[metrics.trial == t].step)
        expect(steps_seen == list(range(1, int(row.last_step) + 1)),
               "trial %d: reports %s, last step %s" % (t, steps_seen, row.last_step))
    probes = json.loads(read(probes_path))
    for name, probe in probes.items():
        answers = probe["answers"]
        errors = [text for kind, text in answers if kind == 8]
        expect(len(errors) == 1 and ("'%s'" % probe["field"] in errors[0] or
                                     (probe["field"] == "path" and "CHECKPOINT" in errors[0])),
               "%s: answered %s, not one ERROR naming '%s'" % (name, answers, probe["field"]))
    # Issue #41 (1, 2): a second rank 0 cannot take the reports over, a rank the trial
    # does not have is refused, so a trial's child cannot pile up connections; those still
    # open when its attempt ends are closed then (after the 2 s drain wait).
    extra = json.loads(read(os.path.join(runner.workdir, "study.trials", "trial-0", "extra.json")))
    expect(extra["rank 0"]["welcomed"] == 0 and extra["rank 1"]["welcomed"] == 0 and all(
        "rank 0 of trial 0 is connected already" in r for r in extra["rank 0"]["refusals"]) and all(
        "trial 0 has 1 rank(s); rank 1 is not one of them" in r for r in extra["rank 1"]["refusals"]),
           "trial 0's extra connections: %s" % extra)
    leftover_path = os.path.join(runner.workdir, "study.trials", "trial-0", "leftover.json")
    leftover = json.loads(wait_for(lambda: os.path.exists(leftover_path) and read(leftover_path), 30,
                                   "the left-behind process's record"))
    expect(all(s is not None and s < 10 for s in leftover["closed_after"]),
           "connections left open after trial 0 ended: %s" % leftover)
    judged = check_asha(path, 1, 3, steps)
    print("hostile: %d idle connections under ulimit -n %d: the coordinator used %.2f s of CPU "
          "in %.1f s, its log %d lines; %d probes each refused with an ERROR naming the field "
          "(e.g. %r); %d extra HELLOs of trial 0 (a second rank 0, a rank it lacks) refused, "
          "its connection held by a process it left behind closed %.1f s after it ended; every "
          "report of 8 trials recorded, none failed; %d ASHA decisions equal the model; %d "
          "retries; %d attempts' claims of other trials, attempts, steps and workers refused"
          % (made, DESCRIPTORS, cpu, wall, lines, len(probes),
             [t for k, t in probes["REPORT step NaN"]["answers"] if k == 8][0],
             2 * EXTRA, max(leftover["closed_after"]), judged, int(trials.retries.sum()), impostors))


LEFTOVER = os.path.join(ROOT, "tests", "run", "trials", "leftover.py")


def scenario_leftover(runner, args):
    """Issue #59, items 2, 3 and 7: a process left over from a paused launch keeps that
    launch's credential; once its trial is promoted and runs again, it claims rank 0 of
    the new launch and reports a loss of -42. Every launch has its own credential: the
    claim is refused, and the study's best and reports are the real trials' only. And a
    study that takes no joined jobs writes no secret a trial could pose as one with."""
    steps = 3
    out = os.path.join(runner.workdir, "leftovers")
    os.makedirs(out)
    command = ["/usr/bin/python3", LEFTOVER, out, "/usr/bin/python3",
               os.path.join(ROOT, "tests", "run", "trials", "fault_trial.py"), "--x={x}",
               "--steps=%d" % steps, "--sleep=0.05"]
    study = runner.write("study.toml", study_toml("leftover", command, max_trials=4, max_t=steps,
                                                  scheduler="asha_promotion"))
    path = os.path.join(runner.workdir, "study.h5")
    log_path = os.path.join(runner.workdir, "run.log")
    with open(log_path, "ab") as log:
        rc = subprocess.run(runner.command(study, path, ["--launcher", "local", "--slots", "2"]),
                            cwd=runner.workdir, stdout=log, stderr=subprocess.STDOUT,
                            timeout=300).returncode
    expect(rc == 0, "run failed:\n" + read(log_path))
    trials = check_complete(path, 4)
    resumed = [int(t) for t in trials.id if os.path.exists(
        os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "resumed"))]
    expect(resumed, "no trial was resumed: the scenario proves nothing")
    for t in resumed:
        record = os.path.join(out, "leftover-%d.json" % t)
        text = wait_for(lambda: os.path.exists(record) and read(record), 70,
                        "trial %d's leftover's record" % t)
        hello = json.loads(text)["hello"]
        expect(hello["kind"] == "ERROR" and
               (hello["error"] or "").startswith("wrong or missing credential for trial %d" % t),
               "trial %d: the leftover of its paused launch was answered %s" % (t, hello))
    for t in trials.id:
        secret = json.loads(read(os.path.join(out, "secret-%d.json" % t)))
        expect(not secret["found"], "trial %d found the session's secret: %s" % (t, secret))
    with Study(path) as s:
        metrics = s.metrics
    expect(not (metrics.loss == -42.0).any() and not (metrics.step == 1000).any(),
           "a leftover's report was recorded:\n%s" % metrics[metrics.loss == -42.0])
    print("leftover: %d resumed trial(s); each one's leftover from its paused launch was "
          "refused (%s)" % (len(resumed), hello["error"]))
