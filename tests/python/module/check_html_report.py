#!/usr/bin/env python3
"""`slurmtune html` in a real browser: a study run with the local launcher (one trial
fails for good, so the page has a failure to show) becomes one HTML page, which headless
Chromium loads from a file with no network. The page must run its script without a
console error, show the study's counts, best trial, plots and failure, hide trials by
outcome when asked (#hide=stopped), and refer to nothing outside itself. A study of two
objectives with a constraint shows its Pareto plot, its front in place of the best trials
and its infeasible trials apart. A screenshot is kept as a test artefact.

    check_html_report.py SLURMTUNE ARTIFACT_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FAULT_TRIAL = os.path.join(ROOT, "tests", "run", "trials", "fault_trial.py")
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
from slurmtune.study import Study  # noqa: E402

STUDY = """[study]
name = "page"
metric = "loss"
mode = "min"
seed = 5
max_trials = 12
[search]
x = {{ uniform = [-1.0, 1.0] }}
kind = {{ choice = ["a", "b"] }}
[scheduler]
type = "asha"
grace_period = 1
reduction_factor = 3
max_t = 9
[trial]
command = ["{python}", "{trial}", "--x={{x}}", "--steps=9", "--faults=3:exit"]
"""


TWO_OBJECTIVES = """[study]
name = "two"
metric = ["loss", "cost"]
mode = ["min", "min"]
metrics = ["mem"]
constraints = ["mem <= 2.4"]
seed = 3
max_trials = 10
sampler = "nsga2"
[sampler]
population_size = 3
[search]
x = {{ uniform = [-1.0, 1.0] }}
[scheduler]
type = "fifo"
max_t = 3
[trial]
command = ["{python}", "{trial}", "--x={{x}}", "--record=/dev/null", "--steps=3", "--sleep=0.01", "--cost"]
"""


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    print("SKIPPED: no chromium (tests/setup-debian.sh installs it)")
    raise SystemExit(77)


def run_browser(chrome, url, *extra):
    """Loads `url` headless; returns (its stdout: the DOM after the scripts ran, with
    --dump-dom; the browser's log)."""
    out = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                          "--no-first-run", "--enable-logging=stderr", "--v=0",
                          "--virtual-time-budget=5000", *extra, url],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"chromium failed ({out.returncode}):\n{out.stderr[-3000:]}"
    return out.stdout, out.stderr


