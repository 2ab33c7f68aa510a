"""Wraps a trial's command, or a trial group's program, and first tries, from its rank 0,
every identity its own credential does not cover (issue #41, item 1): another trial,
another attempt of its own trial, a trial group's MPI step, the worker of a node and the
worker of a joined job. Each probe's answers go to OUTDIR/impostor-<holder>.json (written
whole, then renamed); then the command runs in its place (exec: same process, same
environment), so the study goes on as without the wrapper. Standard library only.

    impostor.py OUTDIR COMMAND [ARG...]
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import sys

HELLO, ERROR, CHALLENGE, PROOF = 1, 8, 16, 17


def frame(kind, body):
    payload = json.dumps(body).encode()
    return struct.pack(">2sBBI", b"ST", 1, kind, len(payload)) + payload


def read_frame(sock):
    header = b""
    while len(header) < 8:
        chunk = sock.recv(8 - len(header))
        if not chunk:
            return None
        header += chunk
    _, _, kind, length = struct.unpack(">2sBBI", header)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return kind, json.loads(body)


def agent_address():
    """The node agent that carries this rank of a trial started as its own step on worker
    launch: what it published in SLURMTUNE_AGENTS under the node's name, if anything."""
    folder, node = os.environ.get("SLURMTUNE_AGENTS"), os.environ.get("SLURMD_NODENAME", "")
    try:
        with open(os.path.join(folder, "agent-" + node.encode().hex())) as f:
            return f.readline().strip()
    except (OSError, TypeError):
        return None


def connect():
    """SLURMTUNE_ADDR: the coordinator (HOST:PORT), or the node agent (unix:PATH) that
    carries a worker's trials; for a step's rank, its node's agent when published."""
    address = agent_address() or os.environ["SLURMTUNE_ADDR"]
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(address[len("unix:"):])
        return sock
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.settimeout(10)
    return sock


def answer(reply):
    if reply is None:
        return {"kind": "closed"}
    kind, body = reply
    return {"kind": {ERROR: "ERROR", CHALLENGE: "CHALLENGE"}.get(kind, str(kind)),
            "error": body.get("error")}


def claim_with_token(credential, identity):
    """HELLO claiming `identity` with `credential` as its token: the first answer."""
    with connect() as sock:
        sock.sendall(frame(HELLO, dict(identity, token=credential)))
        return answer(read_frame(sock))


def claim_with_proof(credential, identity):
    """Mutual authentication claiming `identity`, proving `credential`: whether the
    coordinator's proof was of `credential` (it must not be), and its last answer."""
    nonce = os.urandom(32).hex()
    key = credential.encode()
    with connect() as sock:
        sock.sendall(frame(HELLO, dict(identity, challenge=nonce)))
        reply = read_frame(sock)
        if reply is None or reply[0] != CHALLENGE:
            return answer(reply)
        server_nonce = reply[1]["nonce"]
        theirs = hmac.new(key, ("slurmtune coordinator\n%s\n%s" % (nonce, server_nonce)).encode(),
                          hashlib.sha256).hexdigest()
        ours = hmac.new(key, ("slurmtune worker\n%s\n%s" % (server_nonce, nonce)).encode(),
                        hashlib.sha256).hexdigest()
        sock.sendall(frame(PROOF, {"proof": ours}))
        result = answer(read_frame(sock))
        result["coordinator_proved_our_credential"] = hmac.compare_digest(theirs, reply[1]["proof"])
        return result


def rank():
    for name in ("SLURMTUNE_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if os.environ.get(name):
            return int(os.environ[name])
    return 0


def probes():
    """(holder, {probe: answer}) for this process's credential."""
    with open(os.environ["SLURMTUNE_TOKEN_FILE"]) as f:
        credential = f.read().strip()
    worker = {"worker": os.environ.get("SLURMD_NODENAME", "n1")}
    joined = {"worker": worker["worker"], "allocation": "1", "cpus": 1, "gpus": 0}
    results = {}
    if os.environ.get("SLURMTUNE_TRIAL_ID"):
        trial, attempt = int(os.environ["SLURMTUNE_TRIAL_ID"]), int(os.environ["SLURMTUNE_ATTEMPT"])
        holder = "trial-%d.%d" % (trial, attempt)
        results["another trial"] = claim_with_token(
            credential, {"trial": trial + 1, "attempt": attempt, "rank": 0})
        results["another attempt"] = claim_with_token(
            credential, {"trial": trial, "attempt": attempt + 1, "rank": 0})
        results["another trial, proving"] = claim_with_proof(
            credential, {"trial": trial + 1, "attempt": attempt, "rank": 0})
        results["a group step"] = claim_with_token(credential, {"group": 0, "ranks": 1, "step": 1})
    else:
        step = int(os.environ["SLURMTUNE_STEP"])
        holder = "step-%d" % step
        results["another step"] = claim_with_token(credential, {"group": 0, "ranks": 1, "step": step + 1})
        results["a trial"] = claim_with_token(credential, {"trial": 0, "attempt": 0, "rank": 0})
    results["a worker"] = claim_with_proof(credential, worker)
    results["a joined worker"] = claim_with_proof(credential, joined)
    return holder, results


def main():
    out_dir, command = sys.argv[1], sys.argv[2:]
    if rank() == 0:
        holder, results = probes()
        out = os.path.join(out_dir, "impostor-%s.json" % holder)
        with open(out + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(out + ".tmp", out)
    sys.stdout.flush()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
