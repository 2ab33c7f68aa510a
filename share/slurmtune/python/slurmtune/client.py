"""Report client for trials run by ``slurmtune run`` (standard library only).

A trial script reports after every step and learns whether to go on::

    from slurmtune import client

    lr = client.params()["lr"]
    start = client.load_checkpoint_step()          # your own resume logic
    for epoch in range(1, 101):
        loss = train_one_epoch(lr)
        if client.should_checkpoint():             # (after the previous report)
            ...
        client.report(step=epoch, val_loss=loss)   # raises TrialStopped on stop/pause

``TrialStopped`` derives from ``SystemExit`` with status 0: left uncaught, the script
ends cleanly, which is what the study asked for. Catch it to save a checkpoint first
(``e.checkpoint`` says whether the trial may be resumed and needs one).

SIGTERM (``scancel``, preemption) would end the script at once and lose the work since
its last checkpoint. Once connected, the client notes the first SIGTERM instead (only if
the script left SIGTERM's default action) and the next ``report`` raises
``TrialTerminated``, a ``TrialStopped`` with ``checkpoint=True`` and exit status 143:
save the checkpoint and let it propagate; the attempt counts as interrupted and resumes
from that checkpoint. A second SIGTERM terminates as usual.

Everything comes from the environment ``slurmtune run`` sets (SLURMTUNE_ADDR,
SLURMTUNE_TOKEN_FILE, SLURMTUNE_TRIAL_ID, SLURMTUNE_ATTEMPT, SLURMTUNE_TRIAL_DIR, SLURMTUNE_PARAMS,
SLURMTUNE_CHECKPOINT, SLURMTUNE_CHECKPOINT_STEP). Only trial rank 0 reports; other ranks call ``ask()``.
The wire format is doc/protocol.md.
"""

import json
import math
import os
import random
import signal
import socket
import stat
import struct
import sys
import time

__all__ = [
    "ClientError", "CoordinatorLost", "TrialStopped", "TrialTerminated", "Client", "connect", "report", "ask",
    "params", "trial_id", "trial_dir", "checkpoint_dir", "resume_checkpoint", "resume_step", "heartbeat",
    "should_checkpoint", "checkpoint_saved", "finish",
]

_MAGIC = b"ST"
_VERSION = 1
_HELLO, _WELCOME, _REPORT, _DECISION, _ASK, _CHECKPOINT, _BYE, _ERROR = range(1, 9)
_NEXT, _ASSIGN, _TRIAL_END, _HEARTBEAT = range(9, 13)
_BUSY = 21
_HEADER = struct.Struct(">2sBBI")
_MAX_PAYLOAD = 64 * 1024
# HELLO's tries when the connection is refused or lost before any reply, with pauses of
# 0.1, 0.2, ..., 3.2 s between them (as the C++ client): 6.3 s in all, the bound on how
# long a trial waits for a coordinator that is gone.
_HELLO_ATTEMPTS = 7
_FIRST_HELLO_PAUSE = 0.1
# BUSY (no room at the coordinator now) is not a try: the client waits what the reply
# says, plus up to half of it again so a herd spreads out, for at most this long in all.
_BUSY_BUDGET_S = 900.0


class ClientError(RuntimeError):
    """The coordinator refused a message, or the environment is not a trial's."""


class CoordinatorLost(ClientError):
    """The coordinator went away; exit, a resumed study restarts this trial."""


class TrialStopped(SystemExit):
    """The study said stop (or pause): end the trial. Exits with status 0 if uncaught."""

    def __init__(self, decision, step, checkpoint):
        super().__init__(0)
        self.decision = decision      # "stop" or "pause"
        self.step = step
        self.checkpoint = checkpoint  # True: save a checkpoint, the trial may resume

    def __str__(self):
        return "trial told to %s at step %s" % (self.decision, self.step)


