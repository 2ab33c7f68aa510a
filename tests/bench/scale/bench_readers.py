#!/usr/bin/python3
"""What the readers of a large results file cost (issue #63): time and peak memory of
`slurmtune status`, `best`, `export --table trials`, the Python module's
`Study(path).best_trial` and (with --html) `slurmtune html`, on a file of TRIALS x STEPS reports that `slurmtune simulate -o`
writes (fifo: every trial reports every step), for this build and, with --old, for an
earlier build of slurmtune (its own binary and Python module, on a file it writes itself:
the schema it writes, and the reading path it takes).

    /usr/bin/python3 tests/bench/scale/bench_readers.py build/src/slurmtune \\
        [--old OLD_BUILD/src/slurmtune --old-python OLD_SRC/share/slurmtune/python] \\
        [--trials 100000] [--steps 1000] [--work /tmp/slurmtune-bench-readers] [--html]

Each command runs twice (html once) and the second run is reported (the file in the page cache, as
a reader that runs every few seconds finds it); memory is the peak resident size
(/usr/bin/time's maximum RSS).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NEW_PYTHON = os.path.join(HERE, "..", "..", "..", "share", "slurmtune", "python")

STUDY = """[study]
name = "readers"
metric = "val_loss"
mode = "min"
seed = 3
max_trials = {trials}
[search]
lr = {{ loguniform = [1e-4, 1e-1] }}
hidden = {{ randint = [16, 256] }}
[scheduler]
type = "fifo"
resource = "epoch"
max_t = {steps}
[simulate]
objective = "bowl"
step_time_s = 1.0
noise = 0.01
"""

BEST_TRIAL = "import sys; sys.path.insert(0, sys.argv[1]); from slurmtune.study import Study; " \
             "s = Study(sys.argv[2]); print(int(s.best_trial['id']))"


def measured(argv, env=None, runs=2):
    """(seconds, peak MB, stdout) of the last of `runs` runs."""
    for _ in range(runs):
        started = time.monotonic()
        out = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True,
                             env=env, check=True)
        seconds = time.monotonic() - started
    return seconds, int(out.stderr.strip().splitlines()[-1]) / 1024, out.stdout


def write_file(slurmtune, toml, path):
    if os.path.exists(path):
        return
    started = time.monotonic()
    subprocess.run([slurmtune, "simulate", toml, "-w", "2000", "-q", "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"{path}: simulated in {time.monotonic() - started:.0f} s, "
          f"{os.path.getsize(path) / 1e9:.2f} GB", flush=True)


def bench(label, slurmtune, python_dir, path, html):
    rows = []
    commands = [("status", [slurmtune, "status", path]),
                ("best", [slurmtune, "best", path, "--format", "json"]),
                ("export --table trials", [slurmtune, "export", path, "-o", os.devnull]),
                ("Study(path).best_trial", ["/usr/bin/python3", "-c", BEST_TRIAL, python_dir, path])]
    if html:  # its own interpreter and module, next to the binary; peak of the whole tree
        commands.append(("html", [slurmtune, "html", path, "-o", path + ".html"]))
    for name, argv in commands:
        seconds, mb, _ = measured(argv, runs=1 if name == "html" else 2)
        rows.append((name, seconds, mb))
        print(f"  {label:6} {name:24} {seconds:8.2f} s {mb:8.0f} MB", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--old", help="an earlier build's slurmtune binary")
    parser.add_argument("--old-python", help="that build's share/slurmtune/python")
    parser.add_argument("--trials", type=int, default=100000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--work", default="/tmp/slurmtune-bench-readers")
    parser.add_argument("--html", action="store_true", help="also time `slurmtune html`")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    toml = os.path.join(args.work, "readers.toml")
    with open(toml, "w") as f:
        f.write(STUDY.format(trials=args.trials, steps=args.steps))
    reports = args.trials * args.steps
    builds = [("new", args.slurmtune, NEW_PYTHON)]
    if args.old:
        builds.insert(0, ("old", args.old, args.old_python or NEW_PYTHON))
    print(f"{args.trials} trials x {args.steps} steps = {reports:.3g} reports; "
          f"ulimit -n {os.sysconf('SC_OPEN_MAX')}; {os.cpu_count()} cores", flush=True)
    for label, slurmtune, python_dir in builds:
        path = os.path.join(args.work, f"readers-{label}-{reports}.h5")
        write_file(slurmtune, toml, path)
        bench(label, slurmtune, python_dir, path, args.html)


if __name__ == "__main__":
    sys.exit(main())
