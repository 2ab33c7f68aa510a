#!/usr/bin/python3
"""Which browser plotting library `slurmtune dashboard` serves (issue #44, item 4): page
weight and the time to draw the large study's learning curves (a dashboard snapshot of
tests/bench/data/studies/html-100k.toml: 250 curves of up to 120 points), in headless Chromium,
for Chart.js (Debian's libjs-chart.js) and uPlot (npm, not in Debian), median of five.

    /usr/bin/python3 tests/bench/components/bench_plot_libraries.py SNAPSHOT.json CHART_MIN_JS UPLOT_DIR

SNAPSHOT.json: one line of the dashboard's /data; UPLOT_DIR: an unpacked `npm pack uplot`
(package/dist/uPlot.iife.min.js and uPlot.min.css).
"""
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "module"))
from check_dashboard import Browser, wait_for  # noqa: E402

CHART = """<!DOCTYPE html><html><head><script src="%(lib)s"></script></head><body>
<div style="width:900px;height:320px"><canvas id="c"></canvas></div><script>
const data = %(data)s; const t0 = performance.now();
new Chart(document.getElementById("c"), {type: "line", data: {datasets: data.map((c) => ({
  data: c.points.map(([x, y]) => ({x, y})), borderColor: "#1f77b4", borderWidth: 1, pointRadius: 0}))},
  options: {animation: false, parsing: false, normalized: true, responsive: true, maintainAspectRatio: false,
            plugins: {legend: {display: false}}, scales: {x: {type: "linear"}}}});
requestAnimationFrame(() => { window.drawMs = performance.now() - t0; });
</script></body></html>"""

UPLOT = """<!DOCTYPE html><html><head><link rel="stylesheet" href="%(css)s"><script src="%(lib)s"></script></head>
<body><div id="c"></div><script>
const data = %(data)s; const t0 = performance.now();
// uPlot wants one shared x array: the union of every curve's steps, gaps where a curve has none.
const xs = [...new Set(data.flatMap((c) => c.points.map((p) => p[0])))].sort((a, b) => a - b);
const at = new Map(xs.map((x, i) => [x, i]));
const ys = data.map((c) => { const y = new Array(xs.length).fill(null); c.points.forEach(([x, v]) => { y[at.get(x)] = v; }); return y; });
new uPlot({width: 900, height: 320, legend: {show: false}, scales: {x: {time: false}},
           series: [{}].concat(data.map(() => ({stroke: "#1f77b4", width: 1, spanGaps: true})))},
          [xs].concat(ys), document.getElementById("c"));
requestAnimationFrame(() => { window.drawMs = performance.now() - t0; });
</script></body></html>"""


def main():
    snapshot, chart_js, uplot = sys.argv[1:4]
    curves = json.loads(open(snapshot).readline())["curves"]
    data = json.dumps(curves)
    work = tempfile.mkdtemp(prefix="slurmtune-plotlibs-")
    pages = {
        "Chart.js": (CHART % {"lib": chart_js, "data": data}, [chart_js]),
        "uPlot": (UPLOT % {"lib": os.path.join(uplot, "dist", "uPlot.iife.min.js"),
                           "css": os.path.join(uplot, "dist", "uPlot.min.css"), "data": data},
                  [os.path.join(uplot, "dist", "uPlot.iife.min.js"), os.path.join(uplot, "dist", "uPlot.min.css")]),
    }
    browser = Browser("chromium", work)
    try:
        for name, (html, files) in pages.items():
            path = os.path.join(work, name + ".html")
            with open(path, "w") as f:
                f.write(html)
            times = []
            for _ in range(5):
                browser.call("Page.navigate", url="file://" + path)
                times.append(wait_for(lambda: browser.evaluate("window.drawMs"), 60, name))
            weight = sum(os.path.getsize(f) for f in files)
            print(f"| {name} | {weight / 1024:.0f} KB | {statistics.median(times):.0f} ms "
                  f"({', '.join(f'{t:.0f}' for t in times)}) |")
    finally:
        browser.close()


if __name__ == "__main__":
    main()
