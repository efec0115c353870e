"""Moving median and TMA ± 3·TMSD bands for every sample of a series, vectorised.

Drill-down graphs show these bands whatever the series' detector (seed design). The numbers
are those of ``pal.analysis.tma`` (each sample judged against the ``window`` valid runs before
it), computed for all samples at once: the TMA detector's per-run loop costs too much when
every series of a CSIT-sized history needs its bands on every run.

Two kinds of history:

* full windows (``window`` valid runs before the sample): one sorted sliding-window matrix,
  outliers masked to 0.0 in the sums (so equal to ``window_stats`` within 1e-12, and bit for
  bit to the bands pal has always published);
* short prefixes (``min_history`` .. ``window - 1`` runs, a handful per series): plain Python
  floats on one growing sorted list, bit for bit the numbers of ``tma.window_stats``; on a
  dozen values that is several times cheaper than any NumPy call sequence.

Both write out numpy's ``linear`` quantile (``_linear_index`` and numpy's ``_lerp``) and the
prefixes numpy's pairwise summation (``_numpy_sum``), so the floats are those of
``np.quantile``, ``np.mean`` and ``np.std`` (the tests compare them bit for bit).

That is the NumPy form (``_rolling_stats``). For a window of at most ``_PAIRWISE_BLOCK``
values, ``rolling_bands`` takes the same statistics from the compiled kernel
``pal.analysis.bands_kernel`` (C, built at install), one loop per window, bit for bit the NumPy
form's (the tests run on both paths); the NumPy form is the fallback and the reference.
"""

from __future__ import annotations

import bisect
import functools
import math

import numpy as np

from pal import compiled
from pal.analysis.tma import DEFAULTS, window_stats

BAND_NAMES = ("mm", "tma", "tma_lo", "tma_hi", "tmsd")

_QUARTILES = (0.25, 0.5, 0.75)
#: numpy sums up to this many values with 8 accumulators, longer arrays recursively
_PAIRWISE_BLOCK = 128


def _linear_index(n: int, q: float) -> tuple[int, int, float]:
    """numpy's ``linear`` quantile of n sorted values: neighbours and weight of the upper one.

    Virtual index (n - 1)·q, neighbours floor and floor + 1 (the last value at the top).
    """
    virtual = (n - 1) * q
    below = math.floor(virtual)
    return below, min(below + 1, n - 1), virtual - below


def _lerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """numpy's ``_lerp`` with one weight: from the nearer neighbour (t = 0 and t = 1 exact)."""
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


@functools.lru_cache(maxsize=64)
def _quartile_points(first: int, stop: int) -> tuple[tuple[int, int, int, float, int, int, float, int, int, float], ...]:
    """Per history length h in [first, stop): the neighbours and weights of Q1, Q2, Q3.

    A pure function of (first, stop), memoised: every series uses the same few lengths.
    """
    return tuple((h, *_linear_index(h, 0.25), *_linear_index(h, 0.5), *_linear_index(h, 0.75))
                 for h in range(first, stop))


