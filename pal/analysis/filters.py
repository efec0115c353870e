"""Post-filters on what is alerted: minimum magnitude and k-run confirmation.

Graphs keep every change a detector calls; an alert needs more evidence. These filters map to
``pal.spec.AlertFilters(min_change_pct, confirm_runs)`` and work on any detector's changes:

- confirmation: a change is kept only when its new level has held ``confirm_runs`` valid runs
  (``Change.runs``); it is then reported at the ``confirm_runs``-th valid run of the new
  level (or later, if the detector itself reported it later). A change whose level has not yet
  held that long, at the end of the series, is pending: not alerted yet.
- magnitude: the relative change, measured from the last *kept* level, must be at least
  ``min_change_pct`` percent. Measuring from the last kept level is what makes a one-run dip
  that reverts vanish: the dip fails confirmation, and the return to the old level, compared
  with the level before the dip, is below the minimum magnitude.
- transients (``alert_changes``): a run that stands out from both neighbours the same way by
  more than 4 noise units, and a level that held fewer than ``confirm_runs`` runs and was left
  again, are masked as missing and the series analysed again, so that the boundaries a dip
  made free do not survive as small changes of their own.
- shifts and excursions (``shift_changes``): inside the detector's levels, z tests find the
  sustained small shifts, 3-10-run excursions and longer windows that revert it left (alerts
  only; graphs keep the detector's levels).
- sequential confirmation: only runs clearly beyond the old level (``CONFIRM_SIGMA`` noise
  sd) count towards ``confirm_runs``, or the mean of the new level's first runs lies
  ``CONFIRM_Z`` standard errors beyond it (a step of 1-2 sd rarely has runs 2.5 sd out).
- placement (``refine_changes``): each change moves, within ``REFINE_RUNS`` runs, to the split
  that best separates its two levels (a small step placed a few runs off is a miss and a
  false alarm at once).
- trends (``trend_changes``, ``TREND_TEST``): a kept change whose two levels one straight line
  fits at least as well as the step, and whose levels slope its way, is a step of a staircase
  the detector cut a slow trend into; it is dropped and the levels around it re-measured.

The last five apply with ``confirm_runs`` > 1 only; thresholds are this module's constants,
tuned on ``pal.evaluation.datasets.honest(seed=1)`` (docs/accuracy.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pal import compiled
from pal.analysis.detector import Detector, SeriesInput, as_values, kind_of
from pal.model import ACTIVE, RECOVERED, SUPERSEDED, Change


def filter_changes(
    values: np.ndarray,
    changes: list[Change],
    direction: int = 1,
    min_change_pct: float = 0.0,
    confirm_runs: int = 1,
    confirm_sigma: float = 0.0,
    noise: float = math.nan,
    seen: np.ndarray | None = None,
) -> list[Change]:
    """The changes that pass both filters, re-measured with medians from the last kept level.

    ``before`` becomes the median of the valid runs from the last kept change (or the series
    start) up to this change, ``after`` the median of the runs from this change up to the next
    candidate; medians, so that a dip inside a level does not move it. The detector's own
    levels stay in the evidence (``detector_before``/``detector_after``).

    Sequential confirmation (``confirm_sigma`` > 0 and a finite ``noise``, the sd of one run):
    only runs of the new level at least ``confirm_sigma``·``noise`` beyond ``before``, the way
    the level moved, count towards ``confirm_runs``; the change is reported at the run that
    completes the count and is pending until then. A spike followed by one ordinary run is
    not two runs of a new level; a large step is confirmed as fast as before. A new *last*
    level less than ``TAIL_SMALL_SD`` noise sd from the one before needs ``TAIL_CONFIRM_RUNS``
    such runs: two or three heavy-tailed runs in a row look like a small step for a day or two
    (what a daily job would mail and take back); a level that was left again is complete and
    needs ``confirm_runs`` only, and so does a change the shift or excursion test found (its
    evidence is a z over many runs, and ``SHIFT_TAIL_FACTOR`` already holds a tail shift back).
    Either way, a change is also confirmed once the mean of its level's first
    ``CONFIRM_Z_RUNS`` or more runs (on ``seen``, the values with transient runs masked, when
    given) is ``CONFIRM_Z`` standard errors beyond ``before`` (``_LevelZ``): a step of one or
    two sd seldom puts runs 2.5 sd out, yet after 16 runs its mean is unmistakable.
    """
    if confirm_runs < 1 or min_change_pct < 0:
        raise ValueError(f"filter_changes: confirm_runs={confirm_runs} (>= 1), min_change_pct={min_change_pct} (>= 0)")
    x = np.asarray(values, dtype=np.float64)
    held_on = x if seen is None else np.asarray(seen, dtype=np.float64)  # what ``_LevelZ`` averages
    valid = np.flatnonzero(~np.isnan(x))
    ordered = sorted(changes, key=lambda c: c.index)
    kept: list[Change] = []
    level_start = 0
    for j, cp in enumerate(ordered):
        if cp.runs < confirm_runs:
            continue
        nxt = ordered[j + 1].index if j + 1 < len(ordered) else len(x)
        b, a = x[level_start : cp.index], x[cp.index : max(nxt, cp.index + 1)]
        b, a = b[~np.isnan(b)], a[~np.isnan(a)]
        before = _median(b) if len(b) else cp.before
        after = _median(a) if len(a) else cp.after
        before_sd = float(np.std(b)) if len(b) else cp.before_stdev
        after_sd = float(np.std(a)) if len(a) else cp.after_stdev
        rel = (after - before) / abs(before) if before else math.inf
        kind = kind_of(before, after, direction)
        if abs(rel) * 100.0 < min_change_pct or kind != cp.kind:
            continue
        pos = int(np.searchsorted(valid, cp.index))
        confirm_at = int(valid[min(pos + confirm_runs - 1, len(valid) - 1)])
        if confirm_sigma > 0 and noise > 0 and confirm_runs > 1:
            seg = x[cp.index : max(nxt, cp.index + 1)]
            beyond = np.flatnonzero((seg - before) * math.copysign(1.0, after - before) >= confirm_sigma * noise)
            need = confirm_runs
            if j + 1 == len(ordered) and abs(after - before) < TAIL_SMALL_SD * noise and not cp.evidence.get("test"):
                need = max(need, TAIL_CONFIRM_RUNS)  # a small new level at the end: wait for more runs
            level_z = _LevelZ(held_on[cp.index : cp.index + len(seg)], before, after, noise, len(b))
            held = level_z.first(CONFIRM_Z, CONFIRM_Z_RUNS)
            if len(beyond) < need and held < 0:
                continue  # not (yet) enough runs clearly at the new level
            at = [cp.index + int(beyond[need - 1])] if len(beyond) >= need else []
            at += [cp.index + held] if held >= 0 else []
            confirm_at = max(confirm_at, min(at))
            strong = level_z.first(LATE_Z, 1)
            extra = {"strong_at": cp.index + strong} if strong >= 0 else {}
        else:
            extra = {}
        ev = dict(cp.evidence, detector_before=cp.before, detector_after=cp.after,
                  min_change_pct=min_change_pct, confirm_runs=confirm_runs, **extra)
        kept.append(replace(cp, before=before, after=after, before_stdev=before_sd, after_stdev=after_sd,
                            reported_at=max(cp.reported_at, confirm_at), evidence=ev))
        level_start = cp.index
    return kept


class _LevelZ:
    """The mean of a new level's first m valid runs as a two-sample z against the ``n_before``
    runs of the old level, signed the way the level moved: computed once per change, read at
    two thresholds (confirmation by the mean, and when the evidence became strong).

    The other way to confirm a change: a step of one or two noise sd rarely puts a run
    ``CONFIRM_SIGMA`` sd beyond the old level, but the mean of its runs moves away by a z that
    grows with the square root of their number.
    """

    def __init__(self, seg: np.ndarray, before: float, after: float, noise: float, n_before: int):
        self.pos = np.flatnonzero(~np.isnan(seg))
        self.m = np.arange(1, len(self.pos) + 1)
        self.n_before = n_before
        if n_before < 1:
            self.z = np.full(len(self.pos), -np.inf)
            return
        mean = np.cumsum(seg[self.pos]) / self.m
        self.z = (mean - before) * math.copysign(1.0, after - before) / (noise * np.sqrt(1.0 / self.m + 1.0 / n_before))

    def first(self, z_min: float, runs: int) -> int:
        """The position (in ``seg``) of the valid run at which the mean of the level's first
        m >= ``runs`` valid runs first reaches ``z_min``; -1 when it never does (or ``z_min`` is
        0: off). ``CONFIRM_Z``, ``CONFIRM_Z_RUNS``: confirmation; ``LATE_Z`` from the first run:
        when a change's evidence became strong (``alertable_changes``' recency)."""
        if not z_min > 0 or self.n_before < 1 or len(self.pos) < runs:
            return -1
        hit = np.flatnonzero((self.z >= z_min) & (self.m >= runs))
        return int(self.pos[hit[0]]) if len(hit) else -1


def transient_runs(values: np.ndarray, changes: list[Change], confirm_runs: int) -> list[int]:
    """Valid runs of levels that held fewer than ``confirm_runs`` runs and were then left again.

    These are the one-run dips (and other short excursions) that reverted or moved on; the last
    level is never transient, it may simply be new. The first level too: a series whose first
    valid run stands apart from the next ones has no level before it to have changed from (an
    isolated first run has one neighbour only, ``isolated_runs`` cannot see it).
    """
    x = np.asarray(values, dtype=np.float64)
    ordered = sorted(changes, key=lambda c: c.index)
    out: list[int] = []
    if ordered:
        head = [i for i in range(ordered[0].index) if not math.isnan(x[i])]
        if 0 < len(head) < confirm_runs:
            out.extend(head)
    for j, cp in enumerate(ordered[:-1]):
        if cp.runs < confirm_runs:
            stop = ordered[j + 1].index
            out.extend(i for i in range(cp.index, stop) if not math.isnan(x[i]))
    return out


def isolated_runs(values: np.ndarray, k_sigma: float = 4.0) -> list[int]:
    """Valid runs that stand out from both valid neighbours, the same way, by > ``k_sigma`` noise.

    A one-run excursion is a level that held one run, however a detector grouped it (MDL may
    put a dip at the head of a short group with two ordinary runs). The noise is estimated
    robustly from the series itself: MAD of the first differences / 0.6745 / sqrt(2). The first
    and last valid runs are never isolated (one neighbour only).
    """
    x = np.asarray(values, dtype=np.float64)
    kernel = _kernel()
    if kernel is not None:
        xc = np.ascontiguousarray(x)  # the kernel reads C-contiguous arrays (and 1-D: a scalar becomes one)
        found = np.empty(max(len(xc) - 2, 0), dtype=np.int64)  # the kernel writes the runs' indices here
        done, m = kernel.isolated_runs(xc, float(k_sigma), found)
        if done:
            return found[:m].tolist()
    valid = np.flatnonzero(~np.isnan(x))
    if len(valid) < 3:
        return []
    v = x[valid]
    sigma = run_noise(v)
    if sigma <= 0:
        return []
    left, right = v[1:-1] - v[:-2], v[1:-1] - v[2:]
    hit = (np.sign(left) == np.sign(right)) & (np.minimum(np.abs(left), np.abs(right)) > k_sigma * sigma)
    return [int(valid[i + 1]) for i in np.flatnonzero(hit)]


@dataclass
class MaskedSearch:
    """The detector's state for a series with its transient runs masked (``alert_changes``' second
    search), carried from run to run where the window grows (``Detector.detect``'s ``resume`` /
    ``keep``): ``resume`` is the last run's, ``kept`` this run's, for the next (None: the series
    had nothing to mask, or the detector keeps nothing).

    Why: in the year's benchmark (36,000 series of 365 runs) 4,801 series have a run to mask; their
    second search, from their first run every day, was a seventh of the analysis's CPU once the
    detector's own search went on from its state (stop 52)."""

    resume: Any = None
    kept: Any = None


