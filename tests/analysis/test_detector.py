"""The detector interface and registry: names, parameter errors, MDL behind the interface."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pal.analysis.detector import (
    as_values,
    changes_from_runs,
    kind_of,
    verdict_of,
)
from pal.analysis.registry import get_detector
from pal.model import Change
from pal.errors import SpecError


@pytest.mark.parametrize("name", ["mdl", "tma", "fisher", "wda"])
def test_registry_names_match_spec(name):
    det = get_detector(name, {})
    assert det.name == name


@pytest.mark.parametrize("name", ["mdl", "tma", "fisher", "wda"])
def test_a_kept_state_gives_the_same_detection(name):
    # detect(..., keep=True) gives what the detector goes on from (MDL's search state; None for those
    # that keep nothing); passed back with more runs, the detection is the one without it
    det = get_detector(name, {})
    values = [10.0 + (i % 3) * 0.1 + (2.0 if 20 <= i < 35 else 0.0) for i in range(50)]
    first = det.detect(values[:40], 1, keep=True)
    assert (first.resume is None) == (name != "mdl")
    assert det.detect(values[:40], 1).resume is None  # not asked for
    again = det.detect(values, 1, resume=first.resume, keep=True)
    plain = det.detect(values, 1)
    assert again.changes == plain.changes and again.verdict == plain.verdict and again.groups == plain.groups
    assert np.array_equal(again.trend, plain.trend, equal_nan=True)
    if name == "mdl":
        assert again.resume.resumed == 40


def test_unknown_param_names_the_key():
    with pytest.raises(SpecError) as exc:
        get_detector("tma", {"windw": 10})
    assert exc.value.path == "detector.params.windw"
    assert "window" in exc.value.expected


def test_bad_param_value_names_the_key():
    with pytest.raises(SpecError) as exc:
        get_detector("tma", {"window": 1})
    assert exc.value.path == "detector.params.window"


def test_unknown_detector():
    with pytest.raises(SpecError) as exc:
        get_detector("cusum")
    assert exc.value.path == "detector.name"


def test_as_values_trials_and_missing():
    v = as_values([[1.0, 3.0], None, 5, [float("nan"), 4.0]])
    assert v[0] == 2.0 and math.isnan(v[1]) and v[2] == 5.0 and v[3] == 4.0


def test_kind_follows_direction():
    assert kind_of(100, 90, +1) == "regression"
    assert kind_of(100, 90, -1) == "progression"
    assert kind_of(100, 110, +1) == "progression"
    assert kind_of(5, 5, +1) == "normal"


def test_change_relative():
    cp = Change(3, "regression", 200.0, 150.0, 2, 3)
    assert cp.change == pytest.approx(-0.25)


def test_mdl_one_run_dip_is_regression_then_progression():
    # The seeds: plain MDL marks a reverted one-run dip as a regression and a progression.
    values = [100.0] * 10 + [50.0] + [100.0] * 10
    det = get_detector("mdl").detect(values)
    assert [(c.index, c.kind) for c in det.changes] == [(10, "regression"), (11, "progression")]
    assert det.changes[0].before == 100.0 and det.changes[0].after == 50.0
    assert det.labels[10] == "regression" and det.labels[11] == "progression" and det.labels[0] == "normal"
    assert det.trend[10] == 50.0 and det.trend[0] == 100.0
    assert det.verdict == "normal"


def test_mdl_skips_missing_runs_and_maps_indices_back():
    values = [100.0] * 10 + [float("nan")] + [80.0] * 10 + [float("nan")]
    det = get_detector("mdl").detect(values)
    assert [(c.index, c.kind) for c in det.changes] == [(11, "regression")]
    assert det.labels[10] == "missing" and math.isnan(det.trend[10])
    assert det.changes[0].runs == 10
    assert det.verdict == "missing"


def test_mdl_lower_is_better_and_last_run_verdict():
    values = [10.0] * 12 + [20.0]
    det = get_detector("mdl").detect(values, direction=-1)
    assert [(c.index, c.kind) for c in det.changes] == [(12, "regression")]
    assert det.verdict == "regression"
    det_up = get_detector("mdl").detect(values, direction=+1)
    assert det_up.verdict == "progression"


def test_changes_from_runs_groups_consecutive_flags():
    values = np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0])
    flags = ["normal", "regression", "regression", "missing", "regression", "progression"]
    ref = np.array([10.0] * 6)
    cps = changes_from_runs(values, flags, ref)
    assert [(c.index, c.kind, c.runs, c.after) for c in cps] == [
        (1, "regression", 3, pytest.approx((2 + 3 + 5) / 3)), (5, "progression", 1, 6.0)]
    assert verdict_of(values, [Change(5, "progression", 1, 6, 1, 5)]) == "progression"