def _numpy_sum(values: list[float]) -> float:
    """``np.sum`` of up to ``_PAIRWISE_BLOCK`` float64 values, in numpy's order (bit-identical).

    numpy adds fewer than 8 values left to right from 0.0; otherwise 8 accumulators over
    blocks of 8, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one by one.
    """
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    r0, r1, r2, r3, r4, r5, r6, r7 = values[:8]
    i, blocked = 8, n - n % 8
    while i < blocked:
        r0 += values[i]
        r1 += values[i + 1]
        r2 += values[i + 2]
        r3 += values[i + 3]
        r4 += values[i + 4]
        r5 += values[i + 5]
        r6 += values[i + 6]
        r7 += values[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for v in values[i:]:
        total += v
    return total


def _prefix_stats(valid: np.ndarray, first: int, stop: int) -> list[tuple[float, float, float]]:
    """(MM, TMA, TMSD) of ``valid[:h]`` for h in [first, stop), as ``tma.window_stats`` has them.

    Plain floats, few calls: this runs for every series on every run (cProfile counts calls).
    """
    values = valid[: stop - 1].tolist()
    ordered = sorted(values[: first - 1])
    out = []
    for h, lo1, hi1, t1, lo2, hi2, t2, lo3, hi3, t3 in _quartile_points(first, stop):
        bisect.insort(ordered, values[h - 1])
        # numpy's linear quantiles and _lerp (see _lerp), written out for Q1, Q2, Q3
        a, b = ordered[lo1], ordered[hi1]
        q1 = b - (b - a) * (1 - t1) if t1 >= 0.5 else a + (b - a) * t1
        a, b = ordered[lo2], ordered[hi2]
        q2 = b - (b - a) * (1 - t2) if t2 >= 0.5 else a + (b - a) * t2
        a, b = ordered[lo3], ordered[hi3]
        q3 = b - (b - a) * (1 - t3) if t3 >= 0.5 else a + (b - a) * t3
        iqr = q3 - q1
        low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
        if low <= ordered[0] and ordered[-1] <= high:  # no outlier (the common case)
            kept = values[:h]
        else:
            kept = [v for v in values[:h] if low <= v <= high]
        k = len(kept)
        if k < 8:  # numpy's short sums, inline: from 0.0, left to right
            total = 0.0
            for v in kept:
                total += v
            mean = total / k if k else math.nan  # none kept only with inf among the values
            total = 0.0
            for v in kept:
                d = v - mean
                total += d * d
        else:
            mean = _numpy_sum(kept) / k
            total = _numpy_sum([(v - mean) * (v - mean) for v in kept])
        out.append((q2, mean, math.sqrt(total / (k - 1)) if k > 1 else 0.0))
    return out


def _window_stats(valid: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MM, TMA, TMSD of every full window ``valid[r : r + window]`` (row r); ``valid`` contiguous."""
    step = valid.strides[0]
    # the sliding-window view itself (sliding_window_view's checks cost more than the sort)
    w = np.ndarray((len(valid) - window + 1, window), valid.dtype, valid, 0, (step, step))
    ordered = np.sort(w, axis=1)
    q1, q2, q3 = (_lerp(ordered[:, lo], ordered[:, hi], t)
                  for lo, hi, t in (_linear_index(window, q) for q in _QUARTILES))
    iqr = q3 - q1
    keep = (w >= (q1 - 1.5 * iqr)[:, None]) & (w <= (q3 + 1.5 * iqr)[:, None])
    cnt = keep.sum(axis=1)
    mean = np.where(keep, w, 0.0).sum(axis=1) / cnt
    dev = np.where(keep, w - mean[:, None], 0.0)
    sd = np.where(cnt > 1, np.sqrt((dev * dev).sum(axis=1) / np.maximum(cnt - 1, 1)), 0.0)  # no 0/0
    return q2, mean, sd


#: Compute the statistics in the compiled kernel (pal.analysis.bands_kernel: C, built at install)
#: when it is importable; tests turn it off to check the NumPy form (the reference) against it.
USE_COMPILED = True


def _rolling_stats(valid: np.ndarray, window: int, first: int, stop: int) -> np.ndarray:
    """MM, TMA, TMSD by history length (``bands_kernel.rolling_stats``), with NumPy and Python floats."""
    stats = np.full((3, len(valid) + 1), np.nan)  # rows mm, tma, tmsd by history length
    if len(valid) >= window:
        stats[:, window:] = _window_stats(valid, window)
    if first < stop <= _PAIRWISE_BLOCK + 1:
        stats[:, first:stop] = np.array(_prefix_stats(valid, first, stop)).T
    else:  # prefixes longer than numpy's pairwise block: judged one by one
        for hist in range(first, stop):
            st = window_stats(valid[:hist])
            stats[:, hist] = st.mm, st.tma, st.tmsd
    return stats


def rolling_bands(values: np.ndarray, window: int = DEFAULTS["window"], min_history: int = DEFAULTS["min_history"],
                  sigma: float = DEFAULTS["sigma"]) -> dict[str, np.ndarray]:
    """Per sample: MM, TMA, TMSD and TMA ± sigma·TMSD of the valid runs before it (NaN while too few)."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    first = max(min_history, 1)
    kernel = compiled.load("pal.analysis.bands_kernel") if USE_COMPILED and 1 <= window <= _PAIRWISE_BLOCK else None
    if kernel is not None:  # all of it compiled: the steps below were half a drill-down's bands
        out = np.empty((5, len(x)))  # rows mm, tma, tma_lo, tma_hi, tmsd, written whole
        kernel.bands_at(x, window, first, float(sigma), out)
        mm, tma, lo, hi, tmsd = out
        return {"mm": mm, "tma": tma, "tma_lo": lo, "tma_hi": hi, "tmsd": tmsd}
    present = ~np.isnan(x)
    valid = np.ascontiguousarray(x[present])
    # history length before each sample = valid runs strictly before it
    h = np.zeros(len(x), dtype=np.intp)
    np.cumsum(present[:-1], out=h[1:])
    stats = _rolling_stats(valid, window, first, min(window, len(valid) + 1))
    mm, tma, tmsd = stats[:, h]
    return {"mm": mm, "tma": tma, "tma_lo": tma - sigma * tmsd, "tma_hi": tma + sigma * tmsd, "tmsd": tmsd}
