"""Trend compliance: the dashboard metrics of one series (CSIT-FORMATS.md section 4).

Definitions (seed ``csit-trend-analysis-rst``), with trend[t] the average of the group the
sample t belongs to:

* Trend = trend[last]; Runs = runs[last], the valid samples of the last group.
* Short-Term Change % = (trend[last] - trend[last - week]) / trend[last - week] * 100.
* Long-Term Change % = (trend[last] - R) / R * 100, R = max(trend[last - 3 months] ..
  trend[last - week]), both ends included. Excluding the last week keeps real progressions
  visible; for a lower-is-better metric (direction -1, latency) R is the *minimum* of that
  window instead, i.e. always the best level of the reference period. The sign stays that of
  the raw value: for latency a positive change is a rise, i.e. worse.
* Regressions / Progressions = changes whose first sample is one of the last ``week``
  samples (those after last - week).

Choices where the seeds leave room (documented here because the dashboard depends on them):

* Windows count *valid samples* of the series, as CSIT did (its series held only the runs that
  produced a value): "last" is the last valid sample, "last - week" the sample ``week`` valid
  samples before it. A run where the test failed is not a sample and moves no window.
* 1 week = ``windows.short_term_runs`` samples, ``short_term_runs_single_testbed`` for a
  topo-arch with one testbed. 3 months = ``long_term_days`` days or ``long_term_runs``
  samples before last, whichever comes first looking back (the shorter window); days use the
  sample times. If that window ends up shorter than a week, R = trend[last - week].
* Short history: an offset that reaches past the first sample uses the earliest trend
  available (the seed's caveat). A series is never dropped for being short; with one sample
  both changes are 0.0.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from pal.model import Change, Compliance, TrendGroup
from pal.spec import Windows

__all__ = ["compliance", "week_runs"]

_NS_PER_DAY = 86_400 * 10**9
_NAT = np.iinfo(np.int64).min  # NaT as int64 nanoseconds


def week_runs(windows: Windows, single_testbed: bool) -> int:
    """Samples in the short-term window ("1 week")."""
    return windows.short_term_runs_single_testbed if single_testbed else windows.short_term_runs


def _percent(value: float, reference: float) -> float:
    if not (math.isfinite(value) and math.isfinite(reference)) or reference == 0:
        return math.nan
    return (value - reference) / reference * 100.0


def _nanos(times: np.ndarray | Sequence | None, length: int) -> np.ndarray | None:
    """Times as int64 ns since the epoch (NaT as the minimum int64), or None.

    datetime64 arrays (the samples table's ``build_time``) are read as they are, without
    pandas: a view for nanoseconds, a unit cast otherwise. Other inputs go through pandas
    (time zones, strings), converted to nanoseconds whatever unit pandas infers.
    """
    if times is None:
        return None
    if len(times) != length:
        raise ValueError(f"{length} trend values but {len(times)} times")
    if isinstance(times, np.ndarray) and times.dtype.kind == "M":
        return times.astype("datetime64[ns]", copy=False).view(np.int64)
    return pd.DatetimeIndex(pd.to_datetime(times, utc=True)).as_unit("ns").asi8


def _runs_of_last(trend: np.ndarray, valid: np.ndarray, groups: Sequence[TrendGroup] | None) -> int:
    last = int(valid[-1])
    if groups is not None:
        for g in groups:
            if g.start <= last < g.end:
                return g.size
    # Without groups: the valid samples back from last that share its trend value.
    same = trend[valid] == trend[last]
    count = 0
    for flag in same[::-1]:
        if not flag:
            break
        count += 1
    return count


def compliance(
    trend: np.ndarray,
    times: np.ndarray | Sequence | None,
    changes: Sequence[Change],
    windows: Windows,
    single_testbed: bool,
    direction: int,
    groups: Sequence[TrendGroup] | None = None,
) -> Compliance:
    """The compliance metrics of one series.

    Args:
        trend: group average per run, NaN where the run is missing (pal.analysis.mdl_detector).
        times: sample time per run (datetime64 or anything pandas reads), aligned with
            ``trend``; None counts the 3-month window in runs only.
        changes: the series' changes (``index`` into the same arrays, ``kind`` already
            turned by direction).
        windows: the test set's window sizes.
        single_testbed: the job's topo-arch has one testbed (shorter week).
        direction: +1 higher is better, -1 lower is better (picks max or min as reference).
        groups: the series' groups, to read Runs exactly; without them Runs counts the valid
            samples back from the last that share its trend value.

    Returns:
        Compliance; with no valid sample: trend NaN, runs 0, changes NaN, no changes.
    """
    trend = np.asarray(trend, dtype=np.float64)
    nanos = _nanos(times, len(trend))
    valid = (~np.isnan(trend)).nonzero()[0]
    if len(valid) == 0:
        return Compliance(math.nan, 0, math.nan, math.nan, 0, 0)
    last = len(valid) - 1
    value = float(trend[valid[last]])
    week = max(int(week_runs(windows, single_testbed)), 0)
    week_ago = max(last - week, 0)

    short = _percent(value, float(trend[valid[week_ago]]))

    far = max(last - int(windows.long_term_runs), 0)
    if nanos is not None and nanos[valid[last]] != _NAT:
        cutoff = nanos[valid[last]] - int(windows.long_term_days) * _NS_PER_DAY
        # the first valid sample inside; there is one: the last sample itself
        far = max(far, int((nanos[valid] >= cutoff).argmax()))
    far = min(far, week_ago)
    window = trend[valid[far : week_ago + 1]]
    reference = float(np.maximum.reduce(window) if direction >= 0 else np.minimum.reduce(window))
    long = _percent(value, reference)

    recent: list[Change] = []
    if week > 0:
        first_in_week = int(valid[max(last - week + 1, 0)])
        recent = [a for a in changes if a.index >= first_in_week]
    return Compliance(
        trend=value,
        runs=_runs_of_last(trend, valid, groups),
        short_term_change=short,
        long_term_change=long,
        regressions=sum(a.kind == "regression" for a in recent),
        progressions=sum(a.kind == "progression" for a in recent),
    )
