#!/usr/bin/env python3
"""The worker-step scenarios of tests/run/check_run.py ([resources] launch = "worker"):
as an sbatch job on the local Slurm cluster, one long-lived `slurmtune worker` step per
node starts every trial on its node (tests/run/trials/env_trial.py prints the step it
runs in).

workers: 40 trials on 4 nodes, all of them children of the 4 worker steps (4 distinct
Slurm steps in all), ASHA decisions equal the model.
workers-kill: the worker on one node is killed (SIGKILL) while trials run there: those
trials fail once and are retried on the other nodes, which take every later trial.
workers-many: 600 trials, more than the test cluster's MaxStepCount (500) lets one job
start steps for.
workers-absent: one node's worker step never connects; the study goes on without it.
workers-relays: the workers scenario with a relay per 2 nodes (--relay-fanout 2): two
agents connect through the other two, the coordinator holds 2 connections.
workers-ranks: trials of 2 nodes x 2 ranks on worker launch, each rank with its own
connection (tests/run/trials/ranks_trial.py): every trial is its own step across two
nodes, and every rank reaches the coordinator through its node's agent, which holds a
connection per node. With --step-launch-rate 1 no two of those steps start within a
second of each other.
workers-ranks-kill: the agent on one node is killed while such trials run: the trials
with ranks there end, are retried on the other nodes, and later trials avoid it.
"""
import json
import os
import re
import signal
import time

from run_harness import (ROOT, as_impostor, check_asha, check_complete, check_impostors, expect, read,
                         reports_so_far, study_toml, wait_for)

ENV_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "env_trial.py")
RANKS_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "ranks_trial.py")


def processes_on(node, wanted):
    """PIDs of processes serving `node` (SLURMD_NODENAME: the test cluster's nodes are
    names of this one host) whose argv (a list of bytes) `wanted` accepts."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if not wanted(f.read().split(b"\0")):
                    continue
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if b"SLURMD_NODENAME=" + node.encode() in env:
            pids.append(int(pid))
    return pids


def worker_pids(node):
    """PIDs of `slurmtune worker` processes serving `node` (not their srun)."""
    return processes_on(node, lambda argv: len(argv) >= 2 and argv[0].endswith(b"slurmtune")
                        and argv[1] == b"worker")


def process_age(pid):
    """Seconds since process `pid` started (an exec keeps its start), None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22: starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return uptime - started / os.sysconf("SC_CLK_TCK")


def fresh_trial_on(node, marker, younger_than):
    """Whether a trial process on `node` (its argv holds `marker`) is younger than
    `younger_than` s: one that has not reported yet, so no scheduler decision can have
    told it to stop."""
    return any(age is not None and age < younger_than for age in map(
        process_age, processes_on(node, lambda argv: any(marker in arg for arg in argv))))


def kill_worker_after(handle, node, reports, fresh_trial=None):
    """Kills the worker of `node` (SIGKILL) once the study has `reports` reports, and with
    `fresh_trial` (argv marker, age) once a trial there has just started; when."""
    wait_for(lambda: reports_so_far(handle[2]) >= reports, 120, "a few reports")
    wait_for(lambda: worker_pids(node), 30, "the worker of " + node)
    if fresh_trial:
        # Polled every 10 ms: the window before a trial's first report is a few tenths of a second.
        wait_for(lambda: fresh_trial_on(node, *fresh_trial), 120, "a trial to start on " + node,
                 interval=0.01)
    for pid in worker_pids(node):
        os.kill(pid, signal.SIGKILL)
    return time.time()


def hosts_of(hostlist):
    """The nodes of a compressed hostlist of the test cluster ("n3", "n[1,3]", "n[1-2]")."""
    found = re.fullmatch(r"(\w+?)\[([\d,-]+)\]", hostlist)
    if not found:
        return {hostlist}
    hosts = set()
    for part in found.group(2).split(","):
        low, _, high = part.partition("-")
        hosts.update("%s%d" % (found.group(1), n) for n in range(int(low), int(high or low) + 1))
    return hosts


def lost_worker_trials(log, victim):
    """The trials the log says the loss of `victim`'s worker took down, which are retried,
    and apart those already told to pause or stop, whose attempt ends as it was to."""
    lost = re.search(r"worker step on %s lost \(.*\): its trials \(([\d, ]+|none)\) [^;]*"
                     r"(?:; \(([\d, ]+)\) were told to pause or stop already)?" % victim, log)
    expect(lost, "the lost worker was not noticed:\n" + log)
    ids = lambda text: [] if text in (None, "none") else [int(t) for t in text.split(", ")]
    return ids(lost.group(1)), ids(lost.group(2))


