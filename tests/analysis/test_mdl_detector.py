"""pal.analysis.mdl_detector: groups over full arrays with missing runs, direction, evidence;
builds of each change as the analysis adds them (pal.analysis.series)."""

from __future__ import annotations

import math
import random

import jumpavg
import numpy as np
import pytest

from pal.analysis import mdl_detector
from pal.analysis.mdl_detector import trend_array, valid_samples
from pal.analysis.series import _with_builds
from pal.model import TrendGroup

NAN = math.nan


def analyse(values, builds, direction):
    """MDL's view with the builds of each change, as analyse_one gives them."""
    if len(builds) != len(values):
        raise ValueError("lengths differ")
    res = mdl_detector.analyse(values, direction)
    numbers = np.array([NAN if v is None or (not isinstance(v, (list, tuple)) and math.isnan(v))
                        or (isinstance(v, (list, tuple)) and not [t for t in v if not math.isnan(t)]) else 0.0
                        for v in values], dtype=float)
    return res, [_with_builds(c, np.asarray(builds), numbers, "mdl") for c in res.changes]


def test_missing_runs_stay_missing_and_evidence():
    # Runs 0-5 and 7 at 10.0, run 6 and 8 failed, runs 9-14 at 5.0, run 15 failed.
    values = [10.0] * 6 + [NAN, 10.0, NAN] + [5.0] * 6 + [NAN]
    builds = list(range(101, 117))
    result, changes = analyse(values, builds, direction=+1)

    assert result.groups == [
        TrendGroup(start=0, end=8, avg=10.0, stdev=0.0, size=7, label="normal"),
        TrendGroup(start=9, end=15, avg=5.0, stdev=0.0, size=6, label="regression"),
    ]
    expected = np.array([10.0] * 6 + [NAN, 10.0, NAN] + [5.0] * 6 + [NAN])
    np.testing.assert_array_equal(result.trend, expected)  # NaN where missing, never 0.0

    (a,) = changes
    assert (a.index, a.kind, a.first_bad_build, a.last_good_build, a.reported_at) == (9, "regression", 110, 108, 9)
    assert (a.before, a.before_stdev, a.after, a.after_stdev) == (10.0, 0.0, 5.0, 0.0)
    assert a.change == -0.5 and a.runs == 6 and a.detector == "mdl"
    assert a.evidence == {"before_runs": 7, "after_runs": 6, "missing_between": 1}


def test_latency_direction_swaps_labels():
    values = [20.0] * 6 + [30.0] * 6 + [15.0] * 6  # µs: a rise, then a fall below the start
    builds = np.arange(1, 19)
    up, _ = analyse(values, builds, direction=+1)
    down, down_changes = analyse(values, builds, direction=-1)
    assert [g.label for g in up.groups] == ["normal", "progression", "regression"]
    assert [g.label for g in down.groups] == ["normal", "regression", "progression"]
    assert [(a.kind, a.first_bad_build, a.last_good_build, a.change) for a in down_changes] == [
        ("regression", 7, 6, 0.5),
        ("progression", 13, 12, -0.5),
    ]


def test_trial_lists_with_missing_runs():
    values = [[10.0, 10.2, 9.8], None, [10.1, 9.9, 10.0], [], [5.0, 5.1, 4.9], [5.0, NAN, 5.0]]
    positions, compact = valid_samples(values)
    assert positions.tolist() == [0, 2, 4, 5]
    assert compact[-1] == [5.0, 5.0]  # the NaN trial is dropped, the run kept
    result, changes = analyse(values, [1, 2, 3, 4, 5, 6], direction=+1)
    ref = jumpavg.classify(compact)
    assert [(g.start, g.end, g.size) for g in result.groups] == [(0, 3, 2), (4, 6, 2)]
    assert [g.avg for g in result.groups] == [g.stats.avg for g in ref]
    assert math.isnan(result.trend[1]) and math.isnan(result.trend[3])
    assert changes[0].first_bad_build == 5 and changes[0].last_good_build == 3


