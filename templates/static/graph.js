/* Interactive Plotly graphs. Graph data comes from data files (a group's data/g/*.js sets
   window.PAL) or from JSON blocks in the page (a drill-down's script.pal-data: data, never run).
   Each div.pal-graph names its series; its sibling static SVG (an <img>, or inline in a
   div.static-graph) is hidden once drawn. */
(function () {
  "use strict";
  var PAL = window.PAL = window.PAL || { series: {}, jobs: {} };
  PAL.series = PAL.series || {};
  PAL.jobs = PAL.jobs || {};
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
    if (detail && s.bands) {
      var b = s.bands;
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