def console_errors(log):
    """The page's console messages and uncaught exceptions. Chromium logs console.error
    and console.log alike (INFO:CONSOLE), and the page logs nothing: any one is a fault."""
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def main():
    slurmtune, artifacts = sys.argv[1], sys.argv[2]
    chrome = browser()
    os.makedirs(artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="slurmtune-html-")
    study_toml = os.path.join(work, "page.toml")
    with open(study_toml, "w") as f:
        f.write(STUDY.format(python=sys.executable, trial=FAULT_TRIAL))
    path = os.path.join(work, "page.h5")
    run = subprocess.run([slurmtune, "run", study_toml, "-o", path, "--launcher", "local",
                          "--slots", "2"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    page = os.path.join(work, "page.html")
    env = dict(os.environ, SLURMTUNE_PYTHON=sys.executable)
    made = subprocess.run([slurmtune, "html", path, "-o", page], capture_output=True, text=True,
                          env=env, timeout=300)
    assert made.returncode == 0 and "wrote" in made.stdout, made.stdout + made.stderr

    with open(page, encoding="utf-8") as f:
        text = f.read()
    external = re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//[^"' >]+""", text) + \
        re.findall(r"@import|url\(\s*['\"]?https?:", text)
    assert not external, f"the page loads something from outside: {external[:5]}"

    with Study(path) as s:
        trials, best = s.trials, int(s.best_trial["id"])
        stopped = sorted(trials[trials["status"] == "stopped"]["id"])
    dom, log = run_browser(chrome, "file://" + page, "--dump-dom")
    errors = console_errors(log)
    assert not errors, "console errors:\n" + "\n".join(errors)
    assert 'data-ready="yes"' in dom, "the page's script did not finish"
    lines = int(re.search(r'<span id="interactive-lines">(\d+)</span>', dom).group(1))
    assert lines >= len(trials), f"only {lines} hoverable trial lines for {len(trials)} trials"
    summary = re.search(r'<td id="summary-trials"><bdi>([^<]*)</bdi></td>', dom).group(1)
    assert summary.startswith(f"{len(trials)} started"), summary
    assert f"trial {best}:" in re.search(r'<td id="summary-best"><bdi>([^<]*)</bdi></td>', dom).group(1)
    for plot in ("curves", "best", "rungs", "parallel", "slices", "importance"):
        assert re.search(rf'<figure id="plot-{plot}"><svg', dom), f"no {plot} plot"
    failures = dom[dom.index('id="failures"'):]
    assert "simulated failure in trial 3" in failures, "the failure's error text is missing"
    filters = re.search(r'<p id="filters"[^>]*>', dom).group(0).replace("data-hidden", "")
    assert "hidden" not in filters, "the script did not show the filters: " + filters

    # Filtering by outcome, in the browser: stopped trials' lines are hidden, others not.
    filtered, log = run_browser(chrome, "file://" + page + "#hide=stopped", "--dump-dom")
    assert not console_errors(log), console_errors(log)
    hidden = set(int(t) for t in re.findall(r'<g id="curves-trial-(\d+)" style="display: none;"', filtered))
    assert stopped and hidden == set(stopped), f"hidden {sorted(hidden)}, stopped {stopped}"
    assert 'data-hidden="stopped"' in filtered, "the stopped box is not unticked"

    # A PBT study's page also shows the configuration schedules PBT found.
    pbt = os.path.join(work, "pbt.h5")
    subprocess.run([slurmtune, "simulate", os.path.join(ROOT, "share", "slurmtune", "examples",
                                                        "pbt-simulated.toml"),
                    "-w", "4", "-q", "-o", pbt], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([slurmtune, "html", pbt, "-o", pbt + ".html"], check=True, env=env,
                   stdout=subprocess.DEVNULL, timeout=300)
    with open(pbt + ".html", encoding="utf-8") as f:
        assert re.search(r'<figure id="plot-schedule-lr"><svg', f.read()), "no PBT schedule"

    # Two objectives with a constraint: the Pareto plot and the front in place of the best
    # trials, the infeasible trials apart.
    argv_trial = os.path.join(ROOT, "tests", "run", "trials", "argv_trial.py")
    two_toml = os.path.join(work, "two.toml")
    with open(two_toml, "w") as f:
        f.write(TWO_OBJECTIVES.format(python=sys.executable, trial=argv_trial))
    two = os.path.join(work, "two.h5")
    subprocess.run([slurmtune, "run", two_toml, "-o", two, "--launcher", "local", "--slots", "2"],
                   check=True, capture_output=True, timeout=300)
    subprocess.run([slurmtune, "html", two, "-o", two + ".html"], check=True, env=env,
                   stdout=subprocess.DEVNULL, timeout=300)
    with Study(two) as s:
        front = list(s.pareto_front().index)
        infeasible = sorted(s.standings.index[~s.standings["feasible"]])
    assert front and infeasible, f"front {front}, infeasible {infeasible}: the page shows neither"
    two_dom, log = run_browser(chrome, "file://" + two + ".html", "--dump-dom")
    assert not console_errors(log), console_errors(log)
    assert re.search(r'<figure id="plot-pareto"><svg', two_dom), "no Pareto plot"
    shown = re.search(r'<td id="summary-Pareto-front"><bdi>([^<]*)</bdi>', two_dom).group(1)
    assert shown.endswith(", ".join(str(i) for i in front)), f"summary front {shown}, expected {front}"
    section = two_dom[two_dom.index('id="infeasible"'):two_dom.index('id="decisions"')]
    listed = sorted(int(i) for i in re.findall(r'<tr data-status="[a-z]+"><td><bdi>(\d+)</bdi>', section))
    assert listed == infeasible, f"infeasible trials listed {listed}, expected {infeasible}"
    best_section = two_dom[two_dom.index('id="best-trials"'):two_dom.index('id="infeasible"')]
    rows = [int(i) for i in re.findall(r'<tr data-status="[a-z]+"><td><bdi>(\d+)</bdi>', best_section)]
    assert "<h2>Pareto front</h2>" in best_section and rows == front, f"front table {rows}, expected {front}"

    # A study no trial has reported in yet still gets a page, which says so.
    silent_toml = os.path.join(work, "silent.toml")
    with open(silent_toml, "w") as f:
        f.write('[study]\nname = "silent"\nmetric = "loss"\nmax_trials = 2\n[search]\n'
                'x = { uniform = [0, 1] }\n[trial]\ncommand = ["true"]\n')
    silent = os.path.join(work, "silent.h5")
    subprocess.run([slurmtune, "run", silent_toml, "-o", silent, "--launcher", "local"],
                   check=True, capture_output=True, timeout=120)
    made = subprocess.run([slurmtune, "html", silent, "-o", silent + ".html"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0 and not made.stderr, made.stderr
    with open(silent + ".html", encoding="utf-8") as f:
        assert "no trial has reported yet" in f.read()

    shot = os.path.join(artifacts, "html-report.png")
    run_browser(chrome, "file://" + page, "--window-size=1200,3000", f"--screenshot={shot}")
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 20000, "the screenshot is nearly empty"
    print(f"html report: {len(trials)} trials, {os.path.getsize(page) / 1e3:.0f} kB page, "
          f"{lines} hoverable lines, no console error; #hide=stopped hid {len(hidden)} curves; "
          f"screenshot {shot}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
