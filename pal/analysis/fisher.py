"""Berry & Hellerstein (1991): Fisher optimal 2-partition, recursive FindChangePoints, AR(1) test.

The candidate change point of a (sub)series is the split that minimises the sum of the two parts'
adjusted sums of squares D_Q (Fisher's optimal 2-partition); it is significant when
T = D_P / D_Q exceeds the critical value Tc(N, phi), phi being the sample lag-1 autocorrelation
of the (sub)series. Significant splits are searched again on both sides until none is found.

Critical values (``critical_value``):

- alpha = 0.05 and N >= 100: the paper's fitted equation (8) (restated in the seeds' README),
  phi clamped to [0.05, 0.99]. It is fitted on 100 <= N <= 1000; above 1000 the same smooth,
  decreasing curve is used (T tends to 1 as N grows, as the paper's equation (6) predicts).
- N < 100 or any other alpha: the paper's own method, simulated: the (1 - alpha) quantile of T
  over ``SIM_REPLICATIONS`` AR(1) series of length N with parameter phi (clamped the same way),
  seeded so that it is deterministic, cached per (N, phi to 2 decimals, alpha). Below N = 100
  equation (8) must not be extrapolated: its 1/N^2 term makes Tc fall towards 1 (at N = 20 it
  gives Tc = 1.0000), which would call a change in nearly every short segment.

Segments shorter than ``min_size`` are never formed (default 1, as in the paper), and a segment
shorter than ``2 * min_size`` or than ``MIN_TEST_N`` is not tested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from pal.analysis.detector import (
    Change,
    Detection,
    SeriesInput,
    as_values,
    check_number,
    check_params,
    kind_of,
    labels_from_changes,
    verdict_of,
)
from pal.errors import SpecError

FITTED_N = (100, 1000)
PHI_RANGE = (0.05, 0.99)
FITTED_ALPHA = 0.05
SIM_REPLICATIONS = 4000
MIN_TEST_N = 4  # the paper's smallest example; below it phi means nothing
PHI_METHODS = ("segments", "subseries")  # FisherDetector's ``phi`` param


def _eq8(n: float, phi: float) -> float:
    y = -5.2942 + 573.0 / n - 30745.0 / n**2 + 5.8427 * phi - 12.372 * phi**2 + 11.102 * phi**3
    return math.exp(y) + 1.0


def critical_value(n: int, phi: float, alpha: float = 0.05) -> float:
    """Tc(N, phi): T above it is significant at level ``alpha`` (see the module doc for ranges)."""
    if n < 3:
        raise ValueError(f"critical_value: N={n}, need at least 3 observations")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"critical_value: alpha={alpha}, expected 0 < alpha < 1")
    phi = min(max(float(phi), PHI_RANGE[0]), PHI_RANGE[1]) if not math.isnan(phi) else PHI_RANGE[0]
    if n >= FITTED_N[0] and math.isclose(alpha, FITTED_ALPHA):
        return _eq8(n, phi)
    return _simulated(int(n), round(phi, 2), float(alpha))


@lru_cache(maxsize=4096)
def _simulated(n: int, phi: float, alpha: float) -> float:
    """The (1 - alpha) quantile of T for optimally 2-partitioned AR(1) series (the paper's FPA)."""
    rng = np.random.default_rng(1991 + n * 1000 + int(phi * 100))
    a = rng.standard_normal((SIM_REPLICATIONS, n))
    x = np.empty_like(a)
    x[:, 0] = a[:, 0] / math.sqrt(1.0 - phi * phi)  # start in the stationary distribution
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + a[:, t]
    d_p, d_q = _dp_dq_matrix(x, 1)
    t_stat = d_p / d_q
    return float(np.quantile(t_stat, 1.0 - alpha))


def _dp_dq_matrix(x: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """D_P and the minimal D_Q per row of ``x`` (rows are series)."""
    x = x - x.mean(axis=1, keepdims=True)
    n = x.shape[1]
    cs, cs2 = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    tot, tot2 = cs[:, -1:], cs2[:, -1:]
    k = np.arange(min_size, n - min_size + 1)  # size of the left part
    left = cs2[:, k - 1] - cs[:, k - 1] ** 2 / k
    right = (tot2 - cs2[:, k - 1]) - (tot - cs[:, k - 1]) ** 2 / (n - k)
    return tot2[:, 0] - tot[:, 0] ** 2 / n, np.min(left + right, axis=1)


def lag1_autocorrelation(values: np.ndarray) -> float:
    """Sample lag-1 autocorrelation: sum of (x_t - m)(x_t+1 - m) over sum of (x_t - m)^2."""
    x = np.asarray(values, dtype=np.float64)
    d = x - x.mean()
    den = float(np.dot(d, d))
    return float(np.dot(d[:-1], d[1:]) / den) if den > 0 else 0.0


def _split_costs(x: np.ndarray, min_size: int) -> tuple[np.ndarray, float]:
    """D_Q for every allowed split (index = start of the 2nd part, from min_size) and D_P."""
    d = x - x.mean()
    n = len(d)
    cs, cs2 = np.cumsum(d), np.cumsum(d * d)
    k = np.arange(min_size, n - min_size + 1)
    left = cs2[k - 1] - cs[k - 1] ** 2 / k
    right = (cs2[-1] - cs2[k - 1]) - (cs[-1] - cs[k - 1]) ** 2 / (n - k)
    return np.maximum(left + right, 0.0), max(float(cs2[-1] - cs[-1] ** 2 / n), 0.0)


def optimal_split(values: Any, min_size: int = 1) -> tuple[int, float]:
    """Fisher's optimal 2-partition: (0-based index where the 2nd part starts, D_Q).

    D_Q is the sum of both parts' adjusted sums of squares; ties go to the earliest split.
    """
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2 * min_size or np.isnan(x).any():
        raise ValueError(f"optimal_split: need {2 * min_size}+ values without NaN, got {len(x)}")
    costs, _ = _split_costs(x, min_size)
    j = int(np.argmin(costs))
    return j + min_size, float(costs[j])


@dataclass(frozen=True)
class SplitTest:
    """The evidence for one candidate: where, D_P, D_Q, T, phi, Tc and the verdict."""

    first: int  # the tested subseries is [first, last)
    last: int
    index: int  # candidate: start of the 2nd part (absolute)
    d_p: float
    d_q: float
    t: float
    phi: float
    tc: float
    significant: bool
    depth: int


def test_split(values: Any, alpha: float = 0.05, min_size: int = 1, offset: int = 0, depth: int = 0,
               phi: float | None = None) -> SplitTest | None:
    """Test the optimal split of ``values``; None when the series is too short to test.

    ``phi``: the autocorrelation to use (None: the subseries' own lag-1, the published method).
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n < max(2 * min_size, MIN_TEST_N):
        return None
    costs, d_p = _split_costs(x, min_size)
    j = int(np.argmin(costs))
    d_q = float(costs[j])
    if d_p <= 0.0:  # a constant subseries has nothing to split
        return SplitTest(offset, offset + n, offset + j + min_size, d_p, d_q, 1.0, 0.0, math.inf, False, depth)
    t = d_p / d_q if d_q > 0 else math.inf
    phi = lag1_autocorrelation(x) if phi is None else phi
    tc = critical_value(n, phi, alpha)
    return SplitTest(offset, offset + n, offset + j + min_size, d_p, d_q, t, phi, tc, t > tc, depth)


test_split.__test__ = False  # a library function, not a pytest test


def find_change_points(values: Any, alpha: float = 0.05, min_size: int = 1,
                       phi: float | None = None) -> list[SplitTest]:
    """FindChangePoints (the paper's Figure 3): the significant split tests, sorted by index.

    ``phi`` None: each subseries' own lag-1 autocorrelation (as published); a number: that
    autocorrelation for every test (``segment_phi``).
    """
    x = np.asarray(values, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError("find_change_points: values contain NaN (drop missing runs first)")
    found: list[SplitTest] = []
    stack = [(0, len(x), 0)]
    while stack:
        first, last, depth = stack.pop()
        res = test_split(x[first:last], alpha, min_size, first, depth, phi)
        if res is None or not res.significant:
            continue
        found.append(res)
        stack.append((first, res.index, depth + 1))
        stack.append((res.index, last, depth + 1))
    return sorted(found, key=lambda r: r.index)


def residual_phi(values: Any, starts: list[int]) -> float:
    """Lag-1 autocorrelation of the residuals within segments (pairs never cross a segment start).

    The residual of a run is its distance from its segment's mean; a step between segments
    adds nothing, unlike the lag-1 autocorrelation of a whole series with steps in it.
    """
    x = np.asarray(values, dtype=np.float64)
    bounds = [0] + sorted(s for s in set(starts) if 0 < s < len(x)) + [len(x)]
    num = den = 0.0
    for a, b in zip(bounds[:-1], bounds[1:]):
        r = x[a:b] - x[a:b].mean()
        num += float(np.dot(r[:-1], r[1:]))
        den += float(np.dot(r, r))
    return num / den if den > 0 else 0.0


def segment_phi_change_points(values: Any, alpha: float = 0.05, min_size: int = 1,
                              rounds: int = 3) -> tuple[list[SplitTest], float]:
    """FindChangePoints with φ estimated from residuals within segments, and that φ.

    The published method takes φ of the subseries being split, so the steps it should find
    inflate φ (a series with steps looks strongly autocorrelated), which raises Tc: in a
    multi-step series even large steps are missed. Here a first pass with φ = 0 (independent
    noise, the smallest Tc) gives the first segments; φ is the lag-1 autocorrelation of the
    residuals within them (``residual_phi``), FindChangePoints runs again with that φ for every
    test, and so on until the segments stop changing (at most ``rounds`` more passes).
    """
    x = np.asarray(values, dtype=np.float64)
    tests = find_change_points(x, alpha, min_size, 0.0)
    phi = residual_phi(x, [t.index for t in tests])
    for _ in range(rounds):
        again = find_change_points(x, alpha, min_size, phi)
        if [t.index for t in again] == [t.index for t in tests]:
            tests = again
            break
        tests = again
        phi = residual_phi(x, [t.index for t in tests])
    return tests, phi


def change_points(values: Any, alpha: float = 0.05, min_size: int = 1) -> list[int]:
    """Sorted 0-based start indices of the new segments found by FindChangePoints."""
    return [r.index for r in find_change_points(values, alpha, min_size)]


class FisherDetector:
    """Berry–Hellerstein change points on the valid runs; a change is called at each segment start.

    Params: ``alpha`` (0.05), ``min_size`` (shortest segment, default 1 as in the paper),
    ``phi``: ``segments`` (default: φ from residuals within segments, ``segment_phi_change_points``)
    or ``subseries`` (the published method: φ of each subseries being split).
    """

    name = "fisher"
    uses_trials = False

    def __init__(self, params: dict[str, Any] | None = None):
        self.params = check_params("fisher", params, {"alpha": FITTED_ALPHA, "min_size": 1, "phi": "segments"})
        if self.params["phi"] not in PHI_METHODS:
            raise SpecError("detector.params.phi", self.params["phi"], "one of " + ", ".join(PHI_METHODS) + " (fisher)")
        alpha = self.params["alpha"]
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
            raise SpecError("detector.params.alpha", alpha, "a significance level 0 < alpha < 1 (fisher)")
        check_number("fisher", "min_size", self.params["min_size"], 1, integer=True)
        self.params["min_size"] = int(self.params["min_size"])

    def detect(self, series: SeriesInput, direction: int = 1, resume: Any = None, keep: bool = False
               ) -> Detection:
        """(Keeps nothing between runs: ``resume`` and ``keep`` are ignored.)"""
        values = as_values(series)
        valid = np.flatnonzero(~np.isnan(values))
        x = values[valid]
        alpha, min_size = float(self.params["alpha"]), self.params["min_size"]
        if not len(x):
            tests = []
        elif self.params["phi"] == "segments":
            tests, _ = segment_phi_change_points(x, alpha, min_size)
        else:
            tests = find_change_points(x, alpha, min_size)
        bounds = [0] + [t.index for t in tests] + [len(x)]
        means = [float(np.mean(x[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
        trend = np.full(len(values), np.nan)
        for (a, b), m in zip(zip(bounds[:-1], bounds[1:]), means):
            trend[valid[a:b]] = m
        changes = []
        for s, t in enumerate(tests, start=1):
            at = int(valid[t.index])
            ev = {"T": t.t, "Tc": t.tc, "phi": t.phi, "N": t.last - t.first, "D_P": t.d_p, "D_Q": t.d_q,
                  "depth": t.depth, "before_mean": means[s - 1], "after_mean": means[s]}
            changes.append(Change(at, kind_of(means[s - 1], means[s], direction), means[s - 1], means[s],
                                       bounds[s + 1] - bounds[s], at, ev))
        changes = [c for c in changes if c.kind != "normal"]
        return Detection("fisher", labels_from_changes(values, changes), trend, changes, {},
                         verdict_of(values, changes), dict(self.params))
