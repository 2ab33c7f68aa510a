#!/usr/bin/env python3
"""The distributed-trial scenario of tests/run/check_run.py: PyTorch (python3-torch, gloo)
trials that join their process group with init_method="env://" from nothing but the
rendezvous variables slurmtune run sets, and report from every rank through
slurmtune.distributed (tests/run/trials/torch_trial.py).

torch: under Slurm, trials of 2 nodes x 1 rank, then of 1 node x 2 ranks (two trials
share each node), then of 2 nodes on worker launch (every rank through its node's agent);
locally, trials of 2 ranks under mpirun, two at a time, reporting
through the torch process group and then through mpi4py. Every trial
saw a world of 2, trials running side by side on a node had different MASTER_PORTs,
every rank of a stopped trial left at the step of the stop (none hung in an
all-reduce), and the ASHA decisions equal the model. Trials running side by side get
different ports: locally they share the host, and the test cluster's nodes are names of
one host (NodeAddr 127.0.0.1, which is also MASTER_ADDR, as the names do not resolve).
"""
import os
import re
import shutil
import time

from run_harness import (ROOT, Study, as_impostor, check_asha, check_complete, check_group_trials,
                         check_impostors, check_one_group_step, check_relaunched, expect, read,
                         run_on_four_ranks, study_toml, wait_for)

TORCH_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "torch_trial.py")


def torch_available():
    return shutil.which("/usr/bin/python3") and os.system(
        "/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null") == 0


def run_shape(runner, name, resources, extra, sbatch, reporter="torch", kill_trial=None):
    command = ["/usr/bin/python3", TORCH_TRIAL, "--steps=9", "--sleep=0.2", "--reporter=" + reporter]
    if kill_trial:
        command.append("--kill-trial=%d" % kill_trial)
    text = study_toml(name, command, max_trials=6, metrics=("loss", "ranks", "port"),
                      resources=resources, trial_extra="max_failures = 1\n")
    study = runner.write(name + ".toml", text)
    path = os.path.join(runner.workdir, name + ".h5")
    rc, log = runner.run(study, path, extra=extra, sbatch_args=sbatch, timeout=400)
    expect(rc == 0, "run failed:\n" + log)
    if 'launch = "worker"' in resources:
        expect("trials of 2 ranks start as their own steps, and each rank reaches the coordinator "
               "through its node's worker" in log, "no node agents carried the ranks:\n" + log)
    trials = check_complete(path, 6).set_index("id")
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[["status", "error"]])
    study_ = Study(path)
    m = study_.metrics
    retries = study_.events[study_.events.kind == "retry"]
    study_.close()
    expect(set(m.ranks) == {2.0}, "world sizes: %s" % set(m.ranks))
    ports = m.groupby("trial").port.agg(set)
    expect(all(len(p) == 1 for p in ports), "a trial's ranks disagreed on MASTER_PORT: %s" % ports)
    port = {t: next(iter(p)) for t, p in ports.items()}
    # Attempts that ran at the same time had different ports: locally they share the host,
    # and the test cluster's nodes are names of one host (NodeAddr 127.0.0.1). An attempt
    # runs from its first report to its last (a trial's attempts are cut at its retry
    # events: a port the killed attempt freed may serve another trial before the retry).
    attempts = []
    for trial, reports in m.groupby("trial"):
        cuts = [float("-inf")] + sorted(retries[retries.trial == trial].time) + [float("inf")]
        for low, high in zip(cuts, cuts[1:]):
            span = reports[(reports.time > low) & (reports.time <= high)]
            if len(span):
                attempts.append((trial, span.time.min(), span.time.max()))
    together = sorted({(a, b) for a, a_first, a_last in attempts for b, b_first, b_last in attempts
                       if a < b and a_first <= b_last and b_first <= a_last})
    clashes = [(a, b) for a, b in together if port[a] == port[b]]
    expect(not clashes, "trials running at the same time got the same port: %s" % clashes)
    for t, row in trials.iterrows():
        output = read(os.path.join(runner.workdir, name + ".trials", "trial-%d" % t, "stdout.log"))
        left = re.findall(r"rank (\d) left at step (\d+)", output)
        last = int(row.last_step)
        expect(sorted(left) == [("0", str(last)), ("1", str(last))],
               "trial %d (last step %d): ranks left at %s\n%s" % (t, last, left, output))
    killed = ""
    if kill_trial:
        # The surviving rank did not wait forever in its all-reduce: the attempt failed,
        # was retried, and the retry ran to its decision.
        row = trials.loc[kill_trial]
        expect(row.retries == 1 and row.status != "failed" and row.error,
               "trial %d after its killed rank: %s" % (kill_trial, row.to_dict()))
        killed = "; trial %d lost rank 1 (SIGKILL), failed (%s) and was retried" % (
            kill_trial, row.error.splitlines()[0][:80])
    judged = check_asha(path, 1, 3, 9)
    return "%s: %d trials (%s) on %s, %d pair(s) ran side by side, ports %s; %d ASHA decisions%s" % (
        name, len(trials), dict(trials.status.value_counts()), sorted(set(trials.nodes)),
        len(together), sorted(set(port.values())), judged, killed)