def alert_changes(detector: Detector, series: SeriesInput, direction: int = 1, min_change_pct: float = 0.0,
                  confirm_runs: int = 1, changes: list[Change] | None = None, passes: int = 3,
                  masked_search: MaskedSearch | None = None) -> list[Change]:
    """What to alert on: transient levels masked as missing and the series analysed again, then filtered.

    With ``confirm_runs`` > 1, isolated runs (``isolated_runs``) and levels that held fewer
    than ``confirm_runs`` runs before the series moved on (``transient_runs``) are masked: a
    detector that isolates a one-run dip also shifts the levels around it a little (the
    boundaries are free); without the dip, it judges the rest on its own merits. Up to
    ``passes`` rounds, until no new transient run appears. Then the shift tests, placement and
    the filters; with ``TREND_TEST``, the kept changes that only cut a straight trend into steps
    (``trend_changes``) are dropped and the filters run again without them (the next change is
    then measured from the level before), until no kept change is a trend's step. The
    detector's own changes (the graphs' groups) are never touched.

    ``masked_search``: each search of a masked series is offered its ``resume`` (the detector
    uses it only where it fits: the same runs, more appended) and the last one's state is its
    ``kept``; the changes are the same with or without it.
    """
    values = as_values(series)
    if changes is None:
        changes = detector.detect(series, direction).changes

    def search_masked(runs: set[int]) -> list[Change]:
        masked_series = _mask(series, runs)
        if masked_search is None:
            return detector.detect(masked_series, direction).changes
        found = detector.detect(masked_series, direction, resume=masked_search.resume, keep=True)
        masked_search.kept = found.resume
        return found.changes

    if masked_search is not None:
        masked_search.kept = None
    if confirm_runs > 1:
        masked = set(isolated_runs(values))
        if masked:
            changes = search_masked(masked)
        for _ in range(passes):
            new = set(transient_runs(values, changes, confirm_runs)) - masked
            if not new:
                break
            masked |= new
            changes = search_masked(masked)
        seen = values.copy()
        seen[sorted(masked)] = np.nan
        noise = run_noise(seen)
        changes = shift_changes(seen, changes, direction, SHIFT_Z, EXCURSION_Z, SHIFT_MIN_RUNS, noise)
        changes = refine_changes(seen, changes, direction, REFINE_RUNS)
        while True:
            kept = filter_changes(values, changes, direction, min_change_pct, confirm_runs, CONFIRM_SIGMA, noise, seen)
            trend = {c.index for c in kept} - {c.index for c in trend_changes(
                seen, kept, noise, TREND_MARGIN, TREND_SLOPE_Z)} if TREND_TEST else set()
            if not trend:
                return kept
            # the levels around a dropped change are re-measured (and the next change with them)
            changes = [c for c in changes if c.index not in trend]
    return filter_changes(values, changes, direction, min_change_pct, confirm_runs)


