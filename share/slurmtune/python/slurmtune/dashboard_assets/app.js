// The live page of `slurmtune dashboard` (doc/dashboard.md): polls /data about once a
// second and redraws in place, without reloading. Every text from the results file goes
// in through textContent (never as markup); charts are Chart.js, served by the dashboard.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const COLOURS = { completed: "#2ca02c", stopped: "#ff7f0e", paused: "#9467bd",
                  running: "#1f77b4", pending: "#7f7f7f", failed: "#d62728" };
const charts = {};
const hidden = new Set();
let version = -1;
let latest = null;
document.documentElement.dataset.loadedAt = String(Date.now());  // the test: no reload

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function num(v, digits = 6) {
  return v === null || v === undefined ? "" : Number(v).toPrecision(digits).replace(/\.?0+(e|$)/, "$1");
}

function configText(config) {
  return Object.entries(config || {}).map(([k, v]) => `${k}=${v}`).join(", ");
}

function fillTable(id, header, rows) {
  const table = document.getElementById(id);
  table.replaceChildren();
  const head = el("tr");
  header.forEach((h) => head.appendChild(el("th", h)));
  table.appendChild(head);
  rows.forEach((cells) => {
    const tr = el("tr");
    cells.forEach(([text, cls]) => tr.appendChild(el("td", text, cls)));
    table.appendChild(tr);
  });
}

// Whether `value` differs from what `key` last drew: a chart whose data did not change
// is not drawn again (on a large study most of them, most of the time).
const drawn = {};
function changed(key, value) {
  const text = JSON.stringify(value);
  if (drawn[key] === text) return false;
  drawn[key] = text;
  return true;
}

function chart(id, type, options) {
  if (!charts[id]) {
    charts[id] = new Chart(document.getElementById(id), {
      type, data: { datasets: [] },
      options: Object.assign({ animation: false, responsive: true, maintainAspectRatio: false,
                               parsing: false, normalized: true, plugins: { legend: { display: false } } },
                             options),
    });
  }
  return charts[id];
}

function summary(d) {
  const s = d.study, c = d.counts;
  const several = s.objectives.length > 1;
  const rows = [["study", s.name], ["file", s.path],
    [several ? "objectives" : "metric", s.objectives.map((o, i) => `${o} (${s.modes[i]})`).join(", ")],
    ["scheduler", s.scheduler], ["sampler", s.sampler],
    ["trials", `${c.started} started of max_trials ${s.max_trials ?? "(none)"}`],
    ["reports", c.reports],
    ["by outcome", Object.entries(c.by_status).map(([k, v]) => `${k} ${v}`).join(", ")],
    ["sessions", s.sessions]];
  // The coordinator's loop (written by `slurmtune run`): every trial waits for its decision
  // on it, so a busy loop or long turns mean the centre is the bottleneck.
  if (d.loop) rows.push(["coordinator loop", `longest turn of the last minute ${num(d.loop.recent_ms, 3)} ms ` +
    `(${d.loop.recent_work}), busy ${num(100 * d.loop.recent_busy, 3)} %; of the session ` +
    `${num(d.loop.longest_ms, 3)} ms (${d.loop.longest_work}), turns over 100 ms ${d.loop.over_100ms}, ` +
    `over 1 s ${d.loop.over_1s} (of ${d.loop.turns})`]);
  if (several) rows.push(["Pareto front", d.front.length ? `${d.front.length} trial(s): ${d.front.map((p) => p.trial).join(", ")}` : "no trial yet"]);
  else if (d.best) {
    rows.push(["best", `trial ${d.best.trial}: ${s.objectives[0]} ${num(d.best.value)} at ${s.resource} ${num(d.best.step)}`]);
    rows.push(["best configuration", JSON.stringify(d.best.config)]);
  } else rows.push(["best", "no trial has reported yet"]);
  const table = document.getElementById("summary-table");
  table.replaceChildren();
  rows.forEach(([k, v]) => {
    const tr = el("tr");
    tr.appendChild(el("th", k));
    const td = el("td");
    td.id = "summary-" + k.replace(/ /g, "-");
    td.appendChild(el("bdi", v));
    tr.appendChild(td);
    table.appendChild(tr);
  });
  document.getElementById("title").textContent = `slurmtune dashboard: ${s.name}`;
}

