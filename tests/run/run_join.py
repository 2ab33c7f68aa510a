#!/usr/bin/env python3
"""More allocations for one study (`slurmtune join`, sbatch/join-hpo.sbatch), on the
local Slurm cluster; checked with h5py like every scenario of tests/run/check_run.py.

join: a study started as a 1-node job (n1, 2 trial slots, a step per trial) is joined by
a 2-node job (n2, n3) of the template with a 1-minute time limit, and by a 1-node job
(n4). The joined nodes take trials through worker steps. 45 s before the 2-node job's
end (the coordinator's clock, --end-margin) its trials checkpoint and restart on n1, and
the job later hits its time limit while the study runs; the 1-node job's trials move
when it gets the time-limit warning (USR1 to its batch script, as `--signal=B:USR1@...`
sends it). No move counts as a failure; every trial completes exactly once and every
ASHA decision equals the model.
join-requeue: the coordinator's session ends (SIGUSR1: exit 75, as before a requeue) while
a joined job serves it; its workers wait, find the next session through the address
published next to the results file, and serve it until the study is over, when the joined
job ends by itself.
"""
import os
import re
import signal
import subprocess
import sys
import time

from run_harness import (FAULT_TRIAL, ROOT, as_impostor, check_asha, check_complete, check_impostors,
                         expect, job_state, read, study_toml, wait_for)

JOIN_TEMPLATE = os.path.join(ROOT, "sbatch", "join-hpo.sbatch")
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")


def submit_join(runner, path, sbatch_args, join_args):
    env = dict(os.environ, OUTPUT=path, SLURMTUNE_BUILD=runner.build,
               SLURMTUNE_JOIN_ARGS=" ".join(join_args))
    out = subprocess.run(["sbatch", "--parsable", "--chdir", runner.workdir,
                          "--output", os.path.join(runner.workdir, "join-%j.out")] +
                         sbatch_args + [JOIN_TEMPLATE], env=env, capture_output=True, text=True)
    expect(out.returncode == 0, "sbatch of the join template failed: " + out.stderr)
    job = out.stdout.strip().split(";")[0]
    return job, os.path.join(runner.workdir, "join-%s.out" % job)


def wait_for_job_end(job, timeout):
    state = wait_for(lambda: (lambda s: s if s in ENDED else None)(job_state(job)), timeout,
                     "job %s to end" % job)
    return state


def joined_trials(log, nodes):
    """Trial ids the coordinator's log shows starting on `nodes`."""
    return {int(t) for t, node in re.findall(r"trial (\d+) \w+(?: \(attempt \d+\))? on (\S+):", log)
            if node in nodes}


def joinable_study(runner, name, trials, sleep):
    """A study of fault_trial.py trials (9 steps of `sleep` s, checkpointing when asked)
    that no failure may touch (max_failures = 0): (its study file, its HDF5 path)."""
    if runner.launcher != "slurm":
        print("SKIPPED: joining jobs are Slurm jobs")
        raise SystemExit(77)
    # Each attempt first claims identities its credential does not cover (impostor.py),
    # those launched by a joined job's worker too.
    command = as_impostor(runner, [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9",
                                   "--sleep=%g" % sleep])
    study = runner.write("study.toml", study_toml(name, command, max_trials=trials,
                                                  trial_extra="max_failures = 0\n"))
    return study, os.path.join(runner.workdir, "study.h5")