#: the shift test (``shift_changes``): thresholds in noise units, tuned on ``honest(seed=1)``
SHIFT_Z = 4.0  # a sustained shift of the mean inside a level
EXCURSION_Z = 7.0  # a 3-10-run excursion inside a level that reverts
CONFIRM_SIGMA = 2.5  # sequential confirmation: a confirming run is this many noise sd beyond the old level
CONFIRM_Z = 5.0  # ... or the mean of the new level's first runs is this many standard errors beyond it
CONFIRM_Z_RUNS = 16  # ... over at least this many runs
WINDOW_Z = 5.75  # a longer window inside a level that reverts (0: off)
REFINE_RUNS = 10  # a change may move this many valid runs to where it best splits its two levels
SHIFT_MIN_RUNS = 8  # valid runs on each side of a sustained shift
SHIFT_TAIL_FACTOR = 2  # ... times this after a shift into the series' last level
EXCURSION_RUNS = (3, 10)
TAIL_SMALL_SD = 5.0  # a new last level closer than this many noise sd to the one before ...
TAIL_CONFIRM_RUNS = 5  # ... needs this many confirming runs (a large step: confirm_runs)
TREND_TEST = True  # drop the steps of a straight trend from the alerts (``trend_changes``; TCPD)
TREND_MARGIN = 0.0  # ... when a line fits their two levels within this many noise variances of the step
TREND_SLOPE_Z = 2.5  # ... and the levels' common slope is at least this many standard errors, their way
LATE_Z = 5.5  # a change is recent too when the mean of its level's first runs first lay this many standard
# errors beyond the old level inside the short-term window (its evidence became strong there)


