#!/usr/bin/env python3
"""Both trial clients (Python's slurmtune.client and the C++ client behind
`slurmtune report`) against a coordinator that closes connections before it answers
HELLO, as a coordinator flooded with unauthenticated connections does to the oldest
waiting ones (doc/protocol.md#limits):

1. the first 3 connections are closed (one before HELLO is read, two after): the client
   connects again and its report goes through on the 4th;
2. every connection is closed: the client gives up after 7, saying it lost the
   coordinator;
3. HELLO is refused with ERROR: the client gives up at once, with the coordinator's
   reason, after 1 connection;
4. HELLO is answered with BUSY 9 times (more than the 7 tries a closed connection gets):
   the client says why, waits what BUSY asks each time, and its report goes through on
   the 10th connection (issue #61: a wait for room is not a try, and it ends);
5. with SLURMTUNE_AGENTS (a rank of a step on worker launch), the client reaches the
   agent its node published there (a unix socket, by the node's name in hex) and not
   SLURMTUNE_ADDR; an agent whose socket is gone, or a file that names anything but a
   unix socket, sends it to SLURMTUNE_ADDR.

    check_client_reconnect.py SLURMTUNE
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "share", "slurmtune", "python")
HEADER = struct.Struct(">2sBBI")
HELLO, WELCOME, REPORT, DECISION, ERROR, BUSY = 1, 2, 3, 4, 8, 21
TOKEN = "5e" * 32  # 64 hex digits, as the coordinator writes it


def read_frame(sock):
    data = b""
    while len(data) < HEADER.size:
        chunk = sock.recv(HEADER.size - len(data))
        if not chunk:
            return None, None
        data += chunk
    _, _, kind, length = HEADER.unpack(data)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None, None
        body += chunk
    return kind, json.loads(body)


def send_frame(sock, kind, body):
    payload = json.dumps(body).encode()
    sock.sendall(HEADER.pack(b"ST", 1, kind, len(payload)) + payload)


class FakeCoordinator:
    """Closes the first `drop` connections (`drop` may be None: all of them), answers the
    first `busy` HELLOs with BUSY, or refuses HELLO (`refuse`); then welcomes trial 3 and
    answers each REPORT with continue."""

    def __init__(self, trial_dir, drop=0, refuse=False, busy=0, unix_path=None):
        self.trial_dir, self.drop, self.refuse, self.busy = trial_dir, drop, refuse, busy
        self.connections, self.reports = 0, []
        if unix_path:  # a node agent's socket
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(unix_path)
            self.listener.listen()
            self.address = "unix:" + unix_path
        else:
            self.listener = socket.create_server(("127.0.0.1", 0))
            self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.listener.settimeout(30)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            while True:
                conn, _ = self.listener.accept()
                self.connections += 1
                with conn:
                    conn.settimeout(30)
                    self.answer(conn)
        except (socket.timeout, OSError):
            pass

    def answer(self, conn):
        if self.drop is None or self.connections <= self.drop:
            if self.connections % 2 == 0:
                read_frame(conn)  # closed after HELLO was read, or before
            return
        kind, hello = read_frame(conn)
        assert kind == HELLO and hello["token"] == TOKEN and hello["trial"] == 3, hello
        if self.refuse:
            send_frame(conn, ERROR, {"error": "HELLO: unknown trial 3"})
            return
        if self.connections <= self.busy:
            send_frame(conn, BUSY, {"why": "512 connections are open already", "retry_after_s": 0.2})
            return
        send_frame(conn, WELCOME, {"trial": 3, "attempt": 0, "params": {"x": 0.5},
                                   "trial_dir": self.trial_dir, "checkpoint": None,
                                   "checkpoint_step": None, "metric": "loss"})
        while True:
            kind, body = read_frame(conn)
            if kind is None:
                return
            if kind == REPORT:
                self.reports.append(body)
                send_frame(conn, DECISION, {"decision": "continue"})

    def close(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread's accept()
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=30)


def clients(slurmtune):
    python = [sys.executable, "-c", "from slurmtune import client; client.report(1, loss=0.25)"]
    native = [slurmtune, "report", "--step", "1", "loss=0.25"]
    return {"python": python, "c++": native}


def run_client(argv, address, token_file, trial_dir, agents=None):
    env = dict(os.environ, SLURMTUNE_ADDR=address, SLURMTUNE_TOKEN_FILE=token_file,
               SLURMTUNE_TRIAL_ID="3", SLURMTUNE_ATTEMPT="0", SLURMTUNE_TRIAL_DIR=trial_dir, SLURMTUNE_PARAMS='{"x": 0.5}',
               PYTHONPATH=PACKAGE)
    for name in ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURMTUNE_AGENTS"):
        env.pop(name, None)
    if agents:
        env.update(SLURMTUNE_AGENTS=agents, SLURMD_NODENAME="node-7.a")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def check_agent_address(name, argv, token_file, work):
    """Case 5: the node's published agent first; SLURMTUNE_ADDR when it is gone or not
    a unix socket."""
    agents = os.path.join(work, "agents")
    os.makedirs(agents, exist_ok=True)
    published = os.path.join(agents, "agent-" + "node-7.a".encode().hex())
    socket_path = os.path.join(work, "agent.sock")
    for case in ("agent", "gone", "not local"):
        if os.path.exists(socket_path):
            os.unlink(socket_path)
        agent = FakeCoordinator(work, unix_path=socket_path) if case == "agent" else None
        coordinator = FakeCoordinator(work)
        with open(published, "w") as f:
            # "not local": a TCP address that answers nothing; the client must not use it.
            f.write((agent.address if agent else
                     "unix:" + socket_path if case == "gone" else "127.0.0.1:1") + "\n")
        out = run_client(argv, "127.0.0.1:1" if agent else coordinator.address, token_file, work,
                         agents=agents)
        coordinator.close()
        if agent:
            agent.close()
        assert out.returncode == 0, "%s, %s: %s" % (name, case, out.stderr)
        reached = agent if agent else coordinator
        assert reached.connections == 1 and len(reached.reports) == 1, (name, case)
        if agent:
            assert coordinator.connections == 0, (name, case, coordinator.connections)


def main():
    slurmtune = sys.argv[1]
    work = tempfile.mkdtemp(prefix="slurmtune-reconnect-")
    token_file = os.path.join(work, "token")
    with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(TOKEN)
    summary = []
    for name, argv in clients(slurmtune).items():
        coordinator = FakeCoordinator(work, drop=3)
        out = run_client(argv, coordinator.address, token_file, work)
        coordinator.close()
        assert out.returncode == 0, "%s: %s" % (name, out.stderr)
        assert coordinator.connections == 4 and len(coordinator.reports) == 1, \
            (name, coordinator.connections, coordinator.reports)
        assert coordinator.reports[0]["metrics"] == {"loss": 0.25}, coordinator.reports

        coordinator = FakeCoordinator(work, drop=None)
        out = run_client(argv, coordinator.address, token_file, work)
        coordinator.close()
        assert out.returncode != 0 and "lost the coordinator" in out.stderr, (name, out.stderr)
        assert coordinator.connections == 7, (name, coordinator.connections)

        coordinator = FakeCoordinator(work, refuse=True)
        out = run_client(argv, coordinator.address, token_file, work)
        coordinator.close()
        assert out.returncode != 0 and "unknown trial 3" in out.stderr, (name, out.stderr)
        assert coordinator.connections == 1, (name, coordinator.connections)

        coordinator = FakeCoordinator(work, busy=9)
        out = run_client(argv, coordinator.address, token_file, work)
        coordinator.close()
        assert out.returncode == 0, "%s: %s" % (name, out.stderr)
        assert coordinator.connections == 10 and len(coordinator.reports) == 1, \
            (name, coordinator.connections, coordinator.reports)
        told = out.stderr.count("the coordinator has no room now (512 connections are open "
                                "already); connecting again in")
        assert told == 9, (name, told, out.stderr)
        check_agent_address(name, argv, token_file, work)
        summary.append(name)
    shutil.rmtree(work, ignore_errors=True)
    print("client reconnect: %s each reported through a 4th connection after 3 were closed, "
          "gave up after 7 closed ones and after 1 refused HELLO, and reported after 9 BUSY "
          "replies, waiting as each asked; each reached its node's published agent, and "
          "SLURMTUNE_ADDR when the agent was gone or not a unix socket" % " and ".join(summary))


if __name__ == "__main__":
    main()
