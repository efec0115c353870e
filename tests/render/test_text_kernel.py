"""The compiled number texts (pal.render.text_kernel, C built at install): the Python forms' texts,
byte for byte, or a refusal that sends the caller back to them."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pal.render import escape, graphs, svg, text_kernel as kernel
from pal.render.pages import Pages, SiteInfo
from tests.render.factory import make_result


def _fixed(values: np.ndarray, digits: int) -> str | None:
    out = np.empty(len(values) * (digits + 22), dtype=np.uint8)
    n = kernel.fixed_list(np.ascontiguousarray(values, dtype=np.float64), digits, out)
    return None if n < 0 else out[:n].tobytes().decode("ascii")


def _python(values: np.ndarray, digits: int) -> str:
    return ",".join("null" if not math.isfinite(v) else f"%.{digits}f" % v for v in values.tolist())


def test_fixed_decimals_by_hand():
    v = np.array([1.5, -2.25, 0.0, -0.0, -1e-9, 12345678.9, math.nan, math.inf, -math.inf, 0.996, 9.9996])
    assert _fixed(v, 3) == "1.500,-2.250,0.000,-0.000,-0.000,12345678.900,null,null,null,0.996,10.000"
    assert _fixed(np.array([7.4, 7.6, 1e15]), 0) == "7,8,1000000000000000"
    assert _fixed(np.array([], dtype=float), 6) == ""


def test_fractions_with_leading_zeros_at_every_count_of_decimals():
    """The decimals are written two a step (and the digits pal writes by a copy of the loop each):
    leading zeros, odd and even counts, the last digit alone, the general loop's counts too."""
    assert _fixed(np.array([0.000123, 1.000001, 20.5]), 6) == "0.000123,1.000001,20.500000"
    assert _fixed(np.array([0.000123, 1.0000001, 20.5]), 7) == "0.0001230,1.0000001,20.5000000"
    assert _fixed(np.array([0.05, 3.09, 7.1]), 1) == "0.1,3.1,7.1"
    assert _fixed(np.array([0.05, 3.09, 7.1]), 2) == "0.05,3.09,7.10"
    assert _fixed(np.array([0.0001, 99.9999]), 4) == "0.0001,99.9999"
    for digits in range(0, 19):
        v = np.array([10.0**-digits, 1.0 + 10.0**-digits, 12.0 + 3 * 10.0**-digits, -0.5 * 10.0**-digits])
        v = v[np.abs(v) * 10.0**digits < 2.0**40]
        assert _fixed(v, digits) == _python(v, digits), digits


def test_ties_and_near_ties_are_written_as_python_rounds_them_and_huge_values_left_to_it():
    """What the loop's own rounding cannot be sure of is printf's text (the exact value rounded to
    nearest, ties to even, as Python's "%f"); only values of 1e16 and more go back to Python."""
    assert _fixed(np.array([0.125, 0.375, -0.125]), 2) == "0.12,0.38,-0.12"  # exact ties: half to even
    assert _fixed(np.array([0.5, 1.5, 2.5, 3.5]), 0) == "0,2,2,4"
    assert _fixed(np.array([1.0, 2.0**53]), 0) == "1,9007199254740992"  # no fraction left to round
    assert _fixed(np.array([1e10]), 6) == "10000000000.000000"  # 1e16 > 2**52
    # a hair from a tie: the product's rounding could put it on either side
    assert _fixed(np.array([np.nextafter(0.125, 1.0)]), 2) == "0.13"
    # 2.675 is 2.67499999999999982236431605997495353221893310546875 ("%.2f": 2.67); its product
    # 267.49999999999997 is within the product's error bound of the tie
    assert _fixed(np.array([2.675]), 2) == "2.67"
    # a throughput measured to the thousandth of a pps, shown in Mpps with six decimals
    assert _fixed(np.array([2046939.5 / 1e6, 1234567.5 / 1e6]), 6) == "2.046940,1.234568"
    assert _fixed(np.array([1.0, 1e16]), 0) is None and _fixed(np.array([-1e300]), 2) is None
    assert escape.js_floats([2.675, 1e16], 2) == "[2.67,10000000000000000.00]"


