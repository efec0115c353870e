import dataclasses
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import numpy as np
import pytest

from pal.render import escape, svg
from pal.render.graphs import detail_chart, epoch_seconds, group_chart
from tests.render.factory import make_result

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(params=["compiled", "python"], autouse=True)
def path(request, monkeypatch):
    """Each test on both paths: coordinates written by the compiled loop (pal.render.text_kernel, C
    built at install: a missing kernel fails here, it is not skipped) and by the Python form."""
    monkeypatch.setattr(escape, "USE_COMPILED", request.param == "compiled")
    assert (escape.text_kernel() is not None) == (request.param == "compiled")
    return request.param


def test_nice_ticks_are_round_and_cover_the_range():
    assert svg.nice_ticks(17.3, 20.6) == [18.0, 19.0, 20.0]  # raw step 0.66 -> 1
    assert svg.nice_ticks(17.3, 18.4) == [17.5, 17.75, 18.0, 18.25]  # raw step 0.22 -> 0.25
    assert svg.nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert svg.nice_ticks(5, 5) == [5, 6, 7, 8, 9, 10]


def test_time_ticks_fall_on_utc_midnights_with_dates():
    lo = datetime(2022, 1, 1, 3, tzinfo=timezone.utc).timestamp()
    hi = datetime(2022, 1, 31, 3, tzinfo=timezone.utc).timestamp()
    ticks = svg.time_ticks(lo, hi)
    assert [label for _, label in ticks] == ["2022-01-02", "2022-01-09", "2022-01-16", "2022-01-23", "2022-01-30"]
    assert all(t % 86400 == 0 for t, _ in ticks)


def _parse(text):
    return ET.fromstring(text)


def test_detail_svg_draws_every_valid_sample_gaps_and_anomalies():
    values = [20e6, 20.1e6, np.nan, 19.9e6, 20e6, 18e6, 18.1e6, 17.9e6]
    r = make_result(values, (5,))
    root = _parse(svg.render_svg(detail_chart(r, "t")))
    (samples,) = root.findall(f"{NS}path[@class='samples']")  # a round-capped dot per "M x yh0"
    rings = root.findall(f"{NS}circle[@class='anomaly']")
    assert samples.get("d").count("M") == 7  # the missing run is not drawn (never at 0)
    assert samples.get("stroke-linecap") == "round"
    assert len(rings) == 1 and rings[0].get("stroke") == svg.RED and rings[0].get("fill") == "none"
    # the trend line breaks at the missing run: [0,1] and [3..7], of which run 6 (inside the new
    # level, between two points at its height) is not written
    lines = [pl for pl in root.findall(f"{NS}polyline") if pl.get("stroke") == svg.PALETTE[1]]  # the trend's colour
    assert [len(pl.get("points").split()) for pl in lines] == [2, 4]
    # the ring sits at the new group's average (18.0 Mpps), i.e. on the trend line's last segment
    last_y = float(lines[1].get("points").split()[-1].split(",")[1])
    assert abs(float(rings[0].get("cy")) - last_y) < 0.11


def test_a_trend_is_written_by_the_ends_of_its_levels_and_drawn_the_same():
    rng = np.random.default_rng(3)
    values = np.r_[rng.normal(20e6, 1e5, 60), rng.normal(17e6, 1e5, 40)]
    r = make_result(values, (60,))
    root = _parse(svg.render_svg(detail_chart(r, "t")))
    (trend,) = [pl for pl in root.findall(f"{NS}polyline") if pl.get("stroke") == svg.PALETTE[1]]
    pts = [tuple(map(float, p.split(","))) for p in trend.get("points").split()]
    d = root.find(f"{NS}path[@class='samples']").get("d")
    dots = [(float(x), float(y)) for x, y in re.findall(r"M([-\d.]+) ([-\d.]+)h0", d)]
    assert len(dots) == 100 and len(pts) == 4  # 100 runs, two levels: each level's first and last run
    assert [p[0] for p in pts] == [dots[i][0] for i in (0, 59, 60, 99)]
    assert pts[0][1] == pts[1][1] and pts[2][1] == pts[3][1] and pts[1][1] < pts[2][1]  # a drop: lower is down
    # the level's height is the trend's, as the ring at the change shows
    assert abs(float(root.find(f"{NS}circle[@class='anomaly']").get("cy")) - pts[2][1]) < 0.11


def test_svg_has_no_style_or_script_and_escapes_text():
    r = make_result([1e6, 2e6, 3e6], test_id="a.b.c.d.e.<script>alert(1)</script>")
    text = svg.render_svg(group_chart("<b>title</b>", [r]))
    assert "<script" not in text and "style" not in text and "<b>" not in text
    root = _parse(text)
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "<b>title</b>" in texts
    assert any(t and "<script>alert(1)</script>" in t for t in texts)


def test_latency_axis_says_lower_is_better():
    r = make_result([10.0, 11.0, 12.0], metric="latency_pdr50_d1")
    root = _parse(svg.render_svg(detail_chart(r, "lat")))
    assert "Latency [µs] (lower is better)" in [t.text for t in root.iter(f"{NS}text")]


def test_bands_are_drawn_when_present():
    n = 6
    bands = {"mm": np.full(n, 2e6), "tma": np.full(n, 2e6), "tma_lo": np.full(n, 1.5e6), "tma_hi": np.full(n, 2.5e6)}
    bands["tma_lo"][2] = np.nan
    r = make_result([2e6] * n, bands=bands)
    root = _parse(svg.render_svg(detail_chart(r, "b")))
    assert len(root.findall(f"{NS}polygon")) == 2  # the band breaks where TMSD is unknown
    assert any(pl.get("stroke-dasharray") for pl in root.findall(f"{NS}polyline"))


