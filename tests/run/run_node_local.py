#!/usr/bin/env python3
"""[checkpoints] node_local = true on worker launch (tests/run/check_run.py): checkpoints on
each node's own disk, which only its agent sees. The test cluster's nodes share this
host's disk, so `folder` names a folder per node ("{node}"): a trial resumed on another
node than the one holding its checkpoint would be handed a path of a different node's
folder.

workers-node-local: 24 trials of asha_promotion on 4 nodes, each saving a checkpoint
every step, keep_per_trial = 1 and keep_ended = 2. Every recorded checkpoint is
"NODE:/path" inside that node's folder; every trial that resumed did so on the node that
holds its checkpoint; the files left on the nodes' disks are exactly those the results
file recorded and did not remove (each agent removed its node's); each node's folder is
claimed for the study by its agent.
workers-node-local-kill: the same with 40 trials, the worker of one node killed while trials run:
the trials whose checkpoints were there resume from scratch (the log says so), none
fails for good, and later trials avoid the node.
workers-node-local-pbt: PBT of the numpy MLP example on 4 nodes (a slot each), its checkpoints on the
nodes' own disks, its first session killed outright a third of the way and resumed: the
exploits are replay's; each kept copy was made by the agent of the node holding the
checkpoint, and each clone on the node the exploiting trial ran on (recorded as that
node's), a donor's on another node staged through pbt.trials and removed from there;
every exploited trial restarted there, from the donor's state at the donor's step, with
its new configuration.
"""
import glob
import os
import re
import shutil
import tempfile

import h5py
import numpy as np

from run_harness import ROOT, check_complete, expect, read, study_toml, wait_for
from run_pbt import check_clones_made, cut_short_keeps, exploits_of, pbt_study, replayed_exploits
from run_reliability import committed_metric_rows, kill_orchestrator
from run_workers import check_lost_worker, kill_worker_after, lost_worker_trials

FAULT_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "fault_trial.py")
NODES = ["n1", "n2", "n3", "n4"]
# The kill variant runs more, and kills early, so that trials still start after the node
# is lost (check_lost_worker asks that some do, and that they avoid it).
TRIALS, TRIALS_WITH_KILL = 24, 40
PBT_POPULATION, PBT_EPOCHS = 12, 36


def scenario_workers_node_local(runner, args, kill=False):
    if runner.launcher != "slurm":
        print("SKIPPED: node agents are Slurm job steps")
        raise SystemExit(77)
    disks = os.path.realpath(tempfile.mkdtemp(prefix="slurmtune-disks-"))
    try:
        run_on_node_disks(runner, args, disks, kill)
    finally:
        shutil.rmtree(disks, ignore_errors=True)