def scenario_torch(runner, args):
    if not torch_available():
        print("SKIPPED: no python3-torch for /usr/bin/python3")
        raise SystemExit(77)
    results = []
    if runner.launcher == "slurm":
        results.append(run_shape(runner, "nodes2", "nodes = 2\n", [], ["-N", "4", "--ntasks-per-node", "1"],
                                 kill_trial=3))
        results.append(run_shape(runner, "pernode2", "ntasks_per_node = 2\n", [],
                                 ["-N", "1", "--ntasks-per-node", "4"]))
        # The same trials of 2 nodes with their ranks carried by the nodes' agents.
        results.append(run_shape(runner, "nodes2-agents", 'nodes = 2\nlaunch = "worker"\n', [],
                                 ["-N", "4", "--ntasks-per-node", "1"]))
    else:
        results.append(run_shape(runner, "local2", "ntasks_per_node = 2\n", ["--slots", "4"], [],
                                 kill_trial=3))
        # The decisions broadcast over mpi4py instead (mpirun started the ranks).
        results.append(run_shape(runner, "local2-mpi4py", "ntasks_per_node = 2\n", ["--slots", "4"], [],
                                 reporter="mpi"))
    print("torch: every rank of every trial joined a world of 2 by env:// and left at the "
          "step of its decision; " + "; ".join(results))


PY_GROUP_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "py_group_trial.py")


def mpi4py_available():
    return os.system("/usr/bin/python3 -c 'import mpi4py.MPI' 2>/dev/null") == 0


