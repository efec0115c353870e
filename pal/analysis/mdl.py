"""MDL partitioning of a series into groups, bit-for-bit the same as jumpavg 0.4.2.

Why our own implementation: jumpavg evaluates every (group start, prefix end) pair in pure
Python, which is ~100 s for 5,000 runs, and it cannot continue from where it stopped. Here the
same left-to-right search runs with the per-candidate statistics held in NumPy arrays:

* The running (size, average, stdev) of every open candidate group is updated with the very
  float operations jumpavg uses (a Welford merge of the old statistics and the new run, in the
  same order), so the statistics are identical, not merely close.
* The bit count of every candidate is evaluated vectorised, with the size-only terms taken
  from a table (log2 of n(n+1), log-Gamma((n-1)/2), ...). That is an approximation at the
  level of the last few bits; the few candidates within a hair of the minimum are then
  recomputed with jumpavg's scalar formula, in its order, and compared in its order (the new
  single-run group first, then earlier starts; strictly smaller wins). The chosen record and its
  bit total are therefore exactly those of jumpavg.
* All state needed to go on is kept in :class:`MdlState`, so appending k runs to a series of N
  costs O(N*k) instead of a full O(N^2) recompute.
* The same search runs in the compiled kernel (:mod:`pal.analysis.mdl_kernel`, C, built at
  install): the NumPy path pays ~25 us of interpreter overhead per run, so a series of 180
  runs cost ~5 ms and the daily recompute of 6,000 series ~30 s. The kernel gives the same
  floats (see the top comment of its source, ``mdl_kernel.c``); it is imported at the first
  search, and the NumPy path stays as the fallback (``USE_COMPILED = False`` forces it; it also
  runs when the kernel was not built).

The bit formulas (CSIT-FORMATS.md section 7), for a group of n samples with average a,
population stdev s and the previous group's average p, all divided by ``unit``, M = max / unit:

* size: log2(n (n + 1))
* average: first group log2(M + 1); later groups -log2((|a - p| + 1) / Z),
  Z = p^2 - (p - 1) M + M^2 / 2
* for n >= 2: stdev log2((s + 1)(s + 2)) + log2(1 - 1/(M + 2)), and the sphere area
  (ln 2 + (n-1)/2 ln pi - lnGamma((n-1)/2) + (n-2) ln(s+1) + (n-2)/2 ln n) / ln 2.

Zero runs are data: a DUT that forwarded nothing measured 0, a real regression to 0. A series
with any positive value is classified exactly as jumpavg does (zeros included). A series whose
every trial is 0 (jumpavg raises there: its unit, max / (2**(sbps+1) - 1), is 0) is one group
at 0 with stdev 0, its bits counted with ``unit`` 1 (:data:`ZERO_SERIES_UNIT`): identical values
have nothing to split. The first positive value appended makes it a normal jumpavg series (a
new maximum recomputes everything). So is a series whose maximum is positive but subnormal
(every value under about 4e-320, nothing a measurement gives but what a file may say): its unit
underflows to 0 and jumpavg divides by zero there too; it is held as zeros. Only negative values
with no positive one are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Iterable, Sequence

import numpy as np

from pal import compiled
from pal.digest import arrays_digest
from pal.errors import PalError

__all__ = ["Group", "MdlSaved", "MdlState", "MdlInputError", "classify", "group_bits"]

#: Default significant bits per sample (jumpavg: unit = max / (2**(sbps+1) - 1)).
DEFAULT_SBPS = 12.0

_LN2 = math.log(2)
_LNPI = math.log(math.pi)


class MdlInputError(PalError, ValueError):
    """Values MDL cannot encode: NaN, an empty trial list, or negative values with no positive one."""


#: The unit a series of zeros is counted in: jumpavg derives the unit from the maximum, which is
#: 0 there, so its formulas divide by zero. Any positive unit gives the same single group.
ZERO_SERIES_UNIT = 1.0


@dataclass(frozen=True)
class Group:
    """One group of consecutive runs with a common trend.

    ``start``/``end`` are indices into the values given to :func:`classify` (end exclusive).
    ``size`` is the number of runs. ``samples`` is what jumpavg calls the group size: the number
    of scalar samples, i.e. for runs given as trial lists the total count of trials (each trial
    counts, a run is never split). ``avg`` and ``stdev`` (population) are over those samples.
    ``bits`` is the group's information content as jumpavg accounts it. ``label`` compares the
    average with the previous group's: higher is "progression", lower "regression".
    """

    start: int
    end: int
    avg: float
    stdev: float
    size: int
    samples: int
    bits: float
    label: str


@dataclass(frozen=True)
class MdlSaved:
    """What :meth:`MdlState.resume` needs to go on from a series' first ``count`` runs without
    searching them again (:meth:`MdlState.saved`): each run's winning start and the open
    candidates' average and stdev (the rest of the state follows from those and the runs, see
    ``rebuild`` in the kernel's source), with the runs' digest, maximum and unit, which a resume
    checks against the series it is given. About 20 bytes a run."""

    count: int
    digest: bytes  # of the runs' (trial count, average, stdev) arrays, ``_runs_digest``
    max_value: float
    unit: float
    unit_arg: float | None
    sbps_arg: float | None
    win: np.ndarray  # int32, one per run
    c_avg: np.ndarray  # float64, one per run
    c_sd: np.ndarray  # float64, one per run
    resumed: int = 0  # of the runs, those the state went on from (not searched again); not kept

    def __reduce__(self) -> tuple:
        """Pickled as its numbers and one bytes object of its arrays: a year's states go from the
        run to the pool's worker and back every run (36,000 series), and three arrays pickled
        each as an array cost twice as much. The arrays come back as read-only views of those
        bytes, as ``mdl_states`` reads them from a file."""
        arrays = (self.win, self.c_avg, self.c_sd)
        if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays):
            return (MdlSaved, (self.count, self.digest, self.max_value, self.unit, self.unit_arg, self.sbps_arg,
                               *arrays, self.resumed))
        return (_saved_from, (self.count, self.digest, self.max_value, self.unit, self.unit_arg, self.sbps_arg,
                              tuple(a.dtype.str for a in arrays), tuple(len(a) for a in arrays),
                              b"".join(np.ascontiguousarray(a).tobytes() for a in arrays), self.resumed))


def _saved_from(count: int, digest: bytes, max_value: float, unit: float, unit_arg: float | None,
                sbps_arg: float | None, dtypes: tuple[str, ...], lengths: tuple[int, ...], data: bytes,
                resumed: int) -> MdlSaved:
    """``MdlSaved.__reduce__``'s way back."""
    arrays, at = [], 0
    for dtype, n in zip(dtypes, lengths, strict=True):
        arrays.append(np.frombuffer(data, dtype=dtype, count=n, offset=at))
        at += arrays[-1].nbytes
    return MdlSaved(count, digest, max_value, unit, unit_arg, sbps_arg, *arrays, resumed)


