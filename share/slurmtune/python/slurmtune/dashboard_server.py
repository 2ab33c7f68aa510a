"""The HTTP side of `slurmtune dashboard` that anyone on the host can reach (issue #59):
a bounded number of connections, a short deadline for a request's head, accepts that
survive running out of descriptors, and a log that a neighbour cannot flood or read the
token from. dashboard.py builds the application; this serves it.

- At most MAX_CONNECTIONS connections are open: a new one past that closes the oldest,
  so idle connections held by another user cannot lock the owner's browser out (it
  connects and sends its request at once; the flood's oldest connections make room).
- A connection that has not sent its request head within HEADER_DEADLINE_S is closed
  (Tornado's header timeout; it also ends idle keep-alive connections).
- EMFILE and its kin while accepting pause accepting for a tenth of a second, with one
  throttled line, instead of a traceback per try on a listening socket that stays
  readable.
- Every log line goes through a ThrottledLog (10 per 10 s, then a count of those left
  out); a request is logged by its method, path (never the query string, which holds the
  token) and status, with control characters written out.
"""
from __future__ import annotations

import collections
import errno
import logging
import sys
import time

import tornado.httpserver
import tornado.ioloop

MAX_CONNECTIONS = 128     # open at once: a browser needs a handful
HEADER_DEADLINE_S = 5.0   # to send a request's head, and between keep-alive requests
ACCEPT_PAUSE_S = 0.1      # after EMFILE: descriptors are freed as connections close
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def visible(text: str, limit: int = 200) -> str:
    """`text` with control and invisible characters written out, at most `limit` long."""
    out = "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c)
                  for c in text[:limit])
    return out + ("..." if len(text) > limit else "")


class ThrottledLog:
    """At most `burst` lines per `interval` seconds to stderr; the next line that goes out
    after some were left out says how many."""

    def __init__(self, burst: int = 10, interval: float = 10.0, clock=time.monotonic):
        self.burst, self.interval, self.clock = burst, interval, clock
        self.window_start, self.in_window, self.left_out, self.left_out_total = -1e18, 0, 0, 0

    def line(self, message: str) -> bool:
        now = self.clock()
        if now - self.window_start >= self.interval:
            self.window_start, self.in_window = now, 0
        if self.in_window >= self.burst:
            self.left_out += 1
            self.left_out_total += 1
            return False
        self.in_window += 1
        if self.left_out:
            message += f" ({self.left_out} similar line(s) left out)"
            self.left_out = 0
        print("slurmtune dashboard: " + message, file=sys.stderr, flush=True)
        return True


class ThrottledHandler(logging.Handler):
    """Tornado's own log lines (malformed requests, errors) through the throttled log,
    one line each: a traceback's first line only."""

    def __init__(self, log: ThrottledLog):
        super().__init__(logging.WARNING)
        self.log = log

    def emit(self, record):
        message = record.getMessage().splitlines()[0] if record.getMessage() else ""
        if record.exc_info and record.exc_info[1] is not None:
            message += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.log.line(visible(message))


def request_logger(log: ThrottledLog):
    """Application(log_function=...): refusals and errors only, without the query."""

    def log_request(handler):
        status = handler.get_status()
        if status < 400:
            return
        request = handler.request
        log.line(f"{status} {visible(request.method or '?', 16)} {visible(request.path or '')} "
                 f"from {visible(request.remote_ip or '?', 64)}")
    return log_request


def quiet_tornado(log: ThrottledLog):
    handler = ThrottledHandler(log)
    for name in ("tornado.access", "tornado.application", "tornado.general"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(logging.WARNING)


class BoundedHTTPServer(tornado.httpserver.HTTPServer):
    """HTTPServer holding at most `max_connections` connections, the newest."""

    def initialize(self, *args, max_connections: int = MAX_CONNECTIONS, **kwargs):
        super().initialize(*args, **kwargs)
        self.max_connections = max_connections
        self.open_streams: collections.OrderedDict = collections.OrderedDict()
        self.evicted = 0

    def handle_stream(self, stream, address):
        for done in [s for s in self.open_streams if s.closed()]:
            del self.open_streams[done]
        while len(self.open_streams) >= self.max_connections:
            oldest, _ = self.open_streams.popitem(last=False)
            oldest.close()
            self.evicted += 1
        self.open_streams[stream] = None
        super().handle_stream(stream, address)


def serve(server: BoundedHTTPServer, sockets, log: ThrottledLog):
    """Accepts on `sockets` for `server`, pausing briefly when out of descriptors."""
    loop = tornado.ioloop.IOLoop.current()

    def watch(sock):
        def ready(fd, events):
            for _ in range(128):  # a bounded batch: other work gets its turn
                try:
                    connection, address = sock.accept()
                except BlockingIOError:
                    return
                except ConnectionAbortedError:
                    continue
                except OSError as error:
                    if error.errno not in OUT_OF_RESOURCES:
                        raise
                    log.line(f"cannot accept a connection ({error.strerror}); pausing "
                             f"{ACCEPT_PAUSE_S:g} s (ulimit -n, or a flood of connections)")
                    loop.remove_handler(fd)
                    loop.call_later(ACCEPT_PAUSE_S, lambda: loop.add_handler(fd, ready, loop.READ))
                    return
                server._handle_connection(connection, address)  # Tornado 6's TCPServer
        loop.add_handler(sock.fileno(), ready, loop.READ)

    for sock in sockets:
        sock.setblocking(False)
        watch(sock)
