"""One self-contained HTML page about a results file: ``slurmtune html STUDY.h5 -o study.html``
(or ``python3 -m slurmtune.report_html STUDY.h5 -o study.html``).

The page opens from a file (``file://``) with no network, no CDN and no server, so it can
be copied to a laptop. Plots are inline SVG (readable without JavaScript); a small
inline script adds what helps: hovering a curve names its trial and configuration, and
check boxes hide trials by outcome. Large studies are aggregated and sampled (at most
``--curves`` trials' curves, 200 points each; the page says so), which keeps the page
small and quick to write.
"""
from __future__ import annotations

import argparse
import datetime
import html
import io
import json
import os
import sys
import re
import time

try:
    import numpy as np
    import pandas as pd

    from . import plots
    from .study import ResultsFileError, Study
except ImportError as missing:  # said once, plainly, instead of a traceback
    sys.exit(f"slurmtune html: {sys.executable} cannot import {missing.name}: it needs Python 3.9+ "
             "with numpy, h5py, pandas and matplotlib (set SLURMTUNE_PYTHON to one that has them; "
             "a Spack install has them with +python +plots)")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.1em; } .sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 0.9em; }
figure svg { max-width: 100%; height: auto; }
pre { white-space: pre-wrap; margin: 0; font-size: 0.85em; }
.note { color: #8a5a00; } #filters label { margin-right: 1em; }
#tooltip { position: fixed; pointer-events: none; background: #fffbe6; border: 1px solid #caa;
  padding: 0.3em 0.5em; font-size: 0.85em; display: none; max-width: 420px; }
svg g[id*="trial-"].hot path { stroke-width: 3 !important; stroke-opacity: 1 !important; }
"""

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('trial-data').textContent);
  var tip = document.getElementById('tooltip');
  var hidden = {};
  var lines = document.querySelectorAll('svg g[id*="trial-"]');
  function trialOf(el) { var m = /trial-(\\d+)$/.exec(el.id); return m ? m[1] : null; }
  lines.forEach(function (el) {
    var id = trialOf(el), t = data[id];
    if (!t) return;
    el.addEventListener('mouseenter', function () {
      el.classList.add('hot');
      tip.textContent = 'trial ' + id + ' (' + t.status + '), best ' + t.best + ': ' + t.config;
      tip.style.display = 'block';
    });
    el.addEventListener('mousemove', function (e) {
      tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
    });
    el.addEventListener('mouseleave', function () { el.classList.remove('hot'); tip.style.display = 'none'; });
  });
  function apply() {
    lines.forEach(function (el) {
      var t = data[trialOf(el)];
      if (t) el.style.display = hidden[t.status] ? 'none' : '';
    });
    document.querySelectorAll('tr[data-status]').forEach(function (row) {
      row.style.display = hidden[row.dataset.status] ? 'none' : '';
    });
    document.getElementById('filters').dataset.hidden =
        Object.keys(hidden).filter(function (s) { return hidden[s]; }).join(',');
  }
  // "#hide=stopped,failed" in the address hides those outcomes from the start (a link
  // to a filtered view).
  var wanted = /hide=([\w,]+)/.exec(location.hash);
  (wanted ? wanted[1].split(',') : []).forEach(function (s) { hidden[s] = true; });
  document.querySelectorAll('#filters input').forEach(function (box) {
    box.checked = !hidden[box.value];
    box.addEventListener('change', function () { hidden[box.value] = !box.checked; apply(); });
  });
  apply();
  document.getElementById('filters').hidden = false;
  document.getElementById('interactive-lines').textContent = String(lines.length);
  document.body.dataset.ready = 'yes';
})();
"""


def _svg(figure, prefix):
    """The figure as inline SVG (no XML prologue); trial ids made unique per figure."""
    import matplotlib.pyplot as plt
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    plt.close(figure)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    return text.replace('id="trial-', f'id="{prefix}-trial-')