def _runs_digest(r_n: np.ndarray, r_avg: np.ndarray, r_sd: np.ndarray) -> bytes:
    return arrays_digest((r_n, r_avg, r_sd))


# ---------------------------------------------------------------------------
# Scalar arithmetic, in jumpavg's exact operation order (the reference values)
# ---------------------------------------------------------------------------


def _run_stats(trials: Iterable[float]) -> tuple[int, float, float]:
    """(count, average, population stdev) of one run's trials, by Welford's running update."""
    n = 0
    avg = 0.0
    m2 = 0.0
    for x in trials:
        x = float(x)
        if math.isnan(x):
            raise MdlInputError("a trial value is NaN")
        old = n
        delta = x - avg
        n += 1
        avg += delta / n
        m2 += delta * delta * old / n
    if n < 1:
        raise MdlInputError("a run has an empty list of trials")
    return n, avg, math.sqrt(m2 / n)


def _restat(n: int, avg: float, sd: float) -> tuple[int, float, float]:
    """The stats recomputed from themselves (jumpavg re-enters them into its Welford merge).

    jumpavg does this when it creates a group, when it freezes a copy of one, and every time it
    counts a group's bits: the bits of a group are those of its re-entered stats.
    """
    m = sd * sd * n
    return n, avg * n / n, math.sqrt(m / n)


