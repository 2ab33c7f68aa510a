"""`slurmtune dashboard STUDY.h5`: a live page about a results file, for its owner only
(doc/dashboard.md).

The server is Tornado (Debian's python3-tornado). It listens on 127.0.0.1 unless --bind
says otherwise (a wildcard address only with --all-interfaces), and answers only requests
that carry its token (`?token=`, 256 random bits, compared in constant time), also when
bound elsewhere; the token is kept in a file of mode 0600 and printed in the URL only
when stdout is a terminal (a job log is read by others). Connections are bounded and
must send their request promptly, and its log is throttled (dashboard_server.py). It
serves five fixed paths, never a path taken from the request, and only reads. The results file is read by a child process
(slurmtune.dashboard_reader): a damaged file that crashes HDF5 ends the child, and the
page says so while the server starts another.
"""
from __future__ import annotations

import argparse
import fcntl
import hmac
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import tornado.escape
    import tornado.httpserver
    import tornado.ioloop
    import tornado.netutil
    import tornado.web
except ImportError as missing:  # said once, plainly, instead of a traceback
    sys.exit(f"slurmtune dashboard: {sys.executable} cannot import {missing.name}: it needs "
             "Python 3.9+ with tornado, numpy, h5py and pandas (Debian: python3-tornado); "
             "set SLURMTUNE_PYTHON to an interpreter that has them")

from .dashboard_server import (HEADER_DEADLINE_S, BoundedHTTPServer, ThrottledLog, quiet_tornado,
                               request_logger, serve)

WILDCARDS = {"0.0.0.0", "::", "0:0:0:0:0:0:0:0"}

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(HERE, "dashboard_assets")
# Chart.js: installed with slurmtune (share/slurmtune/dashboard/), else Debian's libjs-chart.js.
CHART_JS = ("../../dashboard/chart.min.js", "/usr/share/javascript/chart.js/chart.min.js")
FIRST_READ_TIMEOUT_S = 300   # a first read of 10 million reports takes seconds, not minutes
RESTART_AFTER_S = 5          # between a reader's end and the next one's start
STDERR_KEPT = 1 << 20        # bytes of a reader's stderr kept before it is emptied


