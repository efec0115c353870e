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
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from pal.analysis.detector import Detector, SeriesInput, as_values, kind_of
from pal.model import ACTIVE, RECOVERED, SUPERSEDED, Change


def filter_changes(
    values: np.ndarray,
    changes: list[Change],
    direction: int = 1,
    min_change_pct: float = 0.0,
    confirm_runs: int = 1,
) -> list[Change]:
    """The changes that pass both filters, re-measured with medians from the last kept level.

    ``before`` becomes the median of the valid runs from the last kept change (or the series
    start) up to this change, ``after`` the median of the runs from this change up to the next
    candidate; medians, so that a dip inside a level does not move it. The detector's own
    levels stay in the evidence (``detector_before``/``detector_after``).
    """
    if confirm_runs < 1 or min_change_pct < 0:
        raise ValueError(f"filter_changes: confirm_runs={confirm_runs} (>= 1), min_change_pct={min_change_pct} (>= 0)")
    x = np.asarray(values, dtype=np.float64)
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
        before = float(np.median(b)) if len(b) else cp.before
        after = float(np.median(a)) if len(a) else cp.after
        before_sd = float(np.std(b)) if len(b) else cp.before_stdev
        after_sd = float(np.std(a)) if len(a) else cp.after_stdev
        rel = (after - before) / abs(before) if before else math.inf
        kind = kind_of(before, after, direction)
        if abs(rel) * 100.0 < min_change_pct or kind != cp.kind:
            continue
        pos = int(np.searchsorted(valid, cp.index))
        confirm_at = int(valid[min(pos + confirm_runs - 1, len(valid) - 1)])
        ev = dict(cp.evidence, detector_before=cp.before, detector_after=cp.after,
                  min_change_pct=min_change_pct, confirm_runs=confirm_runs)
        kept.append(replace(cp, before=before, after=after, before_stdev=before_sd, after_stdev=after_sd,
                            reported_at=max(cp.reported_at, confirm_at), evidence=ev))
        level_start = cp.index
    return kept


def transient_runs(values: np.ndarray, changes: list[Change], confirm_runs: int) -> list[int]:
    """Valid runs of levels that held fewer than ``confirm_runs`` runs and were then left again.

    These are the one-run dips (and other short excursions) that reverted or moved on; the last
    level is never transient, it may simply be new.
    """
    x = np.asarray(values, dtype=np.float64)
    ordered = sorted(changes, key=lambda c: c.index)
    out: list[int] = []
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
    valid = np.flatnonzero(~np.isnan(x))
    if len(valid) < 3:
        return []
    v = x[valid]
    d = np.diff(v)
    sigma = float(np.median(np.abs(d - np.median(d)))) / 0.6745 / math.sqrt(2.0)
    if sigma <= 0:
        return []
    left, right = v[1:-1] - v[:-2], v[1:-1] - v[2:]
    hit = (np.sign(left) == np.sign(right)) & (np.minimum(np.abs(left), np.abs(right)) > k_sigma * sigma)
    return [int(valid[i + 1]) for i in np.flatnonzero(hit)]


def alert_changes(detector: Detector, series: SeriesInput, direction: int = 1, min_change_pct: float = 0.0,
                  confirm_runs: int = 1, changes: list[Change] | None = None, passes: int = 3) -> list[Change]:
    """What to alert on: transient levels masked as missing and the series analysed again, then filtered.

    With ``confirm_runs`` > 1, isolated runs (``isolated_runs``) and levels that held fewer
    than ``confirm_runs`` runs before the series moved on (``transient_runs``) are masked: a
    detector that isolates a one-run dip also shifts the levels around it a little (the
    boundaries are free); without the dip, it judges the rest on its own merits. Up to
    ``passes`` rounds, until no new transient run appears.
    """
    values = as_values(series)
    if changes is None:
        changes = detector.detect(series, direction).changes
    if confirm_runs > 1:
        masked = set(isolated_runs(values))
        masked_series: Any = _mask(series, masked) if masked else series
        if masked:
            changes = detector.detect(masked_series, direction).changes
        for _ in range(passes):
            new = set(transient_runs(values, changes, confirm_runs)) - masked
            if not new:
                break
            masked |= new
            masked_series = _mask(series, masked)
            changes = detector.detect(masked_series, direction).changes
    return filter_changes(values, changes, direction, min_change_pct, confirm_runs)


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
) -> list[Change]:
    """The changes of one series that alerts are made of, decided once for the run and the harness.

    Steps: transient levels and isolated runs masked and the series analysed again, the
    confirmation and minimum-change filters, levels re-measured from the last kept level
    (``alert_changes``); a progression that only brings the series back within the noise of
    the level before a regression is dropped (the regression, marked recovered, tells it).
    Each kept change gets:

    * ``state``: recovered (a later kept level came back within ``noise_of`` the old one),
      else active for the last, superseded for earlier ones;
    * ``fresh``: active and reported at the last valid run (CSIT's "last sample is anomalous");
    * ``recent``: fresh, or its first run is one of the last ``window_runs`` valid runs (the
      short-term window; None: every change is recent);
    * ``first_bad_build`` / ``last_good_build`` from ``builds`` (run index when None).
    """
    values = as_values(series)
    valid = np.flatnonzero(~np.isnan(values))
    if len(valid) == 0:
        return []
    kept = alert_changes(detector, series, direction, min_change_pct, confirm_runs, changes)
    numbers = np.arange(len(values)) if builds is None else np.asarray(builds)
    last = int(valid[-1])
    window_start = 0 if window_runs is None else int(valid[max(0, len(valid) - window_runs)])
    out: list[Change] = []
    for pos, c in enumerate(kept):
        later = kept[pos + 1:]
        if pos and kept[pos - 1].kind == "regression" and c.kind == "progression" \
                and abs(c.after - kept[pos - 1].before) <= noise_of(kept[pos - 1]):
            continue
        if any(abs(n.after - c.before) <= noise_of(c) for n in later):
            state = RECOVERED
        else:
            state = ACTIVE if not later else SUPERSEDED
        fresh = state == ACTIVE and c.reported_at == last
        before_runs = valid[valid < c.index]
        out.append(replace(
            c, state=state, fresh=fresh, recent=fresh or c.index >= window_start,
            first_bad_build=int(numbers[c.index]),
            last_good_build=int(numbers[before_runs[-1]]) if len(before_runs) else None,
            detector=c.detector or getattr(detector, "name", ""),
        ))
    return out
