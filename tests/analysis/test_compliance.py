"""pal.analysis.compliance on hand-computed series."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pal.analysis.mdl_detector import analyse
from pal.analysis.compliance import _nanos, compliance, week_runs
from pal.model import Change, Compliance, TrendGroup
from pal.spec import Windows

NAN = math.nan
WINDOWS = Windows()  # 10 runs, 5 for one testbed, 180 runs, 180 days


def daily(n: int, every_days: int = 1) -> np.ndarray:
    start = np.datetime64("2024-01-01T06:00:00", "ns")
    return start + np.arange(n) * np.timedelta64(every_days, "D")


def anomaly(index: int, kind: str) -> Change:
    return Change(index, kind, 0.0, 0.0, 1, index)


def test_three_levels():
    # 15 samples at 130, 10 at 100, 5 at 90. last = 29, last - week = 19 (trend 100).
    trend = np.array([130.0] * 15 + [100.0] * 10 + [90.0] * 5)
    anomalies = [anomaly(15, "regression"), anomaly(25, "regression")]
    groups = [TrendGroup(0, 15, 130.0, 0, 15, "normal"), TrendGroup(15, 25, 100.0, 0, 10, "regression"),
              TrendGroup(25, 30, 90.0, 0, 5, "regression")]
    got = compliance(trend, daily(30), anomalies, WINDOWS, False, +1, groups=groups)
    assert got.trend == 90.0 and got.runs == 5
    assert got.short_term_change == pytest.approx((90 - 100) / 100 * 100)  # -10 %
    assert got.long_term_change == pytest.approx((90 - 130) / 130 * 100)  # -30.77 %: max of [0, 19]
    # Only the anomaly at 25 is among the last 10 samples (20..29).
    assert (got.regressions, got.progressions) == (1, 0)
    # Runs without groups: the samples back from last sharing its trend.
    assert compliance(trend, daily(30), anomalies, WINDOWS, False, +1).runs == 5


def test_long_term_window_days_and_runs_whichever_first():
    # One sample every 5 days: 60 samples, last at day 295. 180 days back reaches day 115 =
    # sample 23. Trend 200 for 0-19, 150 for 20-39, 100 for 40-59. last - week = 49.
    trend = np.array([200.0] * 20 + [150.0] * 20 + [100.0] * 20)
    times = daily(60, every_days=5)
    by_days = compliance(trend, times, [], WINDOWS, False, +1)
    assert by_days.long_term_change == pytest.approx((100 - 150) / 150 * 100)  # window 23..49
    assert by_days.short_term_change == 0.0
    # Without times only the 180-run limit applies: the window reaches sample 0 (200).
    by_runs = compliance(trend, None, [], WINDOWS, False, +1)
    assert by_runs.long_term_change == pytest.approx((100 - 200) / 200 * 100)
    # With daily samples the run limit comes first: 30 runs back from 59 is sample 29 (150).
    short_runs = Windows(long_term_runs=30)
    assert compliance(trend, daily(60), [], short_runs, False, +1).long_term_change == pytest.approx(-100 / 3)
    # A 3-month window shorter than a week: the reference is trend[last - week].
    tiny_days = Windows(long_term_days=1)
    assert compliance(trend, daily(60), [], tiny_days, False, +1).long_term_change == 0.0


def test_short_history_uses_earliest_trend():
    # 4 samples, week = 10: last - week is before the start, so trend[0] is used for both.
    trend = np.array([100.0, 100.0, 110.0, 110.0])
    got = compliance(trend, daily(4), [anomaly(2, "progression")], WINDOWS, False, +1)
    assert got == Compliance(trend=110.0, runs=2, short_term_change=pytest.approx(10.0),
                             long_term_change=pytest.approx(10.0), regressions=0, progressions=1)
    one = compliance(np.array([42.0]), daily(1), [], WINDOWS, False, +1)
    assert (one.trend, one.runs, one.short_term_change, one.long_term_change) == (42.0, 1, 0.0, 0.0)


def test_single_testbed_week_is_five_runs():
    trend = np.array([100.0] * 6 + [120.0] * 6)
    anomalies = [anomaly(6, "progression")]
    assert week_runs(WINDOWS, True) == 5 and week_runs(WINDOWS, False) == 10
    one_tb = compliance(trend, daily(12), anomalies, WINDOWS, True, +1)
    # last = 11, last - 5 = 6 (already 120); the anomaly at 6 is not among samples 7..11.
    assert (one_tb.short_term_change, one_tb.progressions) == (0.0, 0)
    assert one_tb.long_term_change == 0.0  # max(trend[0..6]) = 120
    many_tb = compliance(trend, daily(12), anomalies, WINDOWS, False, +1)
    # last - 10 = 1 (100): +20 %, and the anomaly at 6 is among samples 2..11.
    assert (many_tb.short_term_change, many_tb.progressions) == (pytest.approx(20.0), 1)
    assert many_tb.long_term_change == pytest.approx(20.0)


def test_windows_count_valid_samples_not_failed_runs():
    # Valid samples at 0, 1, 4, 5, 7; week = 2: last - week is the sample at position 4.
    trend = np.array([100.0, 100.0, NAN, NAN, 100.0, 120.0, NAN, 120.0])
    w = Windows(short_term_runs=2)
    got = compliance(trend, daily(8), [anomaly(5, "progression")], w, False, +1)
    assert got.short_term_change == pytest.approx(20.0)
    assert got.progressions == 1 and got.runs == 2 and got.trend == 120.0
    # A failed last run does not hide the last trend.
    failed_last = np.append(trend, NAN)
    assert compliance(failed_last, daily(9), [], w, False, +1).trend == 120.0


def test_lower_is_better_uses_minimum_reference():
    # Latency (µs): 15 samples at 50, 10 at 40, 5 at 60. Reference window 0..19.
    trend = np.array([50.0] * 15 + [40.0] * 10 + [60.0] * 5)
    lat = compliance(trend, daily(30), [anomaly(25, "regression")], WINDOWS, False, -1)
    assert lat.short_term_change == pytest.approx(50.0)  # vs trend[19] = 40
    assert lat.long_term_change == pytest.approx(50.0)  # vs min(50, 40) = 40: the best level
    thr = compliance(trend, daily(30), [], WINDOWS, False, +1)
    assert thr.long_term_change == pytest.approx(20.0)  # vs max = 50
    assert lat.regressions == 1


def test_no_valid_sample():
    got = compliance(np.array([NAN, NAN]), daily(2), [], WINDOWS, False, +1)
    assert math.isnan(got.trend) and got.runs == 0
    assert math.isnan(got.short_term_change) and math.isnan(got.long_term_change)
    assert (got.regressions, got.progressions) == (0, 0)


def test_end_to_end_with_mdl():
    # A series with a failed run and a clear 20 % drop 3 samples before the end.
    values = [10.0, 10.1, 9.9, 10.0, NAN, 10.05, 9.95, 10.0, 10.1, 9.9, 10.0, 8.0, 8.05, 7.95]
    mdl = analyse(values, direction=+1)
    got = compliance(mdl.trend, daily(14), mdl.changes, WINDOWS, False, +1, groups=mdl.groups)
    before = np.mean([v for v in values[:11] if not math.isnan(v)])
    after = np.mean(values[11:])
    assert [(g.start, g.end) for g in mdl.groups] == [(0, 11), (11, 14)]
    assert got.trend == pytest.approx(after) and got.runs == 3
    # 13 valid samples: last - 10 is valid sample 2 (in the first group).
    assert got.short_term_change == pytest.approx((after - before) / before * 100)
    assert got.long_term_change == pytest.approx((after - before) / before * 100)
    assert (got.regressions, got.progressions) == (1, 0)


def test_times_read_as_nanoseconds_whatever_their_form():
    # 2024-01-01T06:00:00Z = 1704088800 s since the epoch; NaT is the minimum int64.
    ns = 1_704_088_800 * 10**9
    nat = np.iinfo(np.int64).min
    day = 86_400 * 10**9
    forms = [
        np.array(["2024-01-01T06:00:00", "NaT", "2024-01-02T06:00:00"], dtype="datetime64[ns]"),
        np.array(["2024-01-01T06:00:00", "NaT", "2024-01-02T06:00:00"], dtype="datetime64[s]"),
        np.array(["2024-01-01T06:00:00", "NaT", "2024-01-02T06:00:00"], dtype="datetime64[us]"),
        ["2024-01-01T06:00:00Z", None, "2024-01-02T06:00:00Z"],
        ["2024-01-01T08:00:00+02:00", None, "2024-01-02T07:00:00+01:00"],
        pd.Series(pd.to_datetime(["2024-01-01T06:00:00", None, "2024-01-02T06:00:00"])),
    ]
    for times in forms:
        assert _nanos(times, 3).tolist() == [ns, nat, ns + day], times
    assert _nanos(None, 3) is None
    with pytest.raises(ValueError, match="3 trend values but 2 times"):
        _nanos(forms[0][:2], 3)


def test_string_times_count_days_like_datetime64():
    # The day window of test_long_term_window_days_and_runs_whichever_first with the times as
    # ISO strings (pandas reads those in microseconds): still 180 days, window 23..49.
    trend = np.array([200.0] * 20 + [150.0] * 20 + [100.0] * 20)
    times = daily(60, every_days=5)
    as_text = [t + "Z" for t in np.datetime_as_string(times, unit="s")]  # no fraction: read in µs
    got = compliance(trend, as_text, [], WINDOWS, False, +1)
    assert got.long_term_change == pytest.approx((100 - 150) / 150 * 100)
    assert got == compliance(trend, times, [], WINDOWS, False, +1)
