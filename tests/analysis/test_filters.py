"""Post-filters: minimum magnitude, k-run confirmation, and transient levels (one-run dips)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pal.analysis.registry import get_detector
from pal.model import Change
from pal.analysis.filters import (
    _median,
    SHIFT_MIN_RUNS,
    SHIFT_Z,
    alert_changes,
    alertable_changes,
    filter_changes,
    run_noise,
    shift_changes,
    transient_runs,
    trend_changes,
)

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


def test_alertable_fresh_on_the_confirming_run_and_the_way_back_names_what_it_restores():
    values = np.r_[np.full(20, 100.0), np.full(2, 80.0)]
    mdl = get_detector("mdl")
    (c,) = alertable_changes(mdl, values, +1, min_change_pct=1.0, confirm_runs=2, window_runs=10)
    assert (c.kind, c.fresh, c.recent, c.reported_at) == ("regression", True, True, 21)
    assert alertable_changes(mdl, values[:-1], +1, min_change_pct=1.0, confirm_runs=2) == []  # pending
    back = np.r_[values, np.full(6, 100.0)]  # the series came back: the regression recovered, the fix alerted
    c, fix = alertable_changes(mdl, back, +1, np.arange(200, 228), min_change_pct=1.0, confirm_runs=2, window_runs=10)
    assert (c.kind, c.state, c.fresh) == ("regression", "recovered", False)
    assert (fix.kind, fix.state, fix.first_bad_build, fix.evidence["restores_build"]) == ("progression", "active", 222, 220)
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


# --- the shift test and sequential confirmation (noise sd 1 around 100: z values by hand) ---

def _noise(seed: int, n: int) -> np.ndarray:
    return 100.0 + np.random.default_rng(seed).standard_normal(n)


def test_run_noise_ignores_steps_and_outliers():
    x = _noise(3, 400)
    x[200:] += 20.0  # a step adds one large first difference: the MAD does not move
    x[50] -= 30.0
    assert run_noise(x) == pytest.approx(1.0, abs=0.1)
    assert np.isnan(run_noise(np.array([1.0, np.nan, 2.0])))


def test_shift_test_finds_a_small_sustained_shift_mdl_leaves_inside_a_level():
    # 1 sd held 80 runs: z = 1 / sqrt(2/80) = 6.3 > SHIFT_Z; MDL alone does not split it
    x = _noise(6, 160)
    x[80:] += 1.0
    mdl = get_detector("mdl", {})
    assert mdl.detect(x).changes == []
    kept = alert_changes(mdl, x, +1, min_change_pct=0.5, confirm_runs=2)
    assert [(c.kind, c.evidence["test"]) for c in kept] == [("progression", "shift")]
    assert abs(kept[0].index - 80) <= 2 and kept[0].evidence["z"] > SHIFT_Z
    # pure noise from the same generator: nothing
    assert shift_changes(_noise(6, 160), []) == []
    assert alert_changes(mdl, _noise(6, 160), +1, min_change_pct=0.5, confirm_runs=2) == []


def test_shift_test_finds_a_reverted_excursion_as_two_changes():
    x = _noise(5, 100)
    x[50:55] += 4.0  # 4 sd for 5 runs: z = 4 / sqrt(1/5 + 1/95) = 8.7 > EXCURSION_Z
    got = shift_changes(x, [])
    assert [(c.index, c.kind, c.evidence["test"]) for c in got] == [
        (50, "progression", "excursion"), (55, "regression", "excursion")]
    assert got[0].reported_at == 50 and got[0].runs == 5


def test_a_shift_into_the_last_level_waits_for_twice_the_runs():
    x = _noise(7, 110)
    x[100:] += 3.0  # 10 runs after: z is large, but the tail rule asks for 2 * SHIFT_MIN_RUNS runs
    assert shift_changes(x, []) == []
    y = np.concatenate([x, 103.0 + np.random.default_rng(8).standard_normal(6)])
    got = shift_changes(y, [])
    assert [(c.index, c.kind) for c in got] == [(100, "progression")]
    assert got[0].reported_at == 100 + 2 * SHIFT_MIN_RUNS - 1


def test_sequential_confirmation_counts_only_runs_clearly_at_the_new_level():
    cps = [Change(20, "regression", 100.0, 95.0, 4, 20)]
    # noise 1, 2.5 sd: a confirming run is <= 97.5; 99.5 does not count
    values = np.array([100.0] * 20 + [95.0, 99.5, 95.0, 95.0])
    kept = filter_changes(values, cps, +1, confirm_runs=2, confirm_sigma=2.5, noise=1.0)
    assert [c.reported_at for c in kept] == [22]
    assert filter_changes(values, cps, +1, confirm_runs=2)[0].reported_at == 21  # plain count
    pending = np.array([100.0] * 20 + [95.0, 99.5])
    assert filter_changes(pending, [Change(20, "regression", 100.0, 95.0, 2, 20)], +1, confirm_runs=2,
                          confirm_sigma=2.5, noise=1.0) == []


def test_a_lone_first_run_is_transient_and_never_an_alert():
    """A new test whose first run is off (set-up, warm-up) has no level before it: masked with
    confirm_runs 2, not alerted; a head of two runs is a level of its own and stays."""
    cps = [Change(1, "progression", 80.0, 100.0, 30, 1)]
    values = np.array([80.0] + [100.0] * 30)
    assert transient_runs(values, cps, 2) == [0]
    assert transient_runs(np.array([np.nan, 80.0] + [100.0] * 30), [Change(2, "progression", 80.0, 100.0, 30, 2)], 2) == [1]
    assert transient_runs(np.array([80.0, 80.0] + [100.0] * 30), [Change(2, "progression", 80.0, 100.0, 30, 2)], 2) == []
    assert transient_runs(values, cps, 1) == []
    wobble = np.where(np.arange(40) % 2 == 0, 0.3, -0.3)
    series = 100.0 + wobble
    series[0] = 70.0
    mdl = get_detector("mdl")
    assert [c.index for c in mdl.detect(series, +1).changes] == [1]  # the raw detector splits it off
    assert alertable_changes(mdl, series, +1, min_change_pct=1.0, confirm_runs=2) == []


def test_a_small_new_last_level_waits_for_more_runs_a_large_one_does_not():
    """Sequential confirmation (noise 1, 2.5 sd per confirming run): a last level 3 sd down needs
    TAIL_CONFIRM_RUNS runs beyond 2.5 sd, a 10 sd step two; a small level that was left again
    is complete and needs two."""
    from pal.analysis.filters import CONFIRM_SIGMA, TAIL_CONFIRM_RUNS, TAIL_SMALL_SD

    assert TAIL_SMALL_SD > 3.0 and TAIL_CONFIRM_RUNS > 2

    def kept(tail: list[float], after: list[float] | None = None) -> list[int]:
        values = np.array([100.0] * 30 + tail + (after or []))
        cps = [Change(30, "regression", 100.0, float(np.mean(tail)), len(tail), 31)]
        if after:
            cps.append(Change(30 + len(tail), "progression", float(np.mean(tail)), 100.0, len(after), 30 + len(tail)))
        out = filter_changes(values, cps, +1, confirm_runs=2, confirm_sigma=CONFIRM_SIGMA, noise=1.0)
        return [c.reported_at for c in out if c.kind == "regression"]

    small = [97.0] * TAIL_CONFIRM_RUNS
    assert kept(small[:-1]) == []  # pending: one confirming run short
    assert kept(small) == [30 + TAIL_CONFIRM_RUNS - 1]
    assert kept([90.0, 90.0]) == [31]  # 10 sd: confirmed by two runs
    assert kept([97.0, 97.0, 97.0], after=[100.0] * 20) == [31]  # left again: two runs suffice


def _small_change_alerts(x: np.ndarray) -> list[tuple[int, str]]:
    mdl = get_detector("mdl", {})
    return [(c.index, c.kind) for c in alertable_changes(mdl, x, +1, min_change_pct=1.0, confirm_runs=2)]


def test_a_small_last_level_is_confirmed_by_the_mean_of_its_runs():
    """A step of 1.2 noise sd (1.2 %) held 50 runs at the end of 110: few of its runs lie 2.5 sd
    beyond the old level (the per-run confirmation waits for five), but the mean of its first
    CONFIRM_Z_RUNS runs is more than CONFIRM_Z standard errors away: alerted at run 60. The
    same noise without the step: nothing."""
    base = _noise(28, 110)
    x = base.copy()
    x[60:] += 1.2
    assert _small_change_alerts(x) == [(60, "progression")]
    assert _small_change_alerts(base) == []


def test_a_long_small_excursion_that_reverts_is_two_alerts_at_its_ends():
    """1.5 noise sd for 40 runs (80-119) in 200: the runs before and after it are alike, so no
    single split separates it (the shift test's z stays under SHIFT_Z), and it is far too long
    for the excursion test; the window test finds both ends and refine_changes places them.
    The same noise without the window: nothing."""
    base = _noise(29, 200)
    x = base.copy()
    x[80:120] += 1.5
    got = _small_change_alerts(x)
    assert [k for _, k in got] == ["progression", "regression"]
    assert abs(got[0][0] - 80) <= 1 and abs(got[1][0] - 120) <= 1
    assert _small_change_alerts(base) == []


def test_refine_changes_moves_a_misplaced_step_to_its_best_split():
    """A 1 sd step at run 100 of 200 given 6 runs late: moved back to within a run of 100; a
    step whose kind would flip, or a short level's edge, stays."""
    from pal.analysis.filters import refine_changes

    x = _noise(11, 200)
    x[100:] += 1.0
    got = refine_changes(x, [Change(106, "progression", 100.0, 101.0, 94, 107)], +1, runs=10)
    assert abs(got[0].index - 100) <= 1 and got[0].runs == 94 + (106 - got[0].index)
    assert got[0].reported_at == 107
    assert refine_changes(x, [Change(106, "regression", 101.0, 100.0, 94, 107)], +1, runs=10)[0].index == 106
    short = [Change(50, "regression", 100.0, 96.0, 2, 50), Change(52, "progression", 96.0, 100.0, 148, 52)]
    assert [c.index for c in refine_changes(x, short, +1, runs=10)] == [50, 52]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e12, max_value=1e12),
                min_size=1, max_size=300))