def _plain(value):
    """A cell's text, not yet escaped: reals in 6 digits, NaN (and a parameter a trial
    does not have) as nothing."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else f"{value:.6g}"
    return str(value)


def _cell(value):
    """A cell's text as HTML, isolated: a right-to-left name or error does not reorder
    the text around it."""
    text = html.escape(_plain(value))
    return f"<bdi>{text}</bdi>" if text else ""


def _script_json(value):
    """JSON for a <script type="application/json"> element: <, > and & as \\u escapes
    (still JSON), so no text in it -- "</script>", "<!--" -- is markup to the HTML parser."""
    return (json.dumps(value, ensure_ascii=False).replace("&", "\\u0026").replace("<", "\\u003c")
            .replace(">", "\\u003e").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _table(frame, columns, numeric=(), status_column=None):
    head = "".join(f"<th><bdi>{html.escape(c)}</bdi></th>" for c in columns)
    rows = []
    for _, row in frame.iterrows():
        status = f' data-status="{html.escape(str(row[status_column]))}"' if status_column else ""
        cells = "".join(f'<td class="n">{_cell(row[c])}</td>' if c in numeric else
                        f"<td>{_cell(row[c])}</td>" for c in columns)
        rows.append(f"<tr{status}>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _config_text(study, row):
    """The configuration as plain text (escaped where it is written out, once)."""
    return ", ".join(f"{c[len('config/'):]}={_plain(row[c])}" for c in study.config_columns
                     if _plain(row[c]) != "")


def _resolved_key(study, table, key):
    """One key of the study as it ran (the file's `resolved_study` TOML), e.g.
    ("scheduler", "type"); read with tomllib where Python has it (3.11+)."""
    text = study.attrs.get("resolved_study", "")
    try:
        import tomllib
        return tomllib.loads(text).get(table, {}).get(key, "?")
    except ImportError:
        section = re.search(rf"(?ms)^\[{table}\]\s*$(.*?)(?=^\[|\Z)", text)
        found = section and re.search(rf"""(?m)^{key}\s*=\s*["']?([^"'\n]*)["']?""", section.group(1))
        return found.group(1) if found else "?"
    except ValueError:  # tomllib.TOMLDecodeError
        return "?"


def summary_section(study):
    trials = study.trials
    counts = trials["status"].astype(str).value_counts()
    scheduler = _resolved_key(study, "scheduler", "type")
    rows = [("study", study.name), ("file", os.path.abspath(study.path)),
            ("metric", f"{study.metric} ({study.mode})"), ("scheduler", scheduler),
            ("sampler", study.attrs.get("sampler", "random")),
            ("trials", f"{len(trials)} started of max_trials "
                       f"{_resolved_key(study, 'study', 'max_trials')}"),
            ("reports", f"{study.committed['metrics']}"),
            ("by outcome", ", ".join(f"{k} {v}" for k, v in counts.items() if v))]
    if len(study.objectives) > 1:
        rows[2] = ("objectives", ", ".join(f"{o} ({m})" for o, m in zip(study.objectives, study.modes)))
    if study.constraints:
        infeasible = int((~study.standings["feasible"] & trials["status"].isin(
            ["completed", "stopped"])).sum())
        rows.append(("constraints", f"{', '.join(study.constraints)}: {infeasible} finished "
                                    "trial(s) infeasible, never best nor on the front"))
    if len(study.objectives) > 1:
        front = study.pareto_front()
        rows.append(("Pareto front", f"{len(front)} trial(s): " +
                     ", ".join(str(i) for i in front.index) if len(front) else "no trial yet"))
        return _summary_table(rows)
    try:
        best = study.best_trial
        rows.append(("best", f"trial {int(best['id'])}: {study.metric} {best['best_value']:.6g} "
                             f"at {study.attrs.get('resource', 'step')} {best['best_step']:g}"))
        rows.append(("best configuration", json.dumps(study.best_config)))
    except ValueError:
        rows.append(("best", "no trial has reported yet"))
    return _summary_table(rows)


def _summary_table(rows):
    body = "".join(f'<tr><th>{html.escape(k)}</th><td id="summary-{k.replace(" ", "-")}">'
                   f"<bdi>{html.escape(str(v))}</bdi></td></tr>" for k, v in rows)
    return f'<section id="summary"><h2>Summary</h2><table>{body}</table></section>'


def _utc_text(seconds):
    """Unix seconds as UTC text; "unknown" for a value no clock gives (NaN, out of range)."""
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return "unknown"


def slurm_section(study):
    sessions = study.sessions.copy()  # started: the wall clock, even for a simulation
    sessions["started"] = [_utc_text(t) for t in sessions["started"]]
    nodes = study.trials["nodes"].replace("", np.nan).dropna().value_counts()
    used = ", ".join(f"{n} ({c})" for n, c in nodes.head(30).items()) or "none recorded"
    more = f" and {len(nodes) - 30} more" if len(nodes) > 30 else ""
    return ('<section id="slurm"><h2>Slurm context</h2>'
            f"<p>{len(sessions)} session(s), {max(len(sessions) - 1, 0)} restart(s) (requeues or "
            f"resumes); created on {html.escape(study.attrs.get('host', '?'))}, job "
            f"{html.escape(study.attrs.get('slurm_job_id', '') or 'none')}. Trials per node: "
            f"{html.escape(used)}{more}.</p>"
            + _table(sessions, ["started", "host", "slurm_job_id", "version"]) + "</section>")


def plots_section(study, curves_limit):
    trials = study.trials
    figures = [("curves", "Learning curves by outcome; dotted lines are the rungs, crosses the "
                          "stop decisions at the report they judged.",
                lambda: plots.curves_by_outcome(study, None, limit=curves_limit)),
               ("best", "Best value so far against wall time and against trials started.",
                lambda: plots.best_so_far(study, None)),
               ("rungs", "Trials judged at each rung over time.",
                lambda: plots.rung_occupancy(study, None)),
               ("parallel", "Configurations against their best value (darker is better).",
                lambda: plots.parallel_coordinates(study, None, limit=curves_limit)),
               ("slices", "Best value against each parameter.",
                lambda: plots.slices(study, None)),
               ("importance", "Parameter importance: the share of the metric's variance that "
                              "each parameter's marginal means explain (first-order fANOVA "
                              "term over 10 quantile bins).",
                lambda: plots.plot_importance(study, None))]
    if len(study.objectives) > 1:
        figures.insert(0, ("pareto", "Completed trials by the first two objectives; the Pareto "
                                     "front (labelled with trial ids) joined, infeasible trials "
                                     "as crosses.",
                           lambda: plots.pareto(study, None)))
    if len(study.exploits):  # PBT: the configuration schedules it found
        numeric = [c for c in study.config_columns if trials[c].dtype.kind in "fi"][:3]
        for column in numeric:
            parameter = column[len("config/"):]
            drawn = plots.sample_trials(study, min(curves_limit, 200))
            figures.append((f"schedule-{parameter}",
                            f"PBT: each trial's {parameter} against the step, changed at each "
                            f"exploit ({len(study.exploits)} in all).",
                            lambda p=parameter, d=drawn: study.plot_schedule(None, p, d)))
    parts = []
    for name, caption, draw in figures:
        parts.append(f'<figure id="plot-{name}">{_svg(draw(), name)}'
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    sampled = ""
    if len(trials) > curves_limit:
        sampled = (f'<p class="note">This study has {len(trials)} trials and '
                   f"{study.committed['metrics']} reports: the curves and configurations of {curves_limit} "
                   f"trials are drawn (the best {curves_limit // 4} and a fixed random sample), "
                   f"at most {plots.MAX_POINTS} points each; counts, best values and tables use "
                   f"every trial.</p>")
    statuses = [s for s in plots.OUTCOME_COLOURS if (trials["status"].astype(str) == s).any()]
    filters = "".join(f'<label><input type="checkbox" value="{s}" checked> {s}</label>'
                      for s in statuses)
    return ('<section id="plots"><h2>Plots</h2>' + sampled +
            f'<p id="filters" hidden>Show: {filters} (<span id="interactive-lines">0</span> '
            "trial lines; hover one for its trial)</p>" + "".join(parts) + "</section>")


def tables_section(study, top=20, decisions=500):
    trials = study.trials
    ranked = plots._ranked(study)
    ranked = ranked[ranked["status"].astype(str) != "failed"]  # never best: in the failures
    if study.constraints:  # infeasible trials are never best: listed apart below
        ranked = ranked[study.standings.loc[ranked.index, "feasible"]]
    ranked = ranked.head(top).copy()
    ranked["configuration"] = [_config_text(study, row) for _, row in ranked.iterrows()]
    best = _table(ranked, ["id", "status", "best_value", "best_step", "reports", "nodes",
                           "configuration"], numeric=("best_value", "best_step", "reports"),
                  status_column="status")
    events = study.events
    # With learning-curve prediction a predicted winner's "continue" is a decision too.
    predicted = "predicted_mean" in events.columns and events["predicted_mean"].notna().any()
    decided = events["kind"].isin(["stop", "pause"])
    if predicted:
        decided |= (events["kind"] == "continue") & events["predicted_mean"].notna()
    judged = events[decided].tail(decisions)
    total = int(decided.sum())
    judged = judged.assign(status=judged["trial"].map(trials["status"].astype(str)))
    columns = ["time_s", "trial", "kind", "rung", "step", "milestone", "value", "cutoff"]
    numeric = ("time_s", "step", "milestone", "value", "cutoff")
    if predicted:
        judged = judged.rename(columns={"predicted_mean": "predicted", "predicted_lower": "low",
                                        "predicted_upper": "high", "predicted_at": "at"})
        columns += ["predicted", "low", "high", "at"]
        numeric += ("predicted", "low", "high", "at")
    history = _table(judged, columns, numeric=numeric, status_column="status")
    shown = f" (the last {len(judged)} of {total})" if total > len(judged) else ""
    failed = trials[(trials["status"].astype(str) == "failed") | (trials["retries"] > 0)]
    failures = "<p>No trial failed.</p>"
    if not failed.empty:
        rows = "".join(f'<tr data-status="{html.escape(str(r["status"]))}"><td>{int(r["id"])}</td>'
                       f"<td>{html.escape(str(r['status']))}</td><td class=\"n\">{int(r['retries'])}</td>"
                       f"<td><pre><bdi>{html.escape(str(r['error']))}</bdi></pre></td></tr>"
                       for _, r in failed.head(200).iterrows())
        failures = ("<table><tr><th>trial</th><th>status</th><th>retries</th><th>error</th></tr>"
                    f"{rows}</table>")
    if len(study.objectives) > 1:  # the front is the result, not one metric's ranking
        front = study.pareto_front()
        front["configuration"] = [_config_text(study, trials.loc[i]) for i in front.index]
        values = [c for c in front.columns if c.startswith("objective/")]
        best = _table(front.assign(status=trials.loc[front.index, "status"].astype(str)),
                      ["id"] + values + ["configuration"], numeric=tuple(values),
                      status_column="status")
    infeasible = ""
    if study.constraints:
        standings = study.standings
        broken = trials[~standings["feasible"] & trials["status"].astype(str).isin(
            ["completed", "stopped"])].copy()
        constraint_columns = [c for c in standings.columns if c.startswith("constraint/")]
        for column in constraint_columns:
            broken[column] = standings.loc[broken.index, column]
        infeasible = ('<section id="infeasible"><h2>Infeasible trials</h2><p>Finished trials '
                      f"that break a constraint ({html.escape(', '.join(study.constraints))}; "
                      "a value above 0 is the amount by which): never best, never on the "
                      "front.</p>" + (_table(broken.head(200), ["id", "status"] + constraint_columns,
                                             numeric=tuple(constraint_columns),
                                             status_column="status")
                                      if len(broken) else "<p>None.</p>") + "</section>")
    return (f'<section id="best-trials"><h2>{"Pareto front" if len(study.objectives) > 1 else "Best trials"}</h2>{best}</section>' + infeasible +
            f'<section id="decisions"><h2>Decisions{shown}</h2><p>Stops and pauses with the '
            f"value judged and the cutoff it met (time in seconds since the study started)"
            f"{'; with learning-curve prediction, the value predicted at max_t (at) with its 10-90 % interval and the continues it granted' if predicted else ''}."
            f"</p>{history}</section>"
            f'<section id="failures"><h2>Failures</h2>{failures}</section>')


def trial_data(study, limit):
    """What the script shows on hover, for the trials the plots draw."""
    trials = study.trials
    drawn = plots.sample_trials(study, limit)
    out = {}
    for trial in drawn:
        row = trials.loc[trial]
        out[str(trial)] = {"status": str(row["status"]), "best": _plain(row["best_value"]),
                           "config": _config_text(study, row)}
    return out


def write_report(study_path, output, curves_limit=1000):
    """Writes the page for `study_path` to `output`; returns its size in bytes."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller and searchable
    matplotlib.rcParams["svg.hashsalt"] = "slurmtune"  # the same file gives the same page
    matplotlib.rcParams["text.parse_math"] = False  # names are text, not mathtext
    with Study(study_path) as study:
        generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        data = _script_json(trial_data(study, curves_limit))
        # A title holds no markup: the name is isolated by U+2068 ... U+2069 instead.
        page = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>\u2068{html.escape(study.name)}\u2069: slurmtune study</title>"
                f"<style>{STYLE}</style></head><body>"
                f"<h1><bdi>{html.escape(study.name)}</bdi></h1><p class=\"sub\">slurmtune results file "
                f"<bdi>{html.escape(os.path.basename(study.path))}</bdi>, schema {study.schema_version}; "
                f"page written {generated}</p>"
                "<noscript><p class=\"note\">Without JavaScript the plots are static; hovering "
                "and filtering need it.</p></noscript>"
                + summary_section(study) + slurm_section(study) + plots_section(study, curves_limit)
                + tables_section(study)
                + '<div id="tooltip"></div>'
                f'<script id="trial-data" type="application/json">{data}</script>'
                f"<script>{SCRIPT}</script></body></html>")
    partial = output + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(partial, output)
    return len(page.encode("utf-8"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="slurmtune html",
                                     description="One self-contained HTML page about a results file.")
    parser.add_argument("study", help="the results file")
    parser.add_argument("-o", "--output", help="the page to write (default: STUDY.html)")
    parser.add_argument("--curves", type=int, default=1000,
                        help="trials whose curves and configurations are drawn (default 1000)")
    args = parser.parse_args(argv)
    if args.curves < 1:
        parser.error("--curves must be at least 1")
    output = args.output or os.path.splitext(args.study)[0] + ".html"
    started = time.monotonic()
    try:
        size = write_report(args.study, output, args.curves)
    except (ResultsFileError, OSError) as error:
        print(f"slurmtune html: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - a file no check foresaw: one line, not a stack
        if os.environ.get("SLURMTUNE_DEBUG"):
            raise
        print(f"slurmtune html: {args.study}: cannot draw a page from this results file "
              f"({type(error).__name__}: {error}); was it altered? SLURMTUNE_DEBUG=1 shows where",
              file=sys.stderr)
        return 1
    print(f"slurmtune html: wrote {output} ({size / 1e6:.1f} MB) in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
