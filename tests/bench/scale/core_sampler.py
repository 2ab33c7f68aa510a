"""What the coordinator's core did each second of a fleet run (issue #61): the CPU each of
the coordinator's threads used (the loop is the process's main thread; the others are
named st-flush, st-helper, st-sampler, st-lookups), and how busy the cores it is pinned to
were, softirqs included (/proc/stat), in cores. A second in which the core was busy throughout is
one in which the loop could not have answered sooner by reordering its own work: the
core had none to spare.
"""
import json
import os
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def find_process(executable, marker, give_up_at):
    """The pid of the process running `executable` with `marker` among its arguments."""
    executable = os.fsencode(executable)
    marker = os.fsencode(marker)
    while time.time() < give_up_at:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv and argv[0] == executable and marker in argv:
                return int(entry)
        time.sleep(0.1)
    return None


def thread_seconds(pid):
    """{thread name: CPU seconds} of `pid`'s threads (the main thread as 'loop')."""
    seconds = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        name = "loop" if int(tid) == pid else stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return seconds


def parse_cpus(text):
    """The cores of a taskset list ("0", "0-3", "0,2-3")."""
    cores = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        cores.extend(range(int(first), int(last or first) + 1))
    return cores


def core_ticks(cpus):
    """(busy, softirq, total) ticks of the cores `cpus` together so far (total: of one)."""
    busy = softirq = total = 0
    with open("/proc/stat") as f:
        for line in f:
            name = line.split(" ", 1)[0]
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                v = [int(x) for x in line.split()[1:]]
                idle = v[3] + v[4]  # idle, iowait
                whole = sum(v[:8])  # guest time is counted in user already
                busy, softirq, total = busy + whole - idle, softirq + v[6], total + whole
    if total == 0:
        raise ValueError("no core %s in /proc/stat" % cpus)
    return busy, softirq, total / len(cpus)


class CoreSampler:
    """Samples once a second, on a thread, from start() until the process ends."""

    def __init__(self, executable, marker, cpus):
        """`cpus`: the coordinator's cores, as taskset takes them ("0", "0-3")."""
        self.executable, self.marker, self.cpus = executable, marker, cpus
        self.cores = parse_cpus(cpus)
        self.seconds = []  # (t, core busy share, softirq share, {thread: share})
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def _run(self):
        pid = find_process(self.executable, self.marker, time.time() + 60)
        if pid is None:
            return
        started = time.time()
        try:
            last_threads, last_core = thread_seconds(pid), core_ticks(self.cores)
            while True:
                time.sleep(1)
                threads, core = thread_seconds(pid), core_ticks(self.cores)
                total = max(core[2] - last_core[2], 1)
                self.seconds.append((
                    time.time() - started, (core[0] - last_core[0]) / total,
                    (core[1] - last_core[1]) / total,
                    {n: s - last_threads.get(n, 0.0) for n, s in threads.items()}))
                last_threads, last_core = threads, core
        except OSError:  # the process ended
            return

    def save(self, path):
        """Every second's figures, as JSON: [seconds from the start, the cores' busy time
        and softirqs (in cores), {thread: CPU seconds}]."""
        with open(path, "w") as f:
            json.dump(self.seconds, f)

    def summary(self, busiest=5):
        """The line for the harness's output."""
        one = len(self.cores) == 1
        cores = "core" if one else "%d cores" % len(self.cores)
        if not self.seconds:
            return "the coordinator's %s: not sampled" % cores
        full = sum(1 for s in self.seconds if s[1] >= 0.9 * len(self.cores))

        def threads(shares, floor, unit):
            ranked = sorted(shares.items(), key=lambda x: -x[1])
            return ", ".join("%s %.*f%s" % (n, 2 if not unit else 1, v, unit)
                             for n, v in ranked if v >= floor) or "none over %g" % floor

        def second(s):
            return "%.0f s: %s (the %s %.2f busy, softirqs %.2f)" % (
                s[0], threads(s[3], 0.01, ""), "core" if one else "cores", s[1], s[2])

        # The seconds the coordinator's threads used the most.
        top = sorted(self.seconds, key=lambda s: -sum(s[3].values()))[:busiest]
        whole = {}
        for s in self.seconds:
            for n, v in s[3].items():
                whole[n] = whole.get(n, 0.0) + v
        return ("the coordinator's %s (cpu %s), sampled each second: busy 90 %% or more in %d of %d s; "
                "the seconds its threads used the most of %s (from the coordinator's start): %s; "
                "the threads' CPU over the run: %s"
                % (cores, self.cpus, full, len(self.seconds), "it" if one else "them",
                   "; ".join(second(s) for s in sorted(top)), threads(whole, 0.05, " s")))
