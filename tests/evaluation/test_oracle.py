"""The oracle bound: hand-computed splits and thresholds, and that pal's alerts stay under it."""

import math

import numpy as np
import pytest

from pal.evaluation.datasets import LabelledSeries, honest
from pal.evaluation.harness import (
    ORACLE_MIN_CHANGE_PCT, ORACLE_PER_1K, default_test_sets, evaluate, oracle_candidate, run_candidate_for,
)
from pal.evaluation.oracle import bound, calibrated_z, oracle_calls, stationary_z


def _series(values, changes=(), dips=(), noise=0.01, sizes=(), categories=()):
    return LabelledSeries("s", np.asarray(values, dtype=np.float64), tuple(changes), 1, None, tuple(dips), noise,
                          tuple(sizes), tuple(categories))


def test_a_step_is_placed_by_least_squares_and_sized_by_its_two_sample_z():
    s = _series([10.0] * 3 + [12.0] * 3, [(3, "progression")], noise=0.1)
    (call,) = oracle_calls(s, noise=0.1)
    # levels 10 and 12, each run's sd is 10 % of its level: z = 2 / sqrt(1/3 + 1.44/3)
    assert call.placed == 3 and call.placed_kind == "progression"
    assert call.z == pytest.approx(2.0 / math.sqrt(1.0 / 3 + 1.44 / 3))
    assert call.rel_pct == pytest.approx(20.0)


def test_each_change_is_judged_between_its_neighbours_with_the_known_dips_masked():
    values = [100.0] * 20 + [110.0] * 20 + [100.0] * 20
    values[15] = 1000.0  # a spike: left in, the split of runs 0-39 would sit right after it
    s = _series(values, [(20, "progression"), (40, "regression")], dips=[15])
    up, down = oracle_calls(s, noise=0.01)
    assert (up.placed, down.placed) == (20, 40)
    assert (up.placed_kind, down.placed_kind) == ("progression", "regression")
    unmasked = oracle_calls(_series(values, [(20, "progression"), (40, "regression")]), noise=0.01)
    assert unmasked[0].placed == 16


def test_the_threshold_is_the_least_that_keeps_stationary_alarms_within_the_goal():
    flat = [_series([100.0] * 50 + [100.0 + d] * 50, noise=0.01) for d in (0.5, 1.0, 2.0)]
    # one level's runs at sd 1.0, the other's at 1.0 + d/100: z = d / sqrt((1 + (1 + d/100)^2) / 50)
    zs = sorted((d / math.sqrt((1.0 + (1.0 + d / 100) ** 2) / 50) for d in (0.5, 1.0, 2.0)), reverse=True)
    assert sorted((stationary_z(s, 0.01) for s in flat), reverse=True) == pytest.approx(zs)
    # 300 stationary runs: 1 alarm allowed at 4 per 1k (1.2), so the 2nd largest z must stay below
    z = calibrated_z(flat, 4.0, 0.01)
    assert zs[1] < z and z == pytest.approx(zs[1])
    assert calibrated_z(flat, 0.0, 0.01) == pytest.approx(zs[0]) and calibrated_z(flat, 0.0, 0.01) > zs[0]
    # and the alarms ``bound`` charges at a threshold: the series whose largest z reaches it
    assert bound(flat, z_min=z, noise=0.01)["false_alarms_per_1k"] == pytest.approx(1000.0 / 300)
    assert bound(flat, z_min=zs[2] * (1 - 1e-9), noise=0.01)["false_alarms_per_1k"] == pytest.approx(3000.0 / 300)


def test_bound_counts_a_change_only_when_its_z_place_and_size_pass():
    rng = np.random.default_rng(7)
    big = _series(100.0 * (1 + 0.01 * rng.standard_normal(100)) + np.r_[np.zeros(50), np.full(50, 20.0)],
                  [(50, "progression")], sizes=[20.0], categories=["step"])
    tiny = _series(100.0 * (1 + 0.01 * rng.standard_normal(100)) + np.r_[np.zeros(50), np.full(50, 0.1)],
                   [(50, "progression")], sizes=[0.1], categories=["step"])
    b = bound([big, tiny], z_min=4.0, margin=3)
    assert b["truth"] == 2 and b["recall"] == 0.5 and b["f1_bound"] == pytest.approx(2 * 0.5 / 1.5, abs=1e-6)
    assert b["by_size"]["<1"] == 0.0 and b["by_size"][">=10"] == 1.0
    assert bound([big], z_min=4.0, margin=3, min_change_pct=25.0)["recall"] == 0.0  # a 20 % step under 25 %


def test_without_a_given_noise_it_is_measured_between_the_true_changes():
    rng = np.random.default_rng(3)
    noise = 1.0 + 0.02 * rng.standard_normal(400)
    s = _series(100.0 * noise * np.r_[np.ones(200), np.full(200, 1.1)], [(200, "progression")], noise=0.5)
    (call,) = oracle_calls(s)  # the generator's field (0.5 here) plays no part
    sd = np.median([np.std(100.0 * noise[:200], ddof=1) / np.mean(100.0 * noise[:200]),
                    np.std(110.0 * noise[200:], ddof=1) / np.mean(110.0 * noise[200:])])
    assert call.z == pytest.approx(oracle_calls(s, noise=float(sd))[0].z)
    assert sd == pytest.approx(0.02, rel=0.15)


def test_pal_alerts_keeping_the_false_alarm_goal_find_no_more_than_the_oracle():
    """The bound's claim on the tuning seed: pal's offline alerts (0 false alarms there) recall
    no more than the oracle at the threshold that allows 0.05 false alarms per 1k runs."""
    series = honest(seed=1)
    (score,) = evaluate(series, [run_candidate_for(default_test_sets(["mdl"])[0])])
    assert score.false_alarms_per_1k <= 0.05
    b = bound(series, calibrated_z(series, 0.05), margin=3, min_change_pct=1.0)
    assert score.recall <= b["recall"]
    assert score.breakdown["by_size"]["<2"]["recall"] <= b["by_size"]["<2"]


def test_the_oracle_row_of_pal_evaluate_scores_what_bound_says():
    """``pal evaluate --oracle`` and the benchmark's table are one computation."""
    series = honest(seed=2)
    (score,) = evaluate(series, [oracle_candidate(series)])
    b = bound(series, calibrated_z(series, ORACLE_PER_1K), margin=3, min_change_pct=ORACLE_MIN_CHANGE_PCT)
    assert score.recall == pytest.approx(b["recall"], abs=1e-6)
    assert score.precision == pytest.approx(b["precision"], abs=1e-6) and score.precision < 1.0
    assert score.f1 == pytest.approx(b["f1_bound"], abs=1e-6)
    assert score.false_alarms_per_1k == pytest.approx(b["false_alarms_per_1k"], abs=1e-6)
    assert score.false_alarms_per_1k > 0
    assert score.breakdown["by_size"]["<2"]["recall"] == pytest.approx(b["by_size"]["<2"], abs=1e-6)


def test_a_set_without_stationary_series_has_no_threshold_to_calibrate():
    step = _series([100.0] * 20 + [101.0] * 20, [(20, "progression")])
    assert calibrated_z([step], 0.05) == 0.0
    b = bound([step], calibrated_z([step], 0.05))
    assert b["false_alarms_per_1k"] is None and b["recall"] == 1.0
