"""Window Deviation Analyzer (after Mako's WDA): recent window vs historic window, with tolerances.

For each check, the runs are split into a recent window (the last ``recent_window_size`` runs,
the current one included) and a historic window (the runs before it: at most
``historic_window_size`` of them, or a range long ago for creep detection: ``historic_range``
of run indices, ``historic_builds`` of build numbers or ``historic_times`` of timestamps, each
[first, last] inclusive). Missing runs (NaN / None) are left out of both windows.

Per tolerance parameter set, exactly as the Mako document defines them:

    mean:   delta = recent_mean - historic_mean
            tolerance = const_term + mean_coeff*|historic_mean| + stddev_coeff*historic_stddev
    median: delta = recent_median - historic_median
            tolerance = const_term + median_coeff*|historic_median| + mad_coeff*historic_mad

and a parameter set flags a regression when |delta| > tolerance, unless ``direction_bias``
ignores that sign (IGNORE_INCREASE: delta > 0 never regresses; IGNORE_DECREASE: delta < 0).
Parameter sets are ORed within a check (the check regresses only if every set does), checks are
ANDed (the run regresses if any check does). ``historic_stddev`` is the population standard
deviation and ``historic_mad`` the unscaled median absolute deviation (half of the historic
values lie within median ± 1·MAD, as the document says).

A check with fewer than ``minimum_historical_window_size`` (default 3) historic values, or no
recent value, is skipped when ``data_filter.ignore_missing_data`` is true (the default) and
raises ``InsufficientData`` otherwise. ``data_filter.data_type`` picks the run aggregate from
trial lists: ``mean`` (default) or ``median``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from pal.analysis.detector import (
    MISSING,
    NORMAL,
    Detection,
    SeriesInput,
    changes_from_runs,
    check_params,
    kind_of,
)
from pal.errors import PalError, SpecError

BIASES = ("NO_BIAS", "IGNORE_INCREASE", "IGNORE_DECREASE")
CHECK_KEYS = {
    "recent_window_size": 1,
    "historic_window_size": None,
    "historic_range": None,
    "historic_builds": None,
    "historic_times": None,
    "mean_tolerance": [],
    "median_tolerance": [],
    "direction_bias": "NO_BIAS",
    "minimum_historical_window_size": 3,
    "data_filter": None,
}
MEAN_KEYS = ("const_term", "mean_coeff", "stddev_coeff")
MEDIAN_KEYS = ("const_term", "median_coeff", "mad_coeff")
FILTER_KEYS = {"data_type": "mean", "ignore_missing_data": True}


class InsufficientData(PalError):
    """A check has too little data and ``ignore_missing_data`` is false."""

    def __init__(self, check: int, historic: int, recent: int, minimum: int):
        self.check, self.historic, self.recent, self.minimum = check, historic, recent, minimum
        super().__init__(f"wda checks[{check}]: {historic} historic value(s) (minimum {minimum}), "
                         f"{recent} recent value(s)")


@dataclass(frozen=True)
class ParamResult:
    """One tolerance parameter set: its delta, tolerance and whether it flags a regression."""

    kind: str  # "mean" | "median"
    delta: float
    tolerance: float
    regression: bool


@dataclass(frozen=True)
class CheckResult:
    """One check: the window statistics, each parameter set and the check's verdict."""

    index: int
    verdict: str  # "ok" | "regression" | "skipped"
    delta: float  # of the deciding parameter set (the first that passes, else the first)
    tolerance: float
    params: list[ParamResult]
    historic_size: int
    recent_size: int
    stats: dict[str, float] = field(default_factory=dict)  # historic_mean/median/stddev/mad, recent_mean/median

    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


@dataclass(frozen=True)
class WdaResult:
    """The run regresses when any check does."""

    regression: bool
    checks: list[CheckResult]


def _fail(path: str, value: Any, expected: str) -> SpecError:
    return SpecError(f"detector.params.checks{path}", value, expected)


