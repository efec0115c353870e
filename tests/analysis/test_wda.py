"""Window Deviation Analyzer: the Mako document's examples and hand-computed tolerances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pal.analysis.wda import InsufficientData, WdaDetector, analyze
from pal.errors import SpecError

MEDIAN = [{"median_coeff": 0.05, "mad_coeff": 1.0}]


def test_historic_window_size_from_query_limit():
    # Mako: query limit 22, recent 3 -> historic 22 + 1 - 3 = 20 (23 runs with the current one)
    res = analyze(list(range(1, 24)), [{"recent_window_size": 3, "median_tolerance": MEDIAN}])
    assert (res.checks[0].historic_size, res.checks[0].recent_size) == (20, 3)
    # quick start: limit 106, recent 7 -> historic 100
    res = analyze([1.0] * 107, [{"recent_window_size": 7, "median_tolerance": MEDIAN}])
    assert res.checks[0].historic_size == 100


def test_four_of_seven_recent_runs_make_a_regression():
    # Mako: with recent 7 and a median baseline, a regression needs 4 of the 7 recent runs bad.
    historic = [99.0, 101.0] * 50  # median 100, MAD 1 -> tolerance 0.05*100 + 1*1 = 6
    checks = [{"recent_window_size": 7, "historic_window_size": 100, "median_tolerance": MEDIAN}]
    three_bad = analyze(historic + [80.0] * 3 + [100.0] * 4, checks)
    assert not three_bad.regression and three_bad.checks[0].delta == 0.0
    four_bad = analyze(historic + [80.0] * 4 + [100.0] * 3, checks)
    assert four_bad.regression
    chk = four_bad.checks[0]
    assert (chk.delta, chk.tolerance, chk.verdict) == (-20.0, 6.0, "regression")
    assert chk.stats["historic_median"] == 100.0 and chk.stats["historic_mad"] == 1.0


def test_mean_tolerance_by_hand():
    # historic 10 12 14: mean 12, population stddev sqrt(8/3) = 1.633; recent 16: delta 4
    stddev = math.sqrt(8 / 3)
    wide = analyze([10, 12, 14, 16], [{"recent_window_size": 1,
                                       "mean_tolerance": [{"const_term": 1, "mean_coeff": 0.1, "stddev_coeff": 2}]}])
    assert wide.checks[0].tolerance == pytest.approx(1 + 1.2 + 2 * stddev)  # 5.466 > 4
    assert not wide.regression and wide.checks[0].delta == 4.0
    narrow = analyze([10, 12, 14, 16], [{"recent_window_size": 1,
                                         "mean_tolerance": [{"const_term": 1, "mean_coeff": 0.1, "stddev_coeff": 1}]}])
    assert narrow.checks[0].tolerance == pytest.approx(2.2 + stddev) and narrow.regression  # 3.833 < 4


def test_const_term_example():
    # Mako: "latency normally 100ms +/- 5ms ... set const_term to 10"
    checks = [{"recent_window_size": 1, "mean_tolerance": [{"const_term": 10}]}]
    assert not analyze([100, 95, 105, 100, 108], checks).regression
    assert analyze([100, 95, 105, 100, 111], checks).regression


def test_direction_bias():
    up = [100.0] * 10 + [200.0]
    checks = [{"recent_window_size": 1, "mean_tolerance": [{"mean_coeff": 0.1}]}]
    assert analyze(up, checks).regression
    assert not analyze(up, [dict(checks[0], direction_bias="IGNORE_INCREASE")]).regression
    assert analyze(up, [dict(checks[0], direction_bias="IGNORE_DECREASE")]).regression


def test_params_or_within_check_and_checks_and():
    values = [100.0] * 10 + [108.0]  # delta 8
    tight, loose = {"const_term": 5}, {"const_term": 10}
    one_passes = analyze(values, [{"recent_window_size": 1, "mean_tolerance": [tight, loose]}])
    assert not one_passes.regression  # ORed: the loose set passes
    assert one_passes.checks[0].tolerance == 10.0
    both = analyze(values, [{"recent_window_size": 1, "mean_tolerance": [loose]},
                            {"recent_window_size": 1, "mean_tolerance": [tight]}])
    assert both.regression and [c.verdict for c in both.checks] == ["ok", "regression"]


def test_minimum_historic_window_and_missing_data():
    checks = [{"recent_window_size": 1, "mean_tolerance": [{"const_term": 1}]}]
    res = analyze([1.0, float("nan"), 2.0, 5.0], checks)  # 2 valid historic values < 3
    assert res.checks[0].verdict == "skipped" and not res.regression
    strict = [dict(checks[0], data_filter={"ignore_missing_data": False})]
    with pytest.raises(InsufficientData) as exc:
        analyze([1.0, float("nan"), 2.0, 5.0], strict)
    assert (exc.value.historic, exc.value.minimum) == (2, 3)
    ok = analyze([1.0, float("nan"), 2.0, 5.0], [dict(checks[0], minimum_historical_window_size=2)])
    assert ok.regression and ok.checks[0].delta == 3.5


def test_data_filter_median_of_trials():
    runs = [[10, 10, 10], [10, 11, 9], [10, 10, 10], [10, 10, 100]]  # last: mean 40, median 10
    checks = [{"recent_window_size": 1, "mean_tolerance": [{"const_term": 1}]}]
    assert analyze(runs, checks).regression
    assert not analyze(runs, [dict(checks[0], data_filter={"data_type": "median"})]).regression


def test_creep_with_a_range_long_ago():
    values = [100.0] * 5 + list(np.linspace(100, 110, 30)) + [110.0] * 5
    recent = {"recent_window_size": 5, "median_tolerance": [{"median_coeff": 0.05}]}
    assert not analyze(values, [dict(recent, historic_window_size=5)]).regression  # neighbours look alike
    creep = analyze(values, [dict(recent, historic_range=[0, 4])])
    assert creep.regression and creep.checks[0].delta == 10.0 and creep.checks[0].historic_size == 5
    builds = list(range(1000, 1040))
    by_build = analyze(values, [dict(recent, historic_builds=[1000, 1004])], builds=builds)
    assert by_build.checks[0].delta == 10.0


def test_bad_checks_name_the_key():
    with pytest.raises(SpecError) as exc:
        analyze([1, 2, 3, 4], [{"recent_window_size": 1, "median_tolerance": [{"mad": 1}]}])
    assert exc.value.path == "detector.params.checks[0].median_tolerance[0].mad"
    with pytest.raises(SpecError) as exc:
        analyze([1, 2, 3, 4], [{"recent_window_size": 1, "direction_bias": "UP",
                                "mean_tolerance": [{"const_term": 1}]}])
    assert exc.value.path == "detector.params.checks[0].direction_bias"


def test_detector_places_the_change_and_reports_late():
    values = [99.0, 101.0] * 20 + [80.0] * 10
    det = WdaDetector().detect(values)
    cp = det.changes[0]
    # recent 7: the 4th run at 80 tips the recent median; the change is placed at its first run
    assert (cp.index, cp.kind, cp.reported_at) == (40, "regression", 43)
    # flagged at run 43: historic = runs 0..36 (19 x 99, 18 x 101) -> median 99, delta 80 - 99
    assert cp.evidence["delta"] == -19.0 and cp.before == 99.0
    assert det.verdict == "regression"


def test_kebab_case_keys_as_in_the_spec_yaml():
    checks = [{"recent-window-size": 1, "data-filter": {"data-type": "median"},
               "mean-tolerance": [{"const-term": 10}]}]
    assert not analyze([100, 95, 105, 100, 108], checks).regression
    assert analyze([100, 95, 105, 100, 111], checks).regression
