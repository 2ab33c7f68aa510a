#!/usr/bin/env python3
"""PBT with checkpoints on the nodes' own disks against a folder every node mounts
(issue #63, doc/performance/control-plane.md): what the clones' way between nodes costs
the study.

  bench_pbt_node_local.py SLURMTUNE [--population 8] [--epochs 40] [--nodes 4]
                          [--slots-per-node 2] [--sleep 0.2] [--repeat 2]

Runs the numpy MLP example's PBT study (share/slurmtune/examples/numpy-mlp/pbt.toml) as
sbatch jobs of the real template, `launch = "worker"`, each epoch lengthened by --sleep
seconds, once with `[checkpoints] folder` shared and once with `node_local = true`, and
prints for each: the wall time of the job, the exploits, and how often a trial waited
for a slot on the node holding its checkpoint. Needs a Slurm cluster (SLURM_CONF; the
test cluster: tests/slurm/local-cluster.sh start DIR) and Debian's python3 (h5py).
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "run"))
from run_harness import Runner, read  # noqa: E402
from run_pbt import pbt_study  # noqa: E402


def study_text(runner, args, checkpoints):
    text = read(pbt_study(runner, sleep=args.sleep)).replace(
        "[resources]\n", '[resources]\nlaunch = "worker"\n')
    text = re.sub(r"(?m)^max_trials = \d+", "max_trials = %d" % args.population, text)
    text = re.sub(r"(?m)^max_t = \d+", "max_t = %d" % args.epochs, text)
    text = re.sub(r'"--epochs=\d+"', '"--epochs=%d"' % args.epochs, text)
    return text + "\n[checkpoints]\n" + checkpoints


def one_run(args, node_local):
    workdir = tempfile.mkdtemp(prefix="bench-pbt-node-local-")
    try:
        runner = Runner(argparse.Namespace(slurmtune=args.slurmtune, launcher="slurm"), workdir)
        checkpoints = ('folder = "%s/disks/{node}/ckpt"\nnode_local = true\n' % workdir
                       if node_local else 'folder = "%s/shared-ckpt"\n' % workdir)
        study = runner.write("pbt.toml", study_text(runner, args, checkpoints))
        started = time.time()
        rc, log = runner.run(study, os.path.join(workdir, "pbt.h5"), timeout=1200,
                             sbatch_args=["-N", str(args.nodes), "--ntasks-per-node",
                                          str(args.slots_per_node)])
        wall = time.time() - started
        if rc != 0:
            sys.exit("the study failed:\n" + log[-4000:])
        return wall, log.count(" exploits trial "), len(re.findall("waits for a slot on", log))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slurmtune")
    parser.add_argument("--population", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--slots-per-node", type=int, default=2)
    parser.add_argument("--sleep", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    args.slurmtune = os.path.abspath(args.slurmtune)
    print("population %d, %d epochs of %.2f s or more, %d nodes x %d slots"
          % (args.population, args.epochs, args.sleep, args.nodes, args.slots_per_node))
    for _ in range(args.repeat):
        for node_local in (False, True):
            wall, exploits, waits = one_run(args, node_local)
            print("%-10s wall %6.1f s  exploits %3d  waits for a slot on a checkpoint's node %3d"
                  % ("node_local" if node_local else "shared", wall, exploits, waits), flush=True)


if __name__ == "__main__":
    main()