def run_noise(values: np.ndarray) -> float:
    """The noise sd of single runs, robust to steps and outliers: MAD of first differences / 0.6745 / √2."""
    x = np.asarray(values, dtype=np.float64)
    kernel = _kernel()
    if kernel is not None:
        done, noise = kernel.run_noise(np.ascontiguousarray(x))
        if done:
            return noise
    x = x[~np.isnan(x)]
    if len(x) < 3:
        return math.nan
    d = np.diff(x)
    return _median(np.abs(d - _median(d))) / 0.6745 / math.sqrt(2.0)


def _median(x: np.ndarray) -> float:
    """``np.median`` of a 1-D array without NaN, the same value, at a fraction of its call cost
    (it runs three times per series analysed: 18,000 calls a daily run)."""
    n = len(x)
    h = n // 2
    if n % 2:
        return float(np.partition(x, h)[h])
    part = np.partition(x, (h - 1, h))
    return float((part[h - 1] + part[h]) / 2.0)


#: Run the scans in the compiled kernel (pal.analysis.filters_kernel: C, built at install);
#: tests turn it off to check the NumPy forms (the reference) against it.
USE_COMPILED = True


def _kernel() -> Any:
    return compiled.load("pal.analysis.filters_kernel") if USE_COMPILED else None


def _best_shift(x: np.ndarray, sigma: float, min_runs: int, min_after: int) -> tuple[float, int]:
    """Largest two-sample z of a split of ``x`` and where the 2nd part starts (parts >= min_runs / min_after)."""
    kernel = _kernel()
    if kernel is not None:
        return kernel.best_shift(x, float(sigma), min_runs, min_after)
    return _best_shift_numpy(x, sigma, min_runs, min_after)


def _best_shift_numpy(x: np.ndarray, sigma: float, min_runs: int, min_after: int) -> tuple[float, int]:
    n = len(x)
    if n < min_runs + min_after:
        return 0.0, -1
    cs = np.cumsum(x)
    k = np.arange(min_runs, n - min_after + 1)
    left = cs[k - 1] / k
    right = (cs[-1] - cs[k - 1]) / (n - k)
    z = np.abs(right - left) / (sigma * np.sqrt(1.0 / k + 1.0 / (n - k)))
    j = int(np.argmax(z))
    return float(z[j]), int(k[j])