function filters(d) {
  const box = document.getElementById("filter-boxes");
  const statuses = Object.keys(COLOURS).filter((s) => d.counts.by_status[s]);
  if (box.dataset.statuses === statuses.join()) return;
  box.dataset.statuses = statuses.join();
  box.replaceChildren();
  statuses.forEach((s) => {
    const label = el("label");
    const input = el("input");
    input.type = "checkbox";
    input.value = s;
    input.checked = !hidden.has(s);
    input.addEventListener("change", () => {
      if (input.checked) hidden.delete(s); else hidden.add(s);
      curves(latest);
    });
    label.appendChild(input);
    label.appendChild(document.createTextNode(" " + s));
    box.appendChild(label);
  });
}

function curves(d) {
  if (!changed("curves", [d.curves, [...hidden]])) return;
  const c = chart("chart-curves", "line", {
    scales: { x: { type: "linear", title: { display: true, text: d.study.resource } },
              y: { title: { display: true, text: d.study.objectives[0] } } },
    elements: { point: { radius: 0, hitRadius: 4 }, line: { borderWidth: 1 } },
    interaction: { mode: "nearest", intersect: false },
    plugins: { legend: { display: false },
               tooltip: { callbacks: { label: (ctx) => ctx.dataset.label } } },
  });
  c.data.datasets = d.curves.filter((t) => !hidden.has(t.status)).map((t) => ({
    label: `trial ${t.trial} (${t.status}): ${configText(t.config)}`,
    data: t.points.map(([x, y]) => ({ x, y })), borderColor: COLOURS[t.status] || "#999",
    backgroundColor: COLOURS[t.status] || "#999",
    pointRadius: t.points.length === 1 ? 2 : 0,  // a trial stopped at its first report
  }));
  c.update("none");
}

function best(d) {
  const several = d.study.objectives.length > 1;
  document.getElementById("plot-best").hidden = several;
  document.getElementById("plot-pareto").hidden = !several;
  if (!changed("best", several ? [d.points, d.front] : d.trace)) return;
  if (several) {
    const p = chart("chart-pareto", "scatter", {
      scales: { x: { title: { display: true, text: d.study.objectives[0] } },
                y: { title: { display: true, text: d.study.objectives[1] } } },
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => ctx.raw.label } } },
    });
    p.data.datasets = [
      { data: d.points.map(([t, x, y]) => ({ x, y, label: `trial ${t}` })), backgroundColor: "#bbb", pointRadius: 2 },
      { type: "line", data: d.front.map((f) => ({ x: f.values[0], y: f.values[1], label: `trial ${f.trial} (front)` })),
        borderColor: "#d62728", backgroundColor: "#d62728", pointRadius: 4, stepped: "before" },
    ];
    p.update("none");
    return;
  }
  const b = chart("chart-best", "line", {
    scales: { x: { type: "linear", title: { display: true, text: "seconds since the study began" } },
              y: { title: { display: true, text: "best " + d.study.objectives[0] } } },
    elements: { point: { radius: 2 } },
    plugins: { legend: { display: false },
               tooltip: { callbacks: { label: (ctx) => `trial ${ctx.raw.trial} at ${num(ctx.raw.x)} s: ${num(ctx.raw.y)}` } } },
  });
  b.data.datasets = [{ data: d.trace.map(([t, v, trial]) => ({ x: t, y: v, trial })), borderColor: "#1f77b4",
                       stepped: "before" }];
  b.update("none");
}

function bars(id, labels, values, horizontal, title) {
  if (!changed(id, [labels, values])) return;
  const c = chart(id, "bar", { indexAxis: horizontal ? "y" : "x", parsing: true,
                               scales: { x: { title: { display: !horizontal, text: title } } } });
  c.data.labels = labels;
  c.data.datasets = [{ data: values, backgroundColor: "#1f77b4" }];
  c.update("none");
}