class TrialTerminated(TrialStopped):
    """SIGTERM arrived: save a checkpoint and exit. Exits with status 143 if uncaught."""

    def __init__(self, step):
        super().__init__("pause", step, True)
        self.code = 128 + signal.SIGTERM

    def __str__(self):
        return "trial interrupted by SIGTERM at step %s" % self.step


def _env(name):
    value = os.environ.get(name)
    if not value:
        raise ClientError("%s is not set: this program must be started by 'slurmtune run'" % name)
    return value


def _read_token(path):
    info = os.stat(path)
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ClientError("%s: token file must be readable by its owner only (chmod 600 %s)"
                          % (path, path))
    if info.st_uid != os.getuid():
        raise ClientError("%s: token file belongs to another user" % path)
    with open(path) as f:
        return f.read().strip()


def _node_name():
    """This node as Slurm names it (SLURMD_NODENAME in every task of a step), else the
    host's name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def agent_address(folder, node):
    """The address the agent of ``node`` published in ``folder`` (``agent-`` and the
    name in hex digits): ``unix:PATH``, or None when there is none. Only a local socket,
    so the file cannot send a trial's credential anywhere else."""
    try:
        with open(os.path.join(folder, "agent-" + node.encode().hex())) as f:
            address = f.readline().rstrip("\n")
    except OSError:
        return None
    return address if address.startswith("unix:") and len(address) > 5 else None


