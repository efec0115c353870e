"""Post-filters on what is alerted: minimum magnitude and k-run confirmation.

Graphs keep every change a detector calls; an alert needs more evidence. These filters map to
``pal.spec.AlertFilters(min_change_pct, confirm_runs)`` and work on any detector's changes:

- confirmation: a change is kept only when its new level has held ``confirm_runs`` valid runs
  (``ChangePoint.runs``); it is then reported at the ``confirm_runs``-th valid run of the new
  level (or later, if the detector itself reported it later). A change whose level has not yet
  held that long, at the end of the series, is pending: not alerted yet.
- magnitude: the relative change, measured from the last *kept* level, must be at least
  ``min_change_pct`` percent. Measuring from the last kept level is what makes a one-run dip
  that reverts vanish: the dip fails confirmation, and the return to the old level, compared
  with the level before the dip, is below the minimum magnitude.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from pal.analysis.detector import NORMAL, ChangePoint, Detection, kind_of, with_changes


def filter_changes(
    values: np.ndarray,
    changes: list[ChangePoint],
    direction: int = 1,
    min_change_pct: float = 0.0,
    confirm_runs: int = 1,
) -> list[ChangePoint]:
    """The changes that pass both filters, with ``before``/kind re-measured from the kept level."""
    if confirm_runs < 1 or min_change_pct < 0:
        raise ValueError(f"filter_changes: confirm_runs={confirm_runs} (>= 1), min_change_pct={min_change_pct} (>= 0)")
    valid = np.flatnonzero(~np.isnan(np.asarray(values, dtype=np.float64)))
    kept: list[ChangePoint] = []
    level: float | None = None  # the last kept level (before the first change: its own 'before')
    for cp in sorted(changes, key=lambda c: c.index):
        before = cp.before if level is None else level
        if level is None:
            level = cp.before
        if cp.runs < confirm_runs:
            continue
        rel = (cp.after - before) / abs(before) if before else math.inf
        if abs(rel) * 100.0 < min_change_pct:
            continue
        kind = kind_of(before, cp.after, direction)
        if kind == NORMAL:
            continue
        pos = int(np.searchsorted(valid, cp.index))
        confirm_at = int(valid[min(pos + confirm_runs - 1, len(valid) - 1)])
        ev = dict(cp.evidence, filtered_before=before, detector_before=cp.before,
                  min_change_pct=min_change_pct, confirm_runs=confirm_runs)
        kept.append(replace(cp, kind=kind, before=before, reported_at=max(cp.reported_at, confirm_at), evidence=ev))
        level = cp.after
    return kept


def apply_filters(det: Detection, values: np.ndarray, direction: int = 1,
                  min_change_pct: float = 0.0, confirm_runs: int = 1) -> Detection:
    """A copy of ``det`` keeping only the alertable changes (labels and verdict recomputed)."""
    kept = filter_changes(values, det.changes, direction, min_change_pct, confirm_runs)
    out = with_changes(det, np.asarray(values, dtype=np.float64), kept)
    out.params = dict(det.params, min_change_pct=min_change_pct, confirm_runs=confirm_runs)
    return out
