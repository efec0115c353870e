"""The MDL search loop of :mod:`pal.analysis.mdl`, compiled with Numba (nopython, cached on disk).

Why compiled: the NumPy search pays ~25 us of interpreter overhead per run, which dominates the
short series (180 runs) the daily job recomputes for every test. Why a module of its own: it
imports numba, which pal.analysis.mdl loads only when a search runs (never at import, and not at
all when numba is missing: then the NumPy path runs).

Exactness (the results must equal jumpavg's bit for bit):

* every float operation that reaches a result is the one ``mdl.group_bits`` /
  ``MdlState._extend_open`` does, in the same order; no fastmath, so LLVM neither reassociates
  nor contracts a*b+c into an FMA; error_model="numpy" (a division by zero gives inf, which
  the finiteness checks turn into a failure, instead of a check on every division);
* ``math.log`` compiles to the C library's ``log``, the function CPython's ``math.log`` calls;
  ``math.log(x, 2)`` is written ``log(x) / log(2)`` as CPython computes it;
* what CPython computes with its own code (``math.lgamma``) or depends only on the sample count
  comes in as tables computed by CPython (``mdl._exact_tables``);
* the exact bits are only ever computed in scalar code (never in a loop LLVM could vectorise
  through a vector math library); the vectorisable loops compute the Welford merge (+-*/ and
  sqrt, correctly rounded in any width) and the approximate screen.

A run whose numbers leave the finite range (or hit a log domain error, where CPython raises)
makes the kernel return a failure; the caller then redoes the series on the NumPy path, which
behaves exactly as jumpavg does there.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_LN2 = math.log(2)
#: upper bound of log2(x) - linear_log2(x) for x >= 1 (max of log2(1+f) - f on [0, 1]).
_LIN_GAP = 0.0861
_ONE_BITS = 0x3FF0000000000000
_MANTISSA = float(1 << 52)


@njit(cache=True, nogil=True, error_model="numpy")
def _restat(n, avg, sd):
    """jumpavg re-entering (n, avg, sd) into its Welford merge: (avg, sd) of the copy."""
    nf = float(n)
    m = sd * sd * nf
    return avg * nf / nf, math.sqrt(m / nf)


@njit(cache=True, nogil=True, error_model="numpy")
def _bits(n, avg, sd, has_prev, prev_avg, top, unit, first_bits, stdev_bits, t_size, t_area, t_logn):
    """mdl.group_bits of the re-entered stats (n, avg, sd); NaN where CPython would raise."""
    avg, sd = _restat(n, avg, sd)
    bits = 0.0
    mean = avg / unit
    bits += t_size[n]
    if not has_prev:
        bits += first_bits
    else:
        prev = prev_avg / unit
        z = prev * prev
        z -= (prev - 1) * top
        z += top * top / 2
        arg = (abs(mean - prev) + 1) / z
        if not arg > 0.0:
            return np.nan
        bits -= math.log(arg) / _LN2
    if n < 2:
        return bits
    dev = sd / unit
    bits += math.log((dev + 1) * (dev + 2)) / _LN2
    bits += stdev_bits
    area = t_area[n]
    area += math.log(dev + 1) * float(n - 2)
    area += t_logn[n]
    bits += area / _LN2
    return bits


@njit(cache=True, nogil=True, error_model="numpy")
def _extend_open(j, rn, ravg, rsd, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound):
    """Add run j to candidates 0..j-1 (mdl.MdlState._extend_open, element by element).

    In the same pass (the divisions keep one unit busy, the other units are free), ``bound[i]``
    gets a lower bound of candidate i's approximate total: the size-only bits are at least
    ``size_low[j + 1 - i]`` (i..j holds at least j + 1 - i samples), log2 is bounded from the
    float's exponent and mantissa bits, and log2(stdev + 2) >= 1.
    """
    rnf = float(rn)
    extra = rsd * rsd * rnf
    plain = rn == 1 and rsd == 0.0
    for i in range(j):
        nf = c_nf[i]
        a1 = c_avg[i] * nf
        a1 /= nf
        sd = c_sd[i]
        m = sd * sd
        m *= nf
        delta = ravg - a1
        total = nf + rnf
        if plain:
            avg = a1 + delta / total
        else:
            step = delta * rnf
            step /= total
            m += extra
            avg = a1 + step
        d2 = delta * delta
        d2 *= nf
        if rn != 1:
            d2 *= rnf
        d2 /= total
        m += d2
        m /= total
        sd = math.sqrt(m)
        c_avg[i] = avg
        c_sd[i] = sd
        c_nf[i] = total
        c_n[i] += rn
        gap = abs(avg - c_prev[i]) * inv + 1.0
        dev = sd * inv + 1.0
        low = size_low[j + 1 - i] + c_lognorm[i] + c_base[i] - (_lin_log2(gap) + _LIN_GAP)
        low += _lin_log2(dev) * (total - 1.0) + 1.0
        bound[i] = low - 1e-6 * (1.0 + abs(low))


@njit(cache=True, nogil=True, error_model="numpy")
def _lin_log2(x):
    """A lower bound of log2(x) for normal x >= 1 (exponent plus the mantissa read linearly)."""
    return (np.float64(x).view(np.int64) - _ONE_BITS) / _MANTISSA


@njit(cache=True, nogil=True, error_model="numpy")
def run_steps(j0, j1, r_n, r_avg, r_sd, max_value, unit, first_bits, stdev_bits, t_size, t_area, t_logn,
              c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, win, best, gbits, w_n, w_avg, w_sd):
    """Consume runs j0..j1-1 (mdl.MdlState._step for each); 0 when done, else the failing run + 1.

    The arrays are those of the MdlState, updated in place. The selection screens candidates
    with the approximate bits (as the NumPy path does, with a cheaper lower bound in front: a
    candidate whose bound is above the screen's threshold cannot be near the minimum) and
    recomputes the near ones exactly, compared in jumpavg's order.
    """
    top = max_value / unit
    inv = 1.0 / unit
    # Every sample within 1e150 units keeps every intermediate finite (the screen relies on
    # it); anything else goes to the NumPy path.
    for j in range(j1):
        if not (abs(r_avg[j]) + r_sd[j] * r_n[j]) * inv < 1e150:
            return 1
    # Approximate size-only bits per sample count (as MdlState._size_table).
    n_max = 0
    for j in range(j1):
        n_max += r_n[j]
    approx_tab = np.empty(n_max + 1)
    approx_tab[0] = np.nan
    for n in range(1, n_max + 1):
        if n >= 2:
            approx_tab[n] = t_size[n] + stdev_bits + (t_area[n] + t_logn[n]) / _LN2
        else:
            approx_tab[n] = t_size[n] - 1.0
    # size_low[m]: the least size-only bits of a group of m or more samples.
    size_low = approx_tab.copy()
    for n in range(n_max - 1, 0, -1):
        size_low[n] = min(size_low[n], size_low[n + 1])
    scratch = np.empty(j1)
    for j in range(j0, j1):
        rn = r_n[j]
        ravg = r_avg[j]
        rsd = r_sd[j]
        prev = np.nan
        base = 0.0
        if j > 0:
            fa, fs = _restat(w_n[j - 1], w_avg[j - 1], w_sd[j - 1])
            prev = fa
            if j == 1:
                base = _bits(w_n[0], fa, fs, False, 0.0, top, unit, first_bits, stdev_bits, t_size, t_area, t_logn)
            else:
                base = best[j - 1]
            _extend_open(j, rn, ravg, rsd, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv,
                         scratch)
        na, ns = _restat(rn, ravg, rsd)
        c_n[j] = rn
        c_nf[j] = rn
        c_avg[j] = na
        c_sd[j] = ns
        c_prev[j] = prev
        c_base[j] = base
        if j > 0:
            p = prev / unit
            c_lognorm[j] = math.log2(p * p - (p - 1) * top + top * top / 2)
        g0 = _bits(c_n[0], c_avg[0], c_sd[0], False, 0.0, top, unit, first_bits, stdev_bits, t_size, t_area, t_logn)
        if not math.isfinite(g0):
            return j + 1
        if j == 0:
            record, record_total, record_bits = 0, g0, g0
        else:
            # Screen: the approximate totals only of candidates whose lower bound (computed
            # with the merge) is not above the threshold, newest start first (usually the best,
            # so the threshold is tight early). A skipped candidate cannot be near the minimum.
            scratch[j] = -np.inf
            low = g0
            scratch[0] = g0
            limit = low + 1e-9 * (1.0 + abs(low))
            for i in range(j, 0, -1):
                if scratch[i] > limit:
                    scratch[i] = np.inf
                    continue
                gap = abs(c_avg[i] - c_prev[i]) * inv + 1.0
                dev = c_sd[i] * inv + 1.0
                head = approx_tab[c_n[i]] + c_lognorm[i] + c_base[i]
                approx = head - math.log2(gap) + math.log2(dev) * (c_nf[i] - 1.0) + math.log2(dev + 1.0)
                if not math.isfinite(approx):
                    return j + 1
                scratch[i] = approx
                if approx < low:
                    low = approx
                    limit = low + 1e-9 * (1.0 + abs(low))
            record = -1
            record_total = 0.0
            record_bits = 0.0
            if scratch[j] <= limit:
                record = j
                record_bits = _bits(c_n[j], c_avg[j], c_sd[j], True, c_prev[j], top, unit, first_bits,
                                    stdev_bits, t_size, t_area, t_logn)
                record_total = c_base[j] + record_bits
                if not math.isfinite(record_bits):
                    return j + 1
            for i in range(j):
                if not scratch[i] <= limit:
                    continue
                if i == 0:
                    b = g0
                else:
                    b = _bits(c_n[i], c_avg[i], c_sd[i], True, c_prev[i], top, unit, first_bits,
                              stdev_bits, t_size, t_area, t_logn)
                    if not math.isfinite(b):
                        return j + 1
                total = c_base[i] + b
                if record < 0 or total < record_total:
                    record, record_total, record_bits = i, total, b
        win[j] = record
        best[j] = record_total
        gbits[j] = record_bits
        w_n[j] = c_n[record]
        w_avg[j] = c_avg[record]
        w_sd[j] = c_sd[record]
    return 0
