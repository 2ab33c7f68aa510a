"""A trial for fault-injection tests (standard library only).

    fault_trial.py --x X --steps N [--sleep S] [--faults "1:segv,2:exit,5:hang"] [--long-paths]
                   [--checkpoint-each-step]

Reports loss = (x - 0.3)^2 + 1/step each step and checkpoints its step when asked
(with --long-paths, under five nested folders of 64 bytes each, some of them non-ASCII:
a path of over 330 bytes from the study's folder; with --checkpoint-each-step, a file of
its own after every report, ckpt-STEP.json, as trials that keep every epoch's do). It
checkpoints into client.checkpoint_dir(): the trial's folder in [checkpoints] folder, when
the study names one.
A trial listed in --faults misbehaves: segv (first attempt only: the retry succeeds),
exit (every attempt exits 3 after writing to stderr), hang (reports a hopeless loss,
ignores SIGTERM and hangs once told to stop), slow (first attempt: 1.5 s per step, time
for a test to cancel its Slurm step or send it SIGTERM; the best loss, so that no
scheduler decision ends it first), silent (connects, then never reports), overrun (first
attempt: 2.5 s per step, far past a time limit; the best loss), heartbeat (a 6 s first step
with a heartbeat every 0.5 s; the best loss), shell-heartbeat (the same, each heartbeat
sent by the shell client `SLURMTUNE report --heartbeat`), crash-best (every attempt
reports the lowest loss of the study, -100, at its first step and then exits 3: a
configuration that must never be recommended), term-while-saving (told to stop or pause
with a checkpoint, it sends itself SIGTERM before saving it, as `scancel` does to a step
that the coordinator's "suspend" has just reached). Its pid goes to TRIAL_DIR/pid.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

from slurmtune import client

parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float, required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--faults", default="")
parser.add_argument("--slurmtune", help="the slurmtune command, for shell-client heartbeats")
parser.add_argument("--long-paths", action="store_true", help="checkpoint under a 330+ byte path")
parser.add_argument("--never-checkpoint", action="store_true",
                    help="save no checkpoint, even when asked (a resumption starts over)")
parser.add_argument("--checkpoint-each-step", action="store_true",
                    help="save ckpt-STEP.json after every report, whether asked or not")
args = parser.parse_args()

trial, attempt = client.trial_id(), int(os.environ.get("SLURMTUNE_ATTEMPT", "0"))
faults = dict(item.split(":") for item in args.faults.split(",") if item)
fault = faults.get(str(trial), "none")
with open(os.path.join(client.trial_dir(), "pid"), "w") as f:
    f.write(str(os.getpid()))

checkpoint = os.path.join(client.checkpoint_dir(), "checkpoint.json")
if args.long_paths:
    # 64 bytes each: ASCII, then Cyrillic and CJK text that a byte cut would split.
    folders = ["a" * 64, "контрольная-точка-" + "д" * 15, "检查点" * 7 + "x", "b" * 64, "ü" * 32]
    checkpoint = os.path.join(client.trial_dir(), *folders, "checkpoint.json")
    os.makedirs(os.path.dirname(checkpoint), exist_ok=True)
first = 1
if client.resume_checkpoint():
    with open(client.resume_checkpoint()) as f:
        first = json.load(f)["step"] + 1
    print("resumed from %s at step %d on %s" % (client.resume_checkpoint(), first,
                                                 os.environ.get("SLURMD_NODENAME", os.uname().nodename)),
          flush=True)

if fault == "hang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if fault == "silent":
    client.connect()
    while True:
        time.sleep(1)


def save_checkpoint(step):
    """Whole or not at all (a temporary file, then a rename): the attempt may be killed
    while it writes, and the next one must not be handed a cut file."""
    global checkpoint
    if args.checkpoint_each_step:
        checkpoint = os.path.join(client.checkpoint_dir(), "ckpt-%d.json" % step)
    with open(checkpoint + ".partial", "w") as f:
        json.dump({"step": step}, f)
    os.replace(checkpoint + ".partial", checkpoint)


def step_time(step):
    if attempt == 0 and fault in ("slow", "overrun"):
        return 1.5 if fault == "slow" else 2.5
    return args.sleep


for step in range(first, args.steps + 1):
    if fault in ("heartbeat", "shell-heartbeat") and step == 1:
        # The first heartbeat goes out at once: the test is about a long step kept
        # alive, not about how fast an interpreter starts on a loaded machine.
        for beat in range(13):
            time.sleep(0.5 if beat else 0.0)
            if fault == "heartbeat":
                client.heartbeat()
            else:
                subprocess.run([args.slurmtune, "report", "--heartbeat"], check=True)
    time.sleep(step_time(step))
    if fault == "segv" and attempt == 0 and step == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    if fault == "exit" and step == 1:
        print("simulated failure in trial %d attempt %d" % (trial, attempt), file=sys.stderr)
        sys.exit(3)
    if fault == "crash-best" and step > first:
        print("simulated crash of trial %d after its first report" % trial, file=sys.stderr)
        sys.exit(3)
    best = {"slow", "overrun", "heartbeat", "shell-heartbeat"}
    loss = (1e9 if fault == "hang" else -100.0 if fault == "crash-best" else -1.0 if fault in best
            else (args.x - 0.3) ** 2 + 1.0 / step)
    try:
        client.report(step=step, loss=loss)
    except client.TrialStopped as stopped:
        print(stopped, flush=True)
        if fault == "hang":
            while True:
                time.sleep(1)
        if stopped.checkpoint and not args.never_checkpoint:
            if fault == "term-while-saving":  # as scancel's SIGTERM reaches a pausing step
                os.kill(os.getpid(), signal.SIGTERM)
            save_checkpoint(step)
            client.checkpoint_saved(step, checkpoint)
        raise
    if (client.should_checkpoint() or args.checkpoint_each_step) and not args.never_checkpoint:
        save_checkpoint(step)
        client.checkpoint_saved(step, checkpoint)
