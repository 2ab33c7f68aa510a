#!/usr/bin/env python3
"""All-reduce bandwidth inside a slurmtune trial against the same all-reduce outside
slurmtune (issue #14; doc/performance.md). Both run the same worker: 2 ranks on this
machine, torch.distributed with NCCL on GPUs (one per rank) or gloo on CPUs, all-reduce
of 1 MiB to 256 MiB float32 buffers, 5 warm-up and 20 timed iterations per size; bus
bandwidth as nccl-tests defines it (2 (n-1)/n x bytes / time).

  allreduce_bandwidth.py SLURMTUNE [--backend nccl|gloo] [--max-mib 256]

  - outside: `mpirun -np 2` with MASTER_ADDR/MASTER_PORT given by hand, ranks from
    OMPI_COMM_WORLD_*;
  - inside: `slurmtune run` (local launcher) of a 1-trial study whose 2-rank trial gets
    its rendezvous (and, with nccl, one GPU per rank through CUDA_VISIBLE_DEVICES) from
    slurmtune and reports each size's bandwidth.
Needs python3-torch; h5py to read the results file back.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

SIZES_MIB = [1, 4, 16, 64, 256]

STUDY = """[study]
name = "allreduce"
metric = "busbw_1"
metrics = [{metrics}]
mode = "max"
max_trials = 1
[search]
x = {{ uniform = [0, 1] }}
[scheduler]
type = "fifo"
max_t = 1
[trial]
command = ["{python}", "{script}", "-", "--worker", "--backend", "{backend}", "--max-mib", "{max_mib}"]
[resources]
ntasks_per_node = 2
gpus_per_task = {gpus}
"""


def measure(backend, max_mib):
    """The worker: returns {size in MiB: bus bandwidth in GB/s}."""
    import torch
    import torch.distributed as dist

    if "RANK" not in os.environ:  # outside slurmtune: mpirun's ranks
        os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
        os.environ["LOCAL_RANK"] = os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]
    dist.init_process_group(backend, init_method="env://")
    world = dist.get_world_size()
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
        torch.cuda.set_device(device)
    result = {}
    for mib in [s for s in SIZES_MIB if s <= max_mib]:
        buffer = torch.ones(mib * 2**20 // 4, dtype=torch.float32, device=device)
        for _ in range(5):
            dist.all_reduce(buffer)
        if backend == "nccl":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(20):
            dist.all_reduce(buffer)
        if backend == "nccl":
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / 20
        result[mib] = 2 * (world - 1) / world * mib * 2**20 / seconds / 1e9
    return result


def worker(args):
    result = measure(args.backend, args.max_mib)
    import torch.distributed as dist
    if os.environ.get("SLURMTUNE_ADDR"):
        from slurmtune.distributed import DistributedClient, TrialStopped
        try:
            DistributedClient.torch().report(step=1, **{"busbw_%d" % m: v for m, v in result.items()})
        except TrialStopped:
            pass
    elif dist.get_rank() == 0:
        print(" ".join("%d:%.6f" % (m, v) for m, v in result.items()), flush=True)
    dist.destroy_process_group()


def outside(args):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT="29411")
    out = subprocess.run(["mpirun", "-np", "2", "-x", "MASTER_ADDR", "-x", "MASTER_PORT", sys.executable,
                          os.path.abspath(__file__), "-", "--worker", "--backend", args.backend,
                          "--max-mib", str(args.max_mib)], env=env, check=True,
                         capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if ":" in l][-1]
    return {int(m): float(v) for m, v in (pair.split(":") for pair in line.split())}


def inside(args):
    import h5py

    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-allreduce-")
    sizes = [s for s in SIZES_MIB if s <= args.max_mib]
    with open(os.path.join(workdir, "study.toml"), "w") as f:
        f.write(STUDY.format(metrics=", ".join('"busbw_%d"' % s for s in sizes), python=sys.executable,
                             script=os.path.abspath(__file__), backend=args.backend,
                             max_mib=args.max_mib, gpus=1 if args.backend == "nccl" else 0))
    subprocess.run([args.slurmtune, "run", "study.toml", "--launcher", "local", "--slots", "2",
                    "--progress-interval", "3600"], cwd=workdir, check=True,
                   stderr=subprocess.DEVNULL)
    with h5py.File(os.path.join(workdir, "study.h5"), "r") as f:
        if len(f["metrics"]) == 0:
            raise SystemExit("the trial reported nothing: %s" % f["trials"][0]["error"].decode())
        row = f["metrics"][0]
        names = list(f["metrics"].dtype.names)
    return {s: float(row[names.index("busbw_%d" % s)]) for s in sizes}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--backend", choices=["nccl", "gloo"], default="nccl")
    parser.add_argument("--max-mib", type=int, default=256)
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    args.slurmtune = os.path.abspath(args.slurmtune)
    bare, trial = outside(args), inside(args)
    print("all-reduce bus bandwidth, 2 ranks, %s (GB/s)" % args.backend)
    print("| size | outside slurmtune (mpirun) | inside a slurmtune trial | inside / outside |")
    print("|---|---|---|---|")
    for mib in bare:
        print("| %d MiB | %.3f | %.3f | %.2f |" % (mib, bare[mib], trial[mib], trial[mib] / bare[mib]))


if __name__ == "__main__":
    main()
