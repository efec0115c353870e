"""From MDL groups to the trend line and labelled anomalies of a series with missing runs.

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
from typing import Any, Sequence

import numpy as np

from pal.analysis.mdl import Group, MdlState
from pal.model import Anomaly, TrendGroup

__all__ = ["MdlTrend", "valid_samples", "to_trend_groups", "trend_array", "anomalies_from_groups", "analyse"]

_SWAP = {"regression": "progression", "progression": "regression", "normal": "normal"}


@dataclass(frozen=True)
class MdlTrend:
    """MDL's view of one series, aligned with its full per-run arrays."""

    groups: list[TrendGroup]
    trend: np.ndarray  # float64, group average per run, NaN where the run is missing
    anomalies: list[Anomaly]
    state: MdlState  # keep it to append the next builds cheaply (MdlState.sync)


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


def anomalies_from_groups(
    groups: Sequence[TrendGroup], builds: Sequence[int] | np.ndarray, detector: str = "mdl"
) -> list[Anomaly]:
    """One Anomaly at the first run of every group labelled regression or progression.

    Evidence: the previous group's and the new group's average and stdev, the relative change
    (after - before) / |before| (NaN when before is 0), the last build of the previous group
    (last good) and the first build of the new one (first bad), and the valid runs in the new
    group so far.
    """
    out = []
    for before, after in zip(groups, groups[1:]):
        if after.label not in ("regression", "progression"):
            continue
        change = (after.avg - before.avg) / abs(before.avg) if before.avg else math.nan
        out.append(
            Anomaly(
                index=after.start,
                kind=after.label,
                build=int(builds[after.start]),
                last_good_build=int(builds[before.end - 1]),
                before_avg=before.avg,
                before_stdev=before.stdev,
                after_avg=after.avg,
                after_stdev=after.stdev,
                change=change,
                runs=after.size,
                detector=detector,
                evidence={
                    "before_first_build": int(builds[before.start]),
                    "before_runs": before.size,
                    "after_last_build": int(builds[after.end - 1]),
                    "missing_between": int(after.start - before.end),
                },
            )
        )
    return out


def analyse(
    values: Sequence[Any] | np.ndarray,
    builds: Sequence[int] | np.ndarray,
    direction: int,
    *,
    unit: float | None = None,
    sbps: float | None = None,
    state: MdlState | None = None,
) -> MdlTrend:
    """Groups, trend and anomalies of one series by MDL.

    Args:
        values: per run, a float (NaN = missing), or a trial list (None / empty = missing).
        builds: the build number of each run, aligned with ``values``.
        direction: +1 when higher is better, -1 when lower is better.
        unit, sbps: passed to MDL (see pal.analysis.mdl.classify); ignored with ``state``.
        state: a saved MdlState of this series; it is extended when it holds a prefix of the
            valid samples, recomputed otherwise. A new state is made when None.
    """
    if len(builds) != len(values):
        raise ValueError(f"{len(values)} values but {len(builds)} builds")
    positions, compact = valid_samples(values)
    if state is None:
        state = MdlState.start(compact, unit=unit, sbps=sbps)
    else:
        state.sync(compact)
    groups = to_trend_groups(state.groups(), positions, direction)
    return MdlTrend(
        groups=groups,
        trend=trend_array(groups, len(values), positions),
        anomalies=anomalies_from_groups(groups, builds),
        state=state,
    )