def run_on_node_disks(runner, args, disks, kill):
    command = ["/usr/bin/python3", FAULT_TRIAL, "--x={x}", "--steps=9",
               "--sleep=%s" % ("0.3" if kill else "0.1"), "--checkpoint-each-step"]
    trials_wanted = TRIALS_WITH_KILL if kill else TRIALS
    toml = study_toml("nodelocal", command, max_trials=trials_wanted, max_t=9,
                      scheduler="asha_promotion",
                      resources='launch = "worker"\n', trial_extra="max_failures = 2\n")
    toml += ('[checkpoints]\nkeep_per_trial = 1\nkeep_ended = 2\nfolder = "%s/{node}/ckpt"\n'
             "node_local = true\n" % disks)
    study = runner.write("study.toml", toml)
    path = os.path.join(runner.workdir, "study.h5")
    handle = runner.start(study, path, sbatch_args=["-N", "4", "--ntasks-per-node", "2"])
    victim = "n3"
    if kill:
        # As a trial there has just started, so that one is running, not told to pause
        # (run_workers.py's workers-kill says why).
        killed_at = kill_worker_after(handle, victim, 16, fresh_trial=(b"fault_trial.py", 0.25))
    rc, log = runner.wait(handle, 400)
    expect(rc == 0, "run failed:\n" + log)
    trials = check_complete(path, trials_wanted).set_index("id")
    expect((trials.status != "failed").all(), "failed trials:\n%s" % trials[["status", "error"]])
    saved, removed = recorded_checkpoints(path, disks)
    on_disk = set(glob.glob(os.path.join(disks, "*", "ckpt", "trial-*", "*.json")))
    if kill:
        # What the lost node's disk held stays there: nothing serves it any more. The trials
        # the loss took down can outlive their worker until Slurm ends the step's processes
        # (worker_pool.cpp, end_trials_of) and write checkpoints no report records; any other
        # file there was recorded.
        lost = os.path.join(disks, victim) + "/"
        left = {p for p in on_disk if p.startswith(lost)}
        taken_down = set(sum(lost_worker_trials(log, victim), []))
        unrecorded = {p for p in left - saved
                      if int(re.search(r"/trial-(\d+)/", p).group(1)) not in taken_down}
        expect(not unrecorded, "files on %s's disk that were never recorded, of trials its loss did "
               "not take down (%s): %s; the log's lines naming it:\n%s"
               % (victim, sorted(taken_down), sorted(unrecorded),
                  "\n".join(line for line in log.splitlines() if victim in line)))
        on_disk -= left
        saved = {p for p in saved if not p.startswith(lost)}
    expect(on_disk == saved - removed,
           "the nodes' disks hold %d checkpoint files, the record says %d; on disk and not kept: "
           "%s; kept and not on disk: %s" % (len(on_disk), len(saved - removed),
                                             sorted(on_disk - (saved - removed))[:5],
                                             sorted((saved - removed) - on_disk)[:5]))
    for node in NODES:
        marker = os.path.join(disks, node, "ckpt", ".slurmtune-study")
        if kill and node == victim and not os.path.exists(marker):
            continue
        expect(read(marker).strip() == os.path.realpath(path),
               "%s's folder is not claimed for the study: %s" % (node, marker))
    resumes = resumed_on(runner, trials.index)
    expect(resumes, "no trial resumed from a checkpoint on a node's disk:\n" + log)
    wrong = [(t, where, node) for t, where, node in resumes if where != node]
    expect(not wrong, "trials resumed on another node than their checkpoint's: %s" % wrong)
    waited = len(re.findall(r"trial \d+ waits for a slot on n\d+, whose own disk holds its "
                            r"checkpoint", log))
    outcome = ("%d checkpoints recorded on the nodes' own disks, %d removed by their agents, %d "
               "left as recorded; %d resumptions, each on the node holding its checkpoint (%d "
               "waited for a slot there)"
               % (len(saved), len(removed), len(on_disk), len(resumes), waited))
    if not kill:
        outcome += "; " + resume_tighter(runner, study, path, toml, disks, on_disk)
    if kill:
        hit, later = check_lost_worker(log, trials, victim, killed_at,
                                       "worker step on %s was lost" % victim)
        scratch = re.findall(r"trial (\d+) resumes from scratch: its checkpoint %s:\S+ is on the own "
                             r"disk of a node that this session lost" % victim, log)
        expect(scratch, "no trial was said to resume from scratch after %s was lost:\n%s"
               % (victim, log))
        outcome += ("; %s's worker killed: trials %s resumed from scratch, %d later trials "
                    "avoided it" % (victim, sorted(set(map(int, scratch))), len(later)))
    print("%s: %s" % (args.scenario, outcome))


def scenario_workers_node_local_pbt(runner, args):
    if runner.launcher != "slurm":
        print("SKIPPED: node agents are Slurm job steps")
        raise SystemExit(77)
    disks = os.path.realpath(tempfile.mkdtemp(prefix="slurmtune-disks-"))
    try:
        run_pbt_on_node_disks(runner, disks)
    finally:
        shutil.rmtree(disks, ignore_errors=True)


