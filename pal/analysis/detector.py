"""One interface for every change detector, and the registry that picks one by name.

A detector reads one series (run values in build order, NaN where a run is missing, or per-run
trial lists with None for missing) and says, per sample, whether a change is called there, with
the numbers behind each call. Detectors are pure: none imports the pipeline, so the accuracy
harness, the benchmarks and the analysis stage all call them the same way.

Registry names match ``pal.spec.DetectorSpec.name``: ``mdl``, ``tma``, ``fisher``, ``wda``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Protocol, Sequence

import numpy as np

from pal.errors import SpecError

NORMAL = "normal"
REGRESSION = "regression"
PROGRESSION = "progression"
MISSING = "missing"

SeriesInput = Sequence[float] | np.ndarray | Sequence[Sequence[float] | None]


@dataclass(frozen=True)
class ChangePoint:
    """A change called by a detector, with evidence a reader can check by hand.

    ``index`` is the first sample of the new level; ``reported_at`` the sample at which the
    change is (or would be) reported: the same sample for a plain detector, later when a
    post-filter waits for confirmation or a windowed detector needs several runs.
    """

    index: int
    kind: str  # "regression" | "progression"
    before: float  # level before the change (mean, group average or TMA)
    after: float  # level of the new run(s)
    runs: int  # valid runs the new level has held (detector's own meaning, see docs/detectors.md)
    reported_at: int
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def change(self) -> float:
        """Relative change (after - before) / |before|; NaN when before is 0."""
        return (self.after - self.before) / abs(self.before) if self.before else math.nan


@dataclass
class Detection:
    """What a detector says about one series; every array has one entry per sample."""

    detector: str
    labels: list[str]  # normal | regression | progression (where a change is called) | missing
    trend: np.ndarray  # centre line per sample (group average, TMA, ...), NaN where none
    changes: list[ChangePoint]
    bands: dict[str, np.ndarray] = field(default_factory=dict)  # e.g. mm, tma, tma_lo, tma_hi
    verdict: str = NORMAL  # the last run: normal | regression | progression | missing
    params: dict[str, Any] = field(default_factory=dict)  # effective parameters, for reports


class Detector(Protocol):
    """The interface: a name, its effective parameters and ``detect``."""

    name: str
    params: dict[str, Any]

    def detect(self, series: SeriesInput, direction: int = 1) -> Detection: ...


# ---------------------------------------------------------------------------
# Helpers shared by the detectors
# ---------------------------------------------------------------------------


def as_values(series: SeriesInput) -> np.ndarray:
    """Run values as float64 with NaN for missing; a trial list becomes its mean."""
    if isinstance(series, np.ndarray) and series.dtype.kind in "fiu":
        return series.astype(np.float64, copy=True)
    out = np.empty(len(series), dtype=np.float64)
    for i, item in enumerate(series):
        if item is None:
            out[i] = np.nan
        elif isinstance(item, (int, float, np.integer, np.floating)):
            out[i] = float(item)
        else:
            trials = [float(t) for t in item if t is not None and not math.isnan(float(t))]
            out[i] = float(np.mean(trials)) if trials else np.nan
    return out


def kind_of(before: float, after: float, direction: int) -> str:
    """Regression when the level moves the bad way for the metric's direction."""
    if after == before:
        return NORMAL
    better = (after > before) if direction >= 0 else (after < before)
    return PROGRESSION if better else REGRESSION


def check_params(detector: str, given: dict[str, Any] | None, defaults: dict[str, Any]) -> dict[str, Any]:
    """Defaults overlaid with ``given``; an unknown key raises SpecError naming it."""
    params = dict(defaults)
    for key, value in (given or {}).items():
        norm = str(key).replace("-", "_")
        if norm not in defaults:
            known = ", ".join(sorted(k.replace("_", "-") for k in defaults)) or "(none)"
            raise SpecError(f"detector.params.{key}", value, f"a parameter of detector {detector!r}: {known}")
        params[norm] = value
    return params


def check_number(detector: str, key: str, value: Any, low: float, integer: bool = False) -> None:
    """Raise SpecError unless ``value`` is a number (an int when asked) >= ``low``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or value < low or (isinstance(value, float) and math.isnan(value)):
        what = "an integer" if integer else "a number"
        raise SpecError(f"detector.params.{key.replace('_', '-')}", value, f"{what} >= {low} ({detector})")


def labels_from_changes(values: np.ndarray, changes: Iterable[ChangePoint]) -> list[str]:
    """Per-sample labels: the change's kind at its index, missing at NaN, normal elsewhere."""
    labels = [MISSING if math.isnan(v) else NORMAL for v in values]
    for cp in changes:
        labels[cp.index] = cp.kind
    return labels


