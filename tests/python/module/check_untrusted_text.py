#!/usr/bin/env python3
"""Untrusted text through every output (issue #25).

    check_untrusted_text.py SLURMTUNE ARTIFACTS

1. Names a study file may hold (markup, quotes, `$`, `=`, `&`, spaces, non-Latin and
   right-to-left letters, emoji) -- drawn at random, seeded -- go through `simulate -o`
   and `run` (local launcher; the trials get the names as `{placeholder}` arguments,
   report under the hostile metric name, save checkpoints under hostile file names, and
   every third fails with hostile stderr holding escape sequences), then through
   `status`, `best` (TOML read back with tomllib, flags read back by bash, JSON),
   `export` (CSV read back with the csv module, with and without --formula-guard, JSON
   lines, and TensorBoard event files parsed with protobuf) and `html` (opened in
   headless Chromium: the script runs, no payload becomes markup, every name shows as
   written). Each must round-trip exactly.
2. Names it may not hold (NUL, other control characters, DEL, C1, bidirectional
   controls, ill-formed UTF-8) in every kind of name are refused by `validate` with the
   key and the character, and nothing is written.
3. A failed trial whose stderr is long Cyrillic text is recorded cut at a character
   boundary with "…", and every reader decodes it.
"""
import csv
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))
sys.path.insert(0, HERE)
from slurmtune.study import Study  # noqa: E402
from check_html_report import console_errors, run_browser  # noqa: E402
from check_tensorboard_export import build_classes, events, hparams_data, plain  # noqa: E402

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

# Pieces of names: each is valid text that some output format treats specially.
PIECES = ["<!--", "<script>", "</script>", "-->", "\"", "'", "\\", "$", "cost_$_usd_$", "=cmd|' /C calc'!A0",
          "+1", "-", "@SUM(1)", "&amp;", "R&D", "a b", "[x]", "{y}", "#", ";", "`id`", "$(id)", "*",
          "Привет", "日本語", "שלום", "مرحبا", "😀", "é", "\u00a0", ",", "\u2028", ".", "x"]


def toml_string(text):
    # JSON's escapes of control characters are TOML's; other characters stay as they are
    # (TOML has no surrogate pairs).
    return json.dumps(text, ensure_ascii=False)


def random_name(rng, used):
    while True:
        name = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))
        if name not in used and name not in ("seq", "trial", "step", "time"):
            used.add(name)
            return name


def placeholder_text(text):
    """`text` as a literal argument of [trial] command (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


class HostileStudy:
    """One random study: its names, and its TOML for `simulate` or for `run`."""

    def __init__(self, rng):
        used = set()
        self.name, self.metric, self.resource = (random_name(rng, used) for _ in range(3))
        self.params = [random_name(rng, used) for _ in range(3)]
        choices = [random_name(rng, set()) for _ in range(3)]
        self.choices = list(dict.fromkeys(choices + ["R&D", "=1+1"]))
        self.seed = rng.randint(1, 10**6)
        # What the failing trials print: names, markup and escape sequences, two lines.
        self.error = random_name(rng, set()) + "\x1b[31m\r" + random_name(rng, set()) + "\nline 2\x07"
        self.checkpoint = "ckpt-" + random_name(rng, set()).replace("/", "_")

    def toml(self, trial_script=None):
        command = '["true"]'
        if trial_script:
            # Every parameter a placeholder can name (no braces in its name) is passed.
            named = [p for p in self.params if "{" not in p and "}" not in p]
            argv = [sys.executable, trial_script, placeholder_text(self.metric), placeholder_text(self.error),
                    placeholder_text(self.checkpoint), placeholder_text(json.dumps(named))]
            command = "[" + ", ".join(toml_string(a) for a in argv + ["{" + p + "}" for p in named]) + "]"
        return f"""[study]