@pytest.mark.parametrize("digits", range(0, 16))
def test_random_values_of_every_magnitude(digits):
    rng = np.random.default_rng(digits)
    mags = 10.0 ** rng.uniform(-12, 17, 20_000)
    v = mags * rng.choice([-1.0, 1.0], len(mags))
    v[::97] = np.round(v[::97], digits)  # values with exactly ``digits`` decimals (as measured, shown)
    v[::101] = np.trunc(v[::101])
    written = 0
    for x in v.tolist():  # one at a time: a refusal of one value does not hide the others
        text = _fixed(np.array([x]), digits)
        if text is not None:
            assert text == _python(np.array([x]), digits)
            written += 1
    # it gives up on values of 1e16 and more only (ties and values past 2**52 / 10**digits printed)
    assert written == (np.abs(v) < 1e16).sum()


@pytest.mark.parametrize("digits", [0, 1, 3, 6, 15])
def test_signs_zeros_carries_and_tiny_values_are_written_as_python_writes_them(digits):
    """Each value on its own, each written by the loop (none is near a tie): ``-`` for -0.0 and for
    negatives that round to zero, carries into the units, subnormals, NaN of either sign as null."""
    v = [-0.0, 0.0, -4e-7, 4e-7, 5e-324, -5e-324, 1e-300, 0.9999999, -0.9999999, 9.5e-4, -123.456,
         999999.9999996, 2.0**30 + 0.375, -(2.0**30 + 0.625), math.nan, -math.nan, math.inf, -math.inf]
    for x in v:
        if abs(x) * 10.0**digits < 2.0**40:
            assert _fixed(np.array([x]), digits) == _python(np.array([x]), digits), x


def test_the_last_whole_numbers_the_loop_rounds_and_those_printf_writes():
    """Below 2**48 a whole number's neighbours are a quarter apart at most: the loop is sure of them;
    from 2**50 on the product's error bound reaches one half and printf writes every value."""
    assert _fixed(np.array([2.0**48 + 0.25, -(2.0**48 + 0.75), 2.0**48 - 0.5 + 0.125]), 0) == \
        "281474976710656,-281474976710657,281474976710656"
    assert _fixed(np.array([2.0**50 + 1.0, 2.0**52 - 1.0]), 0) == "1125899906842625,4503599627370495"
    assert _fixed(np.array([2.0**50 + 0.5]), 1) == "%.1f" % (2.0**50 + 0.5)


@pytest.mark.parametrize("digits", [16, 17, 18])
def test_more_decimals_than_the_pages_use(digits):
    """Up to 18 decimals (10**digits an int64): small values, as ``"%.{digits}f"``."""
    v = np.random.default_rng(digits).uniform(-1.0, 1.0, 2000) * 2.0**40 / 10.0**digits
    assert _fixed(v, digits) == _python(v, digits)
    with pytest.raises(ValueError):
        _fixed(np.array([1.0]), 19)


def test_the_kernel_checks_its_arrays():
    """The buffers' sizes and types: no write past an output, no reinterpreted item."""
    v = np.array([1.5, -2.25])
    exact = np.empty(len("1.500,-2.250"), dtype=np.uint8)
    assert kernel.fixed_list(v, 3, exact) == exact.size and exact.tobytes() == b"1.500,-2.250"
    with pytest.raises(ValueError, match="too small"):
        kernel.fixed_list(v, 3, np.empty(exact.size - 1, dtype=np.uint8))
    with pytest.raises(TypeError):
        kernel.fixed_list(v.astype(np.float32), 3, exact)
    with pytest.raises(TypeError):
        kernel.fixed_list(v, 3, np.frombuffer(bytes(64), dtype=np.uint8))  # read-only
    with pytest.raises(ValueError, match="too small"):
        kernel.tenths_pairs(np.array([1.0, 2.0]), *(svg._ascii(p) for p in svg._POINTS), np.empty(6, dtype=np.uint8))
    kinds, texts, bounds = svg._markup((svg._pieces(svg.Line(np.zeros(1), np.zeros(1), "#000000")),))
    with pytest.raises(ValueError, match="BAND"):  # a band's row without the upper edge's after it
        kernel.drawn_items(np.zeros(2), np.ones(2, dtype=bool), np.zeros((1, 2)), np.array([1]), 260.0, 0.0, 2.0,
                           texts, bounds, np.empty(200, dtype=np.uint8))
    with pytest.raises(ValueError, match="columns"):
        kernel.drawn_items(np.zeros(2), np.ones(2, dtype=bool), np.zeros((1, 3)), kinds, 260.0, 0.0, 2.0,
                           texts, bounds, np.empty(200, dtype=np.uint8))