def verdict_of(values: np.ndarray, changes: Iterable[ChangePoint]) -> str:
    """The last run's verdict: the kind of a change reported at the last run, else normal."""
    if len(values) == 0 or math.isnan(values[-1]):
        return MISSING
    last = len(values) - 1
    for cp in changes:
        if cp.reported_at == last:
            return cp.kind
    return NORMAL


def changes_from_runs(
    values: np.ndarray,
    flags: Sequence[str],
    reference: np.ndarray,
    extra: Callable[[int], dict[str, Any]] | None = None,
) -> list[ChangePoint]:
    """Turn per-sample flags of a windowed detector into change points.

    A maximal run of consecutive valid samples flagged with the same kind (missing samples are
    skipped, a normal one ends the run) is one change at its first sample; ``before`` is the
    reference (e.g. TMA) there, ``after`` the mean of the flagged values, ``runs`` their count.
    """
    out: list[ChangePoint] = []
    valid = [i for i in range(len(values)) if not math.isnan(values[i])]
    j = 0
    while j < len(valid):
        i = valid[j]
        kind = flags[i]
        if kind not in (REGRESSION, PROGRESSION):
            j += 1
            continue
        k = j
        while k + 1 < len(valid) and flags[valid[k + 1]] == kind:
            k += 1
        members = valid[j : k + 1]
        after = float(np.mean(values[members]))
        ev = {"flagged_runs": len(members), "reference": float(reference[i])}
        if extra is not None:
            ev.update(extra(i))
        out.append(ChangePoint(i, kind, float(reference[i]), after, len(members), i, ev))
        j = k + 1
    return out


def with_changes(det: Detection, values: np.ndarray, changes: list[ChangePoint]) -> Detection:
    """A copy of ``det`` with other change points, labels and verdict recomputed."""
    return replace(det, changes=changes, labels=labels_from_changes(values, changes),
                   verdict=verdict_of(values, changes))


# ---------------------------------------------------------------------------
# MDL (CSIT's jumpavg grouping) behind the same interface
# ---------------------------------------------------------------------------


class MdlDetector:
    """CSIT's minimum-description-length grouping: a change is called at each new group's start.

    The grouping is ``pal.analysis.mdl.classify`` on the valid run values (missing runs left
    out, so a failed run never splits a group); it is imported when first used. ``classify`` may
    be injected (tests and benchmarks use a reference implementation until mdl.py lands).
    """

    name = "mdl"

    def __init__(self, params: dict[str, Any] | None = None, classify: Callable[..., Any] | None = None):
        self.params = check_params("mdl", params, {"unit": None, "sbps": None})
        for key in ("unit", "sbps"):
            if self.params[key] is not None:
                check_number("mdl", key, self.params[key], 0.0)
        self._classify = classify

    def detect(self, series: SeriesInput, direction: int = 1) -> Detection:
        values = as_values(series)
        valid = np.flatnonzero(~np.isnan(values))
        trend = np.full(len(values), np.nan)
        changes: list[ChangePoint] = []
        if len(valid):
            classify = self._classify
            if classify is None:
                from pal.analysis.mdl import classify
            groups = list(classify([float(v) for v in values[valid]], unit=self.params["unit"],
                                   sbps=self.params["sbps"]))
            prev = None
            for g in groups:
                members = valid[g.start : g.end]
                trend[members] = g.avg
                if prev is not None and g.avg != prev.avg:
                    first = int(members[0])
                    ev = {"before_avg": float(prev.avg), "before_stdev": float(prev.stdev),
                          "before_runs": int(prev.size), "after_avg": float(g.avg),
                          "after_stdev": float(g.stdev), "after_runs": int(g.size),
                          "group_bits": float(getattr(g, "bits", math.nan))}
                    changes.append(ChangePoint(first, kind_of(prev.avg, g.avg, direction), float(prev.avg),
                                               float(g.avg), int(g.size), first, ev))
                prev = g
        return Detection("mdl", labels_from_changes(values, changes), trend, changes,
                         {}, verdict_of(values, changes), dict(self.params))


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------

DETECTORS = ("mdl", "tma", "fisher", "wda")


def get_detector(name: str, params: dict[str, Any] | None = None) -> Detector:
    """The detector called ``name`` with ``params`` checked; SpecError for unknown names or keys."""
    if name == "mdl":
        return MdlDetector(params)
    if name == "tma":
        from pal.analysis.tma import TmaDetector

        return TmaDetector(params)
    if name == "fisher":
        from pal.analysis.fisher import FisherDetector

        return FisherDetector(params)
    if name == "wda":
        from pal.analysis.wda import WdaDetector

        return WdaDetector(params)
    raise SpecError("detector.name", name, "one of " + ", ".join(DETECTORS))