name = {toml_string(self.name)}
metric = {toml_string(self.metric)}
mode = "min"
seed = {self.seed}
max_trials = 12
[search]
{toml_string(self.params[0])} = {{ uniform = [-1.0, 1.0] }}
{toml_string(self.params[1])} = {{ choice = [{", ".join(toml_string(c) for c in self.choices)}] }}
{toml_string(self.params[2])} = {{ randint = [1, 8] }}
[scheduler]
type = "asha"
resource = {toml_string(self.resource)}
grace_period = 1
reduction_factor = 3
max_t = 9
[trial]
command = {command}
max_failures = 0
"""


def run(*argv, ok=True, **kw):
    out = subprocess.run(list(argv), capture_output=True, text=True, timeout=300, **kw)
    if ok:
        assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


def check_round_trips(slurmtune, work, study, path, chrome, env):
    """Every output of the results file at `path` gives back `study`'s names."""
    name, metric, params = study.name, study.metric, study.params
    with Study(path) as s:
        assert s.name == name and s.metric == metric, (s.name, name, s.metric, metric)
        best = s.best_config
        trials = s.trials.copy()
    assert list(best) == params, (list(best), params)

    status = run(slurmtune, "status", path).stdout
    assert name in status, f"status lost the study name {name!r}"

    # best: TOML read back with tomllib, flags read back by bash, JSON.
    if tomllib:
        out = run(slurmtune, "best", path, "--format", "toml").stdout
        assert tomllib.loads(out) == best, f"TOML {out!r} is not {best!r}"
    flags = run(slurmtune, "best", path, "--format", "flags").stdout
    words = run("bash", "-c", 'eval "set -- $1"; printf "%s\\0" "$@"', "bash", flags).stdout
    expected = [f"--{p}={str(v).lower() if isinstance(v, bool) else v}" for p, v in best.items()]
    got = words.split("\0")[:-1]
    assert len(got) == len(expected) and all(
        g.split("=", 1)[0] == e.split("=", 1)[0] for g, e in zip(got, expected)), (got, expected)
    for g, (p, v) in zip(got, best.items()):
        value = g[len(p) + 3:]
        assert (float(value) == v if isinstance(v, float) else value == str(v)), (g, p, v)
    assert json.loads(run(slurmtune, "best", path, "--format", "json").stdout) == best

    # export: CSV read back exactly with --no-formula-guard (names, choice values and
    # errors intact), the formula guard of the default, JSON lines.
    # Read as bytes: text mode would turn the "\r" of an error into "\n".
    exported = subprocess.run([slurmtune, "export", path, "--no-formula-guard"], capture_output=True,
                              timeout=300, check=True)
    rows = list(csv.reader(io.StringIO(exported.stdout.decode("utf-8"), newline="")))
    header = rows[0]
    for p in params:
        assert "config/" + p in header, f"export lost the column of {p!r}: {header}"
    column = header.index("config/" + params[1])
    assert [r[column] for r in rows[1:]] == [str(v) for v in trials["config/" + params[1]]]
    errors = header.index("error")
    assert [r[errors] for r in rows[1:]] == list(trials["error"]), "export changed an error text"
    guarded = list(csv.reader(io.StringIO(run(slurmtune, "export", path).stdout)))
    assert guarded == list(csv.reader(io.StringIO(run(slurmtune, "export", path, "--formula-guard").stdout)))
    for plain_row, safe in zip(rows[1:], guarded[1:]):
        cell, guarded_cell = plain_row[column], safe[column]
        assert guarded_cell == ("'" + cell if cell[:1] in ("=", "+", "-", "@") else cell), (cell, guarded_cell)
    # JSON lines end at "\n" only (a name may hold U+2028, which splitlines() splits at).
    for line in run(slurmtune, "export", path, "--format", "json").stdout.split("\n")[:-1]:
        json.loads(line)
    check_tensorboard(slurmtune, path, study, trials)

    # html: the script runs, no payload is markup, names show as written.
    page = path + ".html"
    run(slurmtune, "html", path, "-o", page, env=env)
    with open(page, encoding="utf-8") as f:
        html_text = f.read()
    assert len(re.findall(r"<script\b", html_text)) == 2, "a name became a <script> element"
    assert "R&amp;amp;D" not in html_text, "the choice R&D was escaped twice"
    data = re.search(r'<script id="trial-data" type="application/json">(.*?)</script>', html_text, re.S)
    json.loads(data.group(1))
    if chrome:
        dom, log = run_browser(chrome, "file://" + page, "--dump-dom")
        assert not console_errors(log), console_errors(log)
        assert 'data-ready="yes"' in dom, "the page's script did not run"
        assert len(re.findall(r"<script\b", dom)) == 2, "a name became a <script> element"
        import html as html_module
        heading = re.search(r"<h1><bdi>(.*?)</bdi></h1>", dom, re.S).group(1)
        assert html_module.unescape(heading) == name, (heading, name)


