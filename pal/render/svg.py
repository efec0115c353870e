"""Static SVG graphs: what a reader sees when scripts are blocked (Jenkins' CSP).

Only presentation attributes (``fill=``, ``stroke=``), no ``style`` and no script, so the
file renders as an ``<img>`` under ``style-src 'self'``. Built by string concatenation:
thousands of graphs per site, a DOM library would dominate the render time.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from pal.render.escape import text_kernel, xml_text

_DAY = 86400.0
_TIME_STEPS = (  # seconds, label format
    (3600.0 * 6, "%m-%d %H:%M"),
    (_DAY, "%Y-%m-%d"),
    (2 * _DAY, "%Y-%m-%d"),
    (7 * _DAY, "%Y-%m-%d"),
    (14 * _DAY, "%Y-%m-%d"),
    (30 * _DAY, "%Y-%m-%d"),
    (61 * _DAY, "%Y-%m-%d"),
    (91 * _DAY, "%Y-%m-%d"),
    (182 * _DAY, "%Y-%m-%d"),
    (365 * _DAY, "%Y-%m-%d"),
)

#: trace colours; red and green are kept for regressions and progressions
PALETTE = ("#1f77b4", "#ff7f0e", "#17becf", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#637939")
RED = "#d62728"
GREEN = "#2ca02c"


@dataclass(frozen=True)
class Line:
    """A polyline, broken at NaN (a missing run is a gap, never 0)."""

    xs: np.ndarray  # seconds since the epoch
    ys: np.ndarray
    color: str
    width: float = 1.5
    dash: str = ""


@dataclass(frozen=True)
class Dots:
    xs: np.ndarray
    ys: np.ndarray
    color: str
    r: float = 2.5
    open: bool = False  # open circles mark anomalies


@dataclass(frozen=True)
class Band:
    """A filled area between ``lo`` and ``hi`` (TMA ± 3·TMSD), broken at NaN."""

    xs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    color: str
    opacity: float = 0.15


@dataclass
class Chart:
    title: str
    y_title: str
    items: list = field(default_factory=list)  # Band | Line | Dots, drawn in order
    legend: list[tuple[str, str]] = field(default_factory=list)  # (label, color)
    width: int = 760
    height: int = 300


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2, 5 x 10^k steps)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    return ticks


def time_ticks(lo: float, hi: float, max_ticks: int = 7) -> list[tuple[float, str]]:
    """Tick positions (epoch seconds, at UTC midnight for day steps) and date labels."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        return []
    span = max(hi - lo, 1.0)
    step, fmt = next(((s, f) for s, f in _TIME_STEPS if span / s <= max_ticks), _TIME_STEPS[-1])
    align = _DAY if step >= _DAY else step
    t = math.ceil(lo / align) * align
    out = []
    while t <= hi:
        out.append((t, datetime.fromtimestamp(t, tz=timezone.utc).strftime(fmt)))
        t += step
    return out


def _tick_digits(step: float) -> int:
    """The decimals of the tick labels of a ``step`` apart (up to 6)."""
    digits = max(0, -int(math.floor(math.log10(step)))) if step > 0 else 0
    return min(digits, 6)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Start/end (exclusive) of consecutive True runs."""
    if mask.all():  # the common case: a series without gaps
        return [(0, len(mask))] if len(mask) else []
    # where the mask flips (the bands' first runs are NaN: every drill-down comes here)
    bounds = [0, *(np.flatnonzero(mask[1:] != mask[:-1]) + 1).tolist(), len(mask)]
    return list(zip(bounds[0::2], bounds[1::2])) if mask[0] else list(zip(bounds[1::2], bounds[2::2]))


#: a chart's margins around its plot, in pixels: left (the y labels), right, top (the title); the
#: x axis' dates take 40 below
LEFT, RIGHT, TOP = 64, 12, 28


def total_height(chart: Chart) -> int:
    """The document's height in pixels: the chart's and its legend's rows (two entries a row)."""
    return chart.height + 16 * math.ceil(len(chart.legend) / 2)


def render_svg(chart: Chart) -> str:
    """The chart as a standalone SVG document (deterministic text): written by one compiled call
    when its items allow (``_compiled``: a drill-down's chart), else here (``_drawn``); the same
    text either way."""
    text = _compiled(chart)
    return text if text is not None else _drawn(chart)