def normalise_checks(checks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Checks in the spec's form with defaults filled in; SpecError naming the bad key."""
    if not isinstance(checks, (list, tuple)) or not checks:
        raise _fail("", checks, "a non-empty list of tolerance checks")
    out = []
    for i, raw in enumerate(checks):
        if not isinstance(raw, dict):
            raise _fail(f"[{i}]", raw, "a mapping (a tolerance check)")
        chk = dict(CHECK_KEYS)
        for key, value in raw.items():
            k = str(key).replace("-", "_")
            if k not in CHECK_KEYS:
                raise _fail(f"[{i}].{key}", value, "one of " + ", ".join(CHECK_KEYS))
            chk[k] = value
        for key in ("recent_window_size", "minimum_historical_window_size", "historic_window_size"):
            v = chk[key]
            if v is None and key == "historic_window_size":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if key == "minimum_historical_window_size" else 1):
                raise _fail(f"[{i}].{key}", v, "a positive integer")
        if chk["direction_bias"] not in BIASES:
            raise _fail(f"[{i}].direction_bias", chk["direction_bias"], "one of " + ", ".join(BIASES))
        for key in ("historic_range", "historic_builds", "historic_times"):
            v = chk[key]
            if v is not None and (not isinstance(v, (list, tuple)) or len(v) != 2):
                raise _fail(f"[{i}].{key}", v, "[first, last] (inclusive)")
        chosen = [k for k in ("historic_window_size", "historic_range", "historic_builds", "historic_times") if chk[k] is not None]
        if len(chosen) > 1:
            raise _fail(f"[{i}]", chosen, "at most one of historic_window_size / _range / _builds / _times")
        if not chk["mean_tolerance"] and not chk["median_tolerance"]:
            raise _fail(f"[{i}]", raw, "at least one mean_tolerance or median_tolerance parameter set")
        for key, names in (("mean_tolerance", MEAN_KEYS), ("median_tolerance", MEDIAN_KEYS)):
            sets = chk[key]
            if not isinstance(sets, (list, tuple)):
                raise _fail(f"[{i}].{key}", sets, "a list of parameter sets")
            norm = []
            for j, ps in enumerate(sets):
                if not isinstance(ps, dict):
                    raise _fail(f"[{i}].{key}[{j}]", ps, "a mapping of " + ", ".join(names))
                full = {n: 0.0 for n in names}
                for pk, pv in ps.items():
                    pk = str(pk).replace("-", "_")
                    if pk not in names:
                        raise _fail(f"[{i}].{key}[{j}].{pk}", pv, "one of " + ", ".join(names))
                    if isinstance(pv, bool) or not isinstance(pv, (int, float)) or pv < 0:
                        raise _fail(f"[{i}].{key}[{j}].{pk}", pv, "a number >= 0")
                    full[pk] = float(pv)
                norm.append(full)
            chk[key] = norm
        flt = dict(FILTER_KEYS)
        for fk, fv in (chk["data_filter"] or {}).items():
            fk = str(fk).replace("-", "_")
            if fk not in FILTER_KEYS:
                raise _fail(f"[{i}].data_filter.{fk}", fv, "one of " + ", ".join(FILTER_KEYS))
            flt[fk] = fv
        if flt["data_type"] not in ("mean", "median"):
            raise _fail(f"[{i}].data_filter.data_type", flt["data_type"], "mean or median")
        chk["data_filter"] = flt
        out.append(chk)
    return out