def _best_excursion(x: np.ndarray, sigma: float, lengths: tuple[int, int]) -> tuple[float, int, int]:
    """Largest z of a window of ``lengths`` runs against the rest of ``x``: (z, start, end).

    Windows never start at either end (an excursion returns, and started somewhere) and leave at
    least ``2 * lengths[1]`` runs outside. All lengths at once, one row each (a loop over them was
    the analysis' largest cost); the first largest z wins, the shortest length first.
    """
    kernel = _kernel()
    if kernel is not None:
        return kernel.best_excursion(x, float(sigma), lengths[0], lengths[1])
    return _best_excursion_numpy(x, sigma, lengths)


def _best_excursion_numpy(x: np.ndarray, sigma: float, lengths: tuple[int, int]) -> tuple[float, int, int]:
    n = len(x)
    lens = np.arange(lengths[0], lengths[1] + 1)
    lens = lens[n - lens >= 2 * lengths[1]]
    if not len(lens):
        return 0.0, -1, -1
    cs = np.concatenate([[0.0], np.cumsum(x)])
    a = np.arange(1, n - int(lens[0]))  # starts of the shortest windows; longer ones use fewer
    rest = (n - lens)[:, None]
    ok = a[None, :] < rest
    end = np.minimum(a[None, :] + lens[:, None], n)
    inside = (cs[end] - cs[a]) / lens[:, None]
    outside = (cs[-1] - cs[end] + cs[a]) / rest
    z = np.where(ok, np.abs(inside - outside) / (sigma * np.sqrt(1.0 / lens[:, None] + 1.0 / rest)), 0.0)
    i, j = np.unravel_index(int(np.argmax(z)), z.shape)
    if not z[i, j] > 0.0:
        return 0.0, -1, -1
    return float(z[i, j]), int(a[j]), int(a[j] + lens[i])


#: window lengths of ``_best_window``: from just past an excursion, 15 % apart
_WINDOW_LENGTHS = np.unique(np.round(EXCURSION_RUNS[1] * 1.15 ** np.arange(1, 60)).astype(np.int64))


def _best_window(x: np.ndarray, sigma: float, min_runs: int) -> tuple[float, int, int]:
    """Largest z of a window longer than an excursion against the rest of ``x``: (z, start, end).

    A level that moves for tens of runs and comes back (two small changes) hides from the
    one-split test: the parts before and after it are alike, so no single split separates
    much. Windows of ``EXCURSION_RUNS[1]`` + 1 runs up to all but ``min_runs`` on each side,
    lengths on a geometric grid (15 % apart; ``refine_changes`` then places both ends).
    """
    kernel = _kernel()
    if kernel is not None:
        return kernel.best_window(x, float(sigma), min_runs, _WINDOW_LENGTHS)
    return _best_window_numpy(x, sigma, min_runs)


def _best_window_numpy(x: np.ndarray, sigma: float, min_runs: int) -> tuple[float, int, int]:
    n = len(x)
    top = n - 2 * min_runs
    lengths = _WINDOW_LENGTHS[_WINDOW_LENGTHS <= top]
    if not len(lengths):
        return 0.0, -1, -1
    cs = np.concatenate([[0.0], np.cumsum(x)])
    a = np.arange(min_runs, n - int(lengths[0]) - min_runs + 1)
    end = a[None, :] + lengths[:, None]  # one row per length, one column per start
    ok = end <= n - min_runs
    end = np.minimum(end, n)
    rest = (n - lengths)[:, None]
    inside = (cs[end] - cs[a]) / lengths[:, None]
    outside = (cs[-1] - cs[end] + cs[a]) / rest
    z = np.where(ok, np.abs(inside - outside) / (sigma * np.sqrt(1.0 / lengths[:, None] + 1.0 / rest)), 0.0)
    i, j = np.unravel_index(int(np.argmax(z)), z.shape)
    return float(z[i, j]), int(a[j]), int(a[j] + lengths[i])


