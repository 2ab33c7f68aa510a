#!/usr/bin/python3
"""`slurmtune dashboard` on a real study (issue #44): a study runs with the local launcher
(fault_trial.py trials, one of which fails for good), the dashboard serves its results
file, and headless Chromium, driven over the DevTools protocol, keeps the page open:

  - the counts and the best value change on the page while the study runs, without a
    reload, and no script error is logged; trial 3's failure appears in the failures table;
  - the final page agrees with `slurmtune status` (counts by outcome, best trial and value);
  - markup in a study's name and choices is shown as text, and runs nothing;
  - a request without the token, with a wrong one, for any other path, or with another
    method is refused; the server listens on 127.0.0.1 only; the token file is 0600 and
    removed at exit;
  - the results file replaced by garbage, by a truncated copy, by a file that crashes the
    HDF5 library (the reader process dies of SIGSEGV) and by one on which it loops (the
    read is ended after --read-timeout) while it is served: the page says
    so and the server keeps answering; the file put back, the page recovers.

    check_dashboard.py SLURMTUNE [--screenshot PNG]

With --screenshot, it instead runs share/slurmtune/examples/numpy-mlp/two-objectives.toml
(real numpy training, two objectives) and saves the page mid-study (doc/img/dashboard.png).
"""
import argparse
import asyncio
import base64
import json
import select
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "run"))
from run_harness import FAULT_TRIAL, expect, fail, study_toml, wait_for  # noqa: E402


