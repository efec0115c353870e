"""Berry & Hellerstein (1991): the paper's worked numbers and hand-checkable series."""

from __future__ import annotations

import numpy as np
import pytest

from pal.analysis.fisher import (
    FisherDetector,
    _eq8,
    _simulated,
    change_points,
    critical_value,
    lag1_autocorrelation,
    optimal_split,
    residual_phi,
    segment_phi_change_points,
    test_split,
)


@pytest.mark.parametrize("n,phi,paper", [(958, 0.52, 1.030), (735, 0.44, 1.032), (958, 0.87, 1.18)])
def test_critical_values_from_the_paper(n, phi, paper):
    # The paper prints three decimals (two for the last); eq. (8) gives 1.0309, 1.0317, 1.1827.
    assert critical_value(n, phi) == pytest.approx(paper, abs=1e-3 if paper < 1.1 else 5e-3)


def test_paper_verdicts():
    # T = 1.204 > Tc(958,.52) and 1.053 > Tc(735,.44): significant; 1.077 < Tc(958,.87): not.
    assert 1.204 > critical_value(958, 0.52)
    assert 1.053 > critical_value(735, 0.44)
    assert 1.077 < critical_value(958, 0.87)


def test_phi_is_clamped():
    assert critical_value(500, -0.3) == critical_value(500, 0.05)
    assert critical_value(500, 1.5) == critical_value(500, 0.99)


def test_paper_example_split():
    # 95 105 510 490: the optimal 2-partition starts at observation 3 (index 2) with D_Q = 250.
    assert optimal_split([95, 105, 510, 490]) == (2, 250.0)
    res = test_split([95, 105, 510, 490])
    # D_P = 205^2 + 195^2 + 210^2 + 190^2 = 160250 around the mean 300; T = 160250 / 250 = 641
    assert res.d_p == pytest.approx(160250.0) and res.t == pytest.approx(641.0)


def test_min_size_excludes_short_segments():
    # with min_size 2 the isolated 50 at the end cannot form its own segment
    assert optimal_split([10, 10, 10, 10, 50]) == (4, 0.0)
    assert optimal_split([10, 10, 10, 10, 50], min_size=2)[0] == 3


def test_lag1_autocorrelation_by_hand():
    # 1 2 3 4: mean 2.5, deviations -1.5 -0.5 0.5 1.5; sum of lag products = 0.75-0.25+0.75 = 1.25; /5
    assert lag1_autocorrelation(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(0.25)


def test_simulation_agrees_with_equation_8_inside_its_range():
    # Outside the fitted range pal simulates the paper's FPA distribution; inside it, the
    # simulation must come close to eq. (8) (a fit with R^2 = .98 over a grid of simulations;
    # measured: within 4 % of Tc - 1 at phi .05, N 150, and within 25 % across N 100-300).
    assert _simulated(150, 0.05, 0.05) - 1 == pytest.approx(_eq8(150, 0.05) - 1, rel=0.10)
    for n, phi in ((100, 0.3), (150, 0.3), (300, 0.6)):
        assert _simulated(n, phi, 0.05) - 1 == pytest.approx(_eq8(n, phi) - 1, rel=0.30)


def test_outside_the_fitted_range():
    # eq. (8) extrapolated below N=100 collapses to 1 (Tc(30) = 1.000000002); pal simulates.
    assert _eq8(30, 0.05) < 1.0001
    assert critical_value(30, 0.05) > 1.2
    # alpha other than the fitted 0.05 is simulated too: stricter alpha, larger Tc
    assert critical_value(200, 0.3, alpha=0.01) > critical_value(200, 0.3, alpha=0.05)
    with pytest.raises(ValueError):
        critical_value(2, 0.5)


def _step(n1: int, n2: int, low: float, high: float) -> np.ndarray:
    wobble = np.where(np.arange(n1 + n2) % 2 == 0, 1.0, -1.0)  # alternating +-1: phi < 0 -> .05
    return np.r_[np.full(n1, low), np.full(n2, high)] + wobble


def test_change_points_on_a_step():
    assert change_points(_step(50, 50, 0.0, 10.0)) == [50]


def test_change_points_recurse():
    x = np.r_[_step(60, 60, 0.0, 10.0), np.full(60, 30.0) + np.where(np.arange(60) % 2 == 0, 1.0, -1.0)]
    assert change_points(x) == [60, 120]


def test_stationary_has_no_change_point():
    rng = np.random.default_rng(7)
    assert change_points(100 + rng.standard_normal(300)) == []


def test_detector_maps_missing_and_reports_evidence():
    x = list(_step(40, 40, 100.0, 80.0))
    x[10] = float("nan")
    det = FisherDetector().detect(x)
    assert [(c.index, c.kind) for c in det.changes] == [(40, "regression")]
    ev = det.changes[0].evidence
    assert ev["T"] > ev["Tc"] and ev["N"] == 79
    assert det.changes[0].before == pytest.approx(np.nanmean(x[:40]))
    assert det.labels[10] == "missing"


def test_detector_params_checked():
    from pal.errors import SpecError

    with pytest.raises(SpecError) as exc:
        FisherDetector({"alpha": 1.5})
    assert exc.value.path == "detector.params.alpha"
    with pytest.raises(SpecError) as exc:
        FisherDetector({"min-size": 0})
    assert exc.value.path == "detector.params.min-size"
    with pytest.raises(SpecError) as exc:
        FisherDetector({"phi": "whole"})
    assert exc.value.path == "detector.params.phi"


def test_residual_phi_by_hand():
    # segments [1 2 1 2] and [11 12 11 12]: residuals -.5 .5 -.5 .5 in each; lag-1 products
    # 3 x -.25 per segment, squares 4 x .25: phi = -1.5 / 2 = -0.75 (the step adds nothing)
    x = [1.0, 2.0, 1.0, 2.0, 11.0, 12.0, 11.0, 12.0]
    assert residual_phi(x, [4]) == pytest.approx(-0.75)
    assert lag1_autocorrelation(x) > 0.5  # the whole series' phi is the step's


def _five_steps(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([np.full(25, float(level)) for level in (0, 3, 0, 3, 0, 3)]) + rng.standard_normal(150)


def test_phi_from_segments_finds_the_steps_the_published_phi_hides():
    # five steps of 3 noise sd: phi of the whole series is .6-.7, Tc 1.2-1.4 > T: the published
    # method finds nothing; with phi from residuals within segments every step is found
    for seed in (2, 3):
        x = _five_steps(seed)
        assert change_points(x) == []
        tests, phi = segment_phi_change_points(x)
        assert [t.index for t in tests] == [25, 50, 75, 100, 125]
        assert abs(phi) < 0.2
        assert [c.index for c in FisherDetector().detect(x).changes] == [25, 50, 75, 100, 125]
        assert FisherDetector({"phi": "subseries"}).detect(x).changes == []


def test_phi_from_segments_keeps_autocorrelated_noise_unsplit():
    rng = np.random.default_rng(11)
    a = rng.standard_normal(300)
    y = np.empty(300)
    y[0] = a[0]
    for i in range(1, 300):
        y[i] = 0.5 * y[i - 1] + a[i]
    tests, phi = segment_phi_change_points(y)
    assert tests == [] and 0.3 < phi < 0.7
