#!/usr/bin/env python3
"""End-to-end checks of `slurmtune run`, with real processes and a real results file.

    check_run.py SLURMTUNE SCENARIO --launcher local|slurm [--cpp-trial P] [--mpi-trial P]

Scenarios: python (the numpy MLP example), cpp (a C++ client trial, one of which is sent
SIGTERM), mpi (a 2-node, 4-rank MPI trial whose rank 0 reports), the trial-group
scenarios groups* / promotion / digits (here), and the reliability scenarios of
run_reliability.py: faults, limits, clock, term (SIGUSR1: exit 75, the job requeues
itself and resumes), tpe-resume and mobster-resume (run_samplers.py: a TPE or MOBSTER
study resumed suggests what an uninterrupted one does; recommended: the recommended setting
on the numpy MLP, replayed, and resumed with identical decisions and predictions), pbt and pbt-resume (run_pbt.py: exploits in a running study, and
a PBT study cut and resumed decides as an uninterrupted one), torch (run_distributed.py:
PyTorch trials of 2 ranks joining by env:// and reporting from every rank), cancel (SIGTERM locally, `scancel JOB` under Slurm: the job ends for
good, the file is consistent, a new run resumes) and kill (SIGKILL, then resumed).

With --launcher slurm the study runs as `sbatch sbatch/submit-hpo.sbatch` on the local
test cluster (SLURM_CONF set by run_with_cluster.sh). Every run is checked with h5py:
every trial, every report, and every ASHA decision against an independent model.
"""
import argparse
import json
import os
import re
import subprocess
import shutil
import tempfile

import h5py

from run_harness import (ROOT, Runner, Study, as_impostor, check_asha, check_complete,
                         check_group_trials, check_impostors, check_one_group_step,
                         check_relaunched, expect, next_session,
                         read, reports_so_far, study_toml, wait_for)
from run_reliability import (interrupt_gracefully, scenario_clock, scenario_faults,
                             scenario_interrupt, scenario_limits, scenario_write_ahead)
from run_hostile import scenario_hostile, scenario_leftover
from run_distributed import scenario_gpus, scenario_groups_orphaned, scenario_pygroups, scenario_torch
from run_pbt import scenario_pbt, scenario_pbt_groups, scenario_pbt_resume, scenario_pbt_retention
from run_samplers import (scenario_conditional, scenario_conditional_resume, scenario_enqueue,
                          scenario_example_conditional, scenario_freeze_thaw, scenario_mobster_resume,
                          scenario_ahead_resume, scenario_prior_resume,
                          scenario_recommended, scenario_tpe_resume, scenario_default_sampler)
from run_checkpoints import scenario_checkpoints
from run_node_local import scenario_workers_node_local, scenario_workers_node_local_pbt
from run_first_study import scenario_first_study
from run_join import scenario_join, scenario_join_requeue
from run_objectives import scenario_motpe_resume, scenario_nsga2_resume, scenario_two_objectives
from run_workers import (scenario_workers, scenario_workers_absent, scenario_workers_many,
                         scenario_workers_ranks, scenario_workers_ranks_kill,
                         scenario_workers_relays)


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
    replayed = check_recorded_curves(runner, study, path)
    print("python: %d trials (%s), %d ASHA decisions equal the model, %d checkpoints; %s"
          % (len(trials), dict(trials.status.value_counts()), judged, len(checkpoints), replayed))


def check_recorded_curves(runner, study, path):
    """The run's results file as recorded curves (`simulate --curves`): FIFO over them
    replays every report and invents none; step durations come from the wall clock."""
    with open(study) as f:
        text = re.sub(r"(?m)^(grace_period|reduction_factor) = .*$", "", f.read().replace('type = "asha"', 'type = "fifo"'))
    fifo = runner.write("fifo.toml", text)
    out = subprocess.run([runner.slurmtune, "simulate", fifo, "--curves", path, "--workers", "3", "--json"],
                         capture_output=True, text=True)
    expect(out.returncode == 0, "simulate --curves on the run's results file failed: " + out.stderr)
    summary = json.loads(out.stdout)
    with h5py.File(path, "r") as f:
        metrics = f["metrics"][: int(f["commit"][0]["metrics"])]
        trials = f["trials"][: int(f["commit"][0]["trials"])]
    # One report per (trial, step): a step re-run after a kill is kept once.
    distinct = len({(int(m["trial"]), float(m["step"])) for m in metrics})
    objective = summary["objective"]
    expect(objective["configurations"] + objective["excluded"] <= len(trials) and
           objective["reports"] == distinct, "table %s from %d trials, %d reports" % (objective, len(trials), distinct))
    expect(summary["reports"] == distinct, "fifo replayed %d of %d reports" % (summary["reports"], distinct))
    stopped_early = sum(1 for t in trials if float(t["last_step"]) < 27)
    expect(summary["ended_as_recorded"] == stopped_early,
           "%d trials ended at their recorded end, %d were stopped early" % (summary["ended_as_recorded"], stopped_early))
    busy = sum(float(t["end_time"]) - float(t["start_time"]) for t in trials)
    expect(0 < summary["makespan_s"] * 3 and summary["utilisation"] * 3 * summary["makespan_s"] <= busy,
           "replayed compute exceeds the recorded trials' wall time")
    return "simulate --curves replays its %d reports" % distinct