def _drawn(chart: Chart) -> str:
    """``render_svg`` in Python (the reference ``_compiled`` is tested against)."""
    w, h = chart.width, chart.height
    left, top = LEFT, TOP
    total_h = total_height(chart)
    pw, ph = w - left - RIGHT, h - top - 40

    xs_all, ys_all = [], []
    for it in chart.items:
        if not any(it.xs is x for x in xs_all):  # the items of a series share its x array
            xs_all.append(it.xs)
        if isinstance(it, Band):
            ys_all += [it.lo, it.hi]
        else:
            ys_all.append(it.ys)
    xcat = np.concatenate(xs_all) if xs_all else np.array([])
    ycat = np.concatenate(ys_all) if ys_all else np.array([])
    xcat = xcat[np.isfinite(xcat)]
    ycat = ycat[np.isfinite(ycat)]
    out = [_opening(w, total_h, chart.title)]
    if xcat.size == 0 or ycat.size == 0:
        out.append(f'<text x="{w / 2:.1f}" y="{h / 2:.1f}" text-anchor="middle" fill="#666666">no data</text></svg>\n')
        return "".join(out)

    x0, x1 = float(xcat.min()), float(xcat.max())
    if x1 <= x0:
        x0, x1 = x0 - _DAY / 2, x1 + _DAY / 2
    y0, y1 = float(ycat.min()), float(ycat.max())
    pad = (y1 - y0) * 0.08 or abs(y1) * 0.05 or 1.0
    y0, y1 = y0 - pad, y1 + pad
    yt = nice_ticks(y0, y1)
    if yt:
        y0, y1 = min(y0, yt[0]), max(y1, yt[-1])
    sx = pw / (x1 - x0)
    sy = ph / (y1 - y0)

    def px(v: np.ndarray) -> np.ndarray:
        return left + (v - x0) * sx

    # axes, grid and ticks
    out.append(_plot_frame(left, top, pw, ph))
    step = yt[1] - yt[0] if len(yt) > 1 else 1.0
    digits = _tick_digits(step)
    for v in yt:
        y = top + ph - (v - y0) * sy  # _draw_items' py: its float operations, in its order, on one number
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>'
                   f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{v:.{digits}f}</text>')
    out.append(_time_axis(x0, x1, sx, left, top, ph))
    out.append(_y_title(top, ph, chart.y_title))
    out.append(_draw_items(chart.items, px, (top + ph, y0, sy)))
    out.append(_legend(tuple(map(tuple, chart.legend)), left, pw, h))
    out.append("</svg>\n")
    return "".join(out)


def _opening(w: int, total_h: int, title: str) -> str:
    """The document's start: its size, white background and title."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{total_h}" '
            f'viewBox="0 0 {w} {total_h}" font-family="sans-serif" font-size="11">'
            f'<rect x="0" y="0" width="{w}" height="{total_h}" fill="#ffffff"/>'
            f'<text x="{w / 2:.1f}" y="16" text-anchor="middle" font-size="13">{xml_text(title)}</text>')


def _plot_frame(left: int, top: int, pw: int, ph: int) -> str:
    return f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999999"/>'


@functools.lru_cache(maxsize=64)
def _y_title(top: int, ph: int, title: str) -> str:
    """The y axis' title, turned (memoised: a few per site)."""
    return (f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 14 {top + ph / 2:.1f})">{xml_text(title)}</text>')


@dataclass(frozen=True)
class _XFrame:
    """What a chart's x array decides (``_x_frame``): the points' pixel x positions, where they are
    finite, the numbers ``text_kernel.chart`` takes (left, top, plot width and height, the x value
    at the left edge, pixels per x unit, the finite range) and the time axis' markup."""

    px: np.ndarray
    ok: np.ndarray
    numbers: np.ndarray
    axis: str


@functools.lru_cache(maxsize=64)
def _x_frame(xs: bytes, left: int, top: int, pw: int, ph: int) -> _XFrame | None:
    """``_XFrame`` of the float64 x values ``xs`` (their bytes: the charts of a job share them, and
    this is made once for all), as ``_drawn`` computes each part; None without a finite value."""
    x = np.frombuffer(xs, dtype=np.float64)
    finite = np.isfinite(x)
    if not finite.any():
        return None
    lo, hi = float(x[finite].min()), float(x[finite].max())
    x0, x1 = (lo, hi) if hi > lo else (lo - _DAY / 2, hi + _DAY / 2)
    sx = pw / (x1 - x0)
    px = left + (x - x0) * sx
    px.flags.writeable = False
    ok = finite.view(np.uint8)
    ok.flags.writeable = False
    numbers = np.array([left, top, pw, ph, x0, sx, lo, hi], dtype=np.float64)
    return _XFrame(px, ok, numbers, _time_axis(x0, x1, sx, left, top, ph))


