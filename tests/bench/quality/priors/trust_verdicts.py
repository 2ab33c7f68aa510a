#!/usr/bin/python3
"""Which measure tells a prior's late bloomers from its bad configurations (issue #64,
item 2)? Runs a slurmtune prior method (transfer_quality.py's method strings) on table pairs
and reads every report back from the results file. For each trusted trial it re-derives
the verdicts the trust check met: at each rung crossing, the first rung it passed where it
ranks in the worse half (at least 3 others there). At that verdict it notes what three
waivers would say, each at the next rung the trial entered (or that rung itself while it is
the highest), against the peers that entered it from the rung below:

  gain       its change of score beats the median change of its peers'
  overtook   it ranks above at least one peer that ranked above it in the rung below
  a quarter  ... at least max(1, a quarter) of them

Printed per pair and worth (good: its configuration reaches T2 on the large table), the
trial's last such verdict: how many there were and how many each waiver would have kept.
Scores are compared as values (no seniority tie-break); a trust the gain would have ended
is taken as ended, as the method "trust check gain" does.

  trust_verdicts.py BUILD --pairs mlp-shift gbdt-data --workers 8 --seeds 8 \\
      --method "recommended, prior check, eager promotion, trusted 5, trust check gain"
"""
import argparse
import collections
import math
import os
import sys
import tempfile

import h5py
import numpy as np

# The shared harness lies one folder up (tests/bench/quality).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import transfer_quality as tq  # noqa: E402
from quality_runs import config_row, simulate_slurmtune, trial_configs  # noqa: E402


def milestones(max_t, grace=1, eta=3):
    """asha_promotion's rungs (rung_ladder.cpp): grace x eta^k below max_t, then max_t."""
    rungs, m = [], grace
    while m < max_t - 1e-9:
        rungs.append(m)
        m *= eta
    return rungs + [max_t]


def config_indices(large, trials):
    """Each trial id's configuration as an index into the large table."""
    return {int(t["id"]): config_row(large, config)
            for t, config in zip(trials, trial_configs(trials, large.params))}


def verdicts(binary, pair, workers, seed, method, work):
    """The low-rank verdicts trusted trials met in one study, as dicts."""
    _, earlier = tq.run_earlier((binary, pair, workers, seed, work))
    large = tq.pair_table(pair, "large")
    variant = tq.slurmtune_variant(method, earlier)
    folder = os.path.join(work, "large")
    os.makedirs(folder, exist_ok=True)
    h5, _ = simulate_slurmtune(binary, large, variant, seed, workers, large.total_seconds / workers, folder,
                               False)
    with h5py.File(h5, "r") as f:
        reports = np.sort(f["metrics"][:int(f["commit"][0]["metrics"])], order="seq")
        index = config_indices(large, f["trials"][:])
    sign = 1 if large.mode == "min" else -1
    best = [np.nanmin(sign * runs[0][1]) if not np.isnan(runs[0][1]).all() else math.inf for runs in large.curves]
    good_below = sign * large.targets[1]
    rungs = milestones(large.max_t)
    scores = [dict() for _ in rungs]  # rung -> trial -> score (larger is better)
    reached, ended, found = {}, set(), []
    trusted = int(variant[0]["trusted_trials"])
    for row in reports:
        trial, step, value = int(row["trial"]), float(row["step"]), float(row[large.metric])
        rung = reached.get(trial, -1)
        while rung + 1 < len(rungs) and step >= rungs[rung + 1]:
            rung += 1
        if rung == reached.get(trial, -1):
            continue
        reached[trial] = rung
        scores[rung][trial] = -sign * value if np.isfinite(value) else -math.inf
        if trial >= trusted or trial in ended or rung == len(rungs) - 1:
            continue
        for k in range(rung + 1):
            if trial not in scores[k]:
                continue
            others = [s for o, s in scores[k].items() if o != trial]
            if len(others) < 3 or 2 * sum(s > scores[k][trial] for s in others) <= len(others):
                continue
            j = k + 1 if trial in scores[k + 1] else k
            if j == 0:
                continue  # the verdict waits for the second rung
            peers = [o for o in scores[j] if o != trial and o in scores[j - 1]]
            before = sum(scores[j - 1][o] > scores[j - 1][trial] for o in peers)
            now = sum(scores[j][o] > scores[j][trial] for o in peers)
            gain = scores[j][trial] - scores[j - 1][trial]
            gains = [scores[j][o] - scores[j - 1][o] for o in peers]
            kept_by_gain = 2 * sum(g < gain for g in gains) > len(gains)
            found.append(dict(trial=trial, peers=len(peers), gain=kept_by_gain, overtook=now < before,
                              quarter=before - now >= max(1, len(peers) / 4),
                              good=best[index[trial]] <= good_below))
            if len(peers) >= 3 and not kept_by_gain:
                ended.add(trial)
            break
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", help="a build folder holding src/slurmtune")
    parser.add_argument("--pairs", nargs="+", default=list(tq.PAIRS + tq.LATER_TUNING_PAIRS))
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--method", required=True, help="a transfer_quality.py method with a prior")
    args = parser.parse_args()
    binary = os.path.join(args.build, "src", "slurmtune")
    counts = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as work:
        for pair in args.pairs:
            for seed in range(args.seeds):
                folder = os.path.join(work, f"{pair}-{seed}")
                os.makedirs(folder)
                last = {v["trial"]: v for v in verdicts(binary, pair, args.workers, seed, args.method, folder)
                        if v["peers"] >= 3}
                for v in last.values():
                    c = counts[(pair, "good" if v["good"] else "bad")]
                    c["verdicts"] += 1
                    for waiver in ("gain", "overtook", "quarter"):
                        c[waiver] += v[waiver]
    print(f"{args.method}, {args.workers} workers, seeds 0-{args.seeds - 1}: each trusted trial's last "
          "verdict in a rung's worse half, and the waivers that would have kept its trust\n")
    print("| pair | worth | verdicts | gain | overtook one | overtook a quarter |")
    print("|---|---|---|---|---|---|")
    for (pair, worth), c in sorted(counts.items()):
        print(f"| {pair} | {worth} | {c['verdicts']} | {c['gain']} | {c['overtook']} | {c['quarter']} |")


if __name__ == "__main__":
    main()
