#!/usr/bin/env python3
"""PBT against ASHA on a real training run: the numpy MLP example
(share/slurmtune/examples/numpy-mlp), both run by `slurmtune run` with the same compute
budget, over several seeds (doc/performance.md, "PBT on a real problem").

    /usr/bin/python3 tests/bench/quality/pbt_real.py [--slurmtune build/src/slurmtune] [--seeds 8]

Each seed runs pbt.toml (a population of 8, 27 epochs, perturbation every 3 epochs,
lr resampled or scaled, batch stepped) and then study.toml (ASHA over the same search
space, grace 1, reduction factor 3, max_t 27) with as many trials as train the epochs
PBT trained, within 5 % (every epoch trained counts, the ones an exploited trial trains
again from its donor's step included). The figure is the best validation loss at epoch 27, the end
of training: for ASHA the best fixed configuration it found, for PBT the best member of
the population, whose learning rate followed a schedule.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp")
MAX_T = 27


def run(slurmtune, workdir, study_file, seed, slots, max_trials=None):
    text = open(os.path.join(EXAMPLE, study_file)).read()
    text = re.sub(r"(?m)^seed = \d+", "seed = %d" % seed, text)
    if max_trials:
        text = re.sub(r"(?m)^max_trials = \d+", "max_trials = %d" % max_trials, text)
    study = os.path.join(workdir, "%s-%d.toml" % (study_file[:-5], seed))
    with open(study, "w") as f:
        f.write(text)
    output = study[:-5] + ".h5"
    if os.path.exists(output):  # a fresh study each time
        os.remove(output)
    shutil.rmtree(study[:-5] + ".trials", ignore_errors=True)
    subprocess.run([slurmtune, "run", study, "-o", output, "--launcher", "local", "--slots",
                    str(slots), "--progress-interval", "600"], cwd=workdir, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with h5py.File(output, "r") as f:
        metrics = f["metrics"][: int(f["commit"][0]["metrics"])]
        exploits = int(f["commit"][0]["exploits"])
    final = [float(m["val_loss"]) for m in metrics if float(m["step"]) == MAX_T]
    return {"epochs": len(metrics), "best_final": min(final) if final else float("nan"),
            "exploits": exploits}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--slurmtune", default=os.path.join(ROOT, "build", "src", "slurmtune"))
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pbt-real-")
    shutil.copy(os.path.join(EXAMPLE, "train.py"), workdir)
    pbt, asha = [], []
    print("seed  pbt epochs  exploits  pbt best  asha trials  asha epochs  asha best", flush=True)
    for seed in range(1, args.seeds + 1):
        p = run(args.slurmtune, workdir, "pbt.toml", seed, args.slots)
        # ASHA's trials for PBT's epochs, within 5 %: ~3 epochs a trial to begin with (rungs
        # 1, 3, 9, 27 with reduction factor 3), then scaled by what the last try spent.
        # ASHA's epochs move unevenly with its trials (promotions depend on the values),
        # so the closest of the tries counts when none is within 5 %.
        trials, tries = max(1, round(p["epochs"] / 3)), {}
        for _ in range(10):
            tries[trials] = run(args.slurmtune, workdir, "study.toml", seed, args.slots,
                                max_trials=trials)
            spent = tries[trials]["epochs"]
            if abs(spent - p["epochs"]) <= 0.05 * p["epochs"]:
                break
            step = round(trials * (p["epochs"] / spent - 1))
            trials = max(1, trials + (step if step else (1 if spent < p["epochs"] else -1)))
            if trials in tries:
                break
        trials = min(tries, key=lambda n: abs(tries[n]["epochs"] - p["epochs"]))
        a = tries[trials]
        pbt.append(p["best_final"])
        asha.append(a["best_final"])
        print("%4d  %10d  %8d  %8.4f  %11d  %11d  %9.4f" % (seed, p["epochs"], p["exploits"],
              p["best_final"], trials, a["epochs"], a["best_final"]), flush=True)
    wins = sum(1 for x, y in zip(pbt, asha) if x < y)
    print("median best val_loss at epoch %d: pbt %.4f, asha %.4f; pbt better in %d of %d seeds"
          % (MAX_T, statistics.median(pbt), statistics.median(asha), wins, len(pbt)))
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