#: ``text_kernel.chart``'s rings when a chart has none
_NO_RINGS = (np.empty(0), np.empty(0), np.empty((0, 5), dtype=np.int64), np.empty(0, dtype=np.uint8))
#: room for the grid's lines and labels (a dozen, of about 200 bytes)
_GRID_ROOM = 64 * 400


def _compiled(chart: Chart) -> str | None:
    """``_drawn(chart)`` by one call of ``text_kernel.chart`` for a chart whose items are lines,
    bands and sample paths over one x array, then anomaly rings (a drill-down's chart); None for
    any other chart, without the kernel, or where the call gives up (no finite value, a point off
    the canvas, extreme magnitudes): then ``_drawn`` draws it.

    Why: a drill-down's chart took a fifth of its page's time in Python around the compiled loops
    (the ranges, the ticks, the grid's texts, the items' arrays)."""
    kernel = text_kernel()
    items = chart.items
    if kernel is None or not items:
        return None
    xs = items[0].xs
    k = 0
    while k < len(items) and _joinable(items[k], xs):
        k += 1
    if not k or any(type(it) is not Dots or not it.open for it in items[k:]):
        return None
    w, h = chart.width, chart.height
    pw, ph = w - LEFT - RIGHT, h - TOP - 40
    rows: list[np.ndarray] = []
    for it in items[:k]:
        rows += (it.lo, it.hi) if isinstance(it, Band) else (it.ys,)
    try:
        x = np.ascontiguousarray(xs, dtype=np.float64)
        ys = np.array(rows, dtype=np.float64)
        rings = _rings(items[k:])
    except (TypeError, ValueError):  # not numbers, or not all as long: as _drawn would find them
        return None
    if x.ndim != 1 or ys.shape != (len(rows), len(x)) or rings is None:
        return None
    frame = _x_frame(x.tobytes(), LEFT, TOP, pw, ph)
    if frame is None:
        return None
    kinds, texts, bounds = _markup(tuple(_pieces(it) for it in items[:k]))
    head = (_opening(w, total_height(chart), chart.title)
            + _plot_frame(LEFT, TOP, pw, ph)).encode()
    middle = (frame.axis + _y_title(TOP, ph, chart.y_title)).encode()
    fixed = head + middle + (_legend(tuple(map(tuple, chart.legend)), LEFT, pw, h) + "</svg>\n").encode()
    rx, ry, groups, rtexts = rings
    n = len(x)
    buf = np.empty(len(fixed) + _GRID_ROOM + len(rows) * n * 30 + (n // 2 + 1) * len(texts)
                   + len(rx) * (len(rtexts) + 16), dtype=np.uint8)
    got = kernel.chart(fixed, len(head), len(middle), frame.px, frame.ok, ys, kinds, texts, bounds, rx, ry, groups,
                       rtexts, frame.numbers, buf)
    return buf[:got].tobytes().decode() if got >= 0 else None


def _rings(rings: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Anomaly rings as ``text_kernel.chart`` takes them: every ring's x and y, and per item its
    count and the bounds of its markup (``_ring_seps``) in one byte array; None when an item's x
    and y are not as long."""
    if not rings:
        return _NO_RINGS
    rx = [np.asarray(it.xs, dtype=np.float64).ravel() for it in rings]
    ry = [np.asarray(it.ys, dtype=np.float64).ravel() for it in rings]
    if any(len(a) != len(b) for a, b in zip(rx, ry)):
        return None
    markup = b""
    groups = []
    for it, a in zip(rings, rx):
        pre, mid, post, _ = (p.encode() for p in _ring_seps(it.r, it.color))
        start = len(markup)
        markup += pre + mid + post
        groups.append((len(a), start, start + len(pre), start + len(pre) + len(mid), len(markup)))
    return (np.concatenate(rx), np.concatenate(ry), np.array(groups, dtype=np.int64).reshape(-1, 5),
            np.frombuffer(markup, dtype=np.uint8))


@functools.lru_cache(maxsize=64, typed=True)  # typed: a radius of 6 is written "6", of 6.0 "6.0"
def _ring_seps(r: float, color: str) -> tuple[str, str, str, str]:
    """An anomaly ring's markup around its centre's x and y (pre, mid, post, between)."""
    return ('<circle class="anomaly" cx="', '" cy="', f'" r="{r}" fill="none" stroke="{color}" stroke-width="2"/>', "")


@functools.lru_cache(maxsize=64)
def _time_axis(x0: float, x1: float, sx: float, left: int, top: int, ph: int) -> str:
    """The time axis' ticks and dates: the same for every series of a job (memoised)."""
    out = []
    for t, label in time_ticks(x0, x1):
        x = float(left + (np.float64(t) - x0) * sx)  # as the chart's px
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 4}" stroke="#999999"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{label}</text>')
    return "".join(out)


@functools.lru_cache(maxsize=64)
def _legend(legend: tuple[tuple[str, str], ...], left: int, pw: int, h: int) -> str:
    """The legend's swatches and labels: the same on every drill-down (memoised)."""
    out = []
    for i, (label, color) in enumerate(legend):
        lx = left + (i % 2) * (pw / 2)
        ly = h - 8 + 16 * (i // 2)
        out.append(f'<rect x="{lx:.1f}" y="{ly - 8}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{lx + 14:.1f}" y="{ly + 1}">{xml_text(label)}</text>')
    return "".join(out)


#: "0.0" ... "1000.0": the text of every coordinate in tenths of a pixel a chart can have
_TENTHS = np.array([f"{i // 10}.{i % 10}" for i in range(10_001)], dtype=object)


def _texts(flat: np.ndarray) -> list[str]:
    """Every number of ``flat`` with one decimal, as texts.

    Coordinates inside the canvas are looked up by their tenths of a pixel (``_TENTHS``): 3.5x
    faster than formatting the integer tenths, which was nearly twice as fast as ``%.1f`` (the
    same text up to ties at .x5). Anything else (negative, past 1000 px, not finite) takes ``%.1f``.
    """
    inside = (flat >= 0) & (flat < 1000.04)
    if inside.all():
        return _TENTHS[np.rint(flat * 10).astype(np.intp)].tolist()
    out = _TENTHS[np.rint(np.where(inside, flat, 0.0) * 10).astype(np.intp)].tolist()
    for i in np.flatnonzero(~inside).tolist():
        out[i] = "%.1f" % flat[i]
    return out


def _interleave(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``x0, y0, x1, y1, ...``"""
    flat = np.empty(2 * len(xs))
    flat[0::2], flat[1::2] = xs, ys
    return flat


@functools.lru_cache(maxsize=4096)
def _pairs_pattern(n: int, seps: tuple[str, str, str, str]) -> str:
    """The %-pattern of n coordinate pairs ``pre x mid y post``, joined by ``between`` (memoised:
    charts share their lengths)."""
    pre, mid, post, between = seps
    return between.join([f"{pre}%s{mid}%s{post}"] * n)


#: pre, mid, post, between of a line's or an outline's points: ``x,y x,y``
_POINTS = ("", ",", "", " ")


def _corners(ys: np.ndarray) -> np.ndarray:
    """Which points of a line (x increasing) to write: not those inside a level stretch, whose
    neighbours are drawn at the same height to the tenth of a pixel (the line through them is the
    same). A trend is a few levels: 170 points become a handful."""
    tenths = np.rint(ys * 10)
    keep = np.ones(len(ys), dtype=bool)
    if len(ys) > 2:
        keep[1:-1] = (tenths[1:-1] != tenths[:-2]) | (tenths[1:-1] != tenths[2:])
    return keep


class _Text:
    """A chart's drawn items as text pieces and %-patterns whose numbers are formatted together.

    Every item used to format its own coordinates (a dozen numpy calls each); a drill-down has
    five items of up to 340 pairs, so one pass over all of them saves most of the calls.
    """

    def __init__(self) -> None:
        self.pieces: list = []  # str, or (separators, index into numbers)
        self.numbers: list[np.ndarray] = []

    def text(self, piece: str) -> None:
        self.pieces.append(piece)

    def pairs(self, seps: tuple[str, str, str, str], flat: np.ndarray) -> None:
        """The pairs of ``flat`` (x0, y0, x1, y1...) as ``pre x mid y post``, joined by ``between``."""
        self.pieces.append((seps, len(self.numbers)))
        self.numbers.append(flat)

    def points(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """``x,y x,y ...``: the points of a line or an outline, one decimal each."""
        if len(xs):
            self.pairs(_POINTS, _interleave(xs, ys))

    def join(self) -> str:
        """The text: each group of numbers by the compiled loop (``text_kernel.tenths_pairs``) when
        there is one and it can write them all, else from one formatting of every number."""
        kernel = text_kernel()
        texts = None
        out, at = [], 0
        for piece in self.pieces:
            if type(piece) is str:
                out.append(piece)
                continue
            seps, k = piece
            flat = self.numbers[k]
            done = None
            if kernel is not None:
                parts = [_ascii(p) for p in seps]
                buf = np.empty(len(flat) * 8 + (len(flat) // 2) * sum(p.size for p in parts), dtype=np.uint8)
                n = kernel.tenths_pairs(flat, *parts, buf)
                done = buf[:n].tobytes().decode() if n >= 0 else None
            if done is None:  # every number of the chart formatted together, once
                if texts is None:
                    texts = _texts(np.concatenate(self.numbers) if len(self.numbers) > 1 else self.numbers[0])
                done = _pairs_pattern(len(flat) // 2, seps) % tuple(texts[at:at + len(flat)])
            out.append(done)
            at += len(flat)
        return "".join(out)


@functools.lru_cache(maxsize=256)
def _ascii(text: str) -> np.ndarray:
    """A piece of markup as the compiled loops take it (memoised: charts share theirs)."""
    return np.frombuffer(text.encode(), dtype=np.uint8)


def _compiled_outline(draw, arrays: tuple, ok: np.ndarray, head: str, tail: str) -> str | None:
    """A line's or a band's markup by ``text_kernel.polylines`` / ``polygons``; None where it gave up."""
    n = len(ok)
    h, t = _ascii(head), _ascii(tail)
    buf = np.empty(n * 30 + (n // 2 + 1) * (h.size + t.size), dtype=np.uint8)
    got = draw(*arrays, ok, h, t, buf)
    return buf[:got].tobytes().decode() if got >= 0 else None


def _draw_items(items: list, px, frame: tuple[int, float, float], together: bool = True) -> str:
    """All items of a chart, in order; x positions computed once per distinct x array.

    ``frame``: the heights' scale (``top + ph``, ``y0``, ``sy``): a value ``v`` is drawn at
    ``top + ph - (v - y0) * sy``, by ``py`` here and by the compiled call with which the
    consecutive lines, bands and sample paths over one x array (a drill-down's five) are drawn
    at once (``_together``; ``together=False``: one by one, the reference the tests compare)."""
    c, y0, sy = frame

    def py(v: np.ndarray) -> np.ndarray:
        return c - (v - y0) * sy

    out = _Text()
    last: list = [None, None, None]  # the last x array, its positions and where it is finite

    def xpos(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if last[0] is not xs:  # the items of a series share its x array
            last[:] = xs, px(xs), np.isfinite(xs)
        return last[1], last[2]

    kernel = text_kernel()
    i = 0
    while i < len(items):
        j = i
        if kernel is not None and together:
            while j < len(items) and _joinable(items[j], items[i].xs):
                j += 1
        text = _together(items[i:j], xpos, frame, kernel) if j - i > 1 else None
        if text is not None:
            out.text(text)
            i = j
            continue
        for it in items[i:max(j, i + 1)]:  # one by one: alone, or where the one call gave up
            _draw(it, xpos, py, out, kernel)
        i = max(j, i + 1)
    return out.join()


def _joinable(it, xs: np.ndarray) -> bool:
    """A line, band or sample path over ``xs`` (the same array)."""
    return it.xs is xs and not (type(it) is Dots and it.open)


def _together(items: list, xpos, frame: tuple[int, float, float], kernel) -> str | None:
    """``_draw`` of each item, in one call of ``text_kernel.drawn_items``; None where it gave up
    (a point off the canvas: the caller draws the items one by one)."""
    X, okx = xpos(items[0].xs)
    rows: list[np.ndarray] = []
    for it in items:
        rows += (it.lo, it.hi) if isinstance(it, Band) else (it.ys,)
    n = len(X)
    try:
        ys = np.array(rows, dtype=np.float64)  # the heights as py takes them (an int becomes its float)
    except (TypeError, ValueError):  # not numbers, or not all as long
        return None
    if ys.shape != (len(rows), n):
        return None
    kinds, texts, bounds = _markup(tuple(_pieces(it) for it in items))
    buf = np.empty(len(rows) * n * 30 + (n // 2 + 1) * len(texts) + 64, dtype=np.uint8)
    c, y0, sy = frame
    got = kernel.drawn_items(X, okx, ys, kinds, float(c), float(y0), float(sy), texts, bounds, buf)
    return buf[:got].tobytes().decode() if got >= 0 else None


def _pieces(it) -> tuple[str, str, str]:
    """A line's, band's or sample path's kind (for ``text_kernel.drawn_items``) and its markup
    before and after its points."""
    if isinstance(it, Line):
        return _look("line", it.color, it.width, it.dash)
    if isinstance(it, Band):
        return _look("band", it.color, it.opacity)
    return _look("samples", it.color, it.r)


@functools.lru_cache(maxsize=256, typed=True)  # typed: a width of 1 is written "1", of 1.0 "1.0"
def _look(kind: str, color: str, size: float, dash: str = "") -> tuple[str, str, str]:
    """``_pieces`` of an item of this kind and look (memoised: the drill-downs share their items'
    looks, and ``_markup`` is looked up by these very tuples, whose hashes are then kept)."""
    if kind == "line":
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        return "line", '<polyline points="', f'" fill="none" stroke="{color}" stroke-width="{size}"{dashed}/>'
    if kind == "band":
        return "band", '<polygon points="', f'" fill="{color}" fill-opacity="{size}" stroke="none"/>'
    return "samples", '<path class="samples" d="', (f'" fill="none" stroke="{color}" stroke-width="{2 * size}" '
                                                     f'stroke-linecap="round"/>')


@functools.lru_cache(maxsize=64)
def _markup(pieces: tuple[tuple[str, str, str], ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows' kinds, their markup as one byte array and each row's (head, tail) bounds in it
    (memoised: the drill-downs share their items' look)."""
    codes = {"line": (0,), "band": (1, 3), "samples": (2,)}  # text_kernel's LINE, BAND + UPPER, SAMPLES
    kinds: list[int] = []
    bounds: list[tuple[int, int, int, int]] = []
    text = b""
    for kind, head, tail in pieces:
        h, t = head.encode(), tail.encode()
        start = len(text)
        text += h + t
        for code in codes[kind]:
            kinds.append(code)
            bounds.append((start, start + len(h), start + len(h), start + len(h) + len(t)))
    return (np.array(kinds, dtype=np.int64), np.frombuffer(text, dtype=np.uint8),
            np.array(bounds, dtype=np.int64).reshape(-1, 4))


def _draw(it, xpos, py, out: _Text, kernel=None) -> None:
    """One item's markup into ``out``: by the compiled loop when there is one (``kernel``) and it
    can write every number, else here."""
    if isinstance(it, Line):
        X, ok = xpos(it.xs)
        ok = ok & np.isfinite(it.ys)
        Y = py(it.ys)
        _, head, tail = _pieces(it)
        if kernel is not None:
            text = _compiled_outline(kernel.polylines, (X, Y), ok, head, tail)
            if text is not None:
                out.text(text)
                return
        for a, b in _runs(ok):
            if b - a == 1:
                continue  # a lone sample is drawn by its dot
            x, y = X[a:b], Y[a:b]
            keep = _corners(y)
            if not keep.all():
                x, y = x[keep], y[keep]
            out.text(head)
            out.points(x, y)
            out.text(tail)
        return
    if isinstance(it, Dots):
        X, ok = xpos(it.xs)
        ok = ok & np.isfinite(it.ys)
        if not ok.any():
            return
        flat = _interleave(X[ok], py(it.ys[ok]))
        if it.open:  # anomaly rings: few, one element each
            out.pairs(_ring_seps(it.r, it.color), flat)
            return
        # samples: one path of zero-length segments with round caps draws a dot per point at a
        # fifth of the bytes of <circle> elements (a site has a million of them)
        _, head, tail = _pieces(it)
        out.text(head)
        out.pairs(("M", " ", "h0", ""), flat)
        out.text(tail)
        return
    if isinstance(it, Band):
        X, ok = xpos(it.xs)
        ok = ok & np.isfinite(it.lo) & np.isfinite(it.hi)
        LO, HI = py(it.lo), py(it.hi)
        _, head, tail = _pieces(it)
        if kernel is not None:
            text = _compiled_outline(kernel.polygons, (X, LO, HI), ok, head, tail)
            if text is not None:
                out.text(text)
                return
        for a, b in _runs(ok):
            # the upper edge left to right, then the lower edge back: one closed outline
            out.text(head)
            out.points(np.concatenate((X[a:b], X[a:b][::-1])), np.concatenate((HI[a:b], LO[a:b][::-1])))
            out.text(tail)
        return
    raise TypeError(f"not a chart item: {it!r}")
