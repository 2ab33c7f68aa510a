#!/usr/bin/python3
"""`slurmtune dashboard` on a large study (issue #44: a first view within 5 s, each update
within 1 s, on 100,000 trials and 10 million reports): tests/bench/data/studies/html-100k.toml,
written by `slurmtune simulate` as bench_html.py does, served and opened in headless
Chromium over the DevTools protocol (tests/python/module/check_dashboard.py's Browser).

    /usr/bin/python3 tests/bench/components/bench_dashboard.py build/src/slurmtune [WORKDIR] [--updates N]
        [--study RESULTS.h5] [--starts 3]

(--study: serve that results file instead, for example bench_readers.py's of 10^9 reports.)

Prints, for three dashboard starts: the first view (from the dashboard's start until the
page has drawn, with the browser open already and the page opened at once), the whole
view (every report read and drawn: the first read of the reports comes in parts), the reader's time per update
(a full read and the snapshot composed again) and the page's redraw time, the snapshot's
size, the page's weight, and the peak memory (resident set) of the server and its reader.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")  # tests/bench/data
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "module"))
from check_dashboard import Browser, start_dashboard, wait_for  # noqa: E402


def rss_mb(pid, field="VmHWM:"):
    """The peak resident size of a process (VmHWM; VmRSS: the present one), in MB."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid):
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        path = f"/proc/{pid}/task/{task}/children"
        if os.path.exists(path):
            out += [int(p) for p in open(path).read().split()]
    return out


def one_start(slurmtune, study, workdir, chrome, updates):
    # The browser is open already, as a user's is: the first view is the dashboard's
    # start, its first read and the page's first draw, not Chromium's start.
    browser = Browser(chrome, workdir)
    started = time.monotonic()
    dashboard, base, _, token, _ = start_dashboard(slurmtune, study, workdir)
    try:
        browser.call("Page.navigate", url=base + "?token=" + token)
        first = wait_for(lambda: browser.evaluate("(document.documentElement || {dataset: {}}).dataset.firstDrawMs"), 120,
                         "the first view")
        first_view = time.monotonic() - started
        # The whole view: every report read, the curves and the best-so-far trace drawn.
        wait_for(lambda: browser.evaluate("latest && latest.reports_behind === 0"), 120, "every report")
        whole_view = time.monotonic() - started
        # An update: the reader reads what was committed and composes the snapshot again
        # (its read_s), the page draws it. This study no longer changes, so the page would
        # skip charts whose data is the same: each draw here is forced to redraw them all.
        reads, draws = [], []
        while len(draws) < updates:
            time.sleep(1.0)
            with urllib.request.urlopen(base + "data?token=" + token, timeout=60) as r:
                body = r.read()
            reads.append(json.loads(body)["read_s"])
            draws.append(float(browser.evaluate(
                "for (const k in drawn) delete drawn[k]; draw(latest); document.documentElement.dataset.drawMs")) / 1000)
        reader = children(dashboard.pid)
        memory = (rss_mb(dashboard.pid), sum(rss_mb(p) for p in reader))  # peaks
        weights = {}
        for path in ("", "app.js", "style.css", "chart.js"):
            with urllib.request.urlopen(base + path + "?token=" + token, timeout=60) as r:
                weights[path or "page"] = len(r.read())
        return {"first_view_s": first_view, "whole_view_s": whole_view, "first_draw_in_page_s": float(first) / 1000,
                "read_s": statistics.median(reads), "read_max_s": max(reads),
                "draw_s": statistics.median(draws), "update_s": statistics.median(
                    [r + d for r, d in zip(reads, draws)]), "snapshot_kb": len(body) / 1024,
                "server_mb": memory[0], "reader_mb": memory[1], "weights": weights}
    finally:
        browser.close()
        dashboard.terminate()
        dashboard.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("workdir", nargs="?", default="/tmp/slurmtune-bench-html")
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument("--study", help="a results file to serve (default: html-100k's, simulated)")
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    study = os.path.abspath(args.study or os.path.join(args.workdir, "html-100k.h5"))
    if not os.path.exists(study):
        subprocess.run([args.slurmtune, "simulate", os.path.join(DATA, "studies", "html-100k.toml"),
                        "-w", "2000", "-q", "-o", study], check=True, stdout=subprocess.DEVNULL)
    chrome = "chromium"
    runs = [one_start(os.path.abspath(args.slurmtune), study, args.workdir, chrome, args.updates)
            for _ in range(args.starts)]
    for key in ("first_view_s", "whole_view_s", "first_draw_in_page_s", "read_s", "read_max_s", "draw_s", "update_s", "snapshot_kb",
                "server_mb", "reader_mb"):
        values = [r[key] for r in runs]
        print(f"{key}: median {statistics.median(values):.2f} ({', '.join(f'{v:.2f}' for v in values)})")
    print("page weight (bytes):", runs[0]["weights"], "in all", sum(runs[0]["weights"].values()))


if __name__ == "__main__":
    main()
