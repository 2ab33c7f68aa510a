#!/usr/bin/env python3
"""Results files on a file system that refuses flock() (issue #63 item 5), emulated by
REFUSE_FLOCK, a library preloaded into each command whose flock() fails with errno 524
as some Lustre, GPFS and DVS mounts do (HDFGroup/hdf5#3311). Without
HDF5_USE_FILE_LOCKING=FALSE, `simulate -o`, `run`, `status` and the Python Study fail
with an error that names the file, the cause and the way out, and leave nothing
half-made; with it the same commands work. And a lock another process holds (errno 11: a writer opening the
file, or a reader without SWMR) is waited for, not blamed on the file system: `status` and
the Python Study started while this script holds the lock read the study once it lets go.
Usage: check_file_lock.py SLURMTUNE REFUSE_FLOCK"""
import fcntl
import os
import re
import subprocess
import sys
import tempfile
import time

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "share",
                       "slurmtune", "python")
CAUSE = (r"the file system refused HDF5's file lock \(errno 524\), as some Lustre, GPFS and DVS "
         r"mounts refuse flock\(\)\. Set HDF5_USE_FILE_LOCKING=FALSE")
READ_STUDY = "import sys; from slurmtune.study import Study; print('trials:', len(Study(sys.argv[1]).trials))"
STUDY = """[study]
name = "locks"
metric = "loss"
max_trials = 3
[search]
x = { uniform = [0, 1] }
[trial]
command = ["bash", "trial.sh"]
"""

failures = []


def run(argv, refuse, unlocked, workdir):
    env = dict(os.environ, LD_PRELOAD=refuse, PYTHONPATH=PACKAGE)
    env.pop("HDF5_USE_FILE_LOCKING", None)
    if unlocked:
        env["HDF5_USE_FILE_LOCKING"] = "FALSE"
    out = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout + out.stderr


def expect(argv, status, pattern, refuse, workdir, unlocked=False):
    code, text = run(argv, refuse, unlocked, workdir)
    if code != status or not re.search(pattern, text, re.MULTILINE):
        failures.append("%s%s: exit %d (wanted %d), output not matching /%s/:\n%s"
                        % ("HDF5_USE_FILE_LOCKING=FALSE " if unlocked else "", " ".join(argv),
                           code, status, pattern, text))


def wait_for_held_lock(slurmtune, work):
    """`status` and Study started while this process holds HDF5's lock on the file
    exclusively (as a writer does while it opens it) wait, and read it once it is let go;
    a Study whose wait is shorter than the lock is held ends it and names the holder."""
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    env.pop("HDF5_USE_FILE_LOCKING", None)
    env.pop("LD_PRELOAD", None)
    path = os.path.join(work, "locks.h5")
    with open(path, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        readers = [subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
                   for argv in ([slurmtune, "status", "locks.h5"],
                                [sys.executable, "-c", READ_STUDY, "locks.h5"])]
        time.sleep(1.0)
        still_waiting = [p.poll() is None for p in readers]
        fcntl.flock(held, fcntl.LOCK_UN)
        outs = [reader.communicate(timeout=120)[0] for reader in readers]
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Past its bound the wait ends, with the holder named (LOCK_WAIT_S made short).
        short = subprocess.run(
            [sys.executable, "-c", "import sys; import slurmtune.results_file as r; "
             "r.LOCK_WAIT_S = 0.3; " + READ_STUDY.split("; ", 1)[1], "locks.h5"],
            cwd=work, env=env, capture_output=True, text=True, timeout=120)
        fcntl.flock(held, fcntl.LOCK_UN)
    if short.returncode != 1 or not re.search(
            r"locks.h5: another process holds HDF5's lock on the file, still after 0.3 s",
            short.stdout + short.stderr):
        failures.append("Study past a short lock wait: exit %d:\n%s"
                        % (short.returncode, short.stdout + short.stderr))
    for reader, out, waited, pattern in zip(readers, outs, still_waiting,
                                            [r"^Trials 3: .*completed 3", "^trials: 3$"]):
        if not waited or reader.returncode != 0 or not re.search(pattern, out, re.MULTILINE):
            failures.append("%s under a held lock: %s, exit %d, output not matching /%s/:\n%s"
                            % (" ".join(reader.args[:2]), "waited" if waited else "did not wait",
                               reader.returncode, pattern, out))


def main():
    slurmtune, refuse = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "trial.sh"), "w") as f:
            f.write('echo \'{"loss": 0.5}\'\n')
        with open(os.path.join(work, "locks.toml"), "w") as f:
            f.write(STUDY)
        files = set(os.listdir(work))
        # Refused: a clear error naming the file, and no results file, half-made one or lock.
        expect([slurmtune, "simulate", "locks.toml", "-o", "sim.h5"], 1, "sim.h5: " + CAUSE, refuse, work)
        expect([slurmtune, "run", "locks.toml", "--launcher", "local"], 1, "locks.h5: " + CAUSE,
               refuse, work)
        left = sorted(set(os.listdir(work)) - files - {"locks.trials"})
        if left:
            failures.append("the refused commands left %s" % left)
        # With HDF5_USE_FILE_LOCKING=FALSE the same commands work.
        expect([slurmtune, "simulate", "locks.toml", "-o", "sim.h5"], 0, "makespan", refuse, work, True)
        expect([slurmtune, "run", "locks.toml", "--launcher", "local"], 0, "completed 3", refuse, work, True)
        expect([slurmtune, "status", "locks.h5"], 0, r"^Trials 3: .*completed 3", refuse, work, True)
        # Readers of a finished study: refused with the cause, then served.
        expect([slurmtune, "status", "locks.h5"], 1, "locks.h5: " + CAUSE, refuse, work)
        expect([sys.executable, "-c", READ_STUDY, "locks.h5"], 1,
               r"locks.h5: the file system refused HDF5's file lock .*HDF5_USE_FILE_LOCKING=FALSE",
               refuse, work)
        expect([sys.executable, "-c", READ_STUDY, "locks.h5"], 0, "^trials: 3$", refuse, work, True)
        wait_for_held_lock(slurmtune, work)
    if failures:
        print("\n\n".join(failures))
        return 1
    print("file locks refused (errno 524): simulate, run, status and Study name the cause and "
          "the way out and leave nothing half-made; with HDF5_USE_FILE_LOCKING=FALSE they work; "
          "a lock another process holds (errno 11) is waited for by status and Study")
    return 0


if __name__ == "__main__":
    sys.exit(main())