def run_pbt_on_node_disks(runner, disks):
    # A larger population trained longer than run_pbt's: a dozen exploits or so, so that
    # some donor lies on another node than its receiver had run on (a third of them do).
    text = read(pbt_study(runner, sleep=0.05)).replace("[resources]\n", '[resources]\nlaunch = "worker"\n')
    text = re.sub(r"(?m)^max_trials = \d+", "max_trials = %d" % PBT_POPULATION, text)
    text = re.sub(r"(?m)^max_t = \d+", "max_t = %d" % PBT_EPOCHS, text)
    text = re.sub(r'"--epochs=\d+"', '"--epochs=%d"' % PBT_EPOCHS, text)
    text += '\n[checkpoints]\nfolder = "%s/{node}/ckpt"\nnode_local = true\n' % disks
    study = runner.write("pbt.toml", text)
    path = os.path.join(runner.workdir, "pbt.h5")
    # The first session is killed outright a third of the way: the second resumes, and the
    # copies a resume carries out (exploits decided but not recorded, checkpoints asked
    # for and not kept) wait for their nodes' agents.
    nodes = ["-N", "4", "--ntasks-per-node", "1"]
    first = runner.start(study, path, sbatch_args=nodes)
    wait_for(lambda: committed_metric_rows(path) >= PBT_POPULATION * PBT_EPOCHS // 3, 240,
             "a third of the reports to be durable")
    kill_orchestrator(runner, first, path)
    recorded_before = len(exploits_of(path))
    cut = cut_short_keeps(path, lambda trial: glob.glob(
        os.path.join(disks, "*", "ckpt", "trial-%d" % trial, "pbt-kept", "step-*")))
    rc, log = runner.run(study, path, sbatch_args=nodes, timeout=400)
    expect(rc == 0 and "resuming" in log, "the resumed run failed:\n" + log)
    log = read(first[2]) + log
    check_complete(path, PBT_POPULATION)
    exploits = exploits_of(path)
    expect(exploits, "no trial exploited another:\n" + log)
    decided = replayed_exploits(runner, study, path)
    expect(len(decided) == len(exploits) and
           all(e["trial"] == d["trial"] and e["donor"] == d["donor"] and
               e["donor_step"] == d["donor_step"] for e, d in zip(exploits, decided)),
           "%d exploits recorded, replay decides %d" % (len(exploits), len(decided)))
    recorded_checkpoints(path, disks)  # each NODE:/path in that node's folder
    with h5py.File(path, "r") as f:
        rows = [(int(c["trial"]), float(c["step"]), c["path"].decode()) for c in f["checkpoints"][:]]
    for trial, e in {e["trial"]: e for e in exploits}.items():
        marker = "/pbt-from-trial-%d-step-" % e["donor"]
        clones = [r for r in rows if r[0] == trial and marker in r[2]]
        expect(clones, "trial %d: no clone of trial %d's checkpoint indexed" % (trial, e["donor"]))
        _, step, recorded = clones[-1]
        node, _, clone = recorded.partition(":")
        expect(step == e["donor_step"] and clone.startswith("%s/%s/ckpt/" % (disks, node)),
               "trial %d's clone %s at step %s" % (trial, recorded, step))
        kept = glob.glob(os.path.join(disks, "*", "ckpt", "trial-%d" % e["donor"], "pbt-kept"))
        expect(kept, "trial %d's kept copies are on no node's disk" % e["donor"])
        saved = np.load(clone)
        expect(int(saved["epoch"]) == e["donor_step"], "trial %d's clone holds epoch %d, not %s"
               % (trial, int(saved["epoch"]), e["donor_step"]))
        output = read(os.path.join(runner.workdir, "pbt.trials", "trial-%d" % trial, "stdout.log"))
        resumed = "resumed from %s at epoch %d with lr %s batch %d on %s" % (
            clone, e["donor_step"] + 1, e["config"]["lr"], e["config"]["batch"], node)
        expect(resumed in output, "trial %d did not restart from its clone on %s (%s):\n%s"
               % (trial, node, resumed, output))
    # Each clone lies on the node the trial ran on (its checkpoint's): a donor's kept copy
    # on another node came through STUDY.trials, and nothing staged there is left.
    staged, last_node = 0, {}
    for trial, _, recorded in rows:
        node = recorded.partition(":")[0]
        donor = re.search(r"/pbt-from-trial-(\d+)-step-", recorded)
        if donor:
            expect(last_node.get(trial, node) == node, "trial %d's clone %s is not on its node %s"
                   % (trial, recorded, last_node.get(trial)))
            staged += last_node.get(int(donor.group(1))) != node
        last_node[trial] = node
    left = glob.glob(os.path.join(runner.workdir, "pbt.trials", "trial-*", "pbt-from-trial-*"))
    expect(not left, "copies staged in pbt.trials were left there: %s" % left)
    # Every exploit's clone made by a node agent (the killed session's last log lines may
    # be lost with it, so the results file's rows are what counts).
    again, needed = check_clones_made(path, log, cut, recorded_before)
    expect(re.search(r"its clone of trial \d+'s checkpoint is in place \(.* on n\d+, off the loop\)",
                     log), "no clone was made by a node agent:\n" + log)
    expect(staged > 0, "no clone came from another node (%d exploits)" % len(exploits))
    print("workers-node-local-pbt: killed and resumed; %d exploits equal to replay's; each clone "
          "made on the node of the trial exploiting, %d of them from a donor on another node "
          "(staged through pbt.trials); %d checkpoint rows; of %d kept copies cut after the "
          "kill, %d kept again by their agents (%d cloned later)"
          % (len(exploits), staged, len(rows), len(cut), again, needed))


