"""The split and window scans of :mod:`pal.analysis.filters`, compiled with Numba (cached on disk).

Why compiled: the alert filters scan every level of every series for the best split
(``_best_shift``), the best short excursion (``_best_excursion``) and the best longer window
(``_best_window``); the NumPy forms build a matrix of every (length, start) pair and pay a dozen
array calls per scan, which made the filters cost as much as the MDL search itself (0.35 of
0.9 ms per series). Here each scan is one loop with no temporary arrays.

Exactness (the filters' decisions must not depend on which path ran): every float operation
is the NumPy form's, in its order (the cumulative sums are sequential in both; no fastmath);
the winner is ``np.argmax``'s: the first largest z in row-major (length, start) order, or the
first NaN when a z is NaN (a series holding inf). The NumPy forms stay in ``filters`` as the
fallback when numba is missing and as the tests' reference.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def _prefix(x):
    """0 followed by the cumulative sums of ``x`` (``np.cumsum`` adds left to right too)."""
    cs = np.empty(len(x) + 1)
    cs[0] = 0.0
    total = 0.0
    for i in range(len(x)):
        total += x[i]
        cs[i + 1] = total
    return cs


@njit(cache=True, nogil=True, error_model="numpy")
def best_shift(x, sigma, min_runs, min_after):
    """``filters._best_shift``: (largest two-sample z of a split, where the 2nd part starts)."""
    n = len(x)
    if n < min_runs + min_after:
        return 0.0, -1
    cs = _prefix(x)
    best, at = -math.inf, -1
    for k in range(min_runs, n - min_after + 1):
        left = cs[k] / k
        right = (cs[n] - cs[k]) / (n - k)
        z = abs(right - left) / (sigma * math.sqrt(1.0 / k + 1.0 / (n - k)))
        if math.isnan(z):
            return z, k
        if z > best:
            best, at = z, k
    return best, at


@njit(cache=True, nogil=True, error_model="numpy")
def _scan_windows(cs, n, sigma, lengths, first, last, keep_end):
    """The first largest z of a window against the rest: rows ``lengths``, starts ``first`` ..
    ``last - 1`` for every row; a window counts where its end is at most ``keep_end`` (else its
    z is 0, as ``np.where`` has it). Returns (z, start, length)."""
    best, at, size = -math.inf, -1, -1
    for length in lengths:
        rest = n - length
        scale = sigma * math.sqrt(1.0 / length + 1.0 / rest)
        for a in range(first, last):
            end = a + length
            z = 0.0
            if end <= keep_end:
                inside = (cs[end] - cs[a]) / length
                outside = (cs[n] - cs[end] + cs[a]) / rest
                z = abs(inside - outside) / scale
                if math.isnan(z):
                    return z, a, length
            if z > best:
                best, at, size = z, a, length
    return best, at, size


@njit(cache=True, nogil=True, error_model="numpy")
def best_excursion(x, sigma, shortest, longest):
    """``filters._best_excursion``: (z, start, end) of the best window of ``shortest`` ..
    ``longest`` runs, of the lengths that leave at least ``2 * longest`` runs outside."""
    n = len(x)
    lengths = np.arange(shortest, min(longest, n - 2 * longest) + 1)
    if not len(lengths):
        return 0.0, -1, -1
    # a window counts where it starts before n - length: it ends at n - 1 at most
    z, a, length = _scan_windows(_prefix(x), n, sigma, lengths, 1, n - lengths[0], n - 1)
    if not z > 0.0:
        return 0.0, -1, -1
    return z, a, a + length


@njit(cache=True, nogil=True, error_model="numpy")
def best_window(x, sigma, min_runs, grid):
    """``filters._best_window``: (z, start, end) of the best window whose length is on ``grid``
    (ascending) and leaves ``min_runs`` runs on each side."""
    n = len(x)
    count = 0
    while count < len(grid) and grid[count] <= n - 2 * min_runs:
        count += 1
    if not count:
        return 0.0, -1, -1
    lengths = grid[:count]
    z, a, length = _scan_windows(_prefix(x), n, sigma, lengths, min_runs, n - lengths[0] - min_runs + 1,
                                 n - min_runs)
    return z, a, a + length


@njit(cache=True, nogil=True, error_model="numpy")
def _median_of(x):
    """``filters._median`` of a non-empty array without NaN: the middle of its sorted copy, or the
    mean of the two middle ones (the elements ``np.partition`` puts there)."""
    s = np.sort(x)
    h = len(s) // 2
    if len(s) % 2:
        return s[h]
    return (s[h - 1] + s[h]) / 2.0


@njit(cache=True, nogil=True, error_model="numpy")
def _valid(x):
    """Where ``x`` is not NaN, in order, and whether all those values are finite."""
    idx = np.empty(len(x), dtype=np.int64)
    n = 0
    finite = True
    for i in range(len(x)):
        if not math.isnan(x[i]):
            idx[n] = i
            n += 1
            finite = finite and not math.isinf(x[i])
    return idx[:n], finite


@njit(cache=True, nogil=True, error_model="numpy")
def _noise(v):
    """``filters.run_noise`` of valid, finite values (at least three)."""
    d = v[1:] - v[:-1]
    dev = np.abs(d - _median_of(d))
    return _median_of(dev) / 0.6745 / math.sqrt(2.0)


@njit(cache=True, nogil=True, error_model="numpy")
def run_noise(x):
    """``filters.run_noise``: (done, noise); not done where a valid value is infinite (the NumPy
    form's NaN ordering decides there)."""
    idx, finite = _valid(x)
    if not finite:
        return False, math.nan
    if len(idx) < 3:
        return True, math.nan
    return True, _noise(x[idx])


@njit(cache=True, nogil=True, error_model="numpy")
def isolated_runs(x, k_sigma):
    """``filters.isolated_runs``: (done, the runs' indices); not done where a valid value is infinite."""
    idx, finite = _valid(x)
    n = len(idx)
    found = np.empty(max(n - 2, 0), dtype=np.int64)
    if not finite:
        return False, found
    if n < 3:
        return True, found
    v = x[idx]
    sigma = _noise(v)
    if sigma <= 0:
        return True, found[:0]
    limit = k_sigma * sigma
    m = 0
    for j in range(1, n - 1):
        left, right = v[j] - v[j - 1], v[j] - v[j + 1]
        same = (left > 0 and right > 0) or (left < 0 and right < 0) or (left == 0 and right == 0)
        if same and min(abs(left), abs(right)) > limit:
            found[m] = idx[j]
            m += 1
    return True, found[:m]