class Reader:
    """Keeps the latest snapshot of the results file, read by a child process every
    `interval` seconds on a thread of its own; a child that dies or hangs is replaced, and
    the snapshot says why in the meantime."""

    def __init__(self, study, interval, read_timeout):
        self.study, self.interval, self.read_timeout = study, interval, read_timeout
        self.lock = threading.Lock()
        self.payload = json.dumps({"ok": False, "error": "reading the results file for the first time",
                                   "version": 0, "first": True})
        self.version = 0
        self.last_good = None
        self.child = None
        self.stderr = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self._end_child()

    def _spawn(self):
        # The child's stderr goes to an unnamed file in append mode, never a pipe that a
        # chatty child could fill and block on; it is emptied past STDERR_KEPT, and its
        # end explains a child that died.
        self._close_pipes()
        self.stderr = tempfile.TemporaryFile()
        fcntl.fcntl(self.stderr.fileno(), fcntl.F_SETFL,
                    fcntl.fcntl(self.stderr.fileno(), fcntl.F_GETFL) | os.O_APPEND)
        self.child = subprocess.Popen(
            [sys.executable, "-m", "slurmtune.dashboard_reader", self.study],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(HERE),
                                                                          os.environ.get("PYTHONPATH")]))))
        self.reads = 0
        self.pending = b""

    def _close_pipes(self):
        """The previous reader's pipes and stderr file (it has ended)."""
        if self.child is not None:
            for end in (self.child.stdin, self.child.stdout):
                end.close()
        if self.stderr is not None:
            self.stderr.close()

    def _end_child(self):
        if self.child and self.child.poll() is None:
            self.child.kill()
        if self.child:
            self.child.wait(timeout=30)

    def _ask(self):
        """One snapshot line from the child, or (None, why)."""
        try:
            self.child.stdin.write(b"snapshot\n")
            self.child.stdin.flush()
        except OSError:
            pass
        # Only the very first read may take long; once a snapshot exists, a reader that
        # hangs (HDF5 loops on some damaged files) is ended after --read-timeout.
        limit = FIRST_READ_TIMEOUT_S if self.last_good is None else self.read_timeout
        line, timed_out = self._read_line(time.monotonic() + limit)
        if line:
            self.reads += 1
            if os.fstat(self.stderr.fileno()).st_size > STDERR_KEPT:
                self.stderr.truncate(0)
            return line, None
        if timed_out:
            self.child.kill()
            self.child.wait(timeout=30)
            return None, f"reading the results file took over {limit} s; the reader was ended"
        code = self.child.wait(timeout=30)
        self.stderr.seek(max(os.fstat(self.stderr.fileno()).st_size - 4096, 0))
        stderr = self.stderr.read().decode(errors="replace").strip().splitlines()
        how = (f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}")
        return None, (f"the reader of the results file ended with {how}: the file may be damaged "
                      f"or replaced while it was read" + (f" ({stderr[-1]})" if stderr else "") +
                      f"; a new reader starts in {RESTART_AFTER_S} s")

    def _read_line(self, deadline):
        """(one line of the child's, False), or (None, timed out?) when the child closed
        its end first or the deadline passed (the whole line counts, not only its start)."""
        fd = self.child.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                return None, True
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None, False
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line, False

    def _publish(self, snapshot):
        with self.lock:
            self.version += 1
            snapshot["version"] = self.version
            self.payload = json.dumps(snapshot, allow_nan=False)

    def _run(self):
        while not self.stopping.is_set():
            if self.child is None or self.child.poll() is not None:
                self._spawn()
            started = time.monotonic()
            line, why = self._ask()
            if line is not None:
                snapshot = json.loads(line)
                if snapshot.get("ok"):
                    self.last_good = snapshot
                else:  # the file cannot be read now: say so, keep what was read before
                    snapshot = dict(self.last_good or {}, ok=False, error=snapshot["error"])
                self._publish(snapshot)
                # A first read of millions of reports comes in parts: the next at once.
                pause = 0 if snapshot.get("reports_behind") else self.interval - (time.monotonic() - started)
            else:
                self._publish(dict(self.last_good or {}, ok=False, error=why))
                pause = RESTART_AFTER_S  # the child has ended: the next turn starts another
            self.stopping.wait(max(pause, 0.05))

    def latest(self):
        with self.lock:
            return self.version, self.payload


class Guarded(tornado.web.RequestHandler):
    """Every request needs the token; no response may be cached, framed or leak the URL."""

    def initialize(self, token, **kwargs):
        self.token = token
        self.extra = kwargs

    def set_default_headers(self):
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Content-Security-Policy",
                        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        self.clear_header("Server")

    def prepare(self):
        given = self.get_query_argument("token", "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            self.set_status(403)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish("403: this page needs the token in the URL that `slurmtune dashboard` printed\n")

    def write_error(self, status_code, **kwargs):
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{status_code}: {self._reason}\n")


class Page(Guarded):
    def get(self):
        with open(os.path.join(ASSETS, "page.html"), encoding="utf-8") as f:
            page = f.read()
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page.replace("TOKEN", tornado.escape.url_escape(self.token)))


class Asset(Guarded):
    def get(self):
        path, kind = self.extra["path"], self.extra["kind"]
        with open(path, "rb") as f:
            self.set_header("Content-Type", kind)
            self.finish(f.read())


class Data(Guarded):
    def get(self):
        version, payload = self.extra["reader"].latest()
        self.set_header("Content-Type", "application/json")
        if self.get_query_argument("since", "") == str(version):
            self.finish(json.dumps({"version": version, "unchanged": True}))
        else:
            self.finish(payload)


class NotFound(Guarded):
    def get(self):
        raise tornado.web.HTTPError(404)


def chart_js():
    for candidate in CHART_JS:
        path = os.path.normpath(os.path.join(HERE, candidate))
        if os.path.isfile(path):
            return path
    raise SystemExit("slurmtune dashboard: Chart.js is not installed (share/slurmtune/dashboard/chart.min.js, "
                     "or Debian's libjs-chart.js)")


