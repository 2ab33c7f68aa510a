#!/usr/bin/env python3
"""Results files with values no slurmtune writes (issue #59): a /metrics step that is NaN,
negative or infinite is refused by a resume, naming the row; schema_version -1 is refused
by every reader; a trial status code this version does not know is counted by `status`,
not dropped. Each refusal leaves the file as it was.

    check_tampered.py SLURMTUNE
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

STUDY = """[study]
name = "tamper"
metric = "loss"
max_trials = 6
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "asha"
max_t = 9
[trial]
command = ["true"]
"""


def expect(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def tampered(work, original, name, change):
    path = os.path.join(work, name + ".h5")
    shutil.copy(original, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def set_step(value):
    def change(f):
        rows = f["metrics"][...]
        rows["step"][3] = value
        f["metrics"][...] = rows
    return change


def simulated(slurmtune, work, text):
    """(study file, results file) of `text` simulated in `work`: the file to tamper with."""
    study = os.path.join(work, "s.toml")
    with open(study, "w") as f:
        f.write(text)
    original = os.path.join(work, "s.h5")
    subprocess.run([slurmtune, "simulate", study, "-o", original, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    return study, original


def main():
    slurmtune = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="slurmtune-tampered-")
    try:
        study, original = simulated(slurmtune, work, STUDY)
        for name, value, shown in (("nan", np.nan, "NaN"), ("negative", -1.0, "-1.0"),
                                   ("infinite", np.inf, "Infinity")):
            path = tampered(work, original, name, set_step(value))
            before = digest(path)
            out = subprocess.run([slurmtune, "run", study, "-o", path, "--launcher", "local"],
                                 capture_output=True, text=True, timeout=120, cwd=work)
            expect(out.returncode == 1 and f"{name}.h5: corrupted: /metrics row of seq" in out.stderr
                   and f"has step {shown}, which no report can have" in out.stderr,
                   f"a resume of a {name} step: exit {out.returncode}\n{out.stderr}")
            expect(digest(path) == before, f"the refused resume changed {path}")

        def schema(f):
            f.attrs["schema_version"] = np.int64(-1)
        path = tampered(work, original, "schema", schema)
        for command in (["status"], ["best"], ["export"]):
            out = subprocess.run([slurmtune, *command, path], capture_output=True, text=True, timeout=120)
            expect(out.returncode == 1 and "schema.h5: corrupted: schema_version -1" in out.stderr,
                   f"{command[0]} of schema_version -1: exit {out.returncode}\n{out.stderr}")

        def status(f):
            rows = f["trials"][...]
            rows["status"][0] = 9
            f["trials"][...] = rows
        path = tampered(work, original, "status", status)
        out = subprocess.run([slurmtune, "status", path], capture_output=True, text=True, timeout=120)
        expect(out.returncode == 0 and "of an unknown status 1" in out.stdout,
               f"status with an unknown status code:\n{out.stdout}\n{out.stderr}")
        print("tampered: NaN, negative and infinite steps refused by a resume, the file unchanged; "
              "schema_version -1 refused by status, best and export; an unknown status counted")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