def resume_tighter(runner, study, path, toml, disks, before):
    """A resumed session with keep_ended = 1 removes the second best's checkpoints at its
    start: the removals wait for their nodes' agents to connect, and they do remove."""
    runner.write("study.toml", toml.replace("keep_ended = 2", "keep_ended = 1"))
    rc, log = runner.run(study, path, extra=["--allow-changes"],
                         sbatch_args=["-N", "4", "--ntasks-per-node", "2"])
    expect(rc == 0, "the resumed session failed:\n" + log)
    saved, removed = recorded_checkpoints(path, disks)
    on_disk = set(glob.glob(os.path.join(disks, "*", "ckpt", "trial-*", "*.json")))
    expect(on_disk == saved - removed and on_disk < before,
           "after the resume the disks hold %s, the record keeps %s (before: %s)"
           % (sorted(on_disk), sorted(saved - removed), sorted(before)))
    return "resumed with keep_ended = 1: %d more removed by the agents" % len(before - on_disk)


def recorded_checkpoints(path, disks):
    """The checkpoint files the results file recorded and removed, as paths on this host
    (each "NODE:/path" inside NODE's folder)."""
    with h5py.File(path, "r") as f:
        saved_rows = [(int(r["trial"]), r["path"].decode()) for r in f["checkpoints"][:]]
        removed_rows = [r["path"].decode() for r in f["removed_checkpoints"][:]]
    saved = set()
    for trial, recorded in saved_rows:
        node, _, local = recorded.partition(":")
        expect(local.startswith("%s/%s/ckpt/trial-%d/" % (disks, node, trial)),
               "trial %d's checkpoint %s is not NODE:/path in that node's folder" % (trial, recorded))
        saved.add(local)
    removed = {recorded.partition(":")[2] for recorded in removed_rows}
    expect(removed <= saved, "removed checkpoints that were never recorded")
    return saved, removed


def resumed_on(runner, trials):
    """(trial, node of the checkpoint, node it resumed on) for every resumption."""
    found = []
    for t in trials:
        output = read(os.path.join(runner.workdir, "study.trials", "trial-%d" % t, "stdout.log"))
        for checkpoint, node in re.findall(r"resumed from (\S+) at step \d+ on (\S+)", output):
            where = re.search(r"/(n\d+)/ckpt/", checkpoint)
            found.append((t, where.group(1) if where else checkpoint, node))
    return found