def shift_changes(values: np.ndarray, changes: list[Change], direction: int = 1, shift_z: float = SHIFT_Z,
                  excursion_z: float = EXCURSION_Z, min_runs: int = SHIFT_MIN_RUNS,
                  sigma: float | None = None) -> list[Change]:
    """The detector's changes plus the shifts and excursions it left inside its levels.

    MDL (and the other detectors) need a change of several noise units before a new level pays
    for itself; a shift of one or two noise sd held for tens of runs is certain all the same
    (its z grows with the square root of the runs). Inside each level (between two changes,
    on the masked values), binary segmentation looks for the split whose two-sample z,
    (mean after - mean before) / (sigma·sqrt(1/k + 1/(n-k))) with both parts at least
    ``min_runs`` valid runs, exceeds ``shift_z``, and for a window of 3-10 runs that differs
    from the rest of the level by more than ``excursion_z`` (an excursion that reverted: two
    changes). Where neither fires, a longer window (``_best_window``: more than 10 runs, with
    ``min_runs`` on each side) whose mean differs from the rest by more than ``WINDOW_Z``: a
    level that moved for tens of runs and came back, which no single split separates.
    sigma is ``run_noise`` of the whole series (given, when the caller has it). A shift into
    the series' last level is pending until it has ``SHIFT_TAIL_FACTOR``·``min_runs`` runs after
    it (a daily job sees the tail grow; a short tail is where noise most often looks like a
    shift). A shift is reported when its new level has held ``min_runs`` runs (``reported_at``;
    later when the tail rule applies).
    """
    x = np.asarray(values, dtype=np.float64)
    valid = np.flatnonzero(~np.isnan(x))
    sigma = run_noise(x) if sigma is None else sigma
    if len(valid) < 2 * min_runs or not sigma > 0:
        return changes
    v = x[valid]
    bounds = sorted({0, len(valid)} | {int(np.searchsorted(valid, c.index)) for c in changes})
    found: list[tuple[int, float, str]] = []  # (position in valid, z, test)
    stack = list(zip(bounds[:-1], bounds[1:]))
    while stack:
        a, b = stack.pop()
        seg = v[a:b]
        z_s, k = _best_shift(seg, sigma, min_runs, min_runs)
        if z_s > shift_z and b == len(v) and b - (a + k) < SHIFT_TAIL_FACTOR * min_runs:
            stack.append((a, a + k))  # the tail's shift is pending; look before it
            continue
        z_e, e0, e1 = _best_excursion(seg, sigma, EXCURSION_RUNS)
        if z_e > excursion_z and z_e / excursion_z >= z_s / shift_z:
            found += [(a + e0, z_e, "excursion"), (a + e1, z_e, "excursion")]
            stack += [(a, a + e0), (a + e1, b)]  # the window itself is a level of its own
            continue
        # a longer window only where no short excursion explains it (one would: its z is diluted)
        z_w, w0, w1 = _best_window(seg, sigma, min_runs) if WINDOW_Z > 0 else (0.0, -1, -1)
        if b == len(v) and b - (a + w1) < SHIFT_TAIL_FACTOR * min_runs:
            z_w = 0.0  # its way back is too close to the end to tell from a tail shift
        if z_w > WINDOW_Z and z_w / WINDOW_Z >= z_s / shift_z:
            found += [(a + w0, z_w, "window"), (a + w1, z_w, "window")]
            stack += [(a, a + w0), (a + w0, a + w1), (a + w1, b)]
        elif z_s > shift_z:
            found.append((a + k, z_s, "shift"))
            stack += [(a, a + k), (a + k, b)]
    if not found:
        return changes
    cuts = sorted(set(bounds[1:-1]) | {p for p, _, _ in found})
    edges = [0] + cuts + [len(valid)]
    out = list(changes)
    for p, z, test in found:
        j = edges.index(p)
        before, after = v[edges[j - 1]:p], v[p:edges[j + 1]]
        kind = kind_of(float(np.mean(before)), float(np.mean(after)), direction)
        if kind not in ("regression", "progression"):
            continue
        at = int(valid[p])
        wait = (min_runs * (SHIFT_TAIL_FACTOR if p == edges[-2] else 1)) if test in ("shift", "window") else 1
        report = int(valid[min(p + wait - 1, len(valid) - 1)])
        out.append(Change(at, kind, float(np.mean(before)), float(np.mean(after)), len(after), report,
                          {"test": test, "z": round(z, 3), "noise": sigma},
                          float(np.std(before)), float(np.std(after))))
    return sorted(out, key=lambda c: c.index)


def refine_changes(values: np.ndarray, changes: list[Change], direction: int = 1,
                   runs: int = 10, min_side: int = 3) -> list[Change]:
    """Each change moved to the split, within ``runs`` valid runs of it, that best separates its two levels.

    A detector places a step of one or two noise sd a few runs off as often as not (MDL weighs
    each group's spread too; the shift test's split is one of many near-equal maxima on long
    levels), and an alert a few runs off names the wrong build. Between the previous and the
    next change (``values`` with the transient runs masked), the split with the largest
    two-sample z, |mean after - mean before|·sqrt(k(n-k)/n), is the least-squares place of one
    step; the change moves there when it keeps its kind and both of its levels keep at least
    ``min_side`` valid runs (a short excursion's edges stay where they are). ``runs`` = 0: off.
    """
    x = np.asarray(values, dtype=np.float64)
    valid = np.flatnonzero(~np.isnan(x))
    if runs <= 0 or not changes or len(valid) < 2 * min_side:
        return changes
    v = x[valid]
    ordered = sorted(changes, key=lambda c: c.index)
    pos = [int(np.searchsorted(valid, c.index)) for c in ordered]
    out: list[Change] = []
    for j, c in enumerate(ordered):
        a = pos[j - 1] if j else 0
        b = pos[j + 1] if j + 1 < len(ordered) else len(v)
        p = pos[j]
        lo, hi = max(a + min_side, p - runs), min(b - min_side, p + runs)
        if p - a < min_side or b - p < min_side or hi <= lo:
            out.append(c)
            continue
        seg = v[a:b]
        cs = np.cumsum(seg)
        n = len(seg)
        k = np.arange(lo - a, hi - a + 1)
        left = cs[k - 1] / k
        right = (cs[-1] - cs[k - 1]) / (n - k)
        best = int(np.argmax(np.abs(right - left) * np.sqrt(k * (n - k) / n)))
        q = a + int(k[best])
        if q == p or kind_of(float(left[best]), float(right[best]), direction) != c.kind:
            out.append(c)
            continue
        pos[j] = q
        at = int(valid[q])
        out.append(replace(c, index=at, runs=c.runs + (c.index - at), reported_at=max(c.reported_at, at)))
    return out