def test_the_fast_median_is_numpys_median_exactly(values):
    x = np.array(values, dtype=np.float64)
    assert _median(x) == float(np.median(x))


def _excursion_by_length(x: np.ndarray, sigma: float, lengths: tuple[int, int]) -> tuple[float, int, int]:
    """The definition, one window length at a time: the first largest z, shortest length first."""
    import math

    n, best = len(x), (0.0, -1, -1)
    cs = np.concatenate([[0.0], np.cumsum(x)])
    for length in range(lengths[0], lengths[1] + 1):
        rest = n - length
        if rest < 2 * lengths[1]:
            break
        a = np.arange(1, n - length)
        inside = (cs[a + length] - cs[a]) / length
        outside = (cs[-1] - cs[a + length] + cs[a]) / rest
        z = np.abs(inside - outside) / (sigma * math.sqrt(1.0 / length + 1.0 / rest))
        j = int(np.argmax(z))
        if z[j] > best[0]:
            best = (float(z[j]), int(a[j]), int(a[j] + length))
    return best


def test_best_excursion_of_all_lengths_at_once_is_the_per_length_search_bit_for_bit():
    from pal.analysis.filters import _best_excursion

    rng = np.random.default_rng(3)
    for trial in range(3000):
        n = int(rng.integers(1, 120))
        x = (rng.normal(10, 1, n), rng.integers(0, 3, n).astype(float), np.full(n, 5.0))[trial % 3]  # ties too
        sigma = float(rng.uniform(0.1, 2))
        assert _best_excursion(x, sigma, (3, 10)) == _excursion_by_length(x, sigma, (3, 10)), (trial, x.tolist())
    x = np.full(60, 1.0)
    x[20:25] = 3.0  # a 5-run excursion, found where it is
    z, start, end = _best_excursion(x, 0.5, (3, 10))
    assert (start, end) == (20, 25) and z == pytest.approx(2.0 / (0.5 * (1 / 5 + 1 / 55) ** 0.5))


