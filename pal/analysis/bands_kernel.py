"""The MM / TMA / TMSD statistics of :mod:`pal.analysis.bands`, compiled with Numba (cached on disk).

Why compiled: every drill-down's static graph draws the rolling bands of its series, and the
NumPy form (a sorted sliding-window matrix, a dozen array calls, the short prefixes in Python)
was a sixth of a page's cost, for some 170 windows of 14 values. Here one loop per window, into
buffers allocated once per series; each window's sorted values are the previous window's with
one value taken out and one put in (``_slide``), not sorted again; ``bands_at`` does the
wrapper's steps too (a call per series instead of a dozen NumPy calls).

Exactness (the bands must be the NumPy form's bit for bit, which the tests compare): the
quartiles are numpy's ``linear`` quantile with its ``_lerp``; sums are numpy's pairwise order
for up to ``bands._PAIRWISE_BLOCK`` values (8 accumulators; fewer than 8 values left to
right from 0.0); a full window sums all its values with the outliers as 0.0 (as the NumPy form
masks them), a short prefix only the kept values, in their order. No fastmath.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def _sum(a, n):
    """``np.sum(a[:n])`` for n <= 128, in numpy's order (``bands._numpy_sum``)."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += a[i]
        return total
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    blocked = n - n % 8
    while i < blocked:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += a[i]
        i += 1
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def _sorted_into(ordered, w):
    """``w`` sorted into ``ordered[:len(w)]`` (insertion sort: a window is a dozen values, and
    ``np.sort`` would allocate for each)."""
    for i in range(len(w)):
        _insert(ordered, i, w[i])


@njit(cache=True, nogil=True, error_model="numpy")
def _insert(ordered, n, v):
    """``v`` into the sorted ``ordered[:n]``, after the values equal to it (the later of equal
    values goes last): the stable sort of the values and ``v``, ``n + 1`` long."""
    j = n
    while j > 0 and ordered[j - 1] > v:
        ordered[j] = ordered[j - 1]
        j -= 1
    ordered[j] = v


@njit(cache=True, nogil=True, error_model="numpy")
def _slide(ordered, n, old, new):
    """The stable sort of a window moved on by one (``ordered[:n]`` that of the window before):
    its oldest value ``old`` out, the newest ``new`` in. ``old`` is the first of the values equal
    to it (the sort is stable and it is the oldest), so the first equal one is taken out.
    False, ``ordered`` untouched, if ``old`` is not there (never, for valid runs: the caller
    then sorts the window itself rather than read past the buffer)."""
    j = 0
    while j < n and ordered[j] != old:
        j += 1
    if j == n:
        return False
    for i in range(j, n - 1):
        ordered[i] = ordered[i + 1]
    _insert(ordered, n - 1, new)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _quantile(ordered, n, q):
    """numpy's ``linear`` quantile q of the n sorted values, with its ``_lerp``."""
    virtual = (n - 1) * q
    below = math.floor(virtual)
    above = min(below + 1, n - 1)
    t = virtual - below
    a, b = ordered[below], ordered[above]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


@njit(cache=True, nogil=True, error_model="numpy")
def _fences(ordered, n):
    """(median, low fence, high fence) of the n sorted values."""
    q1 = _quantile(ordered, n, 0.25)
    q2 = _quantile(ordered, n, 0.5)
    q3 = _quantile(ordered, n, 0.75)
    iqr = q3 - q1
    return q2, q1 - 1.5 * iqr, q3 + 1.5 * iqr


@njit(cache=True, nogil=True, error_model="numpy")
def rolling_stats(valid, window, first, stop):
    """MM, TMA, TMSD by history length h (columns 0 .. len(valid)): the full windows
    ``valid[h - window : h]`` for h >= window, the prefixes ``valid[:h]`` for h in [first, stop);
    NaN elsewhere. ``window`` at most 128 (``bands._PAIRWISE_BLOCK``)."""
    m = len(valid)
    stats = np.full((3, m + 1), np.nan)
    buf = np.empty(max(window, 1))
    ordered = np.empty(max(window, 1))
    for h in range(first, stop):  # short prefixes: the kept values only, in their order
        w = valid[:h]
        if h == first:
            _sorted_into(ordered, w)
        else:  # one more value than the prefix before: inserted, not the prefix sorted again
            _insert(ordered, h - 1, w[h - 1])
        q2, low, high = _fences(ordered, h)
        k = 0
        for v in w:
            if low <= v <= high:
                buf[k] = v
                k += 1
        mean = _sum(buf, k) / k
        for i in range(k):
            d = buf[i] - mean
            buf[i] = d * d
        stats[0, h] = q2
        stats[1, h] = mean
        stats[2, h] = math.sqrt(_sum(buf, k) / (k - 1)) if k > 1 else 0.0
    for h in range(window, m + 1):  # full windows: every value, the outliers as 0.0
        w = valid[h - window:h]
        # the window before, moved on by one value
        if h == window or not _slide(ordered, window, valid[h - window - 1], w[window - 1]):
            _sorted_into(ordered, w)
        q2, low, high = _fences(ordered, window)
        cnt = 0
        for i in range(window):
            keep = w[i] >= low and w[i] <= high
            buf[i] = w[i] if keep else 0.0
            cnt += keep
        mean = _sum(buf, window) / cnt
        for i in range(window):
            d = w[i] - mean if w[i] >= low and w[i] <= high else 0.0
            buf[i] = d * d
        stats[0, h] = q2
        stats[1, h] = mean
        stats[2, h] = math.sqrt(_sum(buf, window) / max(cnt - 1, 1)) if cnt > 1 else 0.0
    return stats


@njit(cache=True, nogil=True, error_model="numpy")
def bands_at(x, window, first, sigma):
    """Rows MM, TMA, TMA - sigma·TMSD, TMA + sigma·TMSD, TMSD per sample of ``x`` (NaN: a missing
    run), each from the valid runs before the sample: ``bands.rolling_bands`` in one call, its
    NumPy steps (the valid runs, their count before each sample, the columns of ``rolling_stats``
    taken and the band edges) done here with the same float operations."""
    n = len(x)
    valid = np.empty(n)
    m = 0
    for i in range(n):
        if not math.isnan(x[i]):
            valid[m] = x[i]
            m += 1
    stats = rolling_stats(valid[:m], window, first, min(window, m + 1))
    out = np.empty((5, n))
    h = 0
    for i in range(n):
        tma = stats[1, h]
        tmsd = stats[2, h]
        out[0, i] = stats[0, h]
        out[1, i] = tma
        out[2, i] = tma - sigma * tmsd
        out[3, i] = tma + sigma * tmsd
        out[4, i] = tmsd
        if not math.isnan(x[i]):
            h += 1
    return out