def _trend_score(w: np.ndarray, k: int, min_slope_ss: float = 0.0) -> float:
    """RSS of one straight line over ``w`` minus RSS of the step at ``k`` (two means), or +inf when
    the slope inside the two levels (one slope, a mean each) does not go the way the step goes or
    explains less than ``min_slope_ss`` of the step's residual sum of squares."""
    n = len(w)
    t = np.arange(n, dtype=np.float64)
    left, right = w[:k], w[k:]
    tl, tr = t[:k] - t[:k].mean(), t[k:] - t[k:].mean()
    dl, dr = left - left.mean(), right - right.mean()
    within = float(tl @ dl + tr @ dr)  # the common slope inside the levels, times sum(tl²) + sum(tr²)
    if within * (right.mean() - left.mean()) <= 0.0:
        return math.inf  # flat or against the step: not a trend's step
    if within * within / float(tl @ tl + tr @ tr) < min_slope_ss:
        return math.inf  # a slope no clearer than noise
    rss_step = float(dl @ dl + dr @ dr)
    tc, wc = t - t.mean(), w - w.mean()
    slope = float(tc @ wc) / float(tc @ tc)
    res = wc - slope * tc
    return float(res @ res) - rss_step


def trend_changes(values: np.ndarray, changes: list[Change], sigma: float = math.nan,
                  margin: float = TREND_MARGIN, slope_z: float = TREND_SLOPE_Z) -> list[Change]:
    """The changes left when the steps of a straight trend are dropped (alerts only).

    MDL (and the shift test) cut a slow trend into a staircase: each level is a little higher
    than the last, and each step is a change of its own. A real step has flat levels on both
    sides. For each change, over its two levels (from the previous to the next of ``changes``,
    ``values`` with the transient runs masked), a least-squares straight line is compared with
    the step (one mean per level): both have two parameters, so the step is kept when it leaves
    the smaller residual sum of squares. The change is a trend's step, and dropped, when the line
    fits at least as well (within ``margin``·``sigma``² of the step; ``sigma`` the noise sd of one
    run, ``run_noise``) and the runs inside the two levels slope the way the step goes (one
    slope, a mean for each level: a step between two flat levels has a slope of either sign by
    chance, a staircase's levels all lean its way). The change that a line explains best goes
    first, then the others are judged again against their new neighbours, until none is left
    to drop: a ramp loses all its steps, a change in a trend's slope stays when no line fits
    across it. The slope must also be clear of noise: its z (the common slope over its standard
    error, ``sigma`` the noise) at least ``slope_z``; two flat levels lean by chance, and a small
    real step between them may then fit a line no worse (a 1.3 sd step in a 51-run series of
    ``honest(seed=1)`` did, at z 1.6). Levels of fewer than 2 valid runs are never judged (an
    excursion's one-run edge). Thresholds: ``TREND_MARGIN``, ``TREND_SLOPE_Z`` (tuned on TCPD and
    ``honest(seed=1)``, docs/accuracy.md). A limit: a real step on a trend goes too when it is
    lower than about what the trend climbs over one of its levels (once the stairs around it are
    gone, a line fits across it: a ramp of 30 sd over 300 runs keeps a step of 20 sd at its middle,
    not one of 15); pal's series are meant to be flat between changes.
    """
    x = np.asarray(values, dtype=np.float64)
    valid = np.flatnonzero(~np.isnan(x))
    if not changes or len(valid) < 4:
        return changes
    v = x[valid]
    var = sigma * sigma if sigma > 0 else 1.0
    min_slope_ss = slope_z * slope_z * sigma * sigma if sigma > 0 else 0.0
    ordered = sorted(changes, key=lambda c: c.index)
    pos = [int(np.searchsorted(valid, c.index)) for c in ordered]

    def score(j: int) -> float:
        a = pos[j - 1] if j else 0
        b = pos[j + 1] if j + 1 < len(pos) else len(v)
        if pos[j] - a < 2 or b - pos[j] < 2:
            return math.inf
        return _trend_score(v[a:b], pos[j] - a, min_slope_ss) / var

    scores = [score(j) for j in range(len(pos))]
    while scores:
        drop = int(np.argmin(scores))
        if not scores[drop] <= margin:
            break
        del ordered[drop], pos[drop], scores[drop]
        for j in (drop - 1, drop):  # the neighbours' levels changed; the others' did not
            if 0 <= j < len(pos):
                scores[j] = score(j)
    return ordered