def scenario_join(runner, args):
    wanted = 40
    study, path = joinable_study(runner, "join", wanted, 3)
    handle = runner.start(study, path, extra=["--end-margin", "45", "--accept-joins"],
                          sbatch_args=["-N", "1", "-w", "n1", "--ntasks-per-node", "2"])
    address = os.path.join(runner.workdir, "study.trials", "coordinator")
    wait_for(lambda: os.path.exists(address), 60, "the coordinator's published address")
    # Job A: 2 nodes for one minute; the coordinator moves its trials 45 s before its end
    # (--end-margin) or at its USR1 warning, and the study outlives it. Job B: no limit; its trials move when it
    # gets the time-limit warning as Slurm sends it (B:USR1 to the batch script).
    a, a_log = submit_join(runner, path, ["-N", "2", "-w", "n2,n3", "--ntasks-per-node", "2",
                                          "--time=1", "--signal=B:USR1@1"],
                           ["--reconnect-timeout", "30"])
    b, b_log = submit_join(runner, path, ["-N", "1", "-w", "n4", "--ntasks-per-node", "2"],
                           ["--reconnect-timeout", "30"])
    wait_for(lambda: re.search(r"trial \d+ \w+ on n4:", read(handle[2])), 60, "a trial on n4")
    time.sleep(4)
    subprocess.run(["scancel", "--batch", "--signal=USR1", b], check=True)
    rc, log = runner.wait(handle, 400)
    expect(rc == 0, "the study's job failed:\n" + log)
    a_state, b_state = wait_for_job_end(a, 150), wait_for_job_end(b, 60)
    for job, nodes, joined_log in ((a, ("n2", "n3"), a_log), (b, ("n4",), b_log)):
        expect(all("job %s joined the study: %s" % (job, n) in log for n in nodes),
               "job %s never joined:\n%s\njoin job:\n%s" % (job, log, read(joined_log)))
    expect(a_state == "TIMEOUT", "job %s ended %s, not at its time limit (the study should "
           "outlive it)" % (a, a_state))
    expect(b_state == "COMPLETED", "job %s ended %s, not when the study was over" % (b, b_state))
    reasons = {}
    for job in (a, b):
        leaving = re.search(r"job %s is leaving \((.*)\): (\d+) trial" % job, log)
        expect(leaving, "job %s's end was not noticed:\n%s" % (job, log))
        reasons[job] = leaving.group(1)
    # Job A's trials move at its clock's end margin, or at its USR1 warning should Slurm's
    # periodic check send that first (it may send it up to a minute early); job B's at the
    # USR1 the test sends.
    expect(("--end-margin" in reasons[a] or "SIGUSR1" in reasons[a]) and "SIGUSR1" in reasons[b],
           "reasons: %s" % reasons)
    trials = check_complete(path, wanted).set_index("id")
    expect((trials.status != "failed").all() and (trials.retries == 0).all(),
           "a trial failed or was retried:\n%s" % trials[["status", "retries", "error", "nodes"]])
    on_joined = joined_trials(log, ("n2", "n3", "n4"))
    moved = {int(t) for t in re.findall(r"trial (\d+) restart on n1", log)}
    expect(on_joined and moved and moved <= on_joined,
           "no trial ran on the joined nodes and moved to n1 (joined: %s, moved: %s):\n%s"
           % (sorted(on_joined), sorted(moved), log))
    resumed = [t for t in moved if "resumed from" in
               read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))]
    expect(resumed, "no moved trial resumed from its checkpoint: %s" % sorted(moved))
    later = [t for t in trials.index if t not in on_joined or t in moved]
    expect(all(trials.nodes[t] == "n1" for t in later),
           "a trial's last attempt ran on a left job's nodes:\n%s" % trials.nodes)
    judged = check_asha(path, 1, 3, 9)
    impostors = check_impostors(runner, wanted)
    print("join: jobs %s (n2, n3; 1 minute) and %s (n4) joined the 1-node study and ran %d "
          "trials; job %s's trials moved before its end (%s) and the job then ended %s, job "
          "%s's on its USR1 warning; %d trials restarted on n1, %d from their checkpoints; all "
          "%d trials completed once (%s), none failed or retried; %d ASHA decisions equal the "
          "model; %d attempts' claims of other identities refused"
          % (a, b, len(on_joined), a, reasons[a], a_state, b, len(moved), len(resumed),
             wanted, dict(trials.status.value_counts()), judged, impostors))


def scenario_join_requeue(runner, args):
    wanted = 16
    study, path = joinable_study(runner, "rejoin", wanted, 0.5)
    # The coordinator runs on this host, outside Slurm (one slot of its own); the joined
    # job brings two nodes.
    first_log = os.path.join(runner.workdir, "run-1.log")
    base = runner.command(study, path, ["--launcher", "local", "--slots", "1", "--accept-joins"])
    with open(first_log, "wb") as out:
        first = subprocess.Popen(base, cwd=runner.workdir, stdout=out, stderr=subprocess.STDOUT)
    address = os.path.join(runner.workdir, "study.trials", "coordinator")
    wait_for(lambda: os.path.exists(address), 60, "the coordinator's published address")
    job, join_log = submit_join(runner, path, ["-N", "2", "-w", "n2,n3", "--ntasks-per-node", "1"],
                                ["--reconnect-timeout", "60"])
    wait_for(lambda: ("job %s joined the study: n3" % job) in read(first_log) and
             re.search(r"trial \d+ \w+ on n[23]:", read(first_log)), 60, "trials on the joined nodes")
    first.send_signal(signal.SIGUSR1)
    try:
        rc = first.wait(timeout=120)
    except subprocess.TimeoutExpired:
        first.kill()
        raise
    log1 = read(first_log)
    expect(rc == 75, "the first session exited %d, not 75:\n%s" % (rc, log1))
    expect(not os.path.exists(address), "the ended session's address is still published")
    time.sleep(3)  # the joined workers look for the next session meanwhile
    second_log = os.path.join(runner.workdir, "run-2.log")
    with open(second_log, "wb") as out:
        rc = subprocess.run(base, cwd=runner.workdir, stdout=out, stderr=subprocess.STDOUT,
                            timeout=300).returncode
    log2 = read(second_log)
    expect(rc == 0, "the second session failed:\n" + log2)
    state = wait_for_job_end(job, 60)
    join_out = read(join_log)
    expect(state == "COMPLETED", "the joined job did not end by itself when the study was over "
           "(%s):\n%s" % (state, join_out))
    expect("session ended; waiting up to 60.0 s for the next one" in join_out and
           "the study is over" in join_out, "the workers did not follow the coordinator:\n" + join_out)
    second = joined_trials(log2, ("n2", "n3"))
    expect("job %s joined the study: n2" % job in log2 and second,
           "the joined job did not serve the second session:\n" + log2)
    trials = check_complete(path, wanted).set_index("id")
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[["status", "error"]])
    judged = check_asha(path, 1, 3, 9)
    print("join-requeue: job %s served the first session (%d trials on n2/n3), waited while the "
          "coordinator stopped (exit 75), reconnected to the next session (%d trials on n2/n3) "
          "and ended by itself (%s) when the study was over; %d trials (%s); %d ASHA decisions "
          "equal the model" % (job, len(joined_trials(log1, ("n2", "n3"))), len(second), state,
                                wanted, dict(trials.status.value_counts()), judged))