def _rank():
    for name in ("SLURMTUNE_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                 "SLURM_PROCID"):
        if os.environ.get(name):
            return int(os.environ[name])
    return 0


class _NoRoom(Exception):
    """The coordinator's BUSY: how long to wait, and why."""

    def __init__(self, body):
        super().__init__(body.get("why", ""))
        retry = body.get("retry_after_s")
        if not isinstance(retry, (int, float)) or not 0.1 <= retry <= 600:
            raise ClientError("the coordinator sent a malformed BUSY: %r" % (body,))
        self.why, self.retry_after_s = str(body.get("why", "")), float(retry)


class Connection:
    """One authenticated connection to the coordinator, opened by a HELLO that carries
    ``identity`` (a trial's id and rank, or a trial group's description); ``welcome`` is
    the coordinator's answer."""

    def __init__(self, identity):
        address = _env("SLURMTUNE_ADDR")
        token = _read_token(_env("SLURMTUNE_TOKEN_FILE"))
        slurm_step = None
        if os.environ.get("SLURM_JOB_ID") and os.environ.get("SLURM_STEP_ID"):
            slurm_step = "%s.%s" % (os.environ["SLURM_JOB_ID"], os.environ["SLURM_STEP_ID"])
        hello = hello_payload(identity, token, slurm_step)
        # A connection refused or closed before any reply is tried again: a coordinator
        # flooded with connections that never authenticate closes the oldest waiting ones,
        # which may be this one (doc/protocol.md#limits). An ERROR reply is final; BUSY
        # says when to come back, and is obeyed within _BUSY_BUDGET_S.
        pause, attempt, busy_waited = _FIRST_HELLO_PAUSE, 0, 0.0
        while True:
            try:
                self._connect_to_coordinator(address)
                self.welcome = self.exchange(_HELLO, hello, _WELCOME)
                return
            except CoordinatorLost:
                self._close_socket()
                attempt += 1
                if attempt == _HELLO_ATTEMPTS:
                    raise
                wait = pause
                pause *= 2
            except _NoRoom as busy:
                self._close_socket()
                wait = busy.retry_after_s * (1 + random.uniform(0, 0.5))
                if busy_waited + wait > _BUSY_BUDGET_S:
                    raise CoordinatorLost("the coordinator had no room for %.0f s: %s"
                                          % (busy_waited, busy.why)) from None
                busy_waited += wait
                print("slurmtune: the coordinator has no room now (%s); connecting again in "
                      "%.1f s" % (busy.why, wait), file=sys.stderr, flush=True)
            time.sleep(wait)

    def _connect_to_coordinator(self, direct):
        """Through this node's agent when the study's agents publish their addresses
        (SLURMTUNE_AGENTS, set for the ranks of a trial started as its own step on worker
        launch) and this node's has, else to SLURMTUNE_ADDR. An agent that does not answer
        is gone with its node's worker step: the coordinator itself is asked then."""
        folder = os.environ.get("SLURMTUNE_AGENTS")
        agent = agent_address(folder, _node_name()) if folder else None
        if agent:
            try:
                self._connect(agent)
                return
            except CoordinatorLost:
                pass
        self._connect(direct)

    def _close_socket(self):
        if self._sock:
            self._sock.close()
            self._sock = None

    def _connect(self, address):
        """Connects to SLURMTUNE_ADDR: HOST:PORT, or unix:PATH (the node's agent)."""
        self._sock, self._buffer = None, b""
        try:
            if address.startswith("unix:"):
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.connect(address[len("unix:"):])
                return
            host, _, port = address.rpartition(":")
            self._sock = socket.create_connection((host, int(port)))
        except (OSError, ValueError) as e:
            self._close_socket()
            raise CoordinatorLost("cannot connect to the coordinator at %s: %s"
                                  % (address, e)) from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, kind, body):
        payload = json.dumps(body).encode()
        if len(payload) > _MAX_PAYLOAD:
            raise ClientError("message of %d bytes exceeds the protocol's 64 KiB" % len(payload))
        try:
            self._sock.sendall(_HEADER.pack(_MAGIC, _VERSION, kind, len(payload)) + payload)
        except OSError as e:
            raise CoordinatorLost("lost the coordinator: %s" % e) from None

    def receive(self):
        while True:
            if len(self._buffer) >= _HEADER.size:
                magic, version, kind, length = _HEADER.unpack_from(self._buffer)
                if magic != _MAGIC or version != _VERSION or length > _MAX_PAYLOAD:
                    raise ClientError("malformed frame from the coordinator")
                end = _HEADER.size + length
                if len(self._buffer) >= end:
                    body = json.loads(self._buffer[_HEADER.size:end])
                    self._buffer = self._buffer[end:]
                    return kind, body
            try:
                chunk = self._sock.recv(65536)
            except OSError as e:
                raise CoordinatorLost("lost the coordinator: %s" % e) from None
            if not chunk:
                raise CoordinatorLost("lost the coordinator (connection closed)")
            self._buffer += chunk

    def exchange(self, kind, body, expected):
        self.send(kind, body)
        reply_kind, reply = self.receive()
        if reply_kind == _ERROR:
            raise ClientError("the coordinator refused: %s" % reply.get("error"))
        if reply_kind == _BUSY:
            raise _NoRoom(reply)
        if reply_kind != expected:
            raise ClientError("expected message %d, got %d" % (expected, reply_kind))
        return reply

    def index_checkpoint(self, step, path):
        """Sends CHECKPOINT: ``path`` (inside the trial's folder) was written at ``step``."""
        size = os.path.getsize(path) if os.path.exists(path) else 0
        self.send(_CHECKPOINT, checkpoint_payload(step, os.path.abspath(path), size))

    def local_address(self):
        """This end's IP address: one the coordinator's network reaches this node at."""
        return self._sock.getsockname()[0]

    def close(self):
        self._sock.close()


def hello_payload(identity, token, slurm_step=None):
    """A HELLO's payload: ``identity`` (a trial's id and rank, or a trial group's
    description), the token, and the job step it runs in, if any
    (tests/protocol/vectors.json)."""
    hello = dict(identity, token=token)
    if slurm_step:
        hello["slurm_step"] = slurm_step
    return hello


def _whole(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value) and value == int(value) and 0 <= value <= 2 ** 53