def check_objectives(slurmtune, work, rng, env):
    """Two objectives with hostile names and a constraint on one of them, simulated with
    NSGA-II: best (JSON, TOML, flags), status, export (CSV, JSON) and the Python module
    name the same front by the same names; the constraint's text reads back."""
    used = set()
    objectives = [random_name(rng, used), random_name(rng, used)]
    constraint = f"{objectives[0]} <= 100.0"  # simulated losses lie far below: feasible
    toml_path = os.path.join(work, "objectives.toml")
    with open(toml_path, "w", encoding="utf-8") as f:
        f.write(f"""[study]
name = {toml_string(random_name(rng, used))}
metric = [{toml_string(objectives[0])}, {toml_string(objectives[1])}]
mode = ["min", "max"]
constraints = [{toml_string(constraint)}]
seed = 3
max_trials = 30
sampler = "nsga2"
[sampler]
population_size = 4
[search]
{toml_string(random_name(rng, used))} = {{ uniform = [0.0, 1.0] }}
{toml_string(random_name(rng, used))} = {{ uniform = [0.0, 1.0] }}
""")
    path = os.path.join(work, "objectives.h5")
    run(slurmtune, "simulate", toml_path, "-w", "3", "-q", "-o", path)
    with Study(path) as s:
        assert s.objectives == objectives and s.constraints == [constraint], (s.objectives, s.constraints)
        front = s.pareto_front()
        values = {int(i): [front.loc[i, "objective/" + o] for o in objectives] for i in front.index}
        assert s.standings["feasible"].all() and list(s.trials["feasible"]) == [True] * 30
        # Schema 10: the standings come from /trials and say what every report says.
        pd.testing.assert_frame_equal(s.standings, s.standings_from_metrics(), check_dtype=False)
    got = [json.loads(line) for line in run(slurmtune, "best", path, "-f", "json").stdout.splitlines()]
    assert {t["trial"]: [t["values"][o] for o in objectives] for t in got} == values, (got, values)
    if tomllib:
        tables = tomllib.loads(run(slurmtune, "best", path).stdout)["trial"]
        assert {t["id"]: [t[o] for o in objectives] for t in tables} == values, tables
    assert len(run(slurmtune, "best", path, "-f", "flags").stdout.splitlines()) == len(values)
    status = run(slurmtune, "status", path).stdout
    assert all(o in status for o in objectives) and constraint in status, status
    exported = subprocess.run([slurmtune, "export", path, "--no-formula-guard"], capture_output=True,
                              timeout=300, check=True)
    header = next(csv.reader(io.StringIO(exported.stdout.decode("utf-8"), newline="")))
    assert [h for h in header if h.startswith("objective/")] == ["objective/" + o for o in objectives], header
    for line in run(slurmtune, "export", path, "--format", "json").stdout.split("\n")[:-1]:
        row = json.loads(line)
        assert all("objective/" + o in row for o in objectives), row
    return objectives