def test_epoch_seconds_keeps_nat_missing():
    t = np.array(["2022-01-01T00:00:00", "NaT"], dtype="datetime64[ns]")
    out = epoch_seconds(t)
    assert out[0] == datetime(2022, 1, 1, tzinfo=timezone.utc).timestamp() and np.isnan(out[1])


def test_empty_chart_says_no_data():
    assert "no data" in svg.render_svg(svg.Chart("x", "y"))


def _pts(xs: np.ndarray, ys: np.ndarray) -> str:
    """The text a chart writes for these points (``_Text.points``)."""
    out = svg._Text()
    out.points(xs, ys)
    return out.join()


def test_points_are_written_with_one_decimal_in_and_outside_the_canvas():
    xs, ys = np.array([64.0, 100.04, 747.96]), np.array([28.0, 0.0, 259.94])
    assert _pts(xs, ys) == "64.0,28.0 100.0,0.0 748.0,259.9"
    assert _pts(np.array([-3.26]), np.array([2.0])) == "-3.3,2.0"  # negative: the %.1f path
    assert _pts(np.array([]), np.array([])) == ""
    # the text table's last entry, and past it (a chart taller than 1000 px): the %.1f path
    assert _pts(np.array([999.96, 1234.56]), np.array([0.04, 1000.0])) == "1000.0,0.0 1234.6,1000.0"
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 999.9, 2000)
    assert _pts(xy[:1000], xy[1000:]) == " ".join(
        f"{int(np.rint(x * 10)) // 10}.{int(np.rint(x * 10)) % 10},{int(np.rint(y * 10)) // 10}.{int(np.rint(y * 10)) % 10}"
        for x, y in zip(xy[:1000], xy[1000:]))


def test_runs_of_a_mask():
    assert svg._runs(np.array([True, True, True])) == [(0, 3)]
    assert svg._runs(np.array([False, True, True, False, True])) == [(1, 3), (4, 5)]
    assert svg._runs(np.array([False, False])) == [] and svg._runs(np.array([], dtype=bool)) == []


def test_a_band_is_one_outline_upper_edge_forward_lower_edge_back_in_pixels():
    """By hand: x 0, 1, 2 days on 684 px from x = 64; y 0.76..4.24 (data 1..4 padded by 8 %,
    ticks 1..4) on 232 px from y = 260 up, so 3 -> 110.7, 4 -> 44.0, 1 -> 244.0, 2 -> 177.3."""
    xs = np.array([0.0, 86400.0, 172800.0])
    chart = svg.Chart("b", "y", [svg.Band(xs, np.array([1.0, 1.0, 2.0]), np.array([3.0, 3.0, 4.0]), "#9467bd"),
                                 svg.Line(xs, np.array([2.0, 2.0, 3.0]), "#9467bd", 1.0)])
    root = _parse(svg.render_svg(chart))
    (band,) = root.findall(f"{NS}polygon")
    assert band.get("points") == "64.0,110.7 406.0,110.7 748.0,44.0 748.0,177.3 406.0,244.0 64.0,244.0"
    assert (band.get("fill"), band.get("fill-opacity"), band.get("stroke")) == ("#9467bd", "0.15", "none")
    (line,) = root.findall(f"{NS}polyline")
    assert line.get("points") == "64.0,177.3 406.0,177.3 748.0,110.7"  # every point: none inside a level


def test_coordinates_are_texts_with_one_decimal_each_on_its_own_path():
    flat = np.array([12.34, 0.05, -3.26, np.nan, 1000.0, 1234.56, 999.96])  # 0.05: tenths round half to even
    assert svg._texts(flat) == ["12.3", "0.0", "-3.3", "nan", "1000.0", "1234.6", "1000.0"]
    assert svg._texts(np.array([0.0, 747.95])) == ["0.0", "748.0"]


def test_axes_and_legends_drawn_from_a_memo_follow_each_chart():
    """The time axis and the legend are memoised per axis and legend: charts on other days, or
    with another legend, get their own (and the same chart drawn twice the same text)."""
    from tests.render.factory import T0, times_for

    first = make_result([20e6] * 30)
    later = dataclasses.replace(first, times=times_for(30, T0 + np.timedelta64(400, "D")))

    def dates(text):
        return [t.text for t in _parse(text).iter(f"{NS}text") if t.text and re.fullmatch(r"\d{4}-\d\d-\d\d", t.text)]

    a, b = svg.render_svg(detail_chart(first, "t")), svg.render_svg(detail_chart(later, "t"))
    assert dates(a) == ["2022-01-02", "2022-01-09", "2022-01-16", "2022-01-23", "2022-01-30"]
    assert dates(b) == ["2023-02-06", "2023-02-13", "2023-02-20", "2023-02-27", "2023-03-06"]
    assert svg.render_svg(detail_chart(first, "t")) == a
    legends = [[t.text for t in _parse(svg.render_svg(c)).iter(f"{NS}text")][-len(c.legend):]
               for c in (detail_chart(first, "t"), group_chart("g", [first, later]))]
    assert legends[0] == ["samples", "trend", "TMA ± 3·TMSD", "moving median", "regression", "progression"]
    assert len(legends[1]) == 2 and legends[1][0] == legends[1][1] != "samples"  # one entry per test


def test_an_items_look_keeps_the_width_as_given():
    """``_look`` is memoised by its arguments' types too: a width of 1 and of 1.0 are written as given."""
    from pal.render import svg as svg_mod

    whole = svg_mod._pieces(svg_mod.Line(np.zeros(2), np.zeros(2), "#000000", 1))
    decimal = svg_mod._pieces(svg_mod.Line(np.zeros(2), np.zeros(2), "#000000", 1.0))
    assert 'stroke-width="1"' in whole[2] and 'stroke-width="1.0"' in decimal[2]