@settings(max_examples=3000, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(0, 15))
def test_any_float(x, digits):
    text = _fixed(np.array([x]), digits)
    assert text is None or text == _python(np.array([x]), digits)


def test_throughputs_are_written_by_the_loop():
    """Measured values in the units the pages show (Mpps with 6 decimals, latencies in us with
    4), some of them measured to the thousandth (a tie in the last decimal shown, or near one):
    the loop writes every one."""
    rng = np.random.default_rng(5)
    for scale, digits in ((20.0, 6), (3000.0, 4), (0.5, 6)):
        v = rng.uniform(0.0, scale, 200_000)
        v[::10] = np.round(v[::10] * 1e6, 3) / 1e6 if digits == 6 else np.round(v[::10], digits + 1)
        assert _fixed(v, digits) == _python(v, digits)


@pytest.mark.parametrize("use", [True, False])
def test_js_floats_is_the_same_text_on_both_paths(monkeypatch, use):
    monkeypatch.setattr(escape, "USE_COMPILED", use)
    v = np.array([1.0, math.nan, 0.125, -3.5, 1e300])
    # 1e300 sends the array to the Python form on the compiled path (0.125, a tie, is printf's)
    assert escape.js_floats(v, 2) == "[1.00,null,0.12,-3.50," + "%.2f" % 1e300 + "]"
    assert escape.js_floats(np.array([1.25, 2.5]), 1) == "[1.2,2.5]"
    assert escape.js_floats([], 3) == "[]"
    assert escape.js_floats([1.0, 2.0], 20) == "[" + ",".join("%.20f" % x for x in (1.0, 2.0)) + "]"


@pytest.mark.parametrize("use", [True, False])
def test_a_runs_tables_cells_are_the_same_texts_on_both_paths(monkeypatch, use):
    """``fixed_texts`` (the drill-down's last runs): ``"%.{digits}f"`` per value, blank (or the
    given text) where it is missing, whichever path wrote it."""
    monkeypatch.setattr(escape, "USE_COMPILED", use)
    v = np.array([10.03456, math.nan, -0.00004, math.inf, 7.0])
    assert escape.fixed_texts(v, 4) == ["10.0346", "", "-0.0000", "", "7.0000"]
    assert escape.fixed_texts(v, 1, missing="-") == ["10.0", "-", "-0.0", "-", "7.0"]
    assert escape.fixed_texts(np.array([0.125, 1.0]), 2) == ["0.12", "1.00"]  # a tie: the Python form
    assert escape.fixed_texts([], 3) == []
    rng = np.random.default_rng(5)
    w = rng.normal(1e7, 1e5, 300) / 1e6
    w[rng.integers(0, 300, 20)] = math.nan
    assert escape.fixed_texts(w, 6) == ["" if math.isnan(x) else "%.6f" % x for x in w.tolist()]