def check_tensorboard(slurmtune, path, study, trials):
    """`export --format tensorboard`: every name in the event files as written."""
    logs = path + ".tensorboard"
    run(slurmtune, "export", path, "--format", "tensorboard", "-o", logs)
    classes = build_classes()
    (experiment_event,) = events(classes, logs)
    experiment = hparams_data(classes, experiment_event, "_hparams_/experiment").experiment
    assert experiment.name == study.name, (experiment.name, study.name)
    infos = {h.name: h for h in experiment.hparam_infos}
    assert list(infos) == study.params, (list(infos), study.params)
    assert [plain(v) for v in infos[study.params[1]].domain_discrete.values] == study.choices
    assert [m.name.tag for m in experiment.metric_infos] == [study.metric]
    for trial, row in trials.iterrows():
        run_events = events(classes, os.path.join(logs, f"trial-{trial}"))
        start = hparams_data(classes, run_events[0], "_hparams_/session_start_info").session_start_info
        assert plain(start.hparams[study.params[1]]) == row["config/" + study.params[1]]
        assert {e.summary.value[0].tag for e in run_events[1:-1]} <= {study.metric}


def check_run(slurmtune, work, study, index, env):
    """The study run for real: names through argv and the client, errors, checkpoints."""
    toml_path = os.path.join(work, f"run-{index}.toml")
    with open(toml_path, "w", encoding="utf-8") as f:
        f.write(study.toml(os.path.join(HERE, "untrusted_trial.py")))
    path = os.path.join(work, f"run-{index}.h5")
    run(slurmtune, "run", toml_path, "-o", path, "--launcher", "local", env=env)
    with Study(path) as s:
        trials, checkpoints = s.trials.copy(), s.checkpoints.copy()
    assert "argv mismatch" not in " ".join(trials["error"]), "a trial got another value in argv"
    failed = trials[trials["status"] == "failed"]
    assert len(failed) > 0 and all(study.error in e for e in failed["error"]), list(failed["error"])
    assert len(checkpoints) > 0
    for saved in checkpoints["path"]:
        assert saved.endswith("/" + study.checkpoint) and os.path.exists(os.path.join(work, saved)), saved
    return path


def check_refusals(slurmtune, work):
    bad = {"NUL": "\\u0000", "newline": "\\n", "escape": "\\u001b[31m", "DEL": "\\u007f",
           "C1": "\\u0085", "RLO": "\\u202e", "isolate": "\\u2066"}
    places = {
        "[study] name": ('name = "s{v}"', "name"),
        "[study] metric": ('metric = "m{v}"', "metric"),
        "[search] parameter": ('"p{v}" = {{ uniform = [0, 1] }}', "p"),
        "[search] choice": ('c = {{ choice = ["a", "b{v}"] }}', "c"),
        "[scheduler] resource": ('resource = "r{v}"', "resource"),
    }
    refused = 0
    for what, escape in bad.items():
        for place, (line, key) in places.items():
            study = {"study": 'name = "s"\nmetric = "m"\nmode = "min"',
                     "search": "x = { uniform = [0, 1] }", "scheduler": 'type = "asha"\nmax_t = 9'}
            table = place.split("]")[0][1:]
            filled = line.format(v=escape)
            if table == "study":
                study["study"] = "\n".join(l for l in study["study"].splitlines()
                                           if not l.startswith(key + " ")) + "\n" + filled
            else:
                study[table] += "\n" + filled
            text = "\n".join(f"[{t}]\n{body}" for t, body in study.items()) + '\n[trial]\ncommand = ["true"]\n'
            path = os.path.join(work, "bad.toml")
            with open(path, "w") as f:
                f.write(text)
            out = run(slurmtune, "validate", path, ok=False)
            message = out.stderr
            assert out.returncode != 0, f"{what} in {place} was accepted:\n{text}"
            assert "bad.toml:" in message and ("U+" in message or "UTF-8" in message), \
                f"{what} in {place}: {message!r}"
            assert "\x00" not in message and "\x1b" not in message, f"the message carries it: {message!r}"
            refused += 1
    # Ill-formed UTF-8 in a name (TOML readers refuse it too, with the place).
    path = os.path.join(work, "latin1.toml")
    with open(path, "wb") as f:
        f.write(b'[study]\nname = "caf\xe9"\nmetric = "m"\n[search]\nx = { uniform = [0, 1] }\n'
                b'[scheduler]\ntype = "asha"\nmax_t = 9\n[trial]\ncommand = ["true"]\n')
    out = run(slurmtune, "validate", path, ok=False)
    assert out.returncode != 0 and "latin1.toml" in out.stderr, out.stderr
    return refused + 1


