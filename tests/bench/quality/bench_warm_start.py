#!/usr/bin/env python3
"""Does `[sampler] warm_start` help? (issue #28 §5.) On the recorded-curve tables of
tests/bench/data, a short tpe study (ASHA, 4 workers) is simulated over many seeds three
ways: from nothing, warm-started from an earlier study of the same table (another seed:
"last month's run of the same problem"), and warm-started from a study of a related
table (the other digits network: shared lr, alpha, batch_size and solver; its widths are
other parameters, so this study's width is absent in those trials). Printed: best value
and time to the table's target, median [quartiles] over seeds, as `simulate --repeat`
reports them.
    bench_warm_start.py BUILD [SEEDS=40] [TRIALS=20]
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")  # tests/bench/data
PAIRS = {"digits-mlp": "digits-deep", "digits-deep": "digits-mlp"}


def study(table, folder, name, trials, seed, sampler="tpe", warm=None):
    """The table's study file, with another sampler, length, seed and warm start."""
    with open(os.path.join(DATA, table + ".toml")) as f:
        text = f.read()
    text = re.sub(r'^sampler = ".*"$', f'sampler = "{sampler}"', text, flags=re.M)
    text = re.sub(r"^max_trials = \d+$", f"max_trials = {trials}", text, flags=re.M)
    text = re.sub(r"^seed = \d+$", f"seed = {seed}", text, flags=re.M)
    text = text.replace(f'curves = "{table}.csv"', f'curves = "{os.path.join(DATA, table)}.csv"')
    if warm:
        text += "\n[sampler]\nwarm_start = [%s]\n" % ", ".join('"%s"' % w for w in warm)
    path = os.path.join(folder, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def summary(binary, path, seeds):
    out = subprocess.run([binary, "simulate", path, "--repeat", str(seeds), "-q"],
                         capture_output=True, text=True, check=True).stdout
    block = out.split("baseline:")[0]
    best = re.search(r"best \S+\s+(.*)", block).group(1).strip()
    target = re.search(r"time to target\s+(.*)", block)
    return best, target.group(1).strip() if target else "no target"


def best_of(binary, results):
    out = subprocess.run([binary, "best", results, "-f", "toml"], capture_output=True, text=True,
                         check=True).stdout
    return float(re.search(r" = (\S+) at ", out).group(1))


def main():
    build = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    binary = os.path.join(build, "src", "slurmtune")
    with tempfile.TemporaryDirectory(prefix="slurmtune-warm-bench-") as d:
        past = {}
        for source in PAIRS:  # the earlier studies: 60 tpe trials each, seed 1000
            path = study(source, d, "past-" + source, 60, 1000)
            past[source] = os.path.join(d, "past-" + source + ".h5")
            subprocess.run([binary, "simulate", path, "-o", past[source], "-q"], check=True,
                           capture_output=True)
            print(f"(the earlier {source} study's best: {best_of(binary, past[source]):.3f})")
        print(f"\n| table | warm start | best value, median [quartiles] over {seeds} seeds | "
              f"time to target (simulated s) |")
        print("|---|---|---|---|")
        for table, related in PAIRS.items():
            for label, warm in (("none", None), (f"{table} (same table, seed 1000)", [past[table]]),
                                (f"{related} (related table)", [past[related]])):
                path = study(table, d, "now", trials, 0, warm=warm)
                best, target = summary(binary, path, seeds)
                print(f"| {table} | {label} | {best} | {target} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