def scenario_cpp(runner, args):
    # Trial 4 sends itself SIGTERM once: the client turns it into a checkpoint and an
    # interrupted attempt, which is retried from that checkpoint.
    # Each attempt first claims identities its credential does not cover (impostor.py).
    study = runner.write("study.toml", study_toml("cpp", as_impostor(runner, [args.cpp_trial, "9", "4"]),
                                                  max_trials=10, trial_extra="max_failures = 1\n"))
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
    impostors = check_impostors(runner, 11)  # 10 trials, trial 4 twice
    print("cpp: %d trials (%s), trial 4 checkpointed on SIGTERM and resumed; %d ASHA decisions "
          "equal the model; %d attempts' claims of other identities refused"
          % (len(trials), dict(trials.status.value_counts()), judged, impostors))


def scenario_mpi(runner, args):
    resources = "nodes = 2\nntasks_per_node = 2\n"
    # max_failures: a step whose PMIx wire-up stalls (seen under heavy load on 2 cores) times
    # out (SLURM_PMIX_TIMEOUT) and is retried like any failed trial. report_timeout_s: Open
    # MPI's TCP wire-up between two trials' steps on this one host has once left a step
    # waiting for ever ("accepted a TCP connection from ... cannot find a corresponding
    # process entry"); a trial silent that long is ended and retried too.
    study = runner.write("study.toml", study_toml("mpi", [args.mpi_trial, "9"], max_trials=6,
                                                   metrics=("loss", "ranks"), resources=resources,
                                                   trial_extra="max_failures = 2\nreport_timeout_s = 60\n"))
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
    # The collective report (Trial::from_environment): every rank left at the step of the
    # study's decision, none waited in the next allreduce.
    for row in trials.itertuples():
        output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % row.id, "stdout.log"))
        left = sorted(re.findall(r"rank (\d) left at step (\d+)", output)[-4:])  # last attempt
        expect(left == [(str(r), str(int(row.last_step))) for r in range(4)],
               "trial %d (last step %d): ranks left at %s" % (row.id, row.last_step, left))
    judged = check_asha(path, 1, 3, 9)
    print("mpi: %d trials of 4 ranks on %s, every rank left at its trial's last step, "
          "%d ASHA decisions equal the model" % (len(trials), sorted(set(trials.nodes)), judged))