def check_cut_error(slurmtune, work, env):
    toml_path = os.path.join(work, "cyrillic.toml")
    message = "Ошибка: " + "данные повреждены " * 60 + "конец"
    with open(toml_path, "w", encoding="utf-8") as f:
        f.write(f"""[study]
name = "cyrillic"
metric = "loss"
max_trials = 1
[search]
x = {{ uniform = [0, 1] }}
[scheduler]
type = "fifo"
max_t = 3
[trial]
command = ["/usr/bin/python3", "-c", {json.dumps("import sys; sys.stderr.write(" + repr(message) + "); sys.exit(3)")}]
max_failures = 0
""")
    path = os.path.join(work, "cyrillic.h5")
    # Its one trial fails: the run says so and exits 1 (issue #58).
    failed = subprocess.run([slurmtune, "run", toml_path, "-o", path, "--launcher", "local"],
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "no trial completed" in failed.stdout + failed.stderr, \
        f"exit {failed.returncode}\n{failed.stdout}\n{failed.stderr}"
    with Study(path) as s:
        error = s.trials.iloc[0]["error"]
    # Cut in the middle: the exit status first, the end of what the trial printed last
    # (where Python's exception is), never half a character.
    assert error.startswith("exit status 3") and "…" in error and error.endswith("конец"), error
    assert "\ufffd" not in error and len(error.encode()) <= 512, error
    exported = subprocess.run([slurmtune, "export", path], capture_output=True, timeout=60)
    exported.stdout.decode("utf-8")  # valid UTF-8
    run(slurmtune, "html", path, "-o", path + ".html", env=env)
    return len(error.encode())


def main():
    slurmtune, artifacts = sys.argv[1], sys.argv[2]
    os.makedirs(artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="slurmtune-untrusted-")
    env = dict(os.environ, SLURMTUNE_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(p for p in (os.path.join(ROOT, "share", "slurmtune", "python"),
                                                      os.environ.get("PYTHONPATH")) if p))
    chrome = None
    for candidate in ("chromium", "chromium-browser", "google-chrome"):
        chrome = chrome or shutil.which(candidate)
    rng = random.Random(25)
    names = []
    for i in range(8):
        study = HostileStudy(rng)
        toml_path = os.path.join(work, f"hostile-{i}.toml")
        with open(toml_path, "w", encoding="utf-8") as f:
            f.write(study.toml())
        path = os.path.join(work, f"hostile-{i}.h5")
        run(slurmtune, "simulate", toml_path, "-w", "3", "-q", "-o", path)
        check_round_trips(slurmtune, work, study, path, chrome if i < 2 else None, env)
        if i < 4:
            path = check_run(slurmtune, work, study, i, env)
            check_round_trips(slurmtune, work, study, path, chrome if i < 2 else None, env)
        names.append(study.name)
    objectives = check_objectives(slurmtune, work, rng, env)
    refused = check_refusals(slurmtune, work)
    cut = check_cut_error(slurmtune, work, env)
    shutil.rmtree(work, ignore_errors=True)
    print(f"untrusted text: 8 random studies round-trip through simulate -o (4 also through run), "
          f"status, best (toml{'' if tomllib else ' skipped: no tomllib'}, flags, json), export "
          f"(csv, --formula-guard, json, tensorboard) and html ({'4 in Chromium' if chrome else 'no Chromium'}), "
          f"e.g. study names {names[:2]!r}; two objectives {objectives!r} and a constraint on "
          f"one alike in best, status, export and Python; {refused} bad names refused by validate; a "
          f"Cyrillic error cut to {cut} bytes at a character boundary")


if __name__ == "__main__":
    main()
