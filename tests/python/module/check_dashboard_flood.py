#!/usr/bin/env python3
"""`slurmtune dashboard` against a neighbour (issue #59, item 5): under the common soft
descriptor limit (ulimit -n 1024), 2,000 idle connections that never send a request are
held against it, and its owner must still be answered, while its log stays throttled
(10 lines per 10 s); requests are logged without their query string (the token) and with
control characters written out; --bind "" and a wildcard address without
--all-interfaces are refused; SIGHUP removes the token file. Every wait is bounded.

    check_dashboard_flood.py SLURMTUNE
"""
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FLOOD = 2000
SOFT_LIMIT = 1024


def expect(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def get(url, timeout=30):
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, time.monotonic() - started


def without_packages_first(workdir):
    """The environment of a cluster user: a python3 without slurmtune's packages (conda,
    pyenv) first on PATH and no SLURMTUNE_PYTHON; the dashboard must use the interpreter
    the build found with them (issue #58)."""
    fake = os.path.join(workdir, "fakebin")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "python3"), "w") as f:
        f.write("#!/bin/sh\necho 'a python3 without the packages' >&2\nexit 3\n")
    os.chmod(os.path.join(fake, "python3"), 0o755)
    env = {k: v for k, v in os.environ.items() if k != "SLURMTUNE_PYTHON"}
    env["PATH"] = fake + os.pathsep + env.get("PATH", "")
    return env


def start(slurmtune, study, workdir, *extra, env=None):
    token_file = os.path.join(workdir, "dashboard.token")
    log = open(os.path.join(workdir, "dashboard.log"), "w+")
    process = subprocess.Popen(
        [slurmtune, "dashboard", study, "--token-file", token_file, *extra], stdout=subprocess.PIPE,
        stderr=log, text=True, env=env or dict(os.environ, SLURMTUNE_PYTHON=sys.executable),
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                              (SOFT_LIMIT, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
    line = process.stdout.readline()  # bounded by the dashboard's own start, or its exit
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    expect(match, f"the dashboard printed {line!r}; its log:\n{open(log.name).read()}")
    with open(token_file) as f:
        token = f.read().strip()
    return process, int(match.group(1)), token, token_file, log


def refusals(slurmtune, study):
    for bind, extra, wanted in (("", [], "--bind needs an address"),
                                ("0.0.0.0", [], "add --all-interfaces if that is meant")):
        out = subprocess.run([slurmtune, "dashboard", study, "--bind", bind, *extra], capture_output=True,
                             text=True, timeout=60, env=dict(os.environ, SLURMTUNE_PYTHON=sys.executable))
        expect(out.returncode != 0 and wanted in out.stderr, f"--bind {bind!r}: {out.returncode} {out.stderr}")


def main():
    slurmtune = os.path.abspath(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FLOOD + 256:
        print(f"SKIPPED: the hard descriptor limit ({hard}) is below the flood's {FLOOD + 256}")
        raise SystemExit(77)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    workdir = tempfile.mkdtemp(prefix="slurmtune-dashboard-flood-")
    study = os.path.join(workdir, "s.h5")
    subprocess.run([slurmtune, "simulate", os.path.join(ROOT, "share", "slurmtune", "examples",
                                                        "asha-promotion.toml"), "-o", study],
                   check=True, capture_output=True, timeout=300)
    refusals(slurmtune, study)
    process, port, token, token_file, log = start(slurmtune, study, workdir,
                                                  env=without_packages_first(workdir))
    base = f"http://127.0.0.1:{port}/"
    try:
        expect(get(base + "data?token=" + token)[0] == 200, "the data did not load before the flood")
        held, started = [], time.monotonic()
        while len(held) < FLOOD and time.monotonic() - started < 120:
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                time.sleep(0.01)
        answers = [get(base + "data?token=" + token) for _ in range(10)]
        flood_s = time.monotonic() - started
        expect(all(code == 200 for code, _ in answers),
               f"the owner was refused during the flood: {answers}")
        # Requests that are logged: a 404 carrying the token and a path with an escape.
        get(base + "favicon.ico?token=" + token)
        get(base + "%1b%5b31mred?token=" + token)
        time.sleep(1)
        for s in held:
            s.close()
        expect(process.poll() is None, "the dashboard died under the flood")
        process.send_signal(signal.SIGHUP)
        process.wait(timeout=60)
        expect(not os.path.exists(token_file), "the token file outlived SIGHUP")
    finally:
        if process.poll() is None:
            process.kill()
    text = open(log.name).read()
    lines = text.count("\n")
    allowed = 10 * (int(flood_s // 10) + 2) + 1
    expect(lines <= allowed, f"{lines} log lines in {flood_s:.1f} s (at most {allowed}):\n{text[-3000:]}")
    expect(token not in text, "the token reached the log:\n" + text)
    expect("\x1b" not in text, "a raw escape character reached the log:\n" + text)
    worst = max(seconds for _, seconds in answers)
    print(f"dashboard flood (with a python3 lacking its packages first on PATH): {len(held)} idle connections held under ulimit -n {SOFT_LIMIT}; the owner "
          f"answered 10 of 10 times (slowest {worst * 1000:.0f} ms); {lines} log line(s) in "
          f"{flood_s:.1f} s; no token and no raw escape in the log; SIGHUP removed the token file")


if __name__ == "__main__":
    main()