def scenario_pygroups(runner, args, kill=False):
    """Python trial groups ([trial] mode = "mpi", slurmtune.trial.run_trials over mpi4py,
    tests/run/trials/py_group_trial.py): under mpirun -np 4 locally, under srun over 4
    nodes on Slurm; 2 groups of 2 ranks run 8 trials back to back in one step, each trial
    isolated on its own communicator and its own torch process group. With kill, rank 1
    of trial 5 dies of SIGKILL: the step is relaunched and trials resume from their
    checkpoints."""
    if not mpi4py_available():
        print("SKIPPED: no python3-mpi4py for /usr/bin/python3")
        raise SystemExit(77)
    with_torch = torch_available()
    text = study_toml("pygroups", ["unused"], max_trials=8,
                      metrics=("loss", "ranks", "mixed", "torch_ok", "start"),
                      resources="ranks_per_trial = 2\n" if runner.launcher == "local" else "nodes = 2\n",
                      trial_extra="max_failures = 2\n")
    # The step's rank 0 first claims identities its step's credential does not cover.
    program = as_impostor(runner, ["/usr/bin/python3", PY_GROUP_TRIAL, "--sleep=0.05"] +
                          (["--kill-trial=5"] if kill else []))
    text = text.replace('command = ["unused"]', 'mode = "mpi"\nprogram = [%s]'
                        % ", ".join('"%s"' % p for p in program))
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = run_on_four_ranks(runner, study, path)
    expect(rc == 0, "run failed:\n" + log)
    trials_dir = os.path.join(runner.workdir, "study.trials")
    errors = "".join(read(os.path.join(trials_dir, f)) for f in sorted(os.listdir(trials_dir))
                     if f.endswith(".err"))
    source = "slurm" if runner.launcher == "slurm" else "mpi-shared"
    expect("placement from %s: 2 group(s) of 2 rank(s)" % source in errors, "partition: " + errors)
    trials, m = check_group_trials(path, 8)
    expect(set(m.torch_ok) == ({1.0} if with_torch else {-1.0}),
           "a trial's torch process group was not its own ranks: %s" % set(m.torch_ok))
    failed = trials.loc[2]
    expect(failed.retries >= 1 and failed.status != "failed" and
           ("injected failure" in failed.error or "lost its connection" in failed.error),
           "trial 2: %s" % failed.to_dict())
    torn_down = ended_in_torn_down_step(log)
    for t, row in trials.iterrows():
        paths = [os.path.join(trials_dir, "trial-%d" % t, "left-rank-%d.txt" % r) for r in (0, 1)]
        left = [read(p).strip() if os.path.exists(p) else None for p in paths]
        last = str(int(row.last_step))
        # A trial whose final report was recorded is over, however its ranks then exit;
        # one that ran in the step torn down by the killed rank may have lost a rank
        # before it noted where it left (it is rightly not run again). Every note that
        # exists is whole (written, then renamed) and names the last step.
        allowed = [last, None] if t in torn_down else [last]
        expect(all(l in allowed for l in left) and row.status != "failed",
               "trial %d (last step %s, %s): ranks left at %s" % (t, last, row.status, left))
    if kill:
        resumed = check_relaunched(log, trials, m)
        outcome = "rank 1 of trial 5 killed; step relaunched, trials %s resumed from checkpoints" % resumed
    else:
        check_one_group_step(log, "trials should run back to back in one step")
        outcome = "one MPI step"
    judged = check_asha(path, 1, 3, 9)
    impostors = check_impostors(runner, 1)
    print("%s: 8 Python trials in 2 groups of 2 ranks (placement from %s), %s; torch process "
          "group per trial: %s; every rank left at its trial's last step; trial 2 failed once "
          "and was retried; %d ASHA decisions equal the model; %d MPI steps' claims of other "
          "steps, trials and workers refused"
          % (args.scenario, source, outcome, with_torch, judged, impostors))


def ended_in_torn_down_step(log):
    """Trials that a group was running when its MPI step went down with work left (the
    last trial each such group was assigned) and that were never assigned again."""
    torn = set(re.findall(r"MPI step (\d+) ended \([^\n]*relaunching it", log))
    last_of_group, last_group_of = {}, {}
    for trial, step, group in re.findall(r"trial (\d+) \w+ in group (\d+)\.(\d+) ", log):
        last_of_group[(step, group)] = int(trial)
        last_group_of[int(trial)] = (step, group)
    return {t for g, t in last_of_group.items() if g[0] in torn and last_group_of[t] == g}


ENV_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "env_trial.py")


def run_gpu_packing(runner, name, options, resources, capacity, per_device):
    text = study_toml(name, ["/usr/bin/python3", ENV_TRIAL], max_trials=9, max_t=3,
                      metrics=("loss", "device", "devices"), resources=resources,
                      scheduler="fifo").replace("grace_period = 1\nreduction_factor = 3\n", "")
    study = runner.write(name + ".toml", text)
    path = os.path.join(runner.workdir, name + ".h5")
    rc, log = runner.run(study, path, extra=["--slots", "8"] + options, sbatch_args=[], timeout=300)
    expect(rc == 0, "run failed:\n" + log)
    expect("%d trial(s) at once" % capacity in log, "capacity:\n" + log)
    trials = check_complete(path, 9).set_index("id")
    study_ = Study(path)
    m = study_.metrics
    study_.close()
    device = m.groupby("trial").device.first()
    expect(set(m.devices) == {1.0}, "a trial saw %s devices, expected 1" % set(m.devices))
    expect(device.min() >= 0, "a trial saw no CUDA_VISIBLE_DEVICES: %s" % dict(device))
    # At every trial's start, the trials running then share no device beyond per_device.
    most = 0
    for t, row in trials.iterrows():
        running = [o for o, other in trials.iterrows()
                   if other.start_time <= row.start_time < other.end_time]
        on_device = sum(1 for o in running if device[o] == device[t])
        expect(on_device <= per_device and len(running) <= capacity,
               "trial %d started with %s running on devices %s" % (t, running, [device[o] for o in running]))
        most = max(most, len(running))
    return "%s: %d trials, up to %d at once, devices used %s, at most %d trial(s) per device" % (
        name, len(trials), most, sorted(set(int(d) for d in device)), per_device)