def first_partition_log(trials_dir):
    """The stderr of the first MPI step that got as far as partitioning its ranks. A step
    may die before that (Open MPI itself crashed once at start-up in CI); the relaunched
    step then prints it, and the run must still complete."""
    logs = sorted((int(name[5:-4]), name) for name in os.listdir(trials_dir)
                  if re.fullmatch(r"step-\d+\.err", name))
    texts = [read(os.path.join(trials_dir, name)) for _, name in logs]
    return next((text for text in texts if "placement from" in text), "\n".join(texts))


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
    step_err = first_partition_log(os.path.join(runner.workdir, "study.trials"))
    expect("%d group(s) of 2 rank(s)" % groups in step_err, "partition: " + step_err)
    expect(("placement from " + ("mpi-shared" if args.placement == "mpi" else "pmix")) in step_err,
           "placement source: " + step_err)
    partition = [line for line in step_err.splitlines() if "placement from" in line][0]
    expect("using MPI collectives" in step_err, "no NCCL fallback message: " + step_err)
    trials, m = check_group_trials(path, 8)
    failed = trials.loc[2]
    # With kill, trial 2's retry may share the killed step and lose a second attempt with it.
    expect((failed.retries == 1 or kill) and failed.retries >= 1 and failed.status != "failed" and
           ("injected failure" in failed.error or "lost its connection" in failed.error),
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
        resumed = check_relaunched(log, trials, m)
        outcome = "step killed and relaunched; trials %s resumed from checkpoints" % resumed
    elif layout == "split":
        check_one_group_step(log, "trials should run back to back in one step")
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
    rc, log = next_session(runner, handle, study, path, extra, sbatch)
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("scenario", choices=["python", "cpp", "mpi", "faults", "limits", "clock", "term",
                                             "cancel", "kill",
                                             "groups", "groups-kill", "groups-hang", "groups-steps",
                                             "digits",
                                             "promotion", "groups-term", "tpe-resume", "mobster-resume", "ahead-resume", "prior-resume", "recommended", "default-sampler", "freeze-thaw", "pbt",
                                             "pbt-resume", "pbt-groups", "torch", "pygroups",
                                             "pygroups-kill", "gpus", "workers", "workers-kill", "workers-many", "workers-relays",
                                             "workers-ranks", "workers-ranks-kill",
                                             "workers-absent", "groups-orphaned", "join",
                                             "join-requeue", "hostile", "write-ahead", "enqueue",
                                             "conditional", "example-conditional",
                                             "two-objectives", "nsga2-resume", "motpe-resume",
                                             "conditional-resume", "first-study", "leftover",
                                             "checkpoints", "pbt-retention", "workers-node-local",
                                             "workers-node-local-kill", "workers-node-local-pbt"])
    parser.add_argument("--ranks", type=int, default=4, help="groups: ranks of the MPI step")
    parser.add_argument("--placement", choices=["pmix", "mpi"], default="pmix",
                        help="groups: mpi forces the MPI_Comm_split_type fallback")
    parser.add_argument("--launcher", choices=["local", "slurm"], default="local")
    parser.add_argument("--cpp-trial")
    parser.add_argument("--mpi-trial")
    parser.add_argument("--group-trial")
    parser.add_argument("--digits", help="the mlp_digits example program")
    parser.add_argument("--long-paths", action="store_true",
                        help="term/cancel/kill: trials checkpoint under 300+ byte paths")
    parser.add_argument("--cpp-interrupt", action="store_true",
                        help="term/cancel/kill: the trials are --cpp-trial's (C++ client), each "
                             "sending itself SIGTERM while it saves the checkpoint a pause asked for")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="slurmtune-%s-%s-" % (args.launcher, args.scenario))
    if args.placement == "mpi":
        os.environ["SLURMTUNE_PLACEMENT"] = "mpi"

    runner = Runner(args, workdir)
    if args.scenario in ("term", "kill", "cancel"):
        scenario_interrupt(runner, args, args.scenario)
    elif args.scenario == "workers-many":
        scenario_workers_many(runner, args)
    elif args.scenario == "workers-absent":
        scenario_workers_absent(runner, args)
    elif args.scenario == "workers-ranks":
        scenario_workers_ranks(runner, args)
    elif args.scenario == "workers-ranks-kill":
        scenario_workers_ranks_kill(runner, args)
    elif args.scenario == "workers-relays":
        scenario_workers_relays(runner, args)
    elif args.scenario == "workers-node-local-pbt":
        scenario_workers_node_local_pbt(runner, args)
    elif args.scenario.startswith("workers-node-local"):
        scenario_workers_node_local(runner, args, kill=args.scenario.endswith("-kill"))
    elif args.scenario == "join":
        scenario_join(runner, args)
    elif args.scenario == "join-requeue":
        scenario_join_requeue(runner, args)
    elif args.scenario.startswith("workers"):
        scenario_workers(runner, args, kill=args.scenario == "workers-kill")
    elif args.scenario.startswith("pygroups"):
        scenario_pygroups(runner, args, kill=args.scenario == "pygroups-kill")
    elif args.scenario == "groups-orphaned":
        scenario_groups_orphaned(runner, args)
    elif args.scenario == "groups-term":
        scenario_groups_term(runner, args)
    elif args.scenario.startswith("groups"):
        scenario_groups(runner, args, kill=args.scenario in ("groups-kill", "groups-steps"),
                        layout="steps" if args.scenario == "groups-steps" else "split",
                        hang=args.scenario == "groups-hang")
    else:
        scenarios = {"python": scenario_python, "cpp": scenario_cpp, "mpi": scenario_mpi,
                     "faults": scenario_faults, "limits": scenario_limits,
                     "clock": scenario_clock, "promotion": scenario_promotion,
                     "digits": scenario_digits, "tpe-resume": scenario_tpe_resume,
                     "mobster-resume": scenario_mobster_resume, "ahead-resume": scenario_ahead_resume,
                     "prior-resume": scenario_prior_resume,
                     "recommended": scenario_recommended,
                     "default-sampler": scenario_default_sampler,
                     "freeze-thaw": scenario_freeze_thaw,
                     "pbt": scenario_pbt, "pbt-resume": scenario_pbt_resume,
                     "pbt-groups": scenario_pbt_groups, "torch": scenario_torch,
                     "gpus": scenario_gpus, "hostile": scenario_hostile,
                     "write-ahead": scenario_write_ahead, "enqueue": scenario_enqueue,
                     "conditional": scenario_conditional,
                     "example-conditional": scenario_example_conditional,
                     "two-objectives": scenario_two_objectives,
                     "nsga2-resume": scenario_nsga2_resume,
                     "motpe-resume": scenario_motpe_resume,
                     "conditional-resume": scenario_conditional_resume,
                     "first-study": scenario_first_study,
                     "leftover": scenario_leftover,
                     "checkpoints": scenario_checkpoints,
                     "pbt-retention": scenario_pbt_retention}
        scenarios[args.scenario](runner, args)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
