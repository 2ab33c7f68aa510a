"""A trial that, before it trains, probes the coordinator the way a buggy or hostile
client would (standard library only).

    hostile_trial.py --x X --steps N [--sleep S] [--probe-trial T]

Trial T's first attempt opens one raw connection per probe (with the study's token, so
each gets past authentication) and sends NaN, ±Infinity, huge, negative and fractional
numbers in every numeric field of HELLO, REPORT and CHECKPOINT, and checkpoint paths out
of its folder; each probe's answer goes to TRIAL_DIR/probes.json (written whole, then
renamed). Every trial then reports loss = (x - 0.3)^2 + 1/step each step through the
real client, so the study's own results can be checked afterwards.
"""
import argparse
import json
import os
import socket
import struct
import time

from slurmtune import client

HELLO, REPORT, CHECKPOINT, ERROR = 1, 3, 6, 8


def frame(kind, text):
    payload = text.encode()
    return struct.pack(">2sBBI", b"ST", 1, kind, len(payload)) + payload


def answers(sock):
    """Every frame the coordinator sends until it closes the connection (5 s at most)."""
    sock.settimeout(5)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    frames = []
    while len(data) >= 8:
        _, _, kind, length = struct.unpack(">2sBBI", data[:8])
        frames.append((kind, json.loads(data[8:8 + length])))
        data = data[8 + length:]
    return frames


def probe(hello, message=None):
    """One connection: HELLO (raw JSON text), then `message` (kind, raw JSON text)."""
    host, port = os.environ["SLURMTUNE_ADDR"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(frame(HELLO, hello))
        if message:
            sock.sendall(frame(*message))
        return [(kind, body.get("error")) for kind, body in answers(sock)]


def run_probes(trial):
    with open(os.environ["SLURMTUNE_TOKEN_FILE"]) as f:
        token = f.read().strip()
    own = '{"token": "%s", "trial": %d, "attempt": 0' % (token, trial)
    cases = {}
    for value in ("NaN", "Infinity", "-Infinity", "1e300", "-1", "0.5", "1e400"):
        cases["HELLO trial " + value] = ("trial", '{"token": "%s", "trial": %s}' % (token, value), None)
        cases["HELLO rank " + value] = ("rank", own + ', "rank": %s}' % value, None)
    for value in ("NaN", "Infinity", "-Infinity", "1e400", "-5", "1e300"):
        cases["REPORT step " + value] = ("step", own + "}", (REPORT, '{"step": %s, "metrics": {}}' % value))
        cases["CHECKPOINT step " + value] = (
            "step", own + "}", (CHECKPOINT, '{"step": %s, "path": "state.json"}' % value))
    for value in ("NaN", "Infinity", "-5", "1e300", "0.5"):
        cases["CHECKPOINT size " + value] = (
            "size", own + "}", (CHECKPOINT, '{"step": 1, "path": "state.json", "size": %s}' % value))
    for path in ("../trial-1/state.json", "/etc/passwd", ".", "pbt-kept/x", "x" * 5000,
                 "ck\u0000../../etc", "ck-\udcff"):
        cases["CHECKPOINT path " + path[:40]] = (
            "path", own + "}", (CHECKPOINT, json.dumps({"step": 1, "path": path})))
    results = {}
    for name, (field, hello, message) in cases.items():
        results[name] = {"field": field, "answers": probe(hello, message)}
    out = os.path.join(client.trial_dir(), "probes.json")
    with open(out + ".tmp", "w") as f:
        json.dump(results, f, indent=1)
    os.replace(out + ".tmp", out)


EXTRA_CONNECTIONS = 12


def open_extra_connections(trial, rank):
    """HELLOs of this trial's `rank` beside its own connection (issue #41, items 1 and 2):
    a second rank 0 would take the reports over, a rank the trial does not have speaks
    for nobody, and a trial's child opening hundreds must not take the coordinator's
    descriptors. Returns the sockets welcomed and what the refused ones were told."""
    with open(os.environ["SLURMTUNE_TOKEN_FILE"]) as f:
        token = f.read().strip()
    host, port = os.environ["SLURMTUNE_ADDR"].rsplit(":", 1)
    held, refusals = [], []
    for _ in range(EXTRA_CONNECTIONS):
        sock = socket.create_connection((host, int(port)), timeout=5)
        sock.sendall(frame(HELLO, '{"token": "%s", "trial": %d, "attempt": %s, "rank": %d}'
                           % (token, trial, os.environ["SLURMTUNE_ATTEMPT"], rank)))
        header = sock.recv(8, socket.MSG_WAITALL)
        _, _, kind, length = struct.unpack(">2sBBI", header)
        body = json.loads(sock.recv(length, socket.MSG_WAITALL))
        if kind == ERROR:
            refusals.append(body.get("error"))
            sock.close()
        else:
            held.append(sock)
    return held, refusals


def outlive(held, out):
    """A process the trial leaves behind holding its connections: it records how long
    after the trial's exit the coordinator closed each (issue #41, item 2: 50 extra
    connections of a completed trial stayed open)."""
    if os.fork() != 0:
        return
    os.setsid()
    parent_gone = time.time()
    closed_after = []
    for sock in held:
        sock.settimeout(15)
        try:
            while sock.recv(65536):
                pass
            closed_after.append(time.time() - parent_gone)
        except OSError:
            closed_after.append(None)
    with open(out + ".tmp", "w") as f:
        json.dump({"closed_after": closed_after}, f)
    os.replace(out + ".tmp", out)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--x", type=float, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--probe-trial", type=int, default=-1)
    args = parser.parse_args()
    trial = client.trial_id()
    probing = trial == args.probe_trial and os.environ.get("SLURMTUNE_ATTEMPT", "0") == "0"
    if probing:
        run_probes(trial)
        client.connect()  # its own connection, then HELLOs that must not join it
        extra = {}
        for rank in (0, 1):
            welcomed, refusals = open_extra_connections(trial, rank)
            extra["rank %d" % rank] = {"welcomed": len(welcomed), "refusals": refusals}
        with open(os.path.join(client.trial_dir(), "extra.json"), "w") as f:
            json.dump(extra, f)
        # A copy of its own connection that outlives the trial (the client may close its
        # own when it is told to stop).
        kept = socket.socket(fileno=os.dup(client.connect()._sock.fileno()))
    try:
        for step in range(1, args.steps + 1):
            time.sleep(args.sleep)
            client.report(step=step, loss=(args.x - 0.3) ** 2 + 1.0 / step)
        client.finish()
    except client.TrialStopped:
        pass
    if probing:
        outlive([kept], os.path.join(client.trial_dir(), "leftover.json"))


if __name__ == "__main__":
    main()