def _pairs(flat: np.ndarray, seps: tuple[str, str, str, str]) -> str | None:
    parts = [svg._ascii(p) for p in seps]
    out = np.empty(len(flat) * 8 + (len(flat) // 2) * sum(p.size for p in parts), dtype=np.uint8)
    n = kernel.tenths_pairs(np.ascontiguousarray(flat, dtype=np.float64), *parts, out)
    return None if n < 0 else out[:n].tobytes().decode()


@pytest.mark.parametrize("seps", [svg._POINTS, ("M", " ", "h0", ""), ('<c x="', '" y="', '" r="2.5"/>', ""),
                                  ("", "", "", "")])
def test_tenths_pairs_are_the_lookup_texts(seps):
    rng = np.random.default_rng(3)
    flat = rng.uniform(0, 1000.04, 2000)
    flat[:10] = [0.0, -0.0, 0.05, 0.15, 999.95, 1000.0399, 5e-324, np.nextafter(1000.04, 0.0), 0.25, 2.5e-2]
    texts = svg._texts(flat)
    assert _pairs(flat, seps) == svg._pairs_pattern(1000, seps) % tuple(texts)
    assert _pairs(np.array([]), seps) == ""


@pytest.mark.parametrize("bad", [-0.01, 1000.04, 1234.5, math.nan, math.inf])
def test_tenths_pairs_give_up_outside_the_canvas(bad):
    assert _pairs(np.array([1.0, 2.0, 3.0, bad]), svg._POINTS) is None


def test_drill_down_graph_and_data_are_the_same_on_both_paths(monkeypatch):
    """A detail chart's SVG and a series' graph data, whichever path writes their numbers."""
    r = make_result(np.concatenate([np.full(40, 10.0e6), np.full(40, 9.0e6)])
                    + np.random.default_rng(2).normal(0, 1e5, 80))
    texts = []
    for use in (True, False):
        monkeypatch.setattr(escape, "USE_COMPILED", use)
        chart = graphs.detail_chart(r, "t", graphs.drawn_bands(r))
        axis = Pages(SiteInfo("t", "2026"))._axis(r)
        texts.append((svg.render_svg(chart), escape.js_encode(graphs.series_data(r)),
                      graphs.series_json(r, "n", axis.x, axis.b)))  # what the pages write
    assert texts[0] == texts[1]
    assert texts[0][0].count("<polygon") >= 1 and '"y":[' in texts[0][1]


def _drawn(item, kernel_module) -> str:
    """``svg._draw`` of one item on a 760 x 300 canvas (as ``render_svg`` scales it)."""
    out = svg._Text()
    svg._draw(item, lambda xs: (64 + xs * 0.5, np.isfinite(xs)),
              lambda v: 28 + 232 - (v - 0.0) * 2.0, out, kernel_module)
    return out.join()


@pytest.mark.parametrize("seed", range(40))
def test_lines_and_bands_are_drawn_the_same_by_the_loop(seed):
    """Random lines and bands with gaps, lone points, level stretches (equal to the tenth of a
    pixel) and points off the canvas: the compiled outline is the Python one, or it gives up."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 120))
    xs = np.arange(n, dtype=float) * 3.0
    levels = np.repeat(rng.uniform(0, 110, max(1, n // 8 + 1)), 8)[:n] + rng.choice([0.0, 0.01, 0.3], n)
    ys = np.where(rng.random(n) < 0.15, np.nan, levels)
    if seed % 5 == 0 and n:
        ys[rng.integers(0, n)] = 200.0  # off the canvas: -> the Python form for the whole item
    if seed % 7 == 0 and n:
        xs[rng.integers(0, n)] = np.nan
    lo, hi = ys - rng.uniform(0, 5, n), ys + rng.uniform(0, 5, n)
    for item in (svg.Line(xs, ys, "#000000", dash="4 2"), svg.Band(xs, lo, hi, "#111111")):
        want = _drawn(item, None)
        assert _drawn(item, kernel) == want


def test_a_point_off_the_canvas_sends_the_line_to_python():
    xs, ys = np.array([0.0, 2.0, 4.0]), np.array([10.0, 200.0, 10.0])  # y 200 -> pixel -140
    want = '<polyline points="64.0,240.0 65.0,-140.0 66.0,240.0" fill="none" stroke="#000000" stroke-width="1.5"/>'
    assert _drawn(svg.Line(xs, ys, "#000000"), kernel) == _drawn(svg.Line(xs, ys, "#000000"), None) == want
    ok = np.ones(3, dtype=bool)
    assert svg._compiled_outline(kernel.polylines, (64 + xs * 0.5, 260 - ys * 2.0), ok, "<p>", "</p>") is None
    assert svg._compiled_outline(kernel.polylines, (64 + xs * 0.5, 260 - ys / 2), ok, "<p>", "</p>") == \
        "<p>64.0,255.0 65.0,160.0 66.0,255.0</p>"


def _items(seed: int) -> list:
    """A drill-down's kinds of item over one x array, with gaps, level stretches, lone points, an
    empty sample path now and then and (some seeds) points off the canvas."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 90))
    xs = np.arange(n, dtype=float) * 3.0
    if seed % 7 == 0 and n:
        xs[rng.integers(0, n)] = np.nan

    def heights() -> np.ndarray:
        levels = np.repeat(rng.uniform(0, 110, max(1, n // 8 + 1)), 8)[:n] + rng.choice([0.0, 0.01, 0.3], n)
        return np.where(rng.random(n) < 0.15, np.nan, levels)

    ys = heights()
    if seed % 5 == 0 and n:
        ys[rng.integers(0, n)] = 200.0  # off the canvas
    samples = np.full(n, np.nan) if seed % 6 == 0 else heights()
    lo = ys - rng.uniform(0, 5, n)
    items = [svg.Band(xs, lo, lo + rng.uniform(0, 9, n), "#9467bd"), svg.Line(xs, heights(), "#9467bd", 1.0),
             svg.Line(xs, heights(), "#7f7f7f", 1.0, dash="4 3"), svg.Line(xs, ys, "#ff7f0e", 2.0),
             svg.Dots(xs, samples, "#1f77b4")]
    if n:
        items.append(svg.Dots(xs[:1], ys[:1], svg.RED, r=6.0, open=True))  # its own x array: drawn alone
    return items


def _all_drawn(items: list, together: bool) -> str:
    return svg._draw_items(items, lambda xs: 64 + xs * 0.5, (28 + 232, 0.0, 2.0), together)


@pytest.mark.parametrize("seed", range(60))
def test_a_charts_items_are_drawn_the_same_in_one_call(seed):
    """``drawn_items`` (every line, band and sample path over one x array in one call) writes what
    ``_draw`` writes item by item, or gives up (a point off the canvas) and the items are drawn one
    by one."""
    items = _items(seed)
    assert _all_drawn(items, True) == _all_drawn(items, False)


def test_the_one_call_draws_an_on_canvas_chart_and_gives_up_off_it():
    xs = np.arange(6, dtype=float)
    items = [svg.Band(xs, np.full(6, 10.0), np.full(6, 12.0), "#111111"), svg.Line(xs, np.arange(6.0), "#222222"),
             svg.Dots(xs, np.array([1.0, np.nan, 3.0, 4.0, 5.0, 6.0]), "#333333")]
    frame = (28 + 232, 0.0, 2.0)

    def xpos(v):
        return 64 + v * 0.5, np.isfinite(v)

    together = svg._together(items, xpos, frame, kernel)
    one_by_one = "".join(_all_drawn([it], False) for it in items)
    assert together == one_by_one
    assert together.startswith('<polygon points="64.0,236.0 64.5,236.0') and together.count("h0") == 5
    items[1] = svg.Line(xs, np.array([0.0, 1.0, 200.0, 3.0, 4.0, 5.0]), "#222222")  # y 200 -> pixel -140
    assert svg._together(items, xpos, frame, kernel) is None
    assert _all_drawn(items, True) == _all_drawn(items, False)


def test_the_one_call_computes_the_heights_as_py_does():
    """Heights drawn at a twentieth of a pixel (x.x5), where one unit in the last place decides the
    tenth written: the one call's ``c - (v - y0) * sy`` is ``py``'s, operation for operation."""
    c, y0, sy = 260.0, 3.7, 1.37
    pixels = np.arange(100, 2500, 7) / 10 + 0.05
    v, w = y0 + (c - pixels) / sy, y0 + (c - (pixels - 1.0)) / sy
    xs = np.arange(len(v), dtype=float)
    items = [svg.Band(xs, v, w, "#111111"), svg.Line(xs, v[::-1].copy(), "#222222"), svg.Dots(xs, v, "#333333")]

    def xpos(x):
        return 64 + x * 0.5, np.isfinite(x)

    together = svg._together(items, xpos, (c, y0, sy), kernel)
    assert together is not None
    assert together == svg._draw_items(items, lambda x: 64 + x * 0.5, (c, y0, sy), False)


def _python_svg(chart: svg.Chart) -> str:
    """``render_svg`` with no compiled loop at all: the reference text."""
    use = escape.USE_COMPILED
    escape.USE_COMPILED = False
    try:
        return svg.render_svg(chart)
    finally:
        escape.USE_COMPILED = use


def _whole_chart(seed: int) -> tuple[svg.Chart, bool]:
    """A chart of a drill-down's kinds of item over one x array, then anomaly rings, at magnitudes
    from 1e-7 to 1e11 (every step of ``nice_ticks``, int and float ones), with gaps, constant and
    negative series, a missing time; and whether the one call must draw it (not: nothing finite
    to draw, a ring beyond the x range, magnitudes past the call's limit)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    xs = 1.7e9 + np.arange(n, dtype=float) * 86400.0 * rng.uniform(0.2, 3)
    if seed % 7 == 0:
        xs[rng.integers(0, n)] = np.nan
    scale = 10.0 ** rng.uniform(-7, 11)
    base = rng.uniform(-0.5, 3.0) * scale
    flat = seed % 11 == 0  # every value the same: the margin is 5 % of it (or 1)
    ys = np.full(n, base) if flat else base + np.repeat(rng.normal(0, scale / 10, n // 6 + 1), 6)[:n]
    ys = np.where(rng.random(n) < 0.1, np.nan, ys)
    samples = ys + (0 if flat else rng.normal(0, scale / 50, n))
    lo = ys - abs(rng.normal(0, scale / 20, n))
    items = [svg.Band(xs, lo, lo + abs(rng.normal(0, scale / 10, n)), "#9467bd"),
             svg.Line(xs, ys + scale / 100, "#9467bd", 1.0), svg.Line(xs, ys, "#7f7f7f", 1.0, dash="4 3"),
             svg.Line(xs, ys, "#ff7f0e", 2.0), svg.Dots(xs, samples, "#1f77b4")]
    compiled = True
    if seed % 3 == 0:  # rings, as ``graphs._anomaly_dots`` makes them: their own x arrays
        idx = np.sort(rng.choice(n, min(n, 3), replace=False))
        items.append(svg.Dots(xs[idx], ys[idx] + scale / 7, svg.RED, r=6.0, open=True))
        items.append(svg.Dots(xs[idx[:1]], ys[idx[:1]], svg.GREEN, r=6.0, open=True))
    if seed % 13 == 0:  # a ring beyond the x range would widen the axis: Python draws it
        items.append(svg.Dots(np.array([xs[0] - 1e6]), np.array([base]), svg.RED, r=6.0, open=True))
        compiled = False
    if seed % 17 == 0:  # nothing finite to draw: "no data"
        items = [svg.Line(xs, np.full(n, np.nan), "#ff7f0e")]
        compiled = False
    heights = [a for it in items for a in ((it.lo, it.hi) if isinstance(it, svg.Band) else (it.ys,))]
    if not np.isfinite(xs).any() or not any(np.isfinite(a).any() for a in heights) \
            or max(abs(base), scale) * 1.5 >= 1e12:
        compiled = False
    legend = [("samples", "#1f77b4"), ("TMA ± 3·TMSD", "#9467bd"), ("a <b>", svg.RED)][: seed % 4]
    return svg.Chart(f"series {seed} <&>", "Throughput [Mpps]", items, legend), compiled


@pytest.mark.parametrize("seed", range(120))
def test_a_whole_chart_in_one_call_is_the_python_text(seed):
    """``text_kernel.chart`` writes the document ``render_svg`` writes in Python, byte for byte
    (its range, margins, ticks and their labels, grid, items and rings), or gives up."""
    chart, compiled = _whole_chart(seed)
    want = _python_svg(chart)
    got = svg._compiled(chart)
    assert (got is not None) == compiled
    assert svg.render_svg(chart) == want
    if got is not None:
        assert got == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e11, 1e11), st.just(math.nan)), min_size=1, max_size=40),
       st.floats(1e-6, 1e4))
def test_any_heights_in_one_call(values, spread):
    """Heights of any sign and size the pages can have (ticks of every step, ties of their labels'
    rounding, one value, all alike): the one call's text or the Python text, never another."""
    ys = np.array(values)
    xs = np.arange(len(ys), dtype=float) * 3600.0
    chart = svg.Chart("t", "y", [svg.Band(xs, ys - spread, ys + spread, "#111111"), svg.Line(xs, ys, "#222222"),
                                 svg.Dots(xs, ys, "#333333")], [("samples", "#333333")])
    got = svg._compiled(chart)
    want = _python_svg(chart)
    assert got is None or got == want
    assert got is not None or not np.isfinite(ys).any() or np.nanmax(np.abs(ys)) + spread >= 1e12 / 1.5


def test_the_grid_of_a_chart_in_one_call_by_hand():
    """Values 17.3-20.6: a margin of 8 % of the range (0.264) each side, 17.036-20.864 over the
    plot's 232 px (60.6 px a unit); ticks inside it by 1 (``nice_ticks``: 18, 19, 20); the values
    16 px inside the plot's edges (0.264 / 3.828 of 232)."""
    xs = np.array([0.0, 86400.0])
    ys = np.array([17.3, 20.6])
    got = svg._compiled(svg.Chart("t", "y", [svg.Line(xs, ys, "#222222"), svg.Dots(xs, ys, "#333333")]))
    assert got is not None
    assert re.findall(r'text-anchor="end">([^<]*)<', got) == ["18", "19", "20"]
    assert re.findall(r'<line x1="64" y1="([^"]*)" x2="748"', got) == ["201.6", "141.0", "80.4"]
    assert 'points="64.0,244.0 748.0,44.0"' in got and 'd="M64.0 244.0h0M748.0 44.0h0"' in got


def test_the_chart_call_checks_its_arrays():
    one = np.zeros(1)
    args = [b"<svg>", 0, 0, one, np.ones(1, dtype=np.uint8), np.zeros((1, 1)), np.zeros(1, dtype=np.int64),
            np.zeros(0, dtype=np.uint8), np.zeros((1, 4), dtype=np.int64), one, one,
            np.array([[1, 0, 0, 0, 0]], dtype=np.int64), np.zeros(0, dtype=np.uint8),
            np.array([64, 28, 684, 232, 0.0, 1.0, 0.0, 0.0]), np.empty(100000, dtype=np.uint8)]
    assert kernel.chart(*args) > 0
    with pytest.raises(ValueError, match="head"):
        kernel.chart(*[args[0], 9, 0, *args[3:]])
    with pytest.raises(ValueError, match="columns"):
        kernel.chart(*args[:5], np.zeros((1, 2)), *args[6:])
    with pytest.raises(ValueError, match="rings' counts"):
        kernel.chart(*args[:11], np.array([[2, 0, 0, 0, 0]], dtype=np.int64), *args[12:])
    with pytest.raises(ValueError, match="whole pixels"):
        kernel.chart(*args[:13], np.array([64.5, 28, 684, 232, 0.0, 1.0, 0.0, 0.0]), args[14])
    with pytest.raises(ValueError, match="too small"):
        kernel.chart(*args[:14], np.empty(10, dtype=np.uint8))


@pytest.mark.parametrize("anomalies", [False, True])
def test_a_group_chart_is_written_by_the_one_call_unless_a_ring_sits_between_its_series(anomalies):
    """A group graph (each test's trend line and samples over the job's shared times) is a chart
    of one x array too: the one call writes it, byte for byte as Python does; with the rings of a
    test between the others' items it is left to Python (same text)."""
    rng = np.random.default_rng(4)
    results = [make_result(np.repeat(rng.uniform(9e6, 11e6, 3), 20) + rng.normal(0, 5e4, 60),
                           (20, 40) if anomalies and i == 1 else (), test_id=f"t{i}") for i in range(4)]
    seconds = graphs.epoch_seconds(results[0].times)
    chart = graphs.group_chart("g <1>", results, [seconds] * len(results))
    got = svg._compiled(chart)
    assert (got is None) == anomalies
    assert svg.render_svg(chart) == _python_svg(chart)
    if got is not None:
        assert got == _python_svg(chart) and got.count("<polyline") >= 4