function parallel(d) {
  if (!changed("parallel", d.parallel)) return;
  const axes = d.parallel.axes;
  const c = chart("chart-parallel", "line", {
    parsing: true,
    scales: { y: { min: 0, max: 1, title: { display: true, text: "low → high" } } },
    elements: { point: { radius: 0, hitRadius: 4 }, line: { borderWidth: 1 } },
    interaction: { mode: "nearest", intersect: false },
    plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => ctx.dataset.label } } },
  });
  const values = d.parallel.lines.map((l) => l.value).filter((v) => v !== null).sort((a, b) => a - b);
  const max = d.study.modes[0] === "max";
  const shade = (v) => {
    if (v === null || !values.length) return "rgba(150,150,150,0.3)";
    let rank = values.findIndex((x) => x >= v) / Math.max(values.length - 1, 1);
    if (max) rank = 1 - rank;
    const g = Math.round(40 + 180 * rank);
    return `rgba(${g},${g},${Math.round(90 + 160 * rank)},0.5)`;
  };
  // Each axis named with its ends: the values at 0 and 1 (categories: the first and last).
  const end = (a, v) => num(a.log ? Math.pow(10, v) : v);
  c.data.labels = axes.map((a) => [a.name + (a.log ? " (log)" : ""),
    a.categories ? `${a.categories[0] ?? ""} … ${a.categories[a.categories.length - 1] ?? ""}`
                 : `${end(a, a.low)} … ${end(a, a.high)}`]);
  c.data.datasets = d.parallel.lines.map((l) => ({
    label: `trial ${l.trial}: ${num(l.value)}`, data: l.coords, borderColor: shade(l.value), spanGaps: false,
  }));
  c.update("none");
}

function slices(d) {
  const box = document.getElementById("slices");
  d.slices.forEach((s, i) => {
    const id = "chart-slice-" + i;
    if (!document.getElementById(id)) {
      const figure = el("figure");
      const holder = el("div", null, "chart");
      const canvas = el("canvas");
      canvas.id = id;
      holder.appendChild(canvas);
      figure.appendChild(holder);
      figure.appendChild(el("figcaption", `Best value against ${s.name}.`));
      box.appendChild(figure);
    }
    if (!changed(id, s)) return;
    const categories = s.numeric ? null : [...new Set(s.points.map((p) => p[0]))];
    // Numbers: an axis from the lowest to the highest value (log for a log domain), set
    // explicitly, so no point falls off it.
    const xs = s.numeric ? s.points.map((p) => p[0]) : [];
    const c = chart(id, "scatter", {
      normalized: false,
      scales: { x: s.numeric ? { type: s.log ? "logarithmic" : "linear", title: { display: true, text: s.name } }
                             : { type: "category", labels: categories, title: { display: true, text: s.name } },
                y: { title: { display: true, text: "best " + d.study.objectives[0] } } },
    });
    if (s.numeric && xs.length) {
      c.options.scales.x.min = Math.min(...xs);
      c.options.scales.x.max = Math.max(...xs);
    }
    c.data.datasets = [{ data: s.points.map(([x, y]) => ({ x, y })), backgroundColor: "rgba(31,119,180,0.4)", pointRadius: 2 }];
    c.update("none");
  });
}