def check_lost_worker(log, trials, victim, killed_at, error):
    """The worker of `victim`, killed at `killed_at`, was noticed; the trials it took down
    (their error says `error`) were retried and none failed; trials started later avoided
    its node. Returns those trials and the later ones."""
    # Their error says so unless a later end of the trial (asha_promotion dropping it while
    # paused) has replaced it.
    named, ending = lost_worker_trials(log, victim)
    hit = trials.loc[named]
    expect(len(hit) >= 1 and (hit.retries >= 1).all() and (trials.status != "failed").all(),
           "no trial of the lost worker was retried (the log names %s):\n%s"
           % (named, trials[["retries", "error", "nodes"]]))
    said = trials[trials.error.str.contains(error, regex=False)]
    expect(set(said.index) <= set(named + ending),
           "trials %s name the lost worker and the log does not"
           % sorted(set(said.index) - set(named + ending)))
    later = trials[trials.start_time > killed_at + 2]
    expect(len(later) > 0 and all(victim not in hosts_of(n) for n in later.nodes),
           "trials started on %s after its worker was lost:\n%s" % (victim, later.nodes))
    return hit, later


def scenario_workers_local(runner):
    """launch = "worker" without Slurm: the local launcher has no worker steps, so its
    trials are the coordinator's own children, each with the credential file the
    coordinator wrote for it in the study's credentials folder."""
    text = study_toml("workers-local", ["/usr/bin/python3", ENV_TRIAL, "--steps=9", "--sleep=0.02"],
                      max_trials=12, resources='launch = "worker"\n',
                      metrics=("loss", "device", "devices"))
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    rc, log = runner.run(study, path, timeout=300)
    expect(rc == 0, "run failed:\n" + log)
    expect("the local launcher starts trials as its own children" in log,
           "not said that trials are the coordinator's children:\n" + log)
    trials = check_complete(path, 12).set_index("id")
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[["status", "error"]])
    credentials = os.path.join(os.path.realpath(runner.workdir), "study.trials", "credentials")
    token_files = []
    for t in trials.index:
        output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))
        token_files += re.findall(r"SLURMTUNE_TOKEN_FILE=(\S*)", output)
    expect(len(token_files) >= 12 and all(
        os.path.dirname(os.path.realpath(path)) == credentials for path in token_files),
        "credential files not the coordinator's: %s" % token_files[:5])
    print("workers: the local launcher ran %d trials of launch = \"worker\" as its own "
          "children, each with the coordinator's credential file" % len(trials))


