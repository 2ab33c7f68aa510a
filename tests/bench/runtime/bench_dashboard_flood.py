#!/usr/bin/env python3
"""How `slurmtune dashboard` answers its owner while idle connections are held against
it (issue #59, item 5; doc/performance/results-file.md#the-dashboard-under-an-idle-connection-flood-issue-59).

    bench_dashboard_flood.py SLURMTUNE [--connections 2000 8000] [--requests 200]

For each flood size: the dashboard runs under ulimit -n 1024 (the common soft limit),
that many connections are opened and held without a request, and the owner then asks
for /data REQUESTS times; prints the owner's latency (median, 99th percentile, worst),
the connections the dashboard closed to make room (all held ones still open are
counted), its log lines and its CPU time.
"""
import argparse
import os
import resource
import signal
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "module"))
import check_dashboard_flood as flood  # noqa: E402


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(slurmtune, study, workdir, connections, requests):
    process, port, token, _, log = flood.start(slurmtune, study, workdir)
    base = f"http://127.0.0.1:{port}/data?token={token}"
    try:
        flood.get(base)
        cpu_before = cpu_seconds(process.pid)
        held, started = [], time.monotonic()
        while len(held) < connections and time.monotonic() - started < 300:
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                time.sleep(0.01)
        opened_s = time.monotonic() - started
        latencies = []
        for _ in range(requests):
            code, seconds = flood.get(base)
            if code == 200:
                latencies.append(seconds)
        cpu = cpu_seconds(process.pid) - cpu_before
        still_open = 0
        for s in held:
            s.setblocking(False)
            try:
                still_open += s.recv(1) != b""
            except BlockingIOError:
                still_open += 1
            except OSError:
                pass
            s.close()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    lines = open(log.name).read().count("\n")
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else float("nan")
    print(f"| {connections:,} | {opened_s:.1f} s | {len(latencies)}/{requests} | "
          f"{statistics.median(latencies) * 1000:.1f} ms | {p99 * 1000:.1f} ms | "
          f"{latencies[-1] * 1000:.1f} ms | {still_open} | {lines} | {cpu:.2f} s |", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--connections", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    import subprocess
    import tempfile
    workdir = tempfile.mkdtemp(prefix="slurmtune-bench-dashboard-")
    study = os.path.join(workdir, "s.h5")
    subprocess.run([args.slurmtune, "simulate", os.path.join(ROOT, "share", "slurmtune", "examples",
                                                             "asha-promotion.toml"), "-o", study],
                   check=True, capture_output=True, timeout=300)
    print("| idle connections | to open them | owner answered | median | p99 | worst | "
          "held ones still open | log lines | dashboard CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.connections:
        run(os.path.abspath(args.slurmtune), study, workdir, n, args.requests)


if __name__ == "__main__":
    main()
