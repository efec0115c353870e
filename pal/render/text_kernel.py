"""The number texts of the drill-downs, compiled with Numba (cached on disk).

Why compiled: every drill-down writes about 1,500 numbers (its graph data with fixed decimals,
its static graph's coordinates in tenths of a pixel), and Python's ``%`` formatting of them,
with the dozen array calls a line's runs and level stretches took, was a third of a page's
cost. Here one loop writes the ASCII text of a whole array, or a whole line, into a buffer.

Exactness (the texts are those of the Python forms, byte for byte, which the tests compare):

* ``fixed_list`` is ``"%.{d}f"`` of each value, which rounds the value's exact binary expansion
  half to even. The loop rounds ``y = |x| * 10**d`` (one float rounding, 10**d exact for
  d <= 22), which gives the same digits whenever the fraction of ``y`` is farther from one half
  than the product's rounding error: beyond that (a tie, or within a few units in the last
  place of one), and for ``y >= 2**52``, it gives up and the caller formats the array in Python.
* ``tenths_pairs``, ``polylines`` and ``polygons`` write coordinates as the lookup of
  ``svg._texts`` does: ``rint(v * 10)`` tenths for coordinates in [0, 1000.04); they give up on
  anything else (``svg`` formats those with ``%.1f``). The two latter draw a whole line or band
  (its runs, the ends of its level stretches) as ``svg._draw`` does, from the same pixel arrays.
* ``drawn_items`` draws several lines, bands and sample paths over one x array in one call:
  their pixel heights are ``py``'s (``c - (v - y0) * sy``, the same two float operations in the
  same order), then the loops above.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: 10**k, exact as floats for k <= 22
_POW10 = np.array([10.0 ** k for k in range(23)])
#: 2**52: from here on a float has no fraction to round
_NO_FRACTION = 4503599627370496.0
#: the relative rounding error of one float multiplication, twice over (a margin)
_PRODUCT_ERROR = 2.0 ** -51


@njit(cache=True, nogil=True)
def _natural(out, at, v):
    """The decimal digits of ``v >= 0`` at ``out[at:]``; returns the end."""
    n = 1
    t = v // 10
    while t > 0:
        n += 1
        t //= 10
    end = at + n
    p = end - 1
    while True:
        out[p] = 48 + v % 10
        v //= 10
        p -= 1
        if p < at:
            break
    return end


@njit(cache=True, nogil=True)
def _write(out, at, text, lo, hi):
    for k in range(lo, hi):
        out[at] = text[k]
        at += 1
    return at


@njit(cache=True, nogil=True)
def fixed_list(values, digits, out):
    """``",".join("%.{digits}f" % v)`` of ``values`` (``null`` where not finite) into ``out``
    (``len(values) * (digits + 22)`` bytes suffice); its length, or -1 when some value is one
    whose rounding this loop cannot be sure of (see the module docstring)."""
    scale = _POW10[digits]
    unit = np.int64(scale)  # exact: digits <= 15
    at = 0
    for i in range(len(values)):
        if i:
            out[at] = 44  # ,
            at += 1
        x = values[i]
        if not math.isfinite(x):
            out[at], out[at + 1], out[at + 2], out[at + 3] = 110, 117, 108, 108  # null
            at += 4
            continue
        y = abs(x) * scale
        if not y < _NO_FRACTION:
            return -1
        whole = math.floor(y)
        if abs((y - whole) - 0.5) <= y * _PRODUCT_ERROR:
            return -1  # a tie, or too near one to tell which side the exact product is on
        r = np.int64(whole) + (1 if y - whole > 0.5 else 0)
        if math.copysign(1.0, x) < 0.0:
            out[at] = 45  # -  (as "%f" writes it, for -0.0 and values rounding to zero too)
            at += 1
        at = _natural(out, at, r // unit)
        if digits:
            out[at] = 46  # .
            at += 1
            frac = r % unit
            for k in range(digits - 1, -1, -1):
                out[at + k] = 48 + frac % 10
                frac //= 10
            at += digits
    return at


@njit(cache=True, nogil=True)
def _tenths(out, at, v):
    """``v`` in tenths (``svg._texts``) at ``out[at:]``; the end, or -1 outside [0, 1000.04)."""
    if not (v >= 0.0 and v < 1000.04):
        return -1
    t = np.int64(np.rint(v * 10.0))
    whole = t // 10  # 0 ... 1000: its digits written without counting them first (``_natural``)
    if whole >= 100:
        if whole >= 1000:
            out[at] = 48 + whole // 1000
            at += 1
        out[at] = 48 + whole // 100 % 10
        at += 1
    if whole >= 10:
        out[at] = 48 + whole // 10 % 10
        at += 1
    out[at] = 48 + whole % 10
    out[at + 1] = 46  # .
    out[at + 2] = 48 + t % 10
    return at + 3


@njit(cache=True, nogil=True)
def tenths_pairs(flat, pre, mid, post, between, out):
    """Each pair (x, y) of ``flat`` as ``pre x mid y post``, the pairs joined by ``between``, the
    numbers in tenths (``svg._texts``). Returns the length written into ``out``, or -1 when a
    number is outside [0, 1000.04) or not finite."""
    at = 0
    for i in range(0, len(flat) - 1, 2):
        if i:
            at = _write(out, at, between, 0, len(between))
        at = _write(out, at, pre, 0, len(pre))
        at = _tenths(out, at, flat[i])
        if at < 0:
            return -1
        at = _write(out, at, mid, 0, len(mid))
        at = _tenths(out, at, flat[i + 1])
        if at < 0:
            return -1
        at = _write(out, at, post, 0, len(post))
    return at


@njit(cache=True, nogil=True)
def _next_run(ok, i):
    """Start and end (exclusive) of the first run of True in ``ok[i:]``; equal at the end."""
    n = len(ok)
    while i < n and not ok[i]:
        i += 1
    a = i
    while i < n and ok[i]:
        i += 1
    return a, i


@njit(cache=True, nogil=True)
def _point(out, at, first, x, y):
    """`` x,y`` (no blank before the first point) at ``out[at:]``; the end, or -1."""
    if not first:
        out[at] = 32  # blank
        at += 1
    at = _tenths(out, at, x)
    if at < 0:
        return -1
    out[at] = 44  # ,
    return _tenths(out, at + 1, y)


@njit(cache=True, nogil=True)
def polylines(xs, ys, ok, head, tail, out):
    """``svg._draw`` of a Line: each run of ``ok`` longer than one point as ``head`` + its points
    (``x,y`` in tenths, blank-separated; inside a level stretch only its ends: ``svg._corners``)
    + ``tail``. The length written into ``out``, or -1 when a point is outside [0, 1000.04)."""
    at = 0
    a, i = _next_run(ok, 0)
    while a < i:
        if i - a == 1:
            a, i = _next_run(ok, i)
            continue  # a lone sample is drawn by its dot
        at = _write(out, at, head, 0, len(head))
        for k in range(a, i):
            if a < k < i - 1:
                t = np.rint(ys[k] * 10.0)
                if t == np.rint(ys[k - 1] * 10.0) and t == np.rint(ys[k + 1] * 10.0):
                    continue
            at = _point(out, at, k == a, xs[k], ys[k])
            if at < 0:
                return -1
        at = _write(out, at, tail, 0, len(tail))
        a, i = _next_run(ok, i)
    return at


@njit(cache=True, nogil=True)
def polygons(xs, lo, hi, ok, head, tail, out):
    """``svg._draw`` of a Band: each run of ``ok`` as ``head`` + its outline (the upper edge left to
    right, the lower edge back) + ``tail``. The length written, or -1 as ``polylines``."""
    at = 0
    a, i = _next_run(ok, 0)
    while a < i:
        at = _write(out, at, head, 0, len(head))
        for k in range(a, i):
            at = _point(out, at, k == a, xs[k], hi[k])
            if at < 0:
                return -1
        for k in range(i - 1, a - 1, -1):
            at = _point(out, at, False, xs[k], lo[k])
            if at < 0:
                return -1
        at = _write(out, at, tail, 0, len(tail))
        a, i = _next_run(ok, i)
    return at


#: ``drawn_items``' kinds of row: a line, a band (this row its lower edge, the next its upper),
#: samples (a path of round-capped dots), the upper edge of the band before
LINE, BAND, SAMPLES, UPPER = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def drawn_items(xs, okx, ys, kinds, c, y0, sy, texts, bounds, out):
    """``svg._draw`` of each row of ``ys`` (values in data units over the pixel x positions
    ``xs``, finite where ``okx``) as its kind says (``LINE``, ``BAND`` + ``UPPER``, ``SAMPLES``),
    into ``out``, in order. A row's markup is ``texts[bounds[r, 0]:bounds[r, 1]]`` (its head), its
    points, ``texts[bounds[r, 2]:bounds[r, 3]]`` (its tail); a sample path without a valid point
    is not written. The length written, or -1 when a point is outside [0, 1000.04) (the caller
    then draws the items one by one)."""
    n = len(xs)
    lo = np.empty(n)
    hi = np.empty(n)
    ok = np.empty(n, dtype=np.bool_)
    at = 0
    for r in range(ys.shape[0]):
        kind = kinds[r]
        if kind == UPPER:
            continue
        valid = 0
        for k in range(n):
            v = ys[r, k]
            lo[k] = c - (v - y0) * sy
            ok[k] = okx[k] and math.isfinite(v)
            if kind == BAND:
                w = ys[r + 1, k]
                hi[k] = c - (w - y0) * sy
                ok[k] = ok[k] and math.isfinite(w)
            valid += ok[k]
        head = texts[bounds[r, 0]:bounds[r, 1]]
        tail = texts[bounds[r, 2]:bounds[r, 3]]
        if kind == LINE:
            got = polylines(xs, lo, ok, head, tail, out[at:])
        elif kind == BAND:
            got = polygons(xs, lo, hi, ok, head, tail, out[at:])
        elif valid == 0:
            continue  # no sample to draw: no path
        else:  # "M x yh0" a point (svg._draw's pairs), between the head and the tail
            p = _write(out, at, head, 0, len(head))
            for k in range(n):
                if ok[k]:
                    out[p] = 77  # M
                    p = _tenths(out, p + 1, xs[k])
                    if p < 0:
                        return -1
                    out[p] = 32  # blank
                    p = _tenths(out, p + 1, lo[k])
                    if p < 0:
                        return -1
                    out[p], out[p + 1] = 104, 48  # h0
                    p += 2
            got = _write(out, p, tail, 0, len(tail)) - at
        if got < 0:
            return -1
        at += got
    return at