def aggregate(values: SeriesInput, data_type: str = "mean") -> np.ndarray:
    """Run aggregates: floats pass through, a trial list becomes its mean or median, None NaN."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return values.astype(np.float64)
    fn = np.median if data_type == "median" else np.mean
    out = np.full(len(values), np.nan)
    for i, item in enumerate(values):
        if item is None:
            continue
        if isinstance(item, (int, float, np.integer, np.floating)):
            out[i] = float(item)
        else:
            trials = [float(t) for t in item if t is not None and not math.isnan(float(t))]
            if trials:
                out[i] = float(fn(trials))
    return out


def _historic_positions(chk: dict[str, Any], n: int, recent_start: int, builds: Any, times: Any) -> np.ndarray:
    if chk["historic_range"] is not None:
        a, b = chk["historic_range"]
        return np.arange(max(0, int(a)), min(int(b) + 1, recent_start))
    for key, keys in (("historic_builds", builds), ("historic_times", times)):
        if chk[key] is not None:
            if keys is None:
                raise SpecError(f"detector.params.checks.{key}", chk[key], f"{key[9:]} passed to analyze()")
            arr = np.asarray(keys)[:recent_start]
            lo, hi = chk[key]
            if key == "historic_times":
                arr, lo, hi = arr.astype("datetime64[ns]"), np.datetime64(lo, "ns"), np.datetime64(hi, "ns")
            return np.flatnonzero((arr >= lo) & (arr <= hi))
    size = chk["historic_window_size"]
    start = 0 if size is None else max(0, recent_start - int(size))
    return np.arange(start, recent_start)


def _param(kind: str, ps: dict[str, float], st: dict[str, float], bias: str) -> ParamResult:
    if kind == "mean":
        delta = st["recent_mean"] - st["historic_mean"]
        tol = ps["const_term"] + ps["mean_coeff"] * abs(st["historic_mean"]) + ps["stddev_coeff"] * st["historic_stddev"]
    else:
        delta = st["recent_median"] - st["historic_median"]
        tol = ps["const_term"] + ps["median_coeff"] * abs(st["historic_median"]) + ps["mad_coeff"] * st["historic_mad"]
    reg = abs(delta) > tol
    if (bias == "IGNORE_INCREASE" and delta > 0) or (bias == "IGNORE_DECREASE" and delta < 0):
        reg = False
    return ParamResult(kind, float(delta), float(tol), bool(reg))


def analyze(values: SeriesInput, checks: Sequence[dict[str, Any]], builds: Any = None, times: Any = None) -> WdaResult:
    """Judge the last run of ``values`` (oldest first) against the checks; see the module doc."""
    norm = normalise_checks(checks)
    results = []
    cache: dict[str, np.ndarray] = {}
    for i, chk in enumerate(norm):
        dt = chk["data_filter"]["data_type"]
        if dt not in cache:
            cache[dt] = aggregate(values, dt)
        agg = cache[dt]
        n = len(agg)
        recent_start = max(0, n - chk["recent_window_size"])
        recent = agg[recent_start:]
        historic = agg[_historic_positions(chk, n, recent_start, builds, times)]
        recent, historic = recent[~np.isnan(recent)], historic[~np.isnan(historic)]
        minimum = chk["minimum_historical_window_size"]
        if len(historic) < max(minimum, 1) or len(recent) == 0:
            if not chk["data_filter"]["ignore_missing_data"]:
                raise InsufficientData(i, len(historic), len(recent), minimum)
            results.append(CheckResult(i, "skipped", math.nan, math.nan, [], len(historic), len(recent)))
            continue
        med = float(np.median(historic))
        st = {"historic_mean": float(np.mean(historic)), "historic_median": med,
              "historic_stddev": float(np.std(historic)), "historic_mad": float(np.median(np.abs(historic - med))),
              "recent_mean": float(np.mean(recent)), "recent_median": float(np.median(recent))}
        params = [_param("mean", ps, st, chk["direction_bias"]) for ps in chk["mean_tolerance"]]
        params += [_param("median", ps, st, chk["direction_bias"]) for ps in chk["median_tolerance"]]
        regressed = all(p.regression for p in params)
        decider = params[0] if regressed else next(p for p in params if not p.regression)
        results.append(CheckResult(i, "regression" if regressed else "ok", decider.delta, decider.tolerance,
                                   params, len(historic), len(recent), st))
    return WdaResult(any(c.regression for c in results), results)


DEFAULT_CHECKS = [{"recent_window_size": 7, "historic_window_size": 100,
                   "median_tolerance": [{"median_coeff": 0.05, "mad_coeff": 1.0}]}]


class WdaDetector:
    """WDA run after every run of the series: a run where the checks regress is flagged.

    Params: ``checks`` (Mako-style tolerance checks, default: recent 7, historic 100, median
    tolerance 5 % + 1·MAD, as the Mako quick start recommends). With NO_BIAS a flag is a
    regression or a progression by the sign of the first check's delta and the metric's
    direction; IGNORE_* biases make it one-sided. A run of consecutive flags is one change,
    placed at the first run of the recent window that lies beyond the tolerance.
    """

    name = "wda"
    uses_trials = True  # data_filter.data_type median reads the trials of a run

    def __init__(self, params: dict[str, Any] | None = None):
        self.params = check_params("wda", params, {"checks": DEFAULT_CHECKS})
        self.checks = normalise_checks(self.params["checks"])

    def detect(self, series: SeriesInput, direction: int = 1, resume: Any = None, keep: bool = False
               ) -> Detection:
        """(Keeps nothing between runs: ``resume`` and ``keep`` are ignored.)"""
        dt = self.checks[0]["data_filter"]["data_type"]
        values = aggregate(series, dt)
        n = len(values)
        flags = [MISSING if math.isnan(v) else NORMAL for v in values]
        centre = np.full(n, np.nan)
        results: dict[int, WdaResult] = {}
        for i in range(n):
            if math.isnan(values[i]):
                continue
            res = analyze(values[: i + 1], self.checks)
            results[i] = res
            first = res.checks[0]
            if first.stats:
                centre[i] = first.stats["historic_median"] if self.checks[0]["median_tolerance"] else first.stats["historic_mean"]
            if res.regression:
                delta = next(c.delta for c in res.checks if c.regression)
                flags[i] = kind_of(0.0, delta, direction)
        changes = []
        for cp in changes_from_runs(values, flags, centre):
            t = cp.index
            r = self.checks[0]["recent_window_size"]
            chk = next(c for c in results[t].checks if c.regression)
            sign = 1.0 if chk.delta > 0 else -1.0
            ref = chk.stats["historic_median"] if chk.params[0].kind == "median" else chk.stats["historic_mean"]
            start = t
            for j in range(max(0, t - r + 1), t + 1):
                if not math.isnan(values[j]) and sign * (values[j] - ref) > chk.tolerance:
                    start = j
                    break
            ev = {"delta": chk.delta, "tolerance": chk.tolerance, "check": chk.index, **chk.stats,
                  "flagged_at": t, "flagged_runs": cp.runs}
            changes.append(replace(cp, index=start, before=ref, reported_at=t, evidence=ev))
        labels = [MISSING if math.isnan(v) else NORMAL for v in values]
        for cp in changes:
            labels[cp.index] = cp.kind
        verdict = flags[-1] if n else MISSING
        return Detection("wda", labels, centre, changes, {"wda_centre": centre}, verdict, dict(self.params))
