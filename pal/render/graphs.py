"""Graph data of a series, twice: a compact payload for Plotly (a drill-down's JSON block, its
group's ``data/g/*.js``) and an SVG chart; and the bands a drill-down draws (``drawn_bands``).

The payload holds lists, not per-point dicts, so a site with thousands of series stays light;
per-build facts (version, testbed) live once per job in ``data/jobs/*.js``. A drill-down's
payload carries the detector's own bands only, and the window of the rolling ones
(``rolling_params``): graph.js computes MM and TMA ± 3·TMSD from the payload's values with
``rolling_bands``' algorithm, the static SVG draws ``drawn_bands``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pal.analysis.bands import rolling_bands
from pal.analysis.tma import DEFAULTS as TMA_DEFAULTS
from pal.model import SeriesResult
from pal.render import svg
from pal.render.escape import Floats, Json, floats_or_none, js_floats, js_json
from pal.render.naming import Scale, job_label, scale_for, short_name


#: bands graph.js draws (the analysis may hand over more, e.g. "tmsd")
DRAWN_BANDS = ("mm", "tma", "tma_lo", "tma_hi")
#: the window of the MM / TMA bands drawn on drill-down pages (seed design: last N runs)
BAND_WINDOW = 14


def rolling_params() -> dict[str, float | int]:
    """The parameters of the rolling bands ``drawn_bands`` makes, as graph.js reads them
    (``rolling`` in a drill-down's payload): ``rolling_bands``' window, min history and sigma."""
    return {"window": BAND_WINDOW, "min_history": int(TMA_DEFAULTS["min_history"]),
            "sigma": float(TMA_DEFAULTS["sigma"])}


#: ``rolling_params`` as JSON text, for the payloads ``js_encode`` writes (one per drill-down)
_ROLLING_JSON = Json(js_json(rolling_params()))


def own_bands(result: SeriesResult) -> dict[str, np.ndarray]:
    """The detector's own bands of the drawn names (one value per sample; others are not drawn)."""
    n = len(result.values)
    return {k: np.asarray(v, dtype=np.float64) for k, v in result.bands.items() if k in DRAWN_BANDS and len(v) == n}


def drawn_bands(result: SeriesResult) -> dict[str, np.ndarray]:
    """The bands a drill-down draws: moving median and TMA ± 3·TMSD of the series' values
    (seed design, whatever the detector), the detector's own bands of the same names over them.

    Made here, for the page being drawn, rather than kept in every ``SeriesResult``: five
    arrays per series were 40 % of what a run holds once the series are analysed. graph.js
    makes the same from the payload (``rolling_params``, ``own_bands``)."""
    bands = own_bands(result)
    values = np.asarray(result.values, dtype=np.float64)
    if len(values) and len(bands) < len(DRAWN_BANDS):  # none to make when the detector gave all four
        p = rolling_params()
        rolled = rolling_bands(values, window=p["window"], min_history=p["min_history"], sigma=p["sigma"])
        bands = {k: bands.get(k, rolled[k]) for k in DRAWN_BANDS}
    return bands


def epoch_seconds(times: np.ndarray) -> np.ndarray:
    """datetime64 array -> float seconds since the epoch (NaN for NaT)."""
    t = np.asarray(times).astype("datetime64[ns]")
    out = t.astype(np.int64).astype(np.float64) / 1e9
    out[np.isnat(t)] = np.nan
    return out


def time_labels(times: np.ndarray) -> list[str | None]:
    """``YYYY-MM-DD HH:MM`` in UTC (a form Plotly reads as a date without shifting it)."""
    t = np.asarray(times).astype("datetime64[m]").ravel()
    text = np.datetime_as_string(t, unit="m").astype("<U16")  # "YYYY-MM-DDTHH:MM"
    if text.size:
        text.view(np.uint32).reshape(-1, 16)[:, 10] = ord(" ")  # the "T", in place, for all at once
    out: list[str | None] = text.tolist()
    for i in np.flatnonzero(np.isnat(t)).tolist():
        out[i] = None
    return out


def anomaly_points(result: SeriesResult) -> list[tuple[int, str, float]]:
    """(sample index, kind, y) of each anomaly, at the new group's average (raw units)."""
    out = []
    for a in result.changes:
        y = a.after
        for g in result.groups:
            if g.start <= a.index < g.end:
                y = g.avg
                break
        out.append((int(a.index), a.kind, float(y)))
    return out


def series_payload(result: SeriesResult, labels: list[str | None] | None = None, with_bands: bool = True) -> dict:
    """What graph.js needs to draw one series; values already in display units (lists, None for gaps).

    ``labels``: the series' ``time_labels`` when the caller has them already. ``with_bands``:
    the drill-down's band entries (``bands_data``), which a group graph does not draw.
    """
    return _payload(result, labels, floats_or_none, with_bands)


def series_data(result: SeriesResult, labels: list[str | None] | Json | None = None, with_bands: bool = True,
                builds: Json | None = None) -> dict:
    """``series_payload`` with its float arrays as ``Floats`` (fixed decimals when ``js_encode``
    writes it): the definition of the graph data's text, which ``series_json`` writes directly and
    is tested against; no page is written from it any more (stop 53).

    ``labels`` and ``builds`` may be their JSON text already (``Json``: the series of a job share them)."""
    return _payload(result, labels, Floats, with_bands, builds)


def _payload(result: SeriesResult, labels: list[str | None] | Json | None, floats, with_bands: bool,
             builds: Json | None = None) -> dict:
    sc = scale_for(result)
    digits = sc.digits + 4

    def scaled(arr: np.ndarray):
        return _shown(arr, sc, floats)

    # what graph.js reads (and the metric); the test's id is on the page and in the exports: a
    # test id can be long, and this payload is written twice (the drill-down, its group's file)
    payload = {
        "job": result.key.job,
        "metric": result.key.metric,
        "name": short_name(result.key, str(result.attrs.get("nic") or "")),
        "unit": sc.unit,
        "ytitle": sc.axis_title(result.direction),
        "lower": result.direction < 0,
        "b": builds if builds is not None else np.asarray(result.builds, dtype=np.int64).tolist(),
        "x": labels if labels is not None else time_labels(result.times),
        "y": scaled(result.values),
        "t": scaled(result.trend),
        "an": [[i, kind, round(y / sc.divisor, digits)] for i, kind, y in anomaly_points(result)],
    }
    sd = np.asarray(result.stdevs, dtype=np.float64)
    if sd.size and np.isfinite(sd).any():
        payload["sd"] = scaled(sd)
    if with_bands:
        payload.update(_bands_payload(result, floats))
    return payload


def series_json(result: SeriesResult, name: str, labels: Json, builds: Json) -> str:
    """``js_encode(series_data(result, labels, with_bands=False, builds=builds))``, written directly:
    the same text (its keys in ``js_encode``'s sorted order) without the dict and its walk, in two
    thirds of the time (0.094 against 0.141 ms at 170 runs; it is written for every series of every
    run: its group's data file, its page).
    ``name``: the series' ``short_name``; ``labels``, ``builds``: its axis' JSON (``Pages._axis``)."""
    sc = scale_for(result)
    digits, div = sc.digits + 4, sc.divisor
    an = js_json([[i, kind, round(y / div, digits)] for i, kind, y in anomaly_points(result)])
    sd = np.asarray(result.stdevs, dtype=np.float64)
    spread = f',"sd":{js_floats(sd / div, digits)}' if sd.size and np.isfinite(sd).any() else ""
    key = result.key
    return (f'{{"an":{an},"b":{builds.text},"job":{js_json(key.job)},'
            f'"lower":{"true" if result.direction < 0 else "false"},"metric":{js_json(key.metric)},'
            f'"name":{js_json(name)}{spread},"t":{js_floats(_scaled(result.trend, sc), digits)},'
            f'"unit":{js_json(sc.unit)},"x":{labels.text},"y":{js_floats(_scaled(result.values, sc), digits)},'
            f'"ytitle":{js_json(sc.axis_title(result.direction))}}}')


def bands_data(result: SeriesResult) -> dict:
    """What a drill-down's payload adds to ``series_data`` for its bands (as ``Floats``): ``rolling``,
    the parameters graph.js makes MM and TMA ± 3·TMSD with from ``y`` (a series with values),
    and ``bands``, the detector's own bands that replace those of the same name (when it has any).

    The rolling bands themselves are not written: graph.js computes them (``rolling_bands``'
    algorithm on the payload's values). They were four arrays as long as the values: 6 KiB of a
    drill-down's 34.5 KiB and about 15 % of its time to write."""
    return _bands_payload(result, Floats)


def _bands_payload(result: SeriesResult, floats) -> dict:
    out: dict = {}
    own = own_bands(result)
    if len(result.values) and len(own) < len(DRAWN_BANDS):  # as drawn_bands: some rolling band is drawn
        out["rolling"] = _ROLLING_JSON if floats is Floats else rolling_params()
    if own:
        sc = scale_for(result)
        out["bands"] = {k: _shown(v, sc, floats) for k, v in sorted(own.items())}
    return out


def _shown(arr: np.ndarray, sc: Scale, floats):
    """A payload array: in display units, with ``sc.digits + 4`` decimals (``floats`` decides the form)."""
    return floats(_scaled(arr, sc), sc.digits + 4)


def job_payload(job: str, facts: dict[str, list[str]]) -> dict:
    return {"label": job_label(job), "builds": facts}


def _scaled(arr: np.ndarray, sc: Scale) -> np.ndarray:
    return np.asarray(arr, dtype=np.float64) / sc.divisor


def _anomaly_dots(result: SeriesResult, xs: np.ndarray, sc: Scale) -> list[svg.Dots]:
    pts = anomaly_points(result)
    out = []
    for kind, color in (("regression", svg.RED), ("progression", svg.GREEN)):
        sel = [(i, y) for i, k, y in pts if k == kind and 0 <= i < len(xs)]
        if sel:
            idx = np.array([i for i, _ in sel])
            out.append(svg.Dots(xs[idx], np.array([y for _, y in sel]) / sc.divisor, color, r=6.0, open=True))
    return out


def detail_chart(result: SeriesResult, title: str, bands: dict[str, np.ndarray] | None = None,
                 xs: np.ndarray | None = None) -> svg.Chart:
    """Drill-down: samples, trend, anomalies, and MM / TMA ± 3·TMSD when the analysis gave them.

    ``xs``: the series' ``epoch_seconds`` when the caller has them (the series of a job share them)."""
    sc = scale_for(result)
    xs = epoch_seconds(result.times) if xs is None else xs
    items: list = []
    legend = [("samples", svg.PALETTE[0]), ("trend", svg.PALETTE[1])]
    b = drawn_bands(result) if bands is None else bands
    if "tma_lo" in b and "tma_hi" in b:
        items.append(svg.Band(xs, _scaled(b["tma_lo"], sc), _scaled(b["tma_hi"], sc), svg.PALETTE[3]))
        legend.append(("TMA ± 3·TMSD", svg.PALETTE[3]))
    if "tma" in b:
        items.append(svg.Line(xs, _scaled(b["tma"], sc), svg.PALETTE[3], 1.0))
    if "mm" in b:
        items.append(svg.Line(xs, _scaled(b["mm"], sc), svg.PALETTE[6], 1.0, dash="4 3"))
        legend.append(("moving median", svg.PALETTE[6]))
    items.append(svg.Line(xs, _scaled(result.trend, sc), svg.PALETTE[1], 2.0))
    items.append(svg.Dots(xs, _scaled(result.values, sc), svg.PALETTE[0]))
    items += _anomaly_dots(result, xs, sc)
    legend += [("regression", svg.RED), ("progression", svg.GREEN)]
    return svg.Chart(title, sc.axis_title(result.direction), items, legend)


def group_chart(title: str, results: Sequence[SeriesResult], seconds: Sequence[np.ndarray] | None = None) -> svg.Chart:
    """Several tests in one graph: one colour per test, its samples and trend line.

    ``seconds``: each series' ``epoch_seconds`` when the caller has them (a job's series share one
    array: the chart then draws the lines and samples of all of them in one compiled call)."""
    items: list = []
    legend = []
    sc = scale_for(results[0])
    for n, r in enumerate(results):
        color = svg.PALETTE[n % len(svg.PALETTE)]
        xs = epoch_seconds(r.times) if seconds is None else seconds[n]
        items.append(svg.Line(xs, _scaled(r.trend, sc), color, 1.5))
        items.append(svg.Dots(xs, _scaled(r.values, sc), color, r=2.0))
        items += _anomaly_dots(r, xs, sc)
        legend.append((short_name(r.key, str(r.attrs.get("nic") or "")), color))
    return svg.Chart(title, sc.axis_title(results[0].direction), items, legend)