def test_a_change_found_after_the_window_is_recent_when_its_evidence_became_strong_in_it():
    """A step of 1.5 noise sd (1.5 %) down at run 40. On the history up to run 56 the shift test
    first finds it (a shift into the last level waits for 16 runs after it): its first run is 16
    runs back, outside the 10-run window, and it counts as reported at run 55, not at the last
    run, so by its start or its report alone no daily run would ever send it. The mean of its
    level's first runs first lay LATE_Z standard errors beyond the old level at run 55, inside
    the window: recent. One run earlier it is not alertable yet; an old step whose evidence was
    strong long before the window is not recent; the same noise without the step: nothing."""
    from pal.analysis.filters import LATE_Z

    assert LATE_Z == 5.5
    mdl = get_detector("mdl", {})
    base = _noise(6, 90)
    x = base.copy()
    x[40:] -= 1.5

    def alerts(v: np.ndarray) -> list[Change]:
        return alertable_changes(mdl, v, +1, min_change_pct=1.0, confirm_runs=2, window_runs=10)

    (c,) = alerts(x[:57])
    assert (c.index, c.kind, c.evidence["test"], c.reported_at, c.fresh) == (40, "regression", "shift", 55, False)
    assert c.evidence["strong_at"] == 55 and c.recent and c.late
    assert alerts(x[:56]) == []
    assert alerts(base[:57]) == []
    old = base.copy()
    old[20:] -= 10.0  # 10 sd at run 20: strong at once, 36 runs before the last
    (big,) = alerts(old[:57])
    assert (big.index, big.kind, big.evidence["strong_at"], big.recent, big.late) == (20, "regression", 20, False, False)
    (now,) = alerts(old[:25])  # inside the window by its start: recent, not late
    assert (now.index, now.recent, now.late) == (20, True, False)