def parse_assignment(body, message="WELCOME"):
    """(trial, attempt, params, trial_dir, checkpoint, checkpoint_step) of a WELCOME or an
    ASSIGN, or None for ASSIGN's ``{"done": true}``; ClientError naming the field when
    one is malformed, as the C++ client refuses it (tests/protocol/vectors.json)."""
    if body.get("done") is True:
        return None

    def malformed(name, rule):
        raise ClientError("the coordinator sent a malformed %s: '%s' %s" % (message, name, rule))

    for name in ("trial", "attempt"):
        if not _whole(body.get(name)):
            malformed(name, "must be a whole number from 0 to 2^53")
    params = body.get("params")
    if not isinstance(params, dict):
        malformed("params", "must be an object")
    trial_dir = body.get("trial_dir")
    if not isinstance(trial_dir, str) or not trial_dir:
        malformed("trial_dir", "must be a non-empty string")
    checkpoint = body.get("checkpoint")
    if checkpoint is not None and not isinstance(checkpoint, str):
        malformed("checkpoint", "must be a string or null")
    step = body.get("checkpoint_step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or
                             not math.isfinite(step)):
        malformed("checkpoint_step", "must be a finite number or null")
    if not isinstance(body.get("checkpoint_dir", ""), str):
        malformed("checkpoint_dir", "must be a string")
    return int(body["trial"]), int(body["attempt"]), params, trial_dir, checkpoint or None, step


def assigned_checkpoint_dir(body):
    """Where the trial of a WELCOME or ASSIGN (parse_assignment checked it) keeps its
    checkpoints: its ``checkpoint_dir`` ([checkpoints] folder), else its ``trial_dir``."""
    return body.get("checkpoint_dir") or body["trial_dir"]


def parse_decision(reply):
    """(decision, checkpoint) of a DECISION: "continue", "stop" or "pause", and whether to
    save a checkpoint first (tests/protocol/vectors.json)."""
    decision = reply.get("decision")
    if decision not in ("continue", "stop", "pause"):
        raise ClientError("the coordinator sent a malformed DECISION: %r" % (decision,))
    checkpoint = reply.get("checkpoint", False)
    if not isinstance(checkpoint, bool):
        raise ClientError("the coordinator sent a malformed DECISION: 'checkpoint' is %r, "
                          "not true or false" % (checkpoint,))
    return decision, checkpoint


def checkpoint_payload(step, path, size):
    """A CHECKPOINT's payload (tests/protocol/vectors.json)."""
    return {"step": float(step), "path": path, "size": int(size)}


def metrics_body(step, metrics):
    """A REPORT's payload (tests/protocol/vectors.json)."""
    values = {name: (None if value is None else float(value)) for name, value in metrics.items()}
    return {"step": float(step), "metrics": values}