class Browser:
    """Headless Chromium, driven over the DevTools protocol (a websocket: Tornado's client)."""

    def __init__(self, chrome, workdir):
        import tornado.websocket
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)  # a fresh DevToolsActivePort
        self.process = subprocess.Popen(
            [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile,
             "--window-size=1400,2400", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        active = os.path.join(self.profile, "DevToolsActivePort")
        wait_for(lambda: os.path.exists(active) and len(open(active).read().split()) == 2, 60,
                 "Chromium's DevTools port")
        port = open(active).read().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)

        async def connect():
            return await asyncio.wait_for(tornado.websocket.websocket_connect(
                page["webSocketDebuggerUrl"], max_message_size=64 << 20), 30)
        self.socket = self.loop.run_until_complete(connect())
        self.next_id = 0
        self.errors = []
        self.call("Runtime.enable")
        self.call("Log.enable")

    def _note(self, message):
        method = message.get("method", "")
        params = message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", "")) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", ""))

    def call(self, method, **params):
        self.next_id += 1
        ask = self.next_id

        async def exchange():
            await self.socket.write_message(json.dumps({"id": ask, "method": method, "params": params}))
            while True:
                text = await self.socket.read_message()
                if text is None:
                    raise RuntimeError("Chromium closed the DevTools connection")
                message = json.loads(text)
                if message.get("id") == ask:
                    return message
                self._note(message)
        reply = self.loop.run_until_complete(asyncio.wait_for(exchange(), 60))
        expect("error" not in reply, f"DevTools {method}: {reply.get('error')}")
        return reply["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        expect("exceptionDetails" not in result, f"{expression}: {result.get('exceptionDetails')}")
        return result["result"].get("value")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.socket.close()
        self.process.kill()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


PAGE_STATE = """(() => { try { return JSON.stringify({
  loadedAt: document.documentElement.dataset.loadedAt,
  trials: (document.getElementById('summary-trials') || {}).textContent || '',
  reports: (document.getElementById('summary-reports') || {}).textContent || '',
  outcome: (document.getElementById('summary-by-outcome') || {}).textContent || '',
  best: (document.getElementById('summary-best') || {}).textContent || '',
  loop: (document.getElementById('summary-coordinator-loop') || {}).textContent || '',
  banner: document.getElementById('banner').hidden ? '' : document.getElementById('banner').textContent,
  failures: [...document.querySelectorAll('#failures-table tr td:first-child')].map(td => td.textContent),
  curves: (window.Chart && Chart.getChart('chart-curves')) ? Chart.getChart('chart-curves').data.datasets.length : 0,
}); } catch (e) { return JSON.stringify({loading: String(e)}); } })()"""


def state(browser):
    """What the page shows now; waits while a navigation replaces the document."""
    seen = wait_for(lambda: (lambda s: s if "loading" not in s and s["loadedAt"] else None)(
        json.loads(browser.evaluate(PAGE_STATE))), 60, "the page")
    return seen


def get(url, method="GET"):
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def listening_addresses(port):
    """Local addresses of the sockets listening on `port` (/proc/net/tcp and tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in open(table).read().splitlines()[1:]:
            local, state_code = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if int(hex_port, 16) == port and state_code == "0A":  # LISTEN
                found.append(address)
    return found


def start_dashboard(slurmtune, study, workdir):
    token_file = os.path.join(workdir, "dashboard.token")
    log = open(os.path.join(workdir, "dashboard.log"), "w+")
    process = subprocess.Popen([slurmtune, "dashboard", study, "--token-file", token_file,
                                "--interval", "0.5", "--read-timeout", "5"], stdout=subprocess.PIPE,
                               stderr=log, text=True, env=dict(os.environ, SLURMTUNE_PYTHON=sys.executable))
    ready, _, _ = select.select([process.stdout], [], [], 60)  # its URL, or a bounded wait
    line = process.stdout.readline() if ready else ""
    # stdout is a pipe, not a terminal: the URL comes without the token, which only the
    # token file (mode 0600) holds (issue #59: a job log is read by others).
    match = re.search(r"(http://127\.0\.0\.1:(\d+)/)\?token=TOKEN, the token in (\S+) \(not printed",
                      line)
    expect(match and match.group(3) == token_file and not re.search(r"[0-9a-f]{64}", line),
           f"the dashboard printed {line!r}; its log:\n{open(log.name).read()}")
    with open(token_file) as f:
        token = f.read().strip()
    return process, match.group(1), int(match.group(2)), token, token_file


def check_refusals(base, port, token, token_file):
    expect(get(base)[0] == 403, "a request without the token was not refused")
    expect(get(base + "?token=" + "0" * 64)[0] == 403, "a wrong token was not refused")
    expect(get(base + "data?token=" + token[:-1])[0] == 403, "a token missing a digit was not refused")
    for path in ("etc/passwd", "study.h5", "..%2f..%2fetc%2fpasswd", "static/x", "data/.."):
        code = get(base + path + "?token=" + token)[0]
        expect(code == 404, f"/{path} with the token answered {code}, not 404")
    expect(get(base + "data?token=" + token, "POST")[0] == 405, "POST was not refused")
    expect(get(base + "?token=" + token)[0] == 200 and get(base + "data?token=" + token)[0] == 200,
           "the page or its data did not load with the token")
    expect(listening_addresses(port) == ["0100007F"],
           f"the dashboard listens on {listening_addresses(port)}, not only on 127.0.0.1")
    mode = os.stat(token_file).st_mode & 0o777
    expect(mode == 0o600 and open(token_file).read().strip() == token,
           f"the token file has mode {oct(mode)} or another token")


def status_of(slurmtune, study):
    out = subprocess.run([slurmtune, "status", study], capture_output=True, text=True, timeout=120, check=True).stdout
    counts = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", re.search(r"^Trials \d+: (.*)$", out, re.M).group(1)))
    best = re.search(r"^Best trial (\d+): loss = (\S+) at step (\S+)", out, re.M)
    loop = re.search(r"^Coordinator loop: longest turn of the last minute \S+ ms \((\w+)\), busy \S+ %; of "
                     r"the session (\S+) ms \((\w+)\), turns over 100 ms (\d+), over 1 s (\d+) \(of (\d+)\)$", out, re.M)
    expect(loop, "status has no coordinator loop line:\n" + out)
    return counts, int(best.group(1)), float(best.group(2)), float(best.group(3)), loop


def follow_the_study(browser, run, url):
    """The page's state every half second until the study ends (and a bit after)."""
    browser.call("Page.navigate", url=url)
    states, ended_at = [], None
    deadline = time.time() + 300
    while time.time() < deadline:
        states.append(state(browser))
        if run.poll() is not None and ended_at is None:
            ended_at = time.time()
        if ended_at and time.time() - ended_at > 4:
            return states
        time.sleep(0.5)
    fail("the study did not end within 300 s")


def check_live(slurmtune, chrome, workdir):
    study_file = os.path.join(workdir, "study.toml")
    # About 20 s of study: time for a dozen looks at the page even on a loaded machine.
    command = [sys.executable, FAULT_TRIAL, "--x={x}", "--steps=6", "--sleep=0.4", "--faults=3:exit"]
    with open(study_file, "w") as f:
        f.write(study_toml("dashboard", command, max_trials=14, max_t=6, trial_extra="max_failures = 1\n"))
    results = os.path.join(workdir, "study.h5")
    run_log = open(os.path.join(workdir, "run.log"), "w")
    run = subprocess.Popen([slurmtune, "run", study_file, "-o", results, "--launcher", "local", "--slots", "2"],
                           stdout=run_log, stderr=subprocess.STDOUT, cwd=workdir)
    wait_for(lambda: os.path.exists(results), 60, "the results file")
    dashboard, base, port, token, token_file = start_dashboard(slurmtune, results, workdir)
    browser = Browser(chrome, workdir)
    try:
        check_refusals(base, port, token, token_file)
        states = follow_the_study(browser, run, base + "?token=" + token)
        expect(run.wait(timeout=60) == 0, "the study failed:\n" + open(run_log.name).read())
        loads = {s["loadedAt"] for s in states}
        expect(len(loads) == 1, f"the page was reloaded: {loads}")
        reports = [s["reports"] for s in states if s["reports"]]
        bests = [s["best"] for s in states if s["best"].startswith("trial")]
        expect(len(set(reports)) >= 3, f"the report count did not change on the page: {sorted(set(reports))}")
        expect(len(set(bests)) >= 2, f"the best value did not change on the page: {sorted(set(bests))}")
        expect(not browser.errors, f"the page logged errors: {browser.errors}")
        final = states[-1]
        expect("3" in final["failures"], f"trial 3's failure is not in the failures table: {final['failures']}")
        expect(final["curves"] > 0, "no learning curve was drawn")
        counts, best_trial, best_value, best_step, loop = status_of(slurmtune, results)
        # The loop's figures of the last commit, on the page as in status: the session's
        # turns and longest turn, and what filled it.
        page_loop = re.search(r"of the session (\S+) ms \((\w+)\), turns over 100 ms (\d+), over 1 s (\d+) "
                              r"\(of (\d+)\)", final["loop"])
        expect(page_loop and int(page_loop.group(5)) == int(loop.group(6)) and int(loop.group(6)) > 0 and
               page_loop.group(2) == loop.group(3) and
               abs(float(page_loop.group(1)) - float(loop.group(2))) <= 0.06 * float(loop.group(2)) + 0.06,
               f"page loop {final['loop']!r} != status {loop.group(0)!r}")
        page_counts = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", final["outcome"]))
        expect(page_counts == {k: v for k, v in counts.items() if v}, f"page {page_counts} != status {counts}")
        page_best = re.search(r"trial (\d+): loss (\S+) at step (\S+)", final["best"])
        expect(page_best and int(page_best.group(1)) == best_trial and
               abs(float(page_best.group(2)) - best_value) <= 1e-5 * abs(best_value) and
               float(page_best.group(3)) == best_step,
               f"page best {final['best']!r} != status: trial {best_trial}, {best_value} at {best_step}")
        damaged = check_damage(browser, results, base, token)
        expect(dashboard.poll() is None, "the dashboard ended")
        dashboard.terminate()
        dashboard.wait(timeout=60)
        expect(not os.path.exists(token_file), "the token file outlived the dashboard")
    finally:
        browser.close()
        if dashboard.poll() is None:
            dashboard.kill()
    untrusted = check_untrusted_text(slurmtune, chrome, workdir)
    untrusted += "; " + check_plots(slurmtune, chrome, workdir)
    print(f"dashboard: {untrusted}; {len(states)} looks at the live page, {len(set(reports))} report counts and "
          f"{len(set(bests))} best values seen without a reload; final page = status ({page_counts}, best "
          f"trial {best_trial}); refused: no token, wrong token, other paths, POST; listening on 127.0.0.1 "
          f"only; {damaged}")


HOSTILE_STUDY = """[study]
name = "<img src=x onerror=window.pwned=1>"
metric = "loss"
max_trials = 6
[search]
x = { uniform = [0, 1] }
opt = { choice = ["<b>bold</b>", "<script>window.pwned=2</script>"] }
[scheduler]
type = "fifo"
max_t = 3
[simulate]
objective = "bowl"
"""


def on_simulated_page(slurmtune, chrome, folder, study_text, look):
    """Simulates `study_text` in `folder`, serves it, opens the page and returns
    look(browser) once the page shows a best trial."""
    os.makedirs(folder)
    with open(os.path.join(folder, "study.toml"), "w") as f:
        f.write(study_text)
    results = os.path.join(folder, "study.h5")
    subprocess.run([slurmtune, "simulate", os.path.join(folder, "study.toml"), "-q", "-o", results],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    dashboard, base, _, token, _ = start_dashboard(slurmtune, results, folder)
    browser = Browser(chrome, folder)
    try:
        browser.call("Page.navigate", url=base + "?token=" + token)
        wait_for(lambda: state(browser)["best"].startswith("trial"), 60, f"the page of {folder}")
        seen = look(browser)
        expect(not browser.errors, f"the page logged errors: {browser.errors}")
        return seen
    finally:
        browser.close()
        dashboard.terminate()
        dashboard.wait(timeout=60)


def check_untrusted_text(slurmtune, chrome, workdir):
    """Markup in a study's name and choices stays text on the page: no element made, no
    script run (the page sets text with textContent; its CSP allows no inline script)."""
    on_simulated_page(slurmtune, chrome, os.path.join(workdir, "hostile"), HOSTILE_STUDY, look_untouched)
    return "markup in names and choices shown as text"


def look_untouched(browser):
    """No markup of the hostile study became an element or ran."""
    expect(browser.evaluate("String(window.pwned)") == "undefined", "markup from the study ran a script")
    expect(browser.evaluate("document.querySelectorAll('main img, main b, main script').length") == 0,
           "markup from the study became elements")
    expect("<img src=x onerror=window.pwned=1>" in browser.evaluate("document.getElementById('title').textContent"),
           "the study's name is not shown as it is")
    shown = browser.evaluate("document.getElementById('best-table').textContent")
    expect("<script>window.pwned=2</script>" in shown or "<b>bold</b>" in shown,
           "the choices are not shown as they are: " + shown[:300])


PLOT_STUDY = """[study]
name = "plots"
metric = "loss"
max_trials = {trials}
[search]
lr = {{ loguniform = [1e-5, 1e-1] }}
width = {{ randint = [16, 256] }}
[scheduler]
type = "fifo"
max_t = 3
[simulate]
objective = "bowl"
"""


def chart_facts(browser):
    """What the page's charts drew: the best chart's x title, each slice's x scale and
    its data's ends, the parallel axes' labels, the importance bars and note."""
    return browser.evaluate("""(() => {
      const get = (id) => Chart.getChart(document.getElementById(id));
      const slices = [...document.querySelectorAll("[id^=chart-slice-]")].map((canvas) => {
        const c = Chart.getChart(canvas), xs = c.data.datasets[0].data.map((p) => p.x);
        return {title: c.options.scales.x.title.text, type: c.scales.x.type, min: c.scales.x.min,
                max: c.scales.x.max, low: Math.min(...xs), high: Math.max(...xs)};
      });
      return {best: get("chart-best").options.scales.x.title.text, slices,
              parallel: get("chart-parallel").data.labels,
              importance: get("chart-importance").data.labels.length,
              note: document.getElementById("importance-note").textContent};
    })()""")


def check_plots(slurmtune, chrome, workdir):
    """Issue #58's plots on a simulated study with a log domain: slices span every point
    on a log axis for the log domain, parallel axes name their ends, best-so-far runs
    against time, and importance waits for 20 ended trials."""
    def look(browser):
        wait_for(lambda: browser.evaluate("document.querySelectorAll('[id^=chart-slice-]').length") == 2,
                 60, "the slices")
        return chart_facts(browser)
    many, few = (on_simulated_page(slurmtune, chrome, os.path.join(workdir, f"plots-{trials}"),
                                   PLOT_STUDY.format(trials=trials), look) for trials in (40, 8))
    expect(many["best"] == "seconds since the study began", f"best-so-far is drawn against {many['best']!r}")
    by_name = {s["title"]: s for s in many["slices"]}
    expect(by_name["lr"]["type"] == "logarithmic" and by_name["width"]["type"] == "linear",
           f"slice axes: {many['slices']}")
    for s in many["slices"]:
        expect(s["min"] <= s["low"] and s["max"] >= s["high"], f"a slice's axis cuts off points: {s}")
    expect(all(len(label) == 2 and " … " in label[1] for label in many["parallel"]),
           f"parallel axes without their values: {many['parallel']}")
    expect(many["importance"] == 2 and not many["note"], f"importance with 40 trials: {many}")
    expect(few["importance"] == 0 and "20 trials" in few["note"], f"importance with 8 trials: {few}")
    return "slices on log axes spanning every point, parallel axes with their ends, importance from 20 trials"


def banner_after(browser, what, predicate, timeout=60):
    """The page's banner once `predicate` holds for it (" " for no banner)."""
    return wait_for(lambda: (lambda b: (b or " ") if predicate(b) else None)(state(browser)["banner"]),
                    timeout, what)


def check_damage(browser, results, base, token):
    kept = results + ".kept"
    os.rename(results, kept)
    with open(results + ".tmp", "wb") as f:
        f.write(os.urandom(1 << 16))
    os.rename(results + ".tmp", results)  # replaced under the same name
    garbage = banner_after(browser, "the page to say the file cannot be read", lambda b: "cannot" in b)
    expect(get(base + "data?token=" + token)[0] == 200, "the server stopped answering")
    with open(kept, "rb") as source, open(results + ".tmp", "wb") as f:
        f.write(source.read()[: os.path.getsize(kept) // 2])
    os.rename(results + ".tmp", results)
    time.sleep(3)
    truncated = state(browser)["banner"]
    expect(truncated, "the page said nothing about a truncated results file")
    expect(get(base + "data?token=" + token)[0] == 200, "the server stopped answering")
    # A file that crashes the HDF5 library (tests/cli/data/recorded/hdf5-crash.h5): the reader
    # process dies of SIGSEGV, the server says so and starts another.
    shutil.copy(os.path.join(ROOT, "tests", "cli", "data", "recorded", "hdf5-crash.h5"), results + ".tmp")
    os.rename(results + ".tmp", results)
    crashed = banner_after(browser, "the page to say the reader crashed", lambda b: "SIGSEGV" in b)
    expect(get(base + "data?token=" + token)[0] == 200, "the server stopped answering")
    # A file on which HDF5 loops for ever (tests/cli/data/recorded/hdf5-stall.h5): the read is ended
    # after --read-timeout (5 s here) and the page says so.
    shutil.copy(os.path.join(ROOT, "tests", "cli", "data", "recorded", "hdf5-stall.h5"), results + ".tmp")
    os.rename(results + ".tmp", results)
    stalled = banner_after(browser, "the page to say the read took too long", lambda b: "took over 5" in b)
    expect(get(base + "data?token=" + token)[0] == 200, "the server stopped answering")
    os.replace(kept, results)
    banner_after(browser, "the page to recover", lambda b: b == "")
    return (f"replaced by garbage: {garbage[:70]!r}...; truncated: {truncated[:70]!r}...; by a file "
            f"that crashes HDF5: {crashed[:110]!r}...; by one on which HDF5 loops: {stalled[:90]!r}...; "
            "put back: the page recovered")


def take_screenshot(slurmtune, chrome, workdir, png):
    example = os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp")
    for name in os.listdir(example):
        if name.endswith((".py", ".toml")):
            shutil.copy(os.path.join(example, name), workdir)
    results = os.path.join(workdir, "two-objectives.h5")
    run = subprocess.Popen([slurmtune, "run", os.path.join(workdir, "two-objectives.toml"), "-o", results,
                            "--launcher", "local", "--slots", "2"], cwd=workdir,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(results), 60, "the results file")
    dashboard, base, _, token, _ = start_dashboard(slurmtune, results, workdir)
    browser = Browser(chrome, workdir)
    try:
        browser.call("Page.navigate", url=base + "?token=" + token)
        # While it runs, with a few trials on the front.
        wait_for(lambda: re.search(r"completed ([5-9]|\d\d)", state(browser)["outcome"]) and
                 "running" in state(browser)["outcome"], 600, "completed and running trials")
        browser.screenshot(png)
        expect("running" in state(browser)["outcome"], "the study ended before the screenshot: try again")
    finally:
        browser.close()
        dashboard.terminate()
        run.terminate()
        run.wait(timeout=120)
    print("screenshot of the running two-objective study in", png)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slurmtune")
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    chrome = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if not chrome:
        print("SKIPPED: no chromium (tests/setup-debian.sh installs it)")
        raise SystemExit(77)
    workdir = tempfile.mkdtemp(prefix="slurmtune-dashboard-")
    if args.screenshot:
        take_screenshot(os.path.abspath(args.slurmtune), chrome, workdir, os.path.abspath(args.screenshot))
    else:
        check_live(os.path.abspath(args.slurmtune), chrome, workdir)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
