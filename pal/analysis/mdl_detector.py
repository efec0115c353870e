"""CSIT's MDL grouping (jumpavg) as a detector: groups, trend line and changes of a series.

Why a module of its own: MDL (pal.analysis.mdl) sees only the valid samples, in order; the
rest of pal works on the full per-run arrays of a series (one entry per run of the job, NaN
where the test failed). This module does the mapping both ways and turns "the average went
up / down" into regression / progression by the metric's direction.

Conventions:

* A run is missing when its value is NaN or None, or its trial list is empty (NaN trials are
  dropped first). Missing runs never become 0.0: MDL runs on the valid samples only, and the
  trend array is NaN there.
* A group spans from its first to its last valid run (``end`` exclusive, ``size`` = valid
  runs); missing runs inside that span belong to it, missing runs between two groups to none.
* jumpavg labels a group by its average against the previous group's (higher = progression).
  For a lower-is-better metric (direction -1, e.g. latency) the labels are swapped: a rise in
  latency is a regression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from pal.analysis.detector import Detection, SeriesInput, check_number, check_params, labels_from_changes, verdict_of
from pal.analysis.mdl import Group, MdlSaved, MdlState
from pal.model import Change, TrendGroup

__all__ = ["MdlDetector", "MdlTrend", "valid_samples", "to_trend_groups", "trend_array", "changes_from_groups",
           "analyse"]

_SWAP = {"regression": "progression", "progression": "regression", "normal": "normal"}


@dataclass(frozen=True)
class MdlTrend:
    """MDL's view of one series, aligned with its full per-run arrays."""

    groups: list[TrendGroup]
    trend: np.ndarray  # float64, group average per run, NaN where the run is missing
    changes: list[Change]
    saved: MdlSaved | None = None  # the search's state to go on from (``analyse(..., keep=True)``)


def _run_value(value: Any) -> float | list[float] | None:
    """A run as MDL takes it, or None when the run is missing."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        trials = [float(t) for t in value if t is not None and not math.isnan(float(t))]
        return trials or None
    x = float(value)
    return None if math.isnan(x) else x


def _as_numbers(values: Sequence[Any] | np.ndarray) -> np.ndarray | None:
    """The runs as one float64 array when every run is a plain number (or None), else None."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        arr = values.astype(np.float64, copy=False)
    elif isinstance(values, (list, tuple)) and values and isinstance(values[0], (list, tuple, np.ndarray)):
        return None  # trial lists: no need to let NumPy find out
    else:
        try:
            arr = np.asarray(values, dtype=np.float64)  # None -> NaN, as a missing run
        except (TypeError, ValueError):  # trial lists (ragged or not a number)
            return None
    return arr if arr.ndim == 1 else None


def valid_samples(values: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, np.ndarray | list[float | list[float]]]:
    """Positions of the valid runs (int64) and their values, in order.

    Plain numbers (the samples table's case) are filtered in one NumPy pass and come back as a
    float64 array; runs given as trial lists come back as a list (floats and trial lists).
    """
    numbers = _as_numbers(values)
    if numbers is not None:
        positions = (~np.isnan(numbers)).nonzero()[0].astype(np.int64, copy=False)
        return positions, numbers[positions]
    found: list[int] = []
    compact: list[float | list[float]] = []
    for i, value in enumerate(values):
        run = _run_value(value)
        if run is not None:
            found.append(i)
            compact.append(run)
    return np.asarray(found, dtype=np.int64), compact


def to_trend_groups(groups: Sequence[Group], positions: np.ndarray, direction: int) -> list[TrendGroup]:
    """MDL groups (indices into the valid samples) as TrendGroups over the full arrays."""
    out = []
    for g in groups:
        label = g.label if direction >= 0 else _SWAP[g.label]
        out.append(
            TrendGroup(
                start=int(positions[g.start]),
                end=int(positions[g.end - 1]) + 1,
                avg=g.avg,
                stdev=g.stdev,
                size=g.size,
                label=label,
            )
        )
    return out