class Client(Connection):
    """The connection of one trial's process."""

    def __init__(self):
        self.rank = _rank()
        self._checkpoint_wanted = False
        self._finished = False
        self._sigterm = False  # a SIGTERM was noted: the next decision ends the attempt
        self._ending = False   # told to stop or pause: a SIGTERM now terminates at once
        self._stopped = False  # told to stop or pause (its checkpoint perhaps still to save)
        self._catch_sigterm()
        # The credential in SLURMTUNE_TOKEN_FILE covers this trial's attempt only
        # (doc/protocol.md#credentials).
        super().__init__({"trial": int(_env("SLURMTUNE_TRIAL_ID")),
                          "attempt": int(_env("SLURMTUNE_ATTEMPT")), "rank": self.rank})
        (self.trial_id, self.attempt, self.params, self.trial_dir, self.resume_checkpoint,
         self.resume_step) = parse_assignment(self.welcome)
        self.checkpoint_dir = assigned_checkpoint_dir(self.welcome)

    def _catch_sigterm(self):
        try:
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, self._on_sigterm)
        except ValueError:  # not the main thread: leave signals alone
            pass

    def _on_sigterm(self, signum, frame):
        if self._sigterm or self._ending:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        self._sigterm = True

    def _decide(self, kind, body, step):
        decision, self._checkpoint_wanted = parse_decision(self.exchange(kind, body, _DECISION))
        if decision != "continue":
            # From here a SIGTERM ends the process at once (a trial told to stop that
            # hangs), but not before the checkpoint asked for is saved: `scancel` signals
            # the trial's step as the coordinator's "suspend" reaches it, and a first
            # SIGTERM during the save lost the step's work (checkpoint_saved ends it).
            self._stopped = True
            self._ending = not self._checkpoint_wanted
            raise TrialStopped(decision, step, self._checkpoint_wanted)
        if self._sigterm:
            self._ending = self._checkpoint_wanted = True
            if kind == _REPORT:  # recorded as an interrupted attempt, not a completion
                self.finish(False, "interrupted by SIGTERM after step %s" % step)
            raise TrialTerminated(step)
        return decision

    def report(self, step, **metrics):
        """Reports metrics at ``step``; returns "continue" or raises TrialStopped."""
        return self._decide(_REPORT, metrics_body(step, metrics), step)

    def ask(self):
        """The trial's current decision, for ranks that do not report."""
        return self._decide(_ASK, {}, None)

    def heartbeat(self):
        """Says "still alive" during a long step ([trial] report_timeout_s); no reply."""
        self.send(_HEARTBEAT, {})

    def should_checkpoint(self):
        return self._checkpoint_wanted

    def checkpoint_saved(self, step, path):
        """Indexes a checkpoint file (inside the trial's folder) in the results file."""
        self.index_checkpoint(step, path)
        if self._stopped:
            self._ending = True  # the checkpoint the stop asked for is saved

    def finish(self, ok=True, error=""):
        """Says how the trial ended; a failed trial is retried up to max_failures times."""
        if not self._finished:
            self._finished = True
            self.send(_BYE, ending_payload(ok, error))


def ending_payload(ok, error=""):
    """The payload of BYE and TRIAL_END: how a trial ended (tests/protocol/vectors.json
    holds what the coordinator accepts)."""
    return {"status": "completed" if ok else "failed", "error": error}


_client = None


def connect():
    """The process-wide client, connected on first use."""
    global _client
    if _client is None:
        _client = Client()
    return _client


def report(step, **metrics):
    return connect().report(step, **metrics)


def ask():
    return connect().ask()


def params():
    """The trial's hyperparameters (from the environment: no connection needed)."""
    return json.loads(_env("SLURMTUNE_PARAMS"))


def trial_id():
    return int(_env("SLURMTUNE_TRIAL_ID"))


def trial_dir():
    """The trial's own folder (STUDY.trials/trial-<id>: its stderr.log, small files)."""
    return _env("SLURMTUNE_TRIAL_DIR")


def checkpoint_dir():
    """Where the trial keeps its checkpoints: its folder in ``[checkpoints] folder`` (a
    scratch file system), else its own folder (``trial_dir()``)."""
    return os.environ.get("SLURMTUNE_CHECKPOINT_DIR") or trial_dir()


def resume_checkpoint():
    """Path of the checkpoint to resume from, or None. Under PBT, after an exploit, it is
    this trial's own copy of the donor trial's checkpoint (and ``params()`` the new
    configuration)."""
    return os.environ.get("SLURMTUNE_CHECKPOINT") or None


def resume_step():
    """The step that checkpoint was saved at (as indexed), or None: training goes on
    from the step after it."""
    step = os.environ.get("SLURMTUNE_CHECKPOINT_STEP")
    return float(step) if step else None


def heartbeat():
    connect().heartbeat()


def should_checkpoint():
    return _client is not None and _client.should_checkpoint()


def checkpoint_saved(step, path):
    connect().checkpoint_saved(step, path)


def finish(ok=True, error=""):
    if _client is not None:
        _client.finish(ok, error)
