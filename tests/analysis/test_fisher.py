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
