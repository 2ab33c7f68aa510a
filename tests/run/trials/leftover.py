"""Wraps a trial's command and leaves a process behind from each trial's first launch
(issue #59, item 2): the leftover keeps that launch's credential, waits until the trial
runs again (a promotion resumes it, so its next launch's wrapper writes TRIAL_DIR/resumed)
and then claims rank 0 of it, reporting a loss of -42. Its answers go to
OUTDIR/leftover-<trial>.json; the command runs in the wrapper's place (exec). A leftover
whose trial never runs again gives up after 60 s. First, every launch looks for the
session's secret (STUDY.trials/token) and, if it can read it, poses as the worker of a
joined job with it (OUTDIR/secret-<trial>.json). Standard library only.

    leftover.py OUTDIR COMMAND [ARG...]
"""
import json
import os
import sys
import time

from impostor import HELLO, answer, claim_with_proof, connect, frame, read_frame

REPORT = 3


def linger(out_dir):
    """In the leftover: waits for the trial's next launch, then speaks for it."""
    trial, attempt = int(os.environ["SLURMTUNE_TRIAL_ID"]), int(os.environ["SLURMTUNE_ATTEMPT"])
    with open(os.environ["SLURMTUNE_TOKEN_FILE"]) as f:
        credential = f.read().strip()  # this launch's: kept after its file is removed
    marker = os.path.join(os.environ["SLURMTUNE_TRIAL_DIR"], "resumed")
    deadline = time.time() + 60
    while not os.path.exists(marker) and time.time() < deadline:
        time.sleep(0.05)
    if not os.path.exists(marker):
        return
    result = {"trial": trial}
    try:
        with connect() as sock:
            sock.sendall(frame(HELLO, {"token": credential, "trial": trial, "attempt": attempt,
                                       "rank": 0}))
            result["hello"] = answer(read_frame(sock))
            if result["hello"]["kind"] != "closed" and result["hello"]["kind"] != "ERROR":
                sock.sendall(frame(REPORT, {"step": 1000, "metrics": {"loss": -42.0}}))
                result["report"] = answer(read_frame(sock))
    except OSError as e:
        result["hello"] = {"kind": "closed", "error": str(e)}
    out = os.path.join(sys.argv[1], "leftover-%d.json" % trial)
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(out + ".tmp", out)


def pose_as_joined_job(out_dir):
    """What a trial can do with the session's secret, if it can read it."""
    trial = int(os.environ["SLURMTUNE_TRIAL_ID"])
    secret_file = os.path.join(os.path.dirname(os.environ["SLURMTUNE_TRIAL_DIR"]), "token")
    result = {"found": os.path.exists(secret_file)}
    if result["found"]:
        with open(secret_file) as f:
            secret = f.read().strip()
        result["answer"] = claim_with_proof(secret, {"worker": "n9", "allocation": "1", "cpus": 1,
                                                     "gpus": 0})
    out = os.path.join(out_dir, "secret-%d.json" % trial)
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(out + ".tmp", out)


def main():
    out_dir, command = sys.argv[1], sys.argv[2:]
    pose_as_joined_job(out_dir)
    if os.environ.get("SLURMTUNE_CHECKPOINT"):
        # A later launch (a promotion resumes from the pause's checkpoint): the leftover
        # of the first launch may go now.
        open(os.path.join(os.environ["SLURMTUNE_TRIAL_DIR"], "resumed"), "w").close()
    elif os.fork() == 0:
        os.setsid()  # out of the trial's process group: it outlives the paused launch
        if os.fork() == 0:
            try:
                linger(out_dir)
            finally:
                os._exit(0)
        os._exit(0)
    sys.stdout.flush()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