def _mask(series: SeriesInput, runs: set[int]) -> Any:
    if isinstance(series, np.ndarray):
        out = series.astype(np.float64, copy=True)
        out[sorted(runs)] = np.nan
        return out
    return [None if i in runs else item for i, item in enumerate(series)]


# ---------------------------------------------------------------------------
# The one decision: what the alerts of a series are
# ---------------------------------------------------------------------------

def noise_of(change: Change) -> float:
    """How close a later level must come to ``change.before`` to count as the old level again."""
    sd = change.before_stdev if not math.isnan(change.before_stdev) else 0.0
    return max(2.0 * sd, 0.01 * abs(change.before))


def alertable_changes(
    detector: Detector,
    series: SeriesInput,
    direction: int,
    builds: np.ndarray | None = None,
    *,
    min_change_pct: float = 0.0,
    confirm_runs: int = 1,
    window_runs: int | None = None,
    changes: list[Change] | None = None,
    masked_search: MaskedSearch | None = None,
) -> list[Change]:
    """The changes of one series that alerts are made of, decided once for the run and the harness.

    Steps: transient levels and isolated runs masked and the series analysed again, shifts
    and excursions inside its levels added (``shift_changes``), each change placed where it
    best splits its two levels (``refine_changes``), the (sequential)
    confirmation and minimum-change filters, levels re-measured from the last kept level,
    the steps of a straight trend dropped (``trend_changes``; ``alert_changes``). A change that brings the series back within the noise of the level
    before the previous change (a fix after a regression) stays an alert of its own, with
    ``evidence["restores_build"]`` naming the first build of the change it undoes (which is
    marked recovered). Each kept change gets:

    * ``state``: recovered (a later kept level came back within ``noise_of`` the old one),
      else active for the last, superseded for earlier ones;
    * ``fresh``: active and reported at the last valid run (CSIT's "last sample is anomalous");
    * ``recent``: fresh, or its first run is one of the last ``window_runs`` valid runs (the
      short-term window; None: every change is recent), or ``late``: its evidence became strong
      inside the window (``evidence["strong_at"]``, the run at which the mean of its level's
      first runs first lay ``LATE_Z`` standard errors beyond the old level): a small change
      that the tests could tell from noise only some runs after it began is news when they
      first can, not never;
    * ``first_bad_build`` / ``last_good_build`` from ``builds`` (run index when None).

    ``masked_search``: see ``alert_changes`` (a growing window's series).
    """
    values = as_values(series)
    valid = np.flatnonzero(~np.isnan(values))
    if len(valid) == 0:
        return []
    kept = alert_changes(detector, series, direction, min_change_pct, confirm_runs, changes, masked_search=masked_search)
    numbers = np.arange(len(values)) if builds is None else np.asarray(builds)
    last = int(valid[-1])
    window_start = 0 if window_runs is None else int(valid[max(0, len(valid) - window_runs)])
    out: list[Change] = []
    for pos, c in enumerate(kept):
        later = kept[pos + 1:]
        evidence = c.evidence
        if pos and kept[pos - 1].kind != c.kind and abs(c.after - kept[pos - 1].before) <= noise_of(kept[pos - 1]):
            # the way back: its own alert (the fix landed here), saying which change it undoes
            evidence = dict(evidence, restores_build=int(numbers[kept[pos - 1].index]))
        if any(abs(n.after - c.before) <= noise_of(c) for n in later):
            state = RECOVERED
        else:
            state = ACTIVE if not later else SUPERSEDED
        fresh = state == ACTIVE and c.reported_at == last
        before_runs = valid[valid < c.index]
        recent = fresh or c.index >= window_start
        late = not recent and c.evidence.get("strong_at", -1) >= window_start
        out.append(replace(
            c, state=state, fresh=fresh, recent=recent or late, late=late, evidence=evidence,
            first_bad_build=int(numbers[c.index]),
            last_good_build=int(numbers[before_runs[-1]]) if len(before_runs) else None,
            detector=c.detector or getattr(detector, "name", ""),
        ))
    return out