def test_a_noisy_linear_ramp_is_not_a_staircase_of_alerts(monkeypatch):
    """30 noise sd over 300 runs: MDL cuts the ramp into a dozen steps, each a change of about
    2.5 sd with levels that lean its way; a straight line fits each pair of levels at least as
    well as the step, so none is alerted (without the trend test: 11-13 alerts, seeds 1-8)."""
    import pal.analysis.filters as filters

    mdl = get_detector("mdl", {})
    for seed in (1, 2, 3):
        ramp = _noise(seed, 300) + np.linspace(0.0, 30.0, 300)
        assert len(mdl.detect(ramp).changes) >= 8  # the graph's groups stay the detector's
        assert alertable_changes(mdl, ramp, +1, min_change_pct=1.0, confirm_runs=2) == []
        assert filters.TREND_TEST
        with monkeypatch.context() as m:
            m.setattr(filters, "TREND_TEST", False)
            assert len(alertable_changes(mdl, ramp, +1, min_change_pct=1.0, confirm_runs=2)) >= 8


def test_a_flat_step_still_alerts_with_the_trend_test():
    """Flat, a step of 1.5 noise sd (1.5 %), flat: the step leaves a smaller residual than any
    line, and its levels do not lean; it is alerted, where it is."""
    mdl = get_detector("mdl", {})
    for seed in (1, 2, 3, 4):
        x = _noise(seed, 200)
        x[100:] += 1.5
        (c,) = alertable_changes(mdl, x, +1, min_change_pct=1.0, confirm_runs=2)
        assert (c.index, c.kind) == (100 + (seed == 2), "progression")
        down = _noise(seed + 10, 120)
        down[60:] -= 1.5
        assert [(c.kind, abs(c.index - 60) <= 3) for c in
                alertable_changes(mdl, down, +1, min_change_pct=1.0, confirm_runs=2)] == [("regression", True)]


def test_trend_changes_by_hand():
    # a staircase cut into a ramp (slope 0.1 a run, noise 0.1): every step goes
    t = np.arange(200, dtype=np.float64)
    ramp = 10.0 + 0.1 * t + 0.1 * np.random.default_rng(4).standard_normal(200)
    stairs = [Change(i, "progression", 0.0, 1.0, 25, i) for i in range(25, 200, 25)]
    assert trend_changes(ramp, stairs, 0.1) == []
    # a real step between flat levels stays
    step = np.where(t < 100, 10.0, 11.0) + 0.1 * np.random.default_rng(5).standard_normal(200)
    (kept,) = trend_changes(step, [Change(100, "progression", 10.0, 11.0, 100, 100)], 0.1)
    assert kept.index == 100
    # a ramp that turns flat at run 100: no step there either, the stairs up to it all go
    knee = np.minimum(ramp, 20.0)
    stairs_to_the_knee = [Change(i, "progression", 0.0, 1.0, 25, i) for i in (25, 50, 75, 100)]
    assert trend_changes(knee, stairs_to_the_knee, 0.1) == []
    # the levels lean the other way than the step: not a trend's step
    saw = np.concatenate([10.0 - 0.01 * t[:100], 11.0 - 0.01 * t[:100]])
    assert len(trend_changes(saw, [Change(100, "progression", 10.0, 11.0, 100, 100)], 0.1)) == 1
    # a slope no clearer than noise (z < TREND_SLOPE_Z) does not make a trend
    assert len(trend_changes(ramp[:8], [Change(4, "progression", 0.0, 1.0, 4, 4)], 10.0)) == 1