def scenario_gpus(runner, args):
    """Local launcher GPU packing without a GPU: --gpus names the devices, each trial with
    gpus_per_task = 1 sees only its own through CUDA_VISIBLE_DEVICES; never two trials on
    one device unless --trials-per-gpu asks for it."""
    results = [
        run_gpu_packing(runner, "three", ["--gpus", "3"], "gpus_per_task = 1\n", 3, 1),
        run_gpu_packing(runner, "shared", ["--gpus", "1", "--trials-per-gpu", "2"],
                        "gpus_per_task = 1\n", 2, 2),
    ]
    print("gpus: " + "; ".join(results))


def study_processes(trials_dir):
    """PIDs of processes started for the study whose folder is `trials_dir`: their
    credential (SLURMTUNE_TOKEN_FILE) lies in its credentials/ folder."""
    prefix = b"SLURMTUNE_TOKEN_FILE=" + os.path.join(trials_dir, "credentials").encode() + b"/"
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if any(entry.startswith(prefix) for entry in f.read().split(b"\0")):
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def scenario_groups_orphaned(runner, args):
    """The coordinator is killed (SIGKILL) while C++ and then Python trial groups run: 3
    groups of 2 ranks and 2 trials, so one group is waiting for a trial (its rank 0 on
    the socket, the other rank in the non-spinning broadcast) and two are training. Every
    rank learns that the coordinator is gone and exits; none is left waiting."""
    if runner.launcher != "local" or not mpi4py_available():
        print("SKIPPED: the local launcher's MPI steps, with python3-mpi4py")
        raise SystemExit(77)
    outcomes = []
    for index, (name, program) in enumerate( (("cpp", [args.group_trial, "--sleep-ms=500"]),
                          ("python", ["/usr/bin/python3", PY_GROUP_TRIAL, "--sleep=0.5"]))):
        text = study_toml(name, ["unused"], max_trials=2,
                          metrics=("loss", "ranks", "mixed", "torch_ok", "start"),
                          resources="ranks_per_trial = 2\n")
        text = text.replace('command = ["unused"]', 'mode = "mpi"\nprogram = [%s]'
                            % ", ".join('"%s"' % p for p in program))
        study = runner.write(name + ".toml", text)
        handle = runner.start(study, os.path.join(runner.workdir, name + ".h5"), extra=["--slots", "6"])
        trials_dir = os.path.join(runner.workdir, name + ".trials")
        # mpirun and its 6 ranks are up, and both trials have started (the log is shared by
        # both studies, so its progress lines do not tell).
        # The third group (1.2) has connected too, and gets no trial: it waits for one.
        wait_for(lambda: len(study_processes(trials_dir)) >= 7 and
                 os.path.isdir(os.path.join(runner.workdir, name + ".trials", "trial-1")) and
                 read(handle[2]).count("trial group 1.2 ready") == index + 1,
                 120, "the %s groups at work, one of them idle" % name)
        ranks = study_processes(trials_dir)
        handle[1].kill()
        handle[1].wait()
        started = time.time()
        wait_for(lambda: not study_processes(trials_dir), 60,
                 "the %s ranks to exit after the coordinator's SIGKILL (left: %s)"
                 % (name, study_processes(trials_dir)))
        outcomes.append("%s: %d process(es) ended %.1f s after the SIGKILL"
                        % (name, len(ranks), time.time() - started))
    print("groups-orphaned: " + "; ".join(outcomes))