def group_bits(n: int, avg: float, sd: float, prev_avg: float | None, max_value: float, unit: float) -> float:
    """Information content (bits) of a group of ``n`` samples, exactly as jumpavg computes it."""
    bits = 0.0
    if n < 1:
        return bits
    top = max_value / unit
    mean = avg / unit
    bits += math.log(n * (n + 1), 2)
    if prev_avg is None:
        bits += math.log(top + 1, 2)  # first average: uniform on [0, max]
    else:
        prev = prev_avg / unit
        z = prev * prev
        z -= (prev - 1) * top
        z += top * top / 2
        bits -= math.log((abs(mean - prev) + 1) / z, 2)  # discourages close averages
    if n < 2:
        return bits
    dev = sd / unit
    bits += math.log((dev + 1) * (dev + 2), 2)
    bits += math.log(1 - 1 / (top + 2), 2)
    area = _LN2
    area += _LNPI * ((n - 1) / 2)
    area -= math.lgamma((n - 1) / 2)
    area += math.log(dev + 1) * (n - 2)
    area += math.log(n) * ((n - 2) / 2)
    bits += area / _LN2
    return bits


def _prepare(values: Iterable[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Runs as arrays of (trial count, average, stdev) and the maximal scalar sample.

    A plain sequence of numbers (the common case) is converted in one NumPy call; runs given as
    trial lists go through the scalar Welford loop.
    """
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = list(values)
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError):  # ragged trial lists, odd objects: the scalar path says why
        arr = None
    if arr is not None and arr.ndim == 1 and arr.dtype.kind in "fiub":
        avg = arr.astype(np.float64)
        nan = np.isnan(avg)
        if nan.any():
            raise MdlInputError(f"value {int(np.argmax(nan))} is NaN (drop missing runs before MDL)")
        top = max(0.0, float(avg.max())) if len(avg) else 0.0
        return np.ones(len(avg), dtype=np.int64), avg, np.zeros(len(avg)), top
    runs: list[tuple[int, float, float]] = []
    top = 0.0
    for i, value in enumerate(values):
        if isinstance(value, Real):
            x = float(value)
            if math.isnan(x):
                raise MdlInputError(f"value {i} is NaN (drop missing runs before MDL)")
            top = max(top, x)
            runs.append((1, x, 0.0))
        else:
            trials = [float(t) for t in value]
            try:
                runs.append(_run_stats(trials))
            except MdlInputError as exc:
                raise MdlInputError(f"value {i}: {exc}") from None
            top = max([top, *trials])
    cols = list(zip(*runs)) if runs else [(), (), ()]
    return np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=float), np.array(cols[2], dtype=float), top


def _unit_of(max_value: float, unit: float | None, sbps: float | None) -> float:
    if unit:
        return float(unit)
    bits = float(sbps) if sbps else DEFAULT_SBPS
    return max_value / (pow(2.0, bits + 1.0) - 1.0)


# ---------------------------------------------------------------------------
# The compiled kernel and its exact tables
# ---------------------------------------------------------------------------

#: Run the search in the compiled kernel (pal.analysis.mdl_kernel, C, built at install) when it
#: was built. The one module-level switch: tests turn it off to check the NumPy path against it.
USE_COMPILED = True


def _load_kernel() -> Any:
    """The kernel module, imported once (at the first search), or None when it was not built."""
    return compiled.load("pal.analysis.mdl_kernel")


def _kernel() -> Any:
    return _load_kernel() if USE_COMPILED else None


def _build_tables(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact per-sample-count terms of group_bits, computed by CPython in its order.

    size: log2(n (n+1)); area: ln 2 + ln(pi) (n-1)/2 - lnGamma((n-1)/2), the part of the
    sphere area before the stdev term; logn: ln(n) (n-2)/2, added after it.
    """
    t_size = np.full(size, np.nan)
    t_area = np.zeros(size)
    t_logn = np.zeros(size)
    for n in range(1, size):
        t_size[n] = math.log(n * (n + 1), 2)
        if n >= 2:
            area = _LN2
            area += _LNPI * ((n - 1) / 2)
            area -= math.lgamma((n - 1) / 2)
            t_area[n] = area
            t_logn[n] = math.log(n) * ((n - 2) / 2)
    for table in (t_size, t_area, t_logn):
        table.flags.writeable = False
    return t_size, t_area, t_logn


#: The tables up to 4,096 samples per group (~2 ms at import); longer series build their own.
_TABLES = _build_tables(4096)


def _exact_tables(n_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _TABLES if n_max < len(_TABLES[0]) else _build_tables(n_max + 1)


# ---------------------------------------------------------------------------
# The search state
# ---------------------------------------------------------------------------

_RUNS = ("r_n", "r_avg", "r_sd")
_ARRAYS = ("c_n", "c_avg", "c_sd", "c_prev", "c_base")
_STEPS = ("win", "best", "gbits", "w_n", "w_avg", "w_sd")
_INTS = ("r_n", "c_n", "win", "w_n")
_FLOATS = tuple(n for n in (*_RUNS, *_ARRAYS, *_STEPS, "c_nf", "c_lognorm") if n not in _INTS)
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0)
_EMPTY_I.flags.writeable = False
_EMPTY_F.flags.writeable = False


class MdlState:
    """Everything needed to continue the MDL search after the last run (one per series).

    Runs: per run, the trial count, average and stdev (``r_*``). Candidates: the group starting
    at run i, open up to the last run, on top of the best partition of runs [0, i). Per
    candidate: live sample count, average and stdev, the previous group's average and the bits
    of the partition before it (``c_*``). Per run j: the winning start, the best total bits and
    the winner's live stats (enough to rebuild the groups). All are arrays with spare capacity;
    the first ``len(self)`` entries are valid.
    """

    def __init__(self, unit: float | None = None, sbps: float | None = None) -> None:
        self.unit_arg = float(unit) if unit else None
        self.sbps_arg = float(sbps) if sbps else None
        self.max_value = 0.0
        self.unit = 0.0
        self._count = 0
        self._cap = 0
        self._resumed = 0  # runs rebuilt from a saved state (``resume``), not searched
        for name in _INTS:
            setattr(self, name, _EMPTY_I)
        for name in _FLOATS:
            setattr(self, name, _EMPTY_F)
        self._table = _EMPTY_F

    @property
    def runs(self) -> list[tuple[int, float, float]]:
        """The runs held, as (trial count, average, stdev)."""
        n = self._count
        return list(zip(self.r_n[:n].tolist(), self.r_avg[:n].tolist(), self.r_sd[:n].tolist()))

    # -- construction ------------------------------------------------------

    @classmethod
    def start(cls, values: Iterable[Any], unit: float | None = None, sbps: float | None = None) -> "MdlState":
        """Classify ``values`` from scratch (see :func:`classify`) and keep the state."""
        state = cls(unit, sbps)
        state._restart(*_prepare(values))
        return state

    def extend(self, new_values: Iterable[Any]) -> "MdlState":
        """Append runs; the result equals a full recompute. Returns self.

        A new maximum changes the bit formulas of every group (and the unit when it derives from
        the maximum), so then the whole series is recomputed; otherwise it costs O(N*k).
        """
        r_n, r_avg, r_sd, top = _prepare(new_values)
        if not len(r_n):
            return self
        held = self._count
        if top > self.max_value:
            self._restart(
                np.concatenate([self.r_n[:held], r_n]),
                np.concatenate([self.r_avg[:held], r_avg]),
                np.concatenate([self.r_sd[:held], r_sd]),
                top,
            )
            return self
        self._append(r_n, r_avg, r_sd, held)
        return self

    @classmethod
    def resume(cls, saved: MdlSaved | None, values: Iterable[Any], unit: float | None = None,
               sbps: float | None = None) -> "MdlState":
        """``start(values, unit, sbps)``, the same state to the bit, going on from ``saved`` (what
        ``saved()`` gave for the same series' first runs) when it fits: the same unit arguments,
        ``values`` beginning with the very runs it was saved from (digest), no new maximum, and the
        kernel built. Then the runs it holds are not searched again (their state is rebuilt from
        ``saved`` in about the time a group's merges take) and the new ones cost O(N) each: a series
        whose window only grows costs O(N) a run instead of O(N^2). Otherwise a full start."""
        state = cls(unit, sbps)
        r_n, r_avg, r_sd, top = _prepare(values)
        if not state._rebuild(saved, r_n, r_avg, r_sd, top):
            state._restart(r_n, r_avg, r_sd, top)
        return state

    def _rebuild(self, saved: MdlSaved | None, r_n: np.ndarray, r_avg: np.ndarray, r_sd: np.ndarray,
                 top: float) -> bool:
        kernel = _kernel()
        if saved is None or kernel is None:
            return False
        count = saved.count
        if not (0 < count <= len(r_n) and saved.unit_arg == self.unit_arg and saved.sbps_arg == self.sbps_arg
                and top == saved.max_value and top > 0.0 and len(saved.win) == count
                and len(saved.c_avg) == count and len(saved.c_sd) == count):
            return False
        unit = _unit_of(top, self.unit_arg, self.sbps_arg)
        if not (unit > 0.0 and unit == saved.unit and math.isfinite(top / unit)):
            return False
        if _runs_digest(r_n[:count], r_avg[:count], r_sd[:count]) != saved.digest:
            return False
        self.max_value, self.unit = top, unit
        self._reserve(len(r_n))
        self.r_n[: len(r_n)] = r_n
        self.r_avg[: len(r_n)] = r_avg
        self.r_sd[: len(r_n)] = r_sd
        self.win[:count] = saved.win
        self.c_avg[:count] = saved.c_avg
        self.c_sd[:count] = saved.c_sd
        try:
            failed = self._in_kernel(kernel.rebuild, 0, count)
        except ValueError:  # its win array is no search's (a start after its run): not this series' state
            failed = True
        if failed:
            return False  # (``resume`` restarts the state: every field above is set again)
        self._count = count
        self._resumed = count
        self._advance(count, len(r_n))
        return True

    def saved(self) -> MdlSaved | None:
        """What ``resume`` goes on from (see ``MdlSaved``); None for a state that is not a search's
        (no runs, a series held as zeros)."""
        count = self._count
        if not count or not self.max_value > 0.0 or not self.unit > 0.0:
            return None
        return MdlSaved(count, _runs_digest(self.r_n[:count], self.r_avg[:count], self.r_sd[:count]),
                        self.max_value, self.unit, self.unit_arg, self.sbps_arg,
                        self.win[:count].astype(np.int32), self.c_avg[:count].copy(), self.c_sd[:count].copy(),
                        self._resumed)

    def _append(self, r_n: np.ndarray, r_avg: np.ndarray, r_sd: np.ndarray, held: int) -> None:
        if not len(r_n):
            return
        if not self.max_value > 0.0:  # no positive value held or added: zeros (or bad input) so far
            self._restart(np.concatenate([self.r_n[:held], r_n]), np.concatenate([self.r_avg[:held], r_avg]),
                          np.concatenate([self.r_sd[:held], r_sd]), 0.0)
            return
        end = held + len(r_n)
        self._reserve(end)
        self.r_n[held:end] = r_n
        self.r_avg[held:end] = r_avg
        self.r_sd[held:end] = r_sd
        self._advance(held, end)

    def _restart(self, r_n: np.ndarray, r_avg: np.ndarray, r_sd: np.ndarray, top: float) -> None:
        count = len(r_n)
        if count and not top > 0.0:
            if not (np.all(r_avg[:count] == 0.0) and np.all(r_sd[:count] == 0.0)):
                raise MdlInputError(f"the maximal value is {top!r} with negative values: MDL needs a positive "
                                    "maximum (or all zeros)")
            self._restart_zeros(r_n, count)
            return
        unit = _unit_of(top, self.unit_arg, self.sbps_arg)
        if count and not unit > 0.0:  # a subnormal maximum: held as zeros (see the module docstring)
            self._restart_zeros(r_n, count)
            return
        self.max_value = top
        self.unit = unit
        self._count = 0
        self._cap = 0
        self._table = _EMPTY_F
        if not count:
            return
        self._reserve(count)
        self.r_n[:count] = r_n
        self.r_avg[:count] = r_avg
        self.r_sd[:count] = r_sd
        self._advance(0, count)

    def _restart_zeros(self, r_n: np.ndarray, count: int) -> None:
        """Hold ``count`` runs whose every trial is 0: one group, no search (see the module docstring)."""
        self.max_value = 0.0
        self.unit = _unit_of(0.0, self.unit_arg, self.sbps_arg)
        self._count = 0
        self._cap = 0
        self._table = _EMPTY_F
        self._reserve(count)
        self.r_n[:count] = r_n
        self.r_avg[:count] = 0.0
        self.r_sd[:count] = 0.0
        samples = np.cumsum(r_n[:count])
        unit = self.unit if self.unit > 0.0 else ZERO_SERIES_UNIT
        bits = np.array([group_bits(int(n), 0.0, 0.0, None, 0.0, unit) for n in samples.tolist()])
        self.win[:count] = 0
        self.w_n[:count] = samples
        self.w_avg[:count] = 0.0
        self.w_sd[:count] = 0.0
        self.gbits[:count] = bits
        self.best[:count] = bits
        # Candidate i: runs i.. as one group on top of the single group of runs [0, i).
        self.c_n[:count] = samples[-1] - np.concatenate([[0], samples[:-1]])
        self.c_nf[:count] = self.c_n[:count]
        self.c_avg[:count] = 0.0
        self.c_sd[:count] = 0.0
        self.c_prev[:count] = 0.0
        self.c_prev[0] = np.nan
        self.c_base[:count] = np.concatenate([[0.0], bits[:-1]])
        self.c_lognorm[:count] = np.nan
        self._count = count

    def _reserve(self, n: int) -> None:
        if n <= self._cap:
            return
        cap = max(n, 2 * self._cap, 64)
        held = self._count
        # Two allocations (one row per array) instead of sixteen: this runs once per series.
        for names, block in ((_INTS, np.zeros((len(_INTS), cap), dtype=np.int64)),
                             (_FLOATS, np.zeros((len(_FLOATS), cap)))):
            for name, row in zip(names, block):
                if held:
                    row[:held] = getattr(self, name)[:held]
                setattr(self, name, row)
        self._cap = cap

    def _advance(self, j0: int, j1: int) -> None:
        """Consume runs j0..j1-1 (already stored), in the compiled kernel when available."""
        kernel = _kernel()
        if kernel is not None and j1 > j0:
            top = self.max_value / self.unit if self.unit > 0.0 else math.inf
            if math.isfinite(top):
                failed = self._in_kernel(kernel.run_steps, j0, j1)
                if not failed:
                    self._count = j1
                    return
            # Numbers out of the finite range: the NumPy path redoes the series from run 0 and
            # fails (or not) exactly where jumpavg does.
            j0 = 0
        for j in range(j0, j1):
            self._step(j)
            self._count = j + 1

    def _in_kernel(self, fn: Any, j0: int, j1: int) -> int:
        """The kernel's ``run_steps`` or ``rebuild`` for runs j0..j1-1 on this state's arrays (one
        argument list for both: they read and write the same state)."""
        top = self.max_value / self.unit
        return fn(
            j0, j1, self.r_n, self.r_avg, self.r_sd, self.max_value, self.unit,
            math.log(top + 1, 2), math.log(1 - 1 / (top + 2), 2), *_exact_tables(int(self.r_n[:j1].sum())),
            self.c_n, self.c_nf, self.c_avg, self.c_sd, self.c_prev, self.c_base, self.c_lognorm,
            self.win, self.best, self.gbits, self.w_n, self.w_avg, self.w_sd,
        )  # fmt: skip

    def _size_table(self, n: int) -> np.ndarray:
        """Bits that depend on the sample count only, index n (see module docstring).

        The stdev terms are folded as (n-1) log2(s+1) + log2(s+2); for n = 1 (s = 0) that adds
        1, which the table subtracts.
        """
        if len(self._table) > n:
            return self._table
        size = max(n + 1, 2 * len(self._table), 256)
        k = np.arange(size, dtype=np.float64)
        lg = np.array([math.lgamma((i - 1) / 2) if i >= 2 else 0.0 for i in range(size)])
        with np.errstate(divide="ignore", invalid="ignore"):
            table = np.log2(k * (k + 1))
            top = self.max_value / self.unit
            sphere = (_LN2 + _LNPI * (k - 1) / 2 - lg + np.log(k) * (k - 2) / 2) / _LN2
            table = table + np.where(k >= 2, math.log(1 - 1 / (top + 2), 2) + sphere, -1.0)
        table[0] = np.nan
        self._table = table
        return table

    # -- the search --------------------------------------------------------

    def _step(self, j: int) -> None:
        """Consume run j (stored): extend every open candidate, open a new one, pick the record."""
        rn, ravg, rsd = int(self.r_n[j]), float(self.r_avg[j]), float(self.r_sd[j])
        top, unit = self.max_value, self.unit
        if j == 0:
            prev, base = None, 0.0
        else:
            frozen = _restat(int(self.w_n[j - 1]), float(self.w_avg[j - 1]), float(self.w_sd[j - 1]))
            prev = frozen[1]
            # The new candidate sits on the previous record; after run 0 that record's bits were
            # never cached by jumpavg, so they come from the frozen copy's stats.
            base = group_bits(*_restat(*frozen), None, top, unit) if j == 1 else float(self.best[j - 1])
        if j:
            self._extend_open(j, rn, ravg, rsd)
        new = _restat(rn, ravg, rsd)
        self.c_n[j], self.c_avg[j], self.c_sd[j] = new
        self.c_nf[j] = new[0]
        self.c_prev[j] = np.nan if prev is None else prev
        self.c_base[j] = base
        if prev is not None:
            p = prev / unit
            t = top / unit
            self.c_lognorm[j] = math.log2(p * p - (p - 1) * t + t * t / 2)
        winner, total, gbits = self._select(j)
        self.win[j] = winner
        self.best[j] = total
        self.gbits[j] = gbits
        self.w_n[j] = self.c_n[winner]
        self.w_avg[j] = self.c_avg[winner]
        self.w_sd[j] = self.c_sd[winner]

    def _extend_open(self, j: int, rn: int, ravg: float, rsd: float) -> None:
        """Add run j to candidates 0..j-1, with jumpavg's float operations in its order."""
        nf = self.c_nf[:j]
        avg = self.c_avg[:j]
        sd = self.c_sd[:j]
        a1 = avg * nf
        a1 /= nf
        m = sd * sd
        m *= nf
        delta = ravg - a1
        total = nf + rn
        if rn == 1 and rsd == 0.0:
            step = delta / total
        else:
            step = delta * rn
            step /= total
            m += rsd * rsd * rn
        np.add(a1, step, out=avg)
        delta *= delta
        delta *= nf
        if rn != 1:
            delta *= rn
        delta /= total
        m += delta
        m /= total
        np.sqrt(m, out=sd)
        nf[:] = total
        self.c_n[:j] += rn

    def _exact(self, i: int) -> float:
        prev = None if i == 0 else float(self.c_prev[i])
        stats = _restat(int(self.c_n[i]), float(self.c_avg[i]), float(self.c_sd[i]))
        return group_bits(*stats, prev, self.max_value, self.unit)

    def _select(self, j: int) -> tuple[int, float, float]:
        """The record after run j: (winning start, its total bits, its last group's bits)."""
        g0 = self._exact(0)
        if j == 0:
            return 0, g0, g0
        approx = self._approx(j)
        approx[0] = self.c_base[0] + g0
        low = approx.min()
        if not math.isfinite(low):
            near = np.arange(j + 1)  # overflow or bad input: fall back to the exact loop
        else:
            near = np.flatnonzero(approx <= low + 1e-9 * (1.0 + abs(low)))
        bits = {int(i): (g0 if i == 0 else self._exact(int(i))) for i in near}
        order = [j] + [int(i) for i in near if i != j] if j in bits else [int(i) for i in near]
        record = order[0]
        record_total = float(self.c_base[record]) + bits[record]
        for i in order[1:]:
            total = float(self.c_base[i]) + bits[i]
            if total < record_total:
                record, record_total = i, total
        return record, record_total, bits[record]

    def _approx(self, j: int) -> np.ndarray:
        """Vectorised bit totals of candidates 0..j (candidate 0 is overwritten exactly)."""
        table = self._size_table(int(self.c_n[0]))
        inv = 1.0 / self.unit
        n = self.c_n[: j + 1]
        gap = self.c_avg[: j + 1] - self.c_prev[: j + 1]
        np.abs(gap, out=gap)
        gap *= inv
        gap += 1.0
        np.log2(gap, out=gap)
        dev = self.c_sd[: j + 1] * inv
        dev += 1.0
        d2 = np.log2(dev + 1.0)
        np.log2(dev, out=dev)
        dev *= self.c_nf[: j + 1] - 1.0
        out = table[n]
        out += self.c_lognorm[: j + 1]
        out -= gap
        out += dev
        out += d2
        out += self.c_base[: j + 1]
        return out

    # -- results -----------------------------------------------------------

    def groups(self) -> list[Group]:
        """The current partition, as jumpavg's classify would return it for all runs so far."""
        count = self._count
        if count == 0:
            return []
        raw: list[tuple[int, int, tuple[int, float, float], float]] = []
        end = count
        j = count - 1
        live = True
        while end > 0:
            start = int(self.win[j])
            stats = (int(self.w_n[j]), float(self.w_avg[j]), float(self.w_sd[j]))
            bits = float(self.gbits[j])
            if not live:
                stats = _restat(*stats)
                if j == 0:  # never cached by jumpavg: counted on the frozen copy
                    bits = group_bits(*_restat(*stats), None, self.max_value, self.unit)
            raw.append((start, end, stats, bits))
            end = start
            j = start - 1
            live = False
        raw.reverse()
        out: list[Group] = []
        prev_avg = raw[0][2][1]
        for start, end, (n, avg, sd), bits in raw:
            label = "regression" if avg < prev_avg else "progression" if avg > prev_avg else "normal"
            out.append(Group(start, end, avg, sd, end - start, n, bits, label))
            prev_avg = avg
        return out

    def __len__(self) -> int:
        return self._count


def classify(values: Sequence[Any] | Iterable[Any], unit: float | None = None, sbps: float | None = None) -> list[Group]:
    """Partition ``values`` into groups of minimal description length, as jumpavg.classify.

    Args:
        values: floats, or per-run lists of trial results (a run is never split).
        unit: resolution of the values; None or 0 derives it from the maximum and ``sbps``.
        sbps: significant bits per sample, default 12: unit = max / (2**(sbps+1) - 1).

    Returns:
        The groups in order; empty for no values (jumpavg raises IndexError there).

    Raises:
        MdlInputError: a NaN, an empty trial list, or negative values with no positive one
            (jumpavg raises ValueError there and for all zeros, which are one group here).
    """
    return MdlState.start(values, unit=unit, sbps=sbps).groups()