def trend_array(groups: Sequence[TrendGroup], length: int, positions: np.ndarray) -> np.ndarray:
    """The group average at every valid run, NaN at missing runs.

    A group's valid runs are a slice of ``positions`` (ascending), found by two binary
    searches; a later group wins where spans overlap.
    """
    trend = np.full(length, np.nan)
    search = positions.searchsorted
    for g in groups:
        trend[positions[search(g.start) : search(g.end)]] = g.avg
    return trend


def changes_from_groups(groups: Sequence[TrendGroup]) -> list[Change]:
    """One Change at the first run of every group labelled regression or progression.

    Levels are the previous and the new group's average and stdev; ``runs`` the valid runs of
    the new group so far; reported at its first run (MDL needs no confirmation of its own).
    """
    out = []
    for before, after in zip(groups, groups[1:]):
        if after.label not in ("regression", "progression"):
            continue
        out.append(Change(
            index=after.start, kind=after.label, before=before.avg, after=after.avg, runs=after.size,
            reported_at=after.start, before_stdev=before.stdev, after_stdev=after.stdev, detector="mdl",
            evidence={"before_runs": before.size, "after_runs": after.size,
                      "missing_between": int(after.start - before.end)},
        ))
    return out


def analyse(
    values: Sequence[Any] | np.ndarray,
    direction: int,
    *,
    unit: float | None = None,
    sbps: float | None = None,
    classify: Callable[..., Any] | None = None,
    resume: MdlSaved | None = None,
    keep: bool = False,
) -> MdlTrend:
    """Groups, trend and changes of one series by MDL.

    Args:
        values: per run, a float (NaN = missing), or a trial list (None / empty = missing).
        direction: +1 when higher is better, -1 when lower is better.
        unit, sbps: passed to MDL (see pal.analysis.mdl.classify).
        classify: another implementation of ``pal.analysis.mdl.classify`` (tests: jumpavg).
        resume: the ``saved`` of an earlier call on this series' first runs (``MdlState.resume``
            checks that it fits; the result is the same either way).
        keep: return the search's state as ``saved`` (not with ``classify``).
    """
    positions, compact = valid_samples(values)
    saved = None
    if classify is not None:
        found = classify(compact, unit=unit, sbps=sbps)
    else:
        state = MdlState.resume(resume, compact, unit=unit, sbps=sbps)
        found = state.groups()
        saved = state.saved() if keep else None
    groups = to_trend_groups(list(found), positions, direction)
    return MdlTrend(groups=groups, trend=trend_array(groups, len(values), positions),
                    changes=changes_from_groups(groups), saved=saved)


class MdlDetector:
    """CSIT's minimum-description-length grouping: a change is called at each new group's start.

    The grouping is ``pal.analysis.mdl.classify`` on the valid runs (missing runs left out, so a
    failed run never splits a group); the dashboard's groups and trend are exactly jumpavg's.
    Params: ``unit`` (measurement precision, default: from the data) and ``sbps``.
    """

    name = "mdl"
    uses_trials = False

    def __init__(self, params: dict[str, Any] | None = None, classify: Callable[..., Any] | None = None):
        self.params = check_params("mdl", params, {"unit": None, "sbps": None})
        for key in ("unit", "sbps"):
            if self.params[key] is not None:
                check_number("mdl", key, self.params[key], 0.0)
        self._classify = classify

    def detect(self, series: SeriesInput, direction: int = 1, resume: Any = None, keep: bool = False
               ) -> Detection:
        """``resume``/``keep``: the search's state (``MdlSaved``): a series whose runs were only
        appended to since is searched over its new runs alone."""
        res = analyse(series, direction, unit=self.params["unit"], sbps=self.params["sbps"], classify=self._classify,
                      resume=resume if isinstance(resume, MdlSaved) else None, keep=keep)
        validity = np.where(np.isnan(res.trend), np.nan, 0.0)  # the trend is NaN exactly at missing runs
        return Detection("mdl", labels_from_changes(validity, res.changes), res.trend, res.changes, {},
                         verdict_of(validity, res.changes), dict(self.params), res.groups, res.saved)