def token_file_path(given):
    if given:
        folder = os.path.dirname(os.path.abspath(given))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return given
    folder = os.path.join(os.path.expanduser("~"), ".slurmtune")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return os.path.join(folder, f"dashboard-{os.getpid()}.token")


def write_token(path, token):
    """A fresh 0600 file. A regular file of this user left there (a dashboard that was
    killed) is replaced; anything else (a link, another user's file) is refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        import stat
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise OSError(f"{path} exists and is not a regular file of yours")
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="slurmtune dashboard")
    parser.add_argument("study")
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--all-interfaces", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-file", default="")
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--read-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    if not os.path.exists(args.study):  # a job that has not written it yet: the page waits
        print(f"slurmtune dashboard: {args.study} does not exist yet; the page shows it once it does",
              file=sys.stderr)
    if not args.bind.strip():
        raise SystemExit("slurmtune dashboard: --bind needs an address (an empty one would listen "
                         "on every interface); the default is 127.0.0.1, this host only")
    if args.bind.strip() in WILDCARDS and not args.all_interfaces:
        raise SystemExit(f"slurmtune dashboard: --bind {args.bind} listens on every interface, "
                         "reachable from other hosts; add --all-interfaces if that is meant")
    if not 0.1 <= args.interval <= 3600:
        raise SystemExit("slurmtune dashboard: --interval must be from 0.1 to 3600 seconds")
    if not 1 <= args.read_timeout <= 3600:
        raise SystemExit("slurmtune dashboard: --read-timeout must be from 1 to 3600 seconds")
    token = secrets.token_hex(32)
    token_path = token_file_path(args.token_file)
    try:
        write_token(token_path, token)
    except OSError as error:
        raise SystemExit(f"slurmtune dashboard: {token_path}: cannot create the token file: {error}")
    reader = Reader(os.path.abspath(args.study), args.interval, args.read_timeout)
    log = ThrottledLog()
    quiet_tornado(log)
    common = {"token": token}
    app = tornado.web.Application([
        (r"/", Page, common),
        (r"/data", Data, dict(common, reader=reader)),
        (r"/app.js", Asset, dict(common, path=os.path.join(ASSETS, "app.js"), kind="text/javascript")),
        (r"/style.css", Asset, dict(common, path=os.path.join(ASSETS, "style.css"), kind="text/css")),
        (r"/chart.js", Asset, dict(common, path=chart_js(), kind="text/javascript")),
    ], default_handler_class=NotFound, default_handler_args=common, compress_response=True,
       log_function=request_logger(log))
    try:
        sockets = tornado.netutil.bind_sockets(args.port, address=args.bind)
    except OSError as error:
        os.unlink(token_path)
        raise SystemExit(f"slurmtune dashboard: cannot listen on {args.bind}:{args.port}: {error}")
    server = BoundedHTTPServer(app, xheaders=False, max_body_size=0, max_header_size=16384,
                               idle_connection_timeout=HEADER_DEADLINE_S)
    serve(server, sockets, log)
    port = sockets[0].getsockname()[1]
    host = f"[{args.bind}]" if ":" in args.bind else args.bind
    reader.start()
    if sys.stdout.isatty():
        print(f"slurmtune dashboard of {args.study}: http://{host}:{port}/?token={token}\n"
              f"  token in {token_path}; stop with Ctrl-C", flush=True)
    else:  # a job log or a pipe: others may read it
        print(f"slurmtune dashboard of {args.study}: http://{host}:{port}/?token=TOKEN, the token "
              f"in {token_path} (not printed: stdout is not a terminal)", flush=True)
    loop = tornado.ioloop.IOLoop.current()

    def stop(*_):
        loop.add_callback_from_signal(loop.stop)
    for name in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # SIGHUP: the terminal closed
        signal.signal(name, stop)
    try:
        loop.start()
    finally:
        reader.stop()
        server.stop()
        for sock in sockets:
            sock.close()
        try:
            os.unlink(token_path)
        except OSError:
            pass


if __name__ == "__main__":
    main()
