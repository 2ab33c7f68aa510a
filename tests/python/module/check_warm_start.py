#!/usr/bin/env python3
"""`[sampler] warm_start` from the command line's side: validate reports what each
earlier results file gives (trials used, left out, parameters it lacks), refuses what
cannot seed this study (another metric or direction, no shared parameter, no finished
trial, not a results file) naming the file, and a warm-started tpe study uses its model
from the first trial; replay, given the same files, suggests what the run did.
Usage: check_warm_start.py SLURMTUNE_BINARY
"""
import os
import subprocess
import sys
import tempfile

import earlier_studies

BINARY = sys.argv[1]

SEARCH = earlier_studies.SEARCH
write = earlier_studies.write
expect_in = earlier_studies.expect_in


def run(*args, status=0):
    return earlier_studies.run(BINARY, *args, status=status)


def main():
    with tempfile.TemporaryDirectory(prefix="slurmtune-warm-") as d:
        # Earlier studies: the same objective (one has a parameter fewer), another metric.
        run("simulate", write(d, "past"), "-o", os.path.join(d, "past.h5"), "-q")
        narrow = SEARCH.replace('width = { randint = [8, 64] }\n', "")
        run("simulate", write(d, "narrow", search=narrow, seed=2), "-o", os.path.join(d, "narrow.h5"), "-q")
        run("simulate", write(d, "acc", metric="acc", mode="max"), "-o", os.path.join(d, "acc.h5"), "-q")
        other = 'depth = { randint = [1, 5] }\n'
        run("simulate", write(d, "other", search=other), "-o", os.path.join(d, "other.h5"), "-q")
        with open(os.path.join(d, "junk.h5"), "w") as f:
            f.write("not HDF5")

        table = '\n[sampler]\nn_startup_trials = 5\nwarm_start = [{}]\n'
        files = lambda *names: table.format(", ".join('"%s.h5"' % n for n in names))
        ok = write(d, "now", sampler="tpe", seed=7, trials=12, sampler_table=files("past", "narrow"))
        report = run("validate", ok)
        expect_in(report, "# warm start: 20 trials of ")
        expect_in(report, "narrow.h5; it has no width")
        for bad, wanted in (("acc", "acc.h5 optimizes acc (max), this study loss (min)"),
                            ("other", "other.h5 has none of this study's sampled parameters"),
                            ("junk", "junk.h5: "), ("missing", "missing.h5: ")):
            study = write(d, "bad-" + bad, sampler="tpe", sampler_table=files(bad))
            text = run("validate", study, status=1)
            expect_in(text, "[sampler] warm_start: ")
            expect_in(text, wanted)

        # 40 earlier trials are past n_startup_trials = 5: the model suggests from trial 0.
        results = os.path.join(d, "now.h5")
        run("simulate", ok, "-o", results, "-q")
        status = run("status", results)
        expect_in(status, "Configurations: 12 model")
        replayed = subprocess.run([BINARY, "replay", ok, "-"], capture_output=True, text=True,
                                  input=run("export", results, "--table", "replay"))
        assert replayed.returncode == 0, replayed.stderr
        assert replayed.stdout.count('"matches":true') == 12 and '"matches":false' not in replayed.stdout, \
            replayed.stdout
    print("warm_start: validate reports both files and refuses 4 kinds of bad ones by name; "
          "a warm-started tpe study suggests by its model from trial 0; replay matches all 12")


if __name__ == "__main__":
    main()