def scenario_workers(runner, args, kill=False, relays=False):
    if runner.launcher != "slurm":
        if kill or relays:
            print("SKIPPED: worker steps are Slurm job steps")
            raise SystemExit(77)
        return scenario_workers_local(runner)
    trials_wanted = 40
    # Each trial first claims identities its credential does not cover (impostor.py).
    text = study_toml("workers", as_impostor(runner, ["/usr/bin/python3", ENV_TRIAL, "--steps=9",
                                                      "--sleep=%s" % ("0.3" if kill else "0.05")]),
                      max_trials=trials_wanted, resources='launch = "worker"\n',
                      metrics=("loss", "device", "devices"),
                      trial_extra="max_failures = 2\n")
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    handle = runner.start(study, path, extra=["--relay-fanout", "2"] if relays else [],
                          sbatch_args=["-N", "4", "--ntasks-per-node", "2"])
    victim = "n3"
    if kill:
        # Killed as a trial there has just started: under ASHA every trial there may
        # already have been told to stop at rung 1 at any other moment, and its loss would
        # retry nothing.
        killed_at = kill_worker_after(handle, victim, 10, fresh_trial=(b"impostor.py", 0.25))
    rc, log = runner.wait(handle, 400)
    expect(rc == 0, "run failed:\n" + log)
    expect("4 worker(s), one per node, in 1 srun step(s)" in log and
           "all 4 worker(s) connected" in log, "worker steps were not started:\n" + log)
    trials = check_complete(path, trials_wanted).set_index("id")
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[["status", "error"]])
    steps = {}
    token_files = []
    for t in trials.index:
        output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))
        for step, node in re.findall(r"SLURM_STEP=(\S+) on (\S+)", output):
            steps.setdefault(step, set()).add(node)
        token_files += re.findall(r"SLURMTUNE_TOKEN_FILE=(\S*)", output)
    # Each attempt's credential was written by its worker in the node's own folder, none
    # by the coordinator in the study's.
    expect(len(token_files) >= trials_wanted and all(
        "/slurmtune-tokens-" in path and not path.startswith(runner.workdir)
        for path in token_files), "credential files not the workers' own: %s" % token_files[:5])
    # One launch for all workers: one Slurm step, a task on every node.
    expect(len(steps) == 1 and len(next(iter(steps.values()))) == 4,
           "trials ran in %d Slurm step(s), not in the one of all workers: %s" % (len(steps), steps))
    outcome = "%d trials on 4 workers of one srun step (%s)" % (len(trials), ", ".join(
        sorted(next(iter(steps.values())))))
    if kill:
        hit, later = check_lost_worker(log, trials, victim, killed_at,
                                       "worker step on %s was lost" % victim)
        outcome += "; the worker on %s was killed: trials %s failed and were retried elsewhere, " \
                   "%d later trials avoided it" % (victim, sorted(hit.index), len(later))
    if relays:
        outcome += "; " + check_relays(runner, log)
    judged = check_asha(path, 1, 3, 9)
    impostors = check_impostors(runner, trials_wanted)
    fan_in = check_fan_in(log, agents=2 if relays else 4)
    print("%s: %s; %d ASHA decisions equal the model; %d trials' claims of other identities "
          "refused; %s" % (args.scenario, outcome, judged, impostors, fan_in))


def check_relays(runner, log):
    """Two relays (the first worker of each pair of nodes in the step) carried the other
    two workers' connections, and those workers' trials' connections through them."""
    expect("through a relay per 2 nodes (--relay-fanout)" in log,
           "the study did not say it runs relays:\n" + log[:3000])
    workers_log = read(os.path.join(runner.workdir, "study.trials", "workers-0.err"))
    relays = re.findall(r"worker (\S+): relays for the agents of group (\d+) \(2 nodes\) at (\S+)",
                        workers_log)
    expect(len(relays) == 2 and {g for _, g, _ in relays} == {"0", "1"},
           "not one relay per group of 2 nodes:\n" + workers_log)
    expect("connecting to the coordinator directly" not in workers_log,
           "a worker went around its relay:\n" + workers_log)
    return "relays %s carried the other 2 workers" % ", ".join(sorted(n for n, _, _ in relays))


def scenario_workers_relays(runner, args):
    scenario_workers(runner, args, relays=True)


