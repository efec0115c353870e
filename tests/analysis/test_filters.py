"""Post-filters: minimum magnitude, k-run confirmation, and transient levels (one-run dips)."""

from __future__ import annotations

import numpy as np
import pytest

from pal.analysis.registry import get_detector
from pal.model import Change
from pal.analysis.filters import alert_changes, alertable_changes, filter_changes, transient_runs

# 100 x10, a one-run dip to 70 at run 10, 100 x10, then a step to 90 at run 21 (10 runs)
VALUES = np.array([100.0] * 10 + [70.0] + [100.0] * 10 + [90.0] * 10)
RAW = [
    Change(10, "regression", 100.0, 70.0, 1, 10),
    Change(11, "progression", 70.0, 100.0, 10, 11),
    Change(21, "regression", 100.0, 90.0, 10, 21),
]


def test_confirmation_and_magnitude_drop_the_dip():
    kept = filter_changes(VALUES, RAW, +1, min_change_pct=1.0, confirm_runs=2)
    assert [(c.index, c.kind) for c in kept] == [(21, "regression")]
    cp = kept[0]
    # before: median of runs 0..20 (the dip included) = 100; after: median of runs 21.. = 90
    assert (cp.before, cp.after) == (100.0, 90.0)
    assert cp.change == pytest.approx(-0.10)
    assert cp.reported_at == 22  # the 2nd run of the new level
    assert cp.evidence["detector_before"] == 100.0


def test_no_filter_keeps_everything():
    kept = filter_changes(VALUES, RAW, +1)
    assert [(c.index, c.kind, c.reported_at) for c in kept] == [
        (10, "regression", 10), (11, "progression", 11), (21, "regression", 21)]
    assert kept[1].before == 70.0  # re-measured from the kept dip level


def test_min_magnitude_alone():
    small = [Change(21, "regression", 100.0, 99.5, 10, 21)]
    values = np.array([100.0] * 21 + [99.5] * 10)
    assert filter_changes(values, small, +1, min_change_pct=1.0) == []
    assert len(filter_changes(values, small, +1, min_change_pct=0.4)) == 1


def test_pending_change_at_the_end_is_not_reported_yet():
    values = np.array([100.0] * 20 + [80.0])
    cps = [Change(20, "regression", 100.0, 80.0, 1, 20)]
    assert filter_changes(values, cps, +1, confirm_runs=2) == []
    values2 = np.array([100.0] * 20 + [80.0, 80.0])
    cps2 = [Change(20, "regression", 100.0, 80.0, 2, 20)]
    assert [c.reported_at for c in filter_changes(values2, cps2, +1, confirm_runs=2)] == [21]


def test_confirmation_counts_valid_runs_only():
    values = np.array([100.0] * 20 + [80.0, np.nan, 80.0])
    cps = [Change(20, "regression", 100.0, 80.0, 2, 20)]
    assert filter_changes(values, cps, +1, confirm_runs=2)[0].reported_at == 22


def test_transient_runs():
    assert transient_runs(VALUES, RAW, 2) == [10]
    assert transient_runs(VALUES, RAW, 1) == []


def test_alert_changes_with_mdl_ignores_a_reverted_dip():
    wobble = np.where(np.arange(40) % 2 == 0, 0.5, -0.5)
    values = 100.0 + wobble
    values[15] = 60.0
    values[30:] -= 10.0
    mdl = get_detector("mdl")
    raw = mdl.detect(values)
    assert [(c.index, c.kind) for c in raw.changes] == [(15, "regression"), (16, "progression"), (30, "regression")]
    kept = alert_changes(mdl, values, +1, min_change_pct=1.0, confirm_runs=2)
    assert [(c.index, c.kind, c.reported_at) for c in kept] == [(30, "regression", 31)]
    (c,) = alertable_changes(mdl, values, +1, np.arange(1000, 1040), min_change_pct=1.0, confirm_runs=2,
                             window_runs=9)
    assert (c.index, c.first_bad_build, c.last_good_build, c.state) == (30, 1030, 1029, "active")
    assert not c.fresh and not c.recent  # reported at run 31, the last run is 39; 30 is not among the last 9
    assert (c.before, c.after) == (100.0, 90.0)  # medians of the kept levels, the dip left out


def test_alertable_fresh_on_the_confirming_run_and_a_return_is_not_its_own_alert():
    values = np.r_[np.full(20, 100.0), np.full(2, 80.0)]
    mdl = get_detector("mdl")
    (c,) = alertable_changes(mdl, values, +1, min_change_pct=1.0, confirm_runs=2, window_runs=10)
    assert (c.kind, c.fresh, c.recent, c.reported_at) == ("regression", True, True, 21)
    assert alertable_changes(mdl, values[:-1], +1, min_change_pct=1.0, confirm_runs=2) == []  # pending
    back = np.r_[values, np.full(6, 100.0)]  # the series came back: one recovered regression, no progression
    (c,) = alertable_changes(mdl, back, +1, min_change_pct=1.0, confirm_runs=2, window_runs=10)
    assert (c.kind, c.state, c.fresh) == ("regression", "recovered", False)
    moved = np.r_[values, np.full(6, 60.0)]  # moved on further down: the first is superseded
    a, b = alertable_changes(mdl, moved, +1, min_change_pct=1.0, confirm_runs=2, window_runs=10)
    assert (a.state, b.state, b.kind, round(b.change, 3)) == ("superseded", "active", "regression", -0.25)


def test_isolated_runs_by_hand():
    from pal.analysis.filters import isolated_runs

    # diffs 1 -2 1 -30 30 1 -2 1: median 1, MAD 1.5 -> sigma = 1.5/0.6745/sqrt(2) = 1.57, 4 sigma 6.3
    dip = np.array([100.0, 101, 99, 100, 70, 100, 101, 99, 100])
    assert isolated_runs(dip) == [4]
    step = np.array([100.0, 100.5, 99.5, 100, 90, 90.5, 89.5, 90])
    assert isolated_runs(step) == []  # the first run of a new level has a neighbour like it
    with_gap = np.array([100.0, 101, 99, 100, 70, np.nan, 100, 101, 99, 100])
    assert isolated_runs(with_gap) == [4]  # neighbours are the valid runs around the gap


def test_alert_changes_analyses_the_series_without_isolated_runs():
    # however a detector groups a dip, the alert analysis sees it as missing
    from pal.analysis.detector import Detection

    seen = []

    class Recorder:
        name, params = "rec", {}

        def detect(self, series, direction=1):
            seen.append(np.array(series, dtype=float))
            return Detection("rec", [], np.array([]), [], {}, "normal")

    values = np.array([100.0, 101, 99, 100, 70, 100, 101, 99, 100])
    assert alert_changes(Recorder(), values, +1, 1.0, 2) == []
    assert np.isnan(seen[-1][4]) and np.count_nonzero(np.isnan(seen[-1])) == 1
    seen.clear()
    alert_changes(Recorder(), values, +1, 1.0, 1)  # confirm-runs 1: a dip is a change, no masking
    assert not np.isnan(seen[-1]).any()