# --- the masked series' search, carried from run to run (a growing window) ---

def _dipped(n: int, seed: int = 5) -> np.ndarray:
    """n runs around 1e7 (noise 0.5 %), one-run dips and spikes of 6 % every 37 runs (isolated
    runs to mask), a 4 % step down at run 120."""
    rng = np.random.default_rng(seed)
    values = 1e7 * (1 + rng.normal(0, 0.005, n))
    values[120:] *= 0.96
    values[18::37] *= 0.94
    values[30::37] *= 1.06
    return values


def test_the_masked_search_goes_on_from_the_last_runs_state_and_changes_nothing():
    """A day's series is yesterday's with runs appended: its masked search goes on from the state
    yesterday's left (``MaskedSearch``) and the alerts are those of a search from the first run."""
    from pal.analysis.filters import MaskedSearch, isolated_runs
    from pal.analysis.mdl import MdlSaved

    det = get_detector("mdl")
    values = _dipped(300)
    went_on = 0
    for n, more in ((150, 1), (200, 1), (250, 3), (299, 1)):
        assert isolated_runs(values[:n])  # something to mask: a second search
        yesterday = MaskedSearch()
        first = alertable_changes(det, values[:n], +1, confirm_runs=3, masked_search=yesterday)
        assert first == alertable_changes(det, values[:n], +1, confirm_runs=3)
        assert isinstance(yesterday.kept, MdlSaved) and yesterday.kept.resumed == 0
        today = MaskedSearch(yesterday.kept)
        got = alertable_changes(det, values[:n + more], +1, confirm_runs=3, masked_search=today)
        assert got == alertable_changes(det, values[:n + more], +1, confirm_runs=3)
        went_on += today.kept.resumed > 0
    assert went_on >= 3  # (an appended run may make the last one isolated: another mask, a full search)


def test_a_masked_state_that_does_not_fit_is_not_used():
    """Another series' state, or a mask that moved into the old runs: a full search, the same alerts."""
    from pal.analysis.filters import MaskedSearch

    det = get_detector("mdl")
    values = _dipped(260)
    other = MaskedSearch()
    alertable_changes(det, _dipped(200, seed=9), +1, confirm_runs=3, masked_search=other)
    today = MaskedSearch(other.kept)
    assert alertable_changes(det, values, +1, confirm_runs=3, masked_search=today) == \
        alertable_changes(det, values, +1, confirm_runs=3)
    assert today.kept.resumed == 0
    moved = values.copy()
    moved[100] *= 0.9  # a new isolated run among the old ones
    yesterday = MaskedSearch()
    alertable_changes(det, values[:200], +1, confirm_runs=3, masked_search=yesterday)
    today = MaskedSearch(yesterday.kept)
    assert alertable_changes(det, moved, +1, confirm_runs=3, masked_search=today) == \
        alertable_changes(det, moved, +1, confirm_runs=3)
    assert today.kept.resumed == 0


def test_nothing_to_mask_keeps_no_masked_state():
    from pal.analysis.filters import MaskedSearch

    det = get_detector("mdl")
    clean = 1e7 * (1 + np.random.default_rng(2).normal(0, 0.001, 120))
    search = MaskedSearch("yesterday's")
    alertable_changes(det, clean, +1, confirm_runs=3, masked_search=search)
    assert search.kept is None
    search = MaskedSearch()
    alertable_changes(det, _dipped(200), +1, confirm_runs=1, masked_search=search)  # no masking at confirm-runs 1
    assert search.kept is None