def scenario_workers_ranks(runner, args, kill=False):
    if runner.launcher != "slurm":
        print("SKIPPED: worker steps are Slurm job steps")
        raise SystemExit(77)
    trials_wanted = 6 if kill else 12
    text = study_toml("ranks", as_impostor(runner, ["/usr/bin/python3", RANKS_TRIAL, "--steps=9",
                                                    "--sleep=%s" % ("0.4" if kill else "0.1")]),
                      max_trials=trials_wanted,
                      resources='launch = "worker"\nnodes = 2\nntasks_per_node = 2\n',
                      trial_extra="max_failures = 2\n", scheduler="fifo" if kill else "asha")
    if kill:  # every trial runs its 9 steps: the agent is lost while trials run on its node
        text = text.replace("grace_period = 1\nreduction_factor = 3\n", "")
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    # These trials are steps: at most one started a second (kill: the default rate).
    handle = runner.start(study, path, extra=[] if kill else ["--step-launch-rate", "1"],
                          sbatch_args=["-N", "4", "--ntasks-per-node", "2"])
    victim = "n3"
    if kill:
        killed_at = kill_worker_after(handle, victim, 4)
    rc, log = runner.wait(handle, 400)
    expect(rc == 0, "run failed:\n" + log)
    expect("trials of 4 ranks start as their own steps" in log and "all 4 worker(s) connected" in log,
           "the agents were not started for steps of several ranks:\n" + log)
    trials = check_complete(path, trials_wanted).set_index("id")
    if kill:
        # The steps with ranks on the lost agent's node ended and ran again elsewhere.
        hit, later = check_lost_worker(log, trials, victim, killed_at,
                                       "its node agent on %s was lost" % victim)
        cancelled = re.search(r"Slurm steps cancelled \(scancel --signal=KILL, off the loop\): "
                              r"(\d+)", log)
        expect(cancelled and int(cancelled.group(1)) >= len(hit),
               "the steps of the trials %s were not cancelled:\n%s" % (sorted(hit.index), log))
        print("%s: the agent on %s was killed: trials %s ended (%s step(s) cancelled off the "
              "loop) and were retried on other nodes, %d later trials avoided it"
              % (args.scenario, victim, sorted(hit.index), cancelled.group(1), len(later)))
        return
    expect((trials.status != "failed").all() and (trials.retries == 0).all(),
           "failed or retried trials:\n%s" % trials[["status", "retries", "error"]])
    expect("launches wait for the step launch rate (1.0 job steps a second" in log,
           "the step launch rate never held a launch:\n" + log)
    starts = sorted(trials.start_time)
    early = [k for k, t in enumerate(starts) if t < starts[0] + k - 0.05]
    expect(not early, "launches %s came faster than one a second: %s" % (early, starts))
    steps = set()
    for t, row in trials.iterrows():
        output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))
        ranks = re.findall(r"rank (\d) of 4 on (\S+) in (\S+)", output)
        expect(sorted(r for r, _, _ in ranks) == ["0", "1", "2", "3"] and
               len({n for _, n, _ in ranks}) == 2 and len({s for _, _, s in ranks}) == 1,
               "trial %d: not 4 ranks on 2 nodes in one step:\n%s" % (t, output))
        steps.add(ranks[0][2])
        left = re.findall(r"rank (\d) (?:left at step|done)", output)
        expect(sorted(left) == ["0", "1", "2", "3"], "trial %d: a rank did not end:\n%s" % (t, output))
    expect(len(steps) == trials_wanted, "trials shared steps: %s" % sorted(steps))
    judged = check_asha(path, 1, 3, 9)
    impostors = check_impostors(runner, trials_wanted)
    # The probes went through the agents: each refused a worker's claim itself.
    by_agent = agent_refusals(runner)
    expect(by_agent >= trials_wanted, "only %d claims were refused by a node agent" % by_agent)
    fan_in = check_fan_in(log, agents=4, channels=4)
    print("%s: %d trials of 2 nodes x 2 ranks, each its own step, every rank connected; "
          "%d ASHA decisions equal the model; %d trials' claims of other identities refused "
          "(%d by their node's agent); %s" % (args.scenario, len(trials), judged, impostors,
                                             by_agent, fan_in))


def scenario_workers_ranks_kill(runner, args):
    scenario_workers_ranks(runner, args, kill=True)


def agent_refusals(runner):
    """How many of impostor.py's claims a node agent refused before the coordinator."""
    out = os.path.join(runner.workdir, "impostors")
    count = 0
    for name in os.listdir(out):
        if name.endswith(".json"):
            with open(os.path.join(out, name)) as f:
                count += sum((a.get("error") or "").startswith("node agent:")
                             for a in json.load(f).values())
    return count


def check_fan_in(log, agents, channels=1):
    """The node agents carried every trial's connection (issue #61): the coordinator held
    a connection per worker step and none per trial."""
    found = re.search(r"control plane: at most (\d+) connection\(s\) at once, of \d+ allowed; "
                      r"(\d+) carried by node agents at once \((\d+) frames\)", log)
    expect(found, "no control-plane line in the log:\n" + log[-3000:])
    direct, carried, frames = (int(g) for g in found.groups())
    expect(direct <= agents and carried >= channels and frames > 0,
           "the coordinator held %d connections at once for %d agents (%d channels carried):\n%s"
           % (direct, agents, carried, log[-3000:]))
    # Its CPU time, and the loop's and the flush thread's shares of it (parts of the whole).
    cpu = re.search(r"coordinator: CPU ([\d.]+) s user, ([\d.]+) s system \(the loop's thread "
                    r"([\d.]+) s, the results file's flush thread ([\d.]+) s\); peak memory \d+ MiB", log)
    expect(cpu, "no CPU line with the loop's and the flush thread's shares in the log:\n" + log[-3000:])
    user, system, loop, flush = (float(g) for g in cpu.groups())
    expect(loop + flush <= user + system + 0.2,
           "the loop's %.1f s and the flush thread's %.1f s are more than the process's %.1f s"
           % (loop, flush, user + system))
    return "the coordinator held at most %d connections, its %d agents carried up to %d at once" \
        % (direct, agents, carried)


