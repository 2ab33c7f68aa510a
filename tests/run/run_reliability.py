#!/usr/bin/env python3
"""The reliability scenarios of tests/run/check_run.py: faults (crashes, failing exits,
a hang, a cancelled step, bad clients), limits (time_limit_s, report_timeout_s,
heartbeats), clock (the allocation's clock), and the orchestrator interrupted: term
(SIGUSR1, requeue), cancel (SIGTERM or scancel of the job), kill (SIGKILL); with
--long-paths the trials checkpoint under paths of over 300 bytes, which must come back
whole on resume."""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

import h5py

from run_harness import (FAULT_TRIAL, Study, alive, check_asha, check_complete, expect, fail,
                         job_state, next_session, read, release_requeued, reports_so_far,
                         rerun_requeued, study_toml, wait_for)


def bad_clients(address):
    """A client with a wrong token and one that sends garbage; both must be shut out."""
    host, port = address.rsplit(":", 1)
    results = []
    hello = json.dumps({"token": "0" * 64, "trial": 0, "attempt": 0, "rank": 0}).encode()
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
    expect(b"wrong or missing credential for trial 0, attempt 0" in replies[0], "wrong token: reply %r" % replies[0])
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
    expect("wrong or missing credential for trial 0, attempt 0" in log and "closing connection" in log,
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
        # Each bound sits well apart from both sides: the heartbeating trials need about
        # 7.5 s (a 6 s first step, then 5 of 0.3 s) of the time limit, the overrunning one
        # 15 s (6 steps of 2.5 s, each within the report timeout).
        trial_extra="max_failures = 1\ntime_limit_s = 12\nreport_timeout_s = 4\n"))
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, extra=["--slots", "3"],
                         sbatch_args=["-N", "3", "--ntasks-per-node", "1"])
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, 6).set_index("id")
    silent, overrun = trials.loc[1], trials.loc[2]
    expect(silent.status == "failed" and silent.retries == 1 and
           "no report or heartbeat for 4.0 s after its launch" in silent.error,
           "silent trial: %s" % silent.to_dict())
    expect("silent: trial 1 (" in log, "the progress line never named the silent trial:\n" + log)
    output = read(os.path.join(runner.workdir, "study.trials", "trial-2", "stdout.log"))
    expect(overrun.status == "completed" and overrun.retries == 1 and
           "time limit of 12.0 s exceeded" in overrun.error and "resumed from" in output,
           "overrunning trial: %s\n%s" % (overrun.to_dict(), output))
    for beating in (trials.loc[3], trials.loc[4]):  # the Python and the shell client
        expect(beating.status == "completed" and beating.retries == 0,
               "heartbeating trial: %s" % beating.to_dict())
    judged = check_asha(path, 1, 3, 6)
    print("limits: silent trial failed as hung after %d retry; overrunning trial ended at the "
          "time limit, checkpointed and resumed; Python and shell heartbeats kept 6 s steps "
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
    if args.cpp_interrupt:  # the C++ client's trials, each sending itself SIGTERM as it pauses
        command = [args.cpp_trial, "9", "-1", "0.4", "term-while-saving"]
    elif args.long_paths:
        command.append("--long-paths")
    if how == "cancel" and runner.launcher == "local" and not args.cpp_interrupt:
        # A first SIGTERM while a trial saves the checkpoint its "suspend" asked for is
        # noted, not fatal: the checkpoint is still saved (under Slurm, scancel's own
        # SIGTERM races the same way; a second one would end the trial).
        command += ["--faults", ",".join("%d:term-while-saving" % t for t in range(10))]
    study = runner.write("study.toml", study_toml(how, command, max_trials=8, max_t=9,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    sbatch = ["-N", "2", "--ntasks-per-node", "2"]
    handle = runner.start(study, path, extra=["--slots", "3"], sbatch_args=sbatch)
    wait_for(lambda: "reports" in read(handle[2]) and reports_so_far(handle[2]) >= 6, 120,
             "a few reports")
    if how == "kill":
        # The progress line can run ahead of the first flush (by up to the flush interval,
        # more under sanitizers): kill only once some reports are durable, so there is
        # something to resume.
        wait_for(lambda: committed_metric_rows(path) > 0, 60, "the first flush of the results file")
        if args.long_paths:
            # The check below wants a trial to resume from a checkpoint: under load the
            # first flush can come before any trial saved one (seen once under the
            # sanitizers), so kill only once one is durable.
            wait_for(lambda: committed_metric_rows(path, "checkpoints") > 0, 60, "a durable checkpoint")
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
    if how == "term":
        rc, log = next_session(runner, handle, study, path, ["--slots", "3"], sbatch)
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
    longest = check_checkpoint_paths(runner, path, unfinished.id) if args.long_paths else None
    print("%s: %d trials were unfinished, %d restarted from their checkpoints; %s; "
          "%d ASHA decisions equal the model%s"
          % (how, len(unfinished), len(restarted), dict(trials.status.value_counts()), judged,
             "" if longest is None else "; checkpoint paths of up to %d bytes kept whole" % longest))


def check_checkpoint_paths(runner, path, unfinished):
    """--long-paths: every indexed checkpoint path is whole (it exists, over 300 bytes),
    and every trial resumed from a checkpoint was handed a path that exists."""
    with h5py.File(path, "r") as f:
        saved = [c["path"].decode() for c in f["checkpoints"][:]]
    expect(saved, "no checkpoint was indexed")
    for relative in saved:
        expect(len(relative.encode()) > 300 and os.path.exists(os.path.join(runner.workdir, relative)),
               "checkpoint path not kept whole: %r" % relative)
    resumed = []
    for t in unfinished:
        out = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))
        resumed += re.findall(r"^resumed from (.*) at step \d+ on \S+$", out, re.M)
    expect(resumed, "no trial resumed from a checkpoint")
    for given in resumed:
        expect(len(given.encode()) > 300 and os.path.exists(given), "resumed from a cut path: %r" % given)
    return max(len(p.encode()) for p in saved)


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
    """The results file of an interrupted run: every row counted in /trials is in /metrics,
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


def committed_metric_rows(path, table="metrics"):
    """Rows of `table` in the results file's last complete flush (0 while it has none)."""
    try:
        with h5py.File(path, "r", swmr=True) as f:
            return int(f["commit"][0][table])
    except (OSError, KeyError, ValueError, IndexError):
        return 0


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


def scenario_write_ahead(runner, args):
    """A report whose decision asks for a checkpoint is durable before the trial hears of
    it: with periodic flushes off (--flush-interval 3600), the orchestrator is killed as
    soon as some trial has saved a checkpoint. Those reports lie in the results file's
    write-ahead log alone; `slurmtune recover` puts them into the file, where every saved
    checkpoint's step must then be among the committed reports. The study then resumes
    and completes."""
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=9", "--sleep=0.2"]
    study = runner.write("study.toml", study_toml("write-ahead", command, max_trials=6,
                                                  trial_extra="max_failures = 1\n"))
    path = os.path.join(runner.workdir, "study.h5")
    extra = ["--slots", "2", "--flush-interval", "3600"]
    handle = runner.start(study, path, extra=extra, sbatch_args=["-N", "2", "--ntasks-per-node", "1"])
    trials_dir = os.path.join(runner.workdir, "study.trials")

    def saved():
        out = {}
        for name in os.listdir(trials_dir) if os.path.isdir(trials_dir) else []:
            try:
                with open(os.path.join(trials_dir, name, "checkpoint.json")) as f:
                    out[int(name.split("-")[1])] = json.load(f)["step"]
            except (OSError, ValueError, KeyError):
                pass  # not written yet, or caught mid-write
        return out

    wait_for(lambda: saved(), 120, "a trial's first checkpoint")
    live = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True)
    expect(live.returncode == 0 and re.search(
        r"Write-ahead log: \d+ more report\(s\) .*the run that holds the study, pid \d+ on "
        r"host .*puts them in at its next commit", live.stdout),
           "slurmtune status does not say the running study's log is its own:\n" + live.stdout +
           live.stderr)
    kill_orchestrator(runner, handle, path)
    checkpoints = saved()
    log = path + "-wal"
    expect(os.path.exists(log), "the killed orchestrator left no write-ahead log " + log)
    with h5py.File(path, "r", swmr=True) as f:
        before = int(f["commit"][0]["metrics"])
    # status reads the file as it is and says what only the log holds, and who puts it in.
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True)
    waiting = re.search(r"Write-ahead log: (\d+) more report\(s\) than this file shows .*"
                        r"the run that wrote them has ended.*`slurmtune recover ", status.stdout)
    expect(status.returncode == 0 and waiting,
           "slurmtune status does not name the write-ahead log's reports:\n" + status.stdout +
           status.stderr)
    recovered = subprocess.run([runner.slurmtune, "recover", path], capture_output=True, text=True)
    expect(recovered.returncode == 0 and "write-ahead log held" in recovered.stdout,
           "slurmtune recover failed:\n" + recovered.stdout + recovered.stderr)
    expect(not os.path.exists(log), "slurmtune recover left the write-ahead log")
    with h5py.File(path, "r", swmr=True) as f:
        count = int(f["commit"][0]["metrics"])
        recorded = {(int(r["trial"]), float(r["step"])) for r in f["metrics"][:count]}
    expect(count - before == int(waiting.group(1)),
           "status said %s report(s) waited in the log; recover put %d in"
           % (waiting.group(1), count - before))
    status = subprocess.run([runner.slurmtune, "status", path], capture_output=True, text=True)
    expect("Write-ahead log" not in status.stdout,
           "status names a write-ahead log after recover:\n" + status.stdout)
    for trial, step in checkpoints.items():
        expect((trial, float(step)) in recorded,
               "trial %d saved a checkpoint at step %s that the results file does not hold "
               "(committed reports: %s)" % (trial, step, sorted(recorded)))
    rc, log = runner.run(study, path, extra=extra, sbatch_args=["-N", "2", "--ntasks-per-node", "1"])
    expect(rc == 0 and "resuming" in log, "the resumed run failed:\n" + log)
    trials = check_complete(path, 6)
    judged = check_asha(path, 1, 3, 9)
    print("write-ahead: killed with %d checkpoint(s) saved %s, each step's report committed "
          "(%d reports, %d of them from the write-ahead log: %s); resumed: %s; %d ASHA "
          "decisions equal the model"
          % (len(checkpoints), checkpoints, len(recorded), len(recorded) - before,
             recovered.stdout.strip(), dict(trials.status.value_counts()), judged))