function tables(d) {
  const r = d.study.resource;
  fillTable("running-table", ["trial", "last " + r, "last value", "since its last report", "nodes"],
    d.running.map((t) => [[t.trial], [num(t.last_step), "number"], [num(t.last_value), "number"],
                          [t.since_s === null ? "" : `${t.since_s.toFixed(1)} s`, "number"], [t.nodes]]));
  document.querySelector("#running h2").textContent =
    `Running trials (${d.running_total}${d.running_total > d.running.length ? `, the first ${d.running.length} shown` : ""})`;
  document.getElementById("best-title").textContent = d.study.objectives.length > 1 ? "Pareto front" : "Best trials";
  if (d.study.objectives.length > 1)
    fillTable("best-table", ["trial"].concat(d.study.objectives),
      d.front.map((f) => [[f.trial]].concat(f.values.map((v) => [num(v), "number"]))));
  else
    fillTable("best-table", ["trial", "status", d.study.objectives[0], "at " + r, "reports", "configuration"],
      d.best_trials.map((t) => [[t.trial], [t.status], [num(t.value), "number"], [num(t.step), "number"],
                                [t.reports, "number"], [configText(t.config)]]));
  fillTable("failures-table", ["trial", "status", "retries", "ended (s into the study)", "error"],
    d.failures.map((f) => [[f.trial], [f.status], [f.retries, "number"], [num(f.end_s, 4), "number"], [f.error, "error"]]));
  const predicted = d.decisions.some((x) => x.predicted !== null);
  const header = ["s into the study", "trial", "decision", "rung", r, "milestone", "value", "cutoff"]
    .concat(predicted ? ["predicted", "low", "high", "at"] : []);
  fillTable("decisions-table", header, d.decisions.slice().reverse().map((x) =>
    [[num(x.time_s, 5), "number"], [x.trial], [x.kind], [x.rung, "number"], [num(x.step), "number"],
     [num(x.milestone), "number"], [num(x.value), "number"], [num(x.cutoff), "number"]]
      .concat(predicted ? [x.predicted, x.low, x.high, x.at].map((v) => [num(v), "number"]) : [])));
  document.getElementById("decisions-title").textContent =
    `Decisions${d.decided > d.decisions.length ? ` (the latest ${d.decisions.length} of ${d.decided})` : ""}`;
  const slurm = d.slurm;
  const nodes = slurm.nodes.map(([n, c]) => `${n} (${c})`).join(", ") || "none recorded";
  document.getElementById("slurm-text").textContent =
    `${slurm.sessions.length} session(s), ${Math.max(slurm.sessions.length - 1, 0)} restart(s) (requeues or resumes); ` +
    `created on ${slurm.host || "?"}, job ${slurm.job || "none"}. Trials per node: ${nodes}` +
    (slurm.node_count > slurm.nodes.length ? ` and ${slurm.node_count - slurm.nodes.length} more.` : ".");
  fillTable("sessions-table", ["started", "host", "slurm_job_id", "version"],
    slurm.sessions.map((x) => [[new Date(x.started * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC"],
                               [x.host], [x.slurm_job_id], [x.version]]));
}

function sampled(d) {
  const s = d.sampled;
  const reading = d.reports_behind ? `Reading the reports: ${d.counts.reports - d.reports_behind} of ` +
    `${d.counts.reports} so far; the curves and the best value so far fill in as they come. ` : "";
  document.getElementById("sampled").textContent = reading + (s.trials > s.curves
    ? `This study has ${s.trials} trials and ${d.counts.reports} reports: the curves of ${s.curves} trials are drawn ` +
      `(the best, the running ones and a fixed sample), at most ${s.points} points each; parallel coordinates ` +
      `show ${Math.min(s.parallel, s.trials)} trials and each slice ${Math.min(s.slices, s.trials)}; counts, ` +
      "best values and tables use every trial."
    : "");
}

function draw(d) {
  const started = performance.now();
  latest = d;
  summary(d);
  filters(d);
  sampled(d);
  best(d);
  curves(d);
  bars("chart-rungs", Object.keys(d.rungs), Object.values(d.rungs), false, "rung");
  bars("chart-importance", d.importance.map((p) => p[0]), d.importance.map((p) => p[1]), true, "share");
  document.getElementById("importance-note").textContent = d.importance.length ? ""
    : `Shown once ${d.importance_trials} trials have ended: with fewer, every share is mostly noise.`;
  parallel(d);
  slices(d);
  tables(d);
  // For the benchmark (tests/bench/components/bench_dashboard.py): when the first view was drawn,
  // and how long each redraw takes.
  const root = document.documentElement.dataset;
  if (!root.firstDrawMs) root.firstDrawMs = String(Math.round(performance.now()));
  root.drawMs = String(Math.round(performance.now() - started));
  root.draws = String(Number(root.draws || 0) + 1);
}

function show(d) {
  if (d.first) {  // nothing read yet: not an error
    document.getElementById("freshness").textContent = "reading the results file for the first time…";
    return;
  }
  const banner = document.getElementById("banner");
  banner.hidden = d.ok !== false;
  banner.textContent = d.ok === false ? "The results file cannot be read now: " + d.error +
    (d.study ? " (the page shows what was read before)" : "") : "";
  if (d.study) draw(d);
  const ago = d.written_s_ago;
  document.getElementById("freshness").textContent = `updated ${new Date().toLocaleTimeString()}` +
    (ago !== null && ago !== undefined ? `; the writer last flushed ${ago.toFixed(0)} s ago` : "") +
    (d.read_s !== undefined ? `; read in ${d.read_s.toFixed(2)} s` : "");
}

async function poll() {
  try {
    const response = await fetch(`data?token=${encodeURIComponent(token)}&since=${version}`,
                                 { cache: "no-store", signal: AbortSignal.timeout(30000) });
    if (!response.ok) throw new Error(`the dashboard answered ${response.status}`);
    const d = await response.json();
    if (!d.unchanged) {
      version = d.version;
      show(d);
    }
    // Sooner while the first read is under way.
    if (d.first || d.reports_behind) {
      setTimeout(poll, 250);
      return;
    }
  } catch (error) {
    const banner = document.getElementById("banner");
    banner.hidden = false;
    banner.textContent = "The dashboard server cannot be reached: " + error.message + " (trying again)";
  }
  setTimeout(poll, 1000);
}

document.addEventListener("DOMContentLoaded", poll);
