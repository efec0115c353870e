/* Interactive Plotly graphs. Graph data comes from data files (a group's data/g/*.js sets
   window.PAL) or from JSON blocks in the page (a drill-down's script.pal-data: data, never run).
   Each div.pal-graph names its series; its sibling static SVG (an <img>, or inline in a
   div.static-graph) is hidden once drawn. */
(function () {
  "use strict";
  var PAL = window.PAL = window.PAL || { series: {}, jobs: {} };
  PAL.series = PAL.series || {};
  PAL.jobs = PAL.jobs || {};

  /* The rolling bands of a drill-down, as pal.analysis.bands.rolling_bands makes them (the page
     carries its parameters, not the bands): per sample, MM, TMA, TMSD and TMA ± sigma·TMSD of the
     `window` valid values before it (tma.window_stats), null while there are fewer than
     `minHistory` (or `window`, the smaller). The arithmetic is numpy's, step for step: linear
     quantiles and their lerp, Tukey fences kept inclusive, sums in numpy's pairwise order. */
  function npSum(v, from, to) {  /* numpy's pairwise sum of v[from:to] */
    var n = to - from, i, total = 0;
    if (n < 8) {
      for (i = from; i < to; i++) { total += v[i]; }
      return total;
    }
    if (n <= 128) {
      var r0 = v[from], r1 = v[from + 1], r2 = v[from + 2], r3 = v[from + 3],
          r4 = v[from + 4], r5 = v[from + 5], r6 = v[from + 6], r7 = v[from + 7];
      var blocked = to - n % 8;
      for (i = from + 8; i < blocked; i += 8) {
        r0 += v[i]; r1 += v[i + 1]; r2 += v[i + 2]; r3 += v[i + 3];
        r4 += v[i + 4]; r5 += v[i + 5]; r6 += v[i + 6]; r7 += v[i + 7];
      }
      total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
      for (; i < to; i++) { total += v[i]; }
      return total;
    }
    var half = Math.floor(n / 2);
    half -= half % 8;
    return npSum(v, from, from + half) + npSum(v, from + half, to);
  }

  function quantile(sorted, q) {  /* numpy's "linear" method and _lerp (exact at t = 0 and t = 1) */
    var n = sorted.length, at = (n - 1) * q, lo = Math.floor(at), t = at - lo;
    var a = sorted[lo], b = sorted[Math.min(lo + 1, n - 1)], d = b - a;
    return t >= 0.5 ? b - d * (1 - t) : a + d * t;
  }

  /* [MM, TMA, TMSD] of the window w (in run order). A full window sums with the outliers as 0.0
     in place (rolling_bands' matrix), a shorter history sums the kept values alone. */
  function windowStats(w, full) {
    var sorted = w.slice().sort(function (a, b) { return a - b; });
    var q1 = quantile(sorted, 0.25), q2 = quantile(sorted, 0.5), q3 = quantile(sorted, 0.75);
    var iqr = q3 - q1, low = q1 - 1.5 * iqr, high = q3 + 1.5 * iqr;
    var keep = w.map(function (v) { return v >= low && v <= high; });
    var k = keep.filter(Boolean).length;
    var terms = full ? w.map(function (v, i) { return keep[i] ? v : 0; })
                     : w.filter(function (v, i) { return keep[i]; });
    var mean = npSum(terms, 0, terms.length) / k;
    var squares = full ? w.map(function (v, i) { return keep[i] ? (v - mean) * (v - mean) : 0; })
                       : terms.map(function (v) { return (v - mean) * (v - mean); });
    var sd = k > 1 ? Math.sqrt(npSum(squares, 0, squares.length) / (k - 1)) : 0;
    return [q2, mean, sd];
  }

  function rollingBands(y, window, minHistory, sigma) {
    var out = { mm: [], tma: [], tma_lo: [], tma_hi: [], tmsd: [] };
    var valid = [], h = -1, st = null, first = Math.min(Math.max(minHistory, 1), window);
    var num = function (v) { return isNaN(v) ? null : v; };
    for (var i = 0; i < y.length; i++) {
      if (valid.length !== h) {  /* the history grew: the stats of its last `window` values */
        h = valid.length;
        st = h >= first ? windowStats(valid.slice(Math.max(0, h - window)), h >= window) : null;
      }
      if (st === null) {
        out.mm.push(null); out.tma.push(null); out.tma_lo.push(null); out.tma_hi.push(null); out.tmsd.push(null);
      } else {
        out.mm.push(num(st[0])); out.tma.push(num(st[1])); out.tmsd.push(num(st[2]));
        out.tma_lo.push(num(st[1] - sigma * st[2])); out.tma_hi.push(num(st[1] + sigma * st[2]));
      }
      if (y[i] !== null && y[i] !== undefined) { valid.push(y[i]); }
    }
    return out;
  }
  PAL.rollingBands = rollingBands;

  /* The bands a drill-down draws: the detector's own (s.bands) over the rolling ones (graphs.drawn_bands). */
  function drawnBands(s) {
    var own = s.bands || {}, out = {}, rolled = null;
    ["mm", "tma", "tma_lo", "tma_hi"].forEach(function (k) {
      if (own[k]) { out[k] = own[k]; return; }
      if (!s.rolling) { return; }
      rolled = rolled || rollingBands(s.y, s.rolling.window, s.rolling.min_history, s.rolling.sigma);
      out[k] = rolled[k];
    });
    return out;
  }
  PAL.drawnBands = drawnBands;

  if (typeof Plotly === "undefined") { return; }
  document.querySelectorAll('script.pal-data[type="application/json"]').forEach(function (el) {
    try { PAL.series[el.getAttribute("data-series")] = JSON.parse(el.textContent); } catch (e) { /* not drawn */ }
  });
  var PALETTE = ["#1f77b4", "#ff7f0e", "#17becf", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#637939"];

  function esc(text) {  /* Plotly reads names and hover text as HTML-like markup */
    var tmp = document.createElement("span");
    tmp.textContent = text;
    return tmp.innerHTML;
  }

  function fmt(v, d) { return v === null || v === undefined ? "" : v.toFixed(d); }

  function hoverText(s) {
    var job = PAL.jobs[s.job] || { label: s.job, builds: {} };
    var d = s.unit === "µs" ? 1 : 3;
    return s.b.map(function (b, i) {
      var facts = job.builds[String(b)] || ["", ""];
      var val = s.y[i] === null ? "missing" : fmt(s.y[i], d) + " " + s.unit;
      var lines = ["date: " + s.x[i], (s.sd ? "average: " : "value: ") + val];
      if (s.sd && s.sd[i] !== null) { lines.push("stdev: " + fmt(s.sd[i], d) + " " + s.unit); }
      lines.push("trend: " + fmt(s.t[i], d), "DUT version: " + facts[0],
                 "job build: " + job.label + "-build-" + b, "testbed: " + facts[1]);
      return lines.map(esc).join("<br>");
    });
  }

  function anomalyTraces(s, group, color) {
    return [["regression", "#d62728"], ["progression", "#2ca02c"]].map(function (kc) {
      var pts = s.an.filter(function (a) { return a[1] === kc[0]; });
      return {
        x: pts.map(function (a) { return s.x[a[0]]; }), y: pts.map(function (a) { return a[2]; }),
        mode: "markers", type: "scatter", name: kc[0], legendgroup: group, showlegend: false,
        meta: "anomaly-" + kc[0], hoverinfo: "skip",
        marker: { symbol: "circle-open", size: 14, line: { width: 2, color: kc[1] }, color: kc[1] }
      };
    }).filter(function (t) { return t.x.length > 0; });
  }

  function seriesTraces(s, color, group, detail) {
    var text = hoverText(s);
    var traces = [];
    if (detail) {
      var b = drawnBands(s);
      if (b.tma_lo && b.tma_hi) {
        traces.push({ x: s.x, y: b.tma_lo, mode: "lines", type: "scatter", name: "TMA - 3·TMSD", meta: "band",
                      line: { width: 0, color: "#9467bd" }, hoverinfo: "skip", showlegend: false, connectgaps: false });
        traces.push({ x: s.x, y: b.tma_hi, mode: "lines", type: "scatter", name: "TMA ± 3·TMSD", meta: "band",
                      fill: "tonexty", fillcolor: "rgba(148,103,189,0.15)", line: { width: 0, color: "#9467bd" },
                      hoverinfo: "skip", connectgaps: false });
      }
      if (b.tma) { traces.push({ x: s.x, y: b.tma, mode: "lines", type: "scatter", name: "TMA", meta: "tma",
                                 line: { width: 1, color: "#9467bd" }, connectgaps: false }); }
      if (b.mm) { traces.push({ x: s.x, y: b.mm, mode: "lines", type: "scatter", name: "moving median", meta: "mm",
                                line: { width: 1, dash: "dash", color: "#7f7f7f" }, connectgaps: false }); }
    }
    traces.push({ x: s.x, y: s.t, mode: "lines", type: "scatter", name: detail ? "trend" : esc(s.name) + " trend",
                  meta: "trend", legendgroup: group, showlegend: detail, hoverinfo: "skip",
                  line: { width: 2, color: detail ? PALETTE[1] : color }, connectgaps: false });
    traces.push({ x: s.x, y: s.y, mode: "markers", type: "scatter", name: detail ? "samples" : esc(s.name),
                  meta: "samples", legendgroup: group, text: text, hoverinfo: "text",
                  marker: { size: 5, color: detail ? PALETTE[0] : color } });
    return traces.concat(anomalyTraces(s, group, color));
  }

  function draw(div) {
    var slugs = div.getAttribute("data-series").split(" ");
    var detail = div.getAttribute("data-mode") === "detail";
    var list = slugs.map(function (k) { return PAL.series[k]; }).filter(Boolean);
    if (list.length === 0) { return; }
    var traces = [];
    list.forEach(function (s, i) {
      traces = traces.concat(seriesTraces(s, PALETTE[i % PALETTE.length], "g" + i, detail));
    });
    var layout = {
      margin: { l: 70, r: 20, t: 30, b: 40 }, hovermode: "closest", showlegend: true,
      legend: { orientation: "h", y: -0.2 },
      xaxis: { type: "date", title: { text: "build time [UTC]" },
               rangeselector: { buttons: [
                 { count: 14, label: "2 weeks", step: "day", stepmode: "backward" },
                 { count: 1, label: "1 month", step: "month", stepmode: "backward" },
                 { count: 3, label: "3 months", step: "month", stepmode: "backward" },
                 { step: "all", label: "all" }] } },
      yaxis: { title: { text: list[0].ytitle } }
    };
    div.classList.add("drawn");
    Plotly.newPlot(div, traces, layout, { displaylogo: false, responsive: true }).then(function () {
      var img = div.parentNode.querySelector("img, div.static-graph");
      if (img) { img.hidden = true; }
      div.setAttribute("data-drawn", "1");
    });
  }

  var divs = document.querySelectorAll("div.pal-graph");
  if ("IntersectionObserver" in window && divs.length > 1) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { io.unobserve(e.target); draw(e.target); } });
    }, { rootMargin: "400px" });
    divs.forEach(function (d) { io.observe(d); });
  } else {
    divs.forEach(draw);
  }
}());