@pytest.mark.parametrize("seed", range(4))
def test_matches_jumpavg_on_valid_samples(seed):
    rng = random.Random(seed)
    n = 80
    level = 1e7
    values = []
    for i in range(n):
        if i in (25, 55):
            level *= 0.8 if i == 25 else 1.4
        values.append(NAN if rng.random() < 0.2 else level * (1 + rng.gauss(0, 0.01)))
    builds = np.arange(1000, 1000 + n)
    result, _ = analyse(np.array(values), builds, direction=+1)
    valid = [i for i, v in enumerate(values) if not math.isnan(v)]
    ref = jumpavg.classify([values[i] for i in valid])
    pos = 0
    for group, expected in zip(result.groups, ref, strict=True):
        assert (group.start, group.end - 1) == (valid[pos], valid[pos + len(expected) - 1])
        assert (group.avg, group.stdev, group.size, group.label) == (
            expected.stats.avg,
            expected.stats.stdev,
            len(expected),
            expected.comment,
        )
        pos += len(expected)
    expected_anomalies = [(g.start, g.label) for g in result.groups[1:] if g.label != "normal"]
    assert [(a.index, a.kind) for a in result.changes] == expected_anomalies
    assert {"regression", "progression"} <= {a.kind for a in result.changes}  # the two steps
    for i in valid:
        assert not math.isnan(result.trend[i])
    assert np.isnan(result.trend[[i for i in range(n) if i not in valid]]).all()


def test_all_missing_and_length_mismatch():
    result, changes = analyse([NAN, None, NAN], [1, 2, 3], direction=+1)
    assert result.groups == [] and changes == []
    assert np.isnan(result.trend).all() and len(result.trend) == 3
    with pytest.raises(ValueError):
        analyse([1.0, 2.0], [1], direction=+1)


def test_valid_samples_numbers_in_one_pass():
    # Plain numbers, whatever their container: NaN and None are missing, the rest in order.
    expected_pos, expected_vals = [0, 2, 3, 5], [10.0, 11.5, 3.0, 7.25]
    for values in (
        np.array([10.0, NAN, 11.5, 3.0, NAN, 7.25]),
        [10.0, NAN, 11.5, 3, None, 7.25],
        np.array([10.0, None, 11.5, 3.0, NAN, 7.25], dtype=object),
        np.array([10.0, NAN, 11.5, 3.0, NAN, 7.25], dtype=np.float32),
    ):
        positions, compact = valid_samples(values)
        assert positions.dtype == np.int64 and positions.tolist() == expected_pos
        assert np.asarray(compact, dtype=float).tolist() == expected_vals
    ints = valid_samples(np.array([4, 0, 9]))
    assert ints[0].tolist() == [0, 1, 2] and ints[1].tolist() == [4.0, 0.0, 9.0]
    empty = valid_samples(np.array([]))
    assert empty[0].tolist() == [] and len(empty[1]) == 0


def test_valid_samples_trial_lists_of_equal_length_stay_lists():
    # A 2-D shape is trial lists, not numbers: each run is a list (NaN trials dropped).
    positions, compact = valid_samples([[1.0, 2.0], [NAN, NAN], [3.0, NAN]])
    assert positions.tolist() == [0, 2] and compact == [[1.0, 2.0], [3.0]]
    with pytest.raises(ValueError):
        valid_samples([1.0, "not a number"])


@pytest.mark.parametrize("seed", range(3))
def test_array_and_list_inputs_analyse_alike(seed):
    rng = np.random.default_rng(seed)
    values = 1e7 * np.where(np.arange(120) < 60, 1.0, 0.85) * (1 + rng.normal(0, 0.01, 120))
    values[rng.random(120) < 0.1] = NAN
    builds = np.arange(500, 620)
    as_array, _ = analyse(values, builds, direction=+1)
    as_list, _ = analyse([None if math.isnan(v) else v for v in values.tolist()], builds, direction=+1)
    assert as_array.groups == as_list.groups and as_array.changes == as_list.changes
    np.testing.assert_array_equal(as_array.trend, as_list.trend)
    assert [a.kind for a in as_array.changes] == ["regression"] and as_array.changes[0].index >= 60


def test_trend_array_spans_and_missing_runs():
    # Valid runs 0, 1, 3, 4, 6, 8; groups [0, 2) at 5.0, [3, 7) at 7.0, [8, 9) at 6.0; run 2
    # lies between groups, runs 5 and 7 failed, run 9 is past the last group.
    positions = np.array([0, 1, 3, 4, 6, 8], dtype=np.int64)
    groups = [TrendGroup(0, 2, 5.0, 0.0, 2, "normal"), TrendGroup(3, 7, 7.0, 0.0, 3, "progression"),
              TrendGroup(8, 9, 6.0, 0.0, 1, "regression")]
    got = trend_array(groups, 10, positions)
    np.testing.assert_array_equal(got, [5.0, 5.0, NAN, 7.0, 7.0, NAN, 7.0, NAN, 6.0, NAN])
    assert np.isnan(trend_array([], 3, np.array([0, 2], dtype=np.int64))).all()