def scenario_workers_many(runner, args):
    """More trials than Slurm lets one job start steps (the test cluster's MaxStepCount is
    500): a step-per-trial study says so at start and starts its trials on workers
    instead (issue #61), and so does a study with launch = "worker": the 600 trials
    complete in one job either way."""
    if runner.launcher != "slurm":
        print("SKIPPED: worker steps are Slurm job steps")
        raise SystemExit(77)
    trials_wanted = 600
    sbatch = ["-N", "4", "--ntasks-per-node", "4"]
    steps = runner.write("steps.toml", study_toml("many", [args.cpp_trial, "3"], max_trials=trials_wanted))
    rc, log = runner.run(steps, os.path.join(runner.workdir, "steps.h5"), sbatch_args=sbatch,
                         timeout=500)
    expect(rc == 0, "the step-per-trial study failed:\n" + log[-5000:])
    switched = "max_trials = 600 needs more job steps than the cluster's MaxStepCount (500) " \
               "allows one job: the trials start on a worker per node instead"
    expect(switched in log and "4 worker(s), one per node" in log,
           "the step-per-trial study did not move to workers:\n" + log[:3000])
    # Decided before the first launch's files are made: the workers make every attempt's
    # credential, the coordinator writes none on the study's file system.
    expect("for the workers, which make their attempts' on their nodes" in log,
           "the switched study's coordinator wrote credential files:\n" + log[:3000])
    switched_trials = check_complete(os.path.join(runner.workdir, "steps.h5"), trials_wanted)
    text = study_toml("many", [args.cpp_trial, "3"], max_trials=trials_wanted,
                      resources='launch = "worker"\n')
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    started = time.time()
    rc, log = runner.run(study, path, sbatch_args=sbatch, timeout=500)
    elapsed = time.time() - started
    expect(rc == 0, "run failed:\n" + log[-5000:])
    expect("MaxStepCount" not in log, "a worker study was warned of MaxStepCount:\n" + log[:3000])
    trials = check_complete(path, trials_wanted)
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[trials.status == "failed"])
    judged = check_asha(path, 1, 3, 9)
    fan_in = check_fan_in(log, agents=4)
    print("workers-many: a step-per-trial study of 600 trials said MaxStepCount = 500 would stop "
          "it and ran its %d trials on workers instead; with launch = \"worker\" all %d trials "
          "completed in one job (%.0f s, %s); %d ASHA decisions equal the model; %s"
          % (len(switched_trials), len(trials), elapsed, dict(trials.status.value_counts()), judged,
             fan_in))


def scenario_workers_absent(runner, args):
    """A worker step that never connects (tests/run/trials/srun_without_worker.sh starts
    none on n4): after --worker-connect-timeout its node is given up, its srun ended, and
    the study completes on the other three nodes instead of waiting for n4."""
    if runner.launcher != "slurm":
        print("SKIPPED: worker steps are Slurm job steps")
        raise SystemExit(77)
    os.environ["SLURMTUNE_TEST_DEAD_NODE"] = "n4"  # the sbatch job, and so srun, inherits it
    text = study_toml("absent", ["/usr/bin/python3", ENV_TRIAL, "--steps=9", "--sleep=0.05"],
                      max_trials=20, resources='launch = "worker"\n',
                      metrics=("loss", "device", "devices"))
    study = runner.write("study.toml", text)
    path = os.path.join(runner.workdir, "study.h5")
    srun = os.path.join(ROOT, "tests", "run", "trials", "srun_without_worker.sh")
    rc, log = runner.run(study, path, extra=["--srun", srun, "--worker-connect-timeout", "3"],
                         sbatch_args=["-N", "4", "--ntasks-per-node", "2"], timeout=300)
    expect(rc == 0, "run failed:\n" + log)
    expect("worker step on n4 lost (its worker did not connect within 3.0 s of its srun)" in log,
           "the absent worker was not given up:\n" + log)
    trials = check_complete(path, 20).set_index("id")
    expect((trials.status != "failed").all() and (trials.nodes != "n4").all(),
           "trials:\n%s" % trials[["status", "nodes", "error"]])
    judged = check_asha(path, 1, 3, 9)
    print("workers-absent: n4's worker never connected and was given up after 3 s; 20 trials "
          "completed on %s; %d ASHA decisions equal the model" % (sorted(set(trials.nodes)), judged))
