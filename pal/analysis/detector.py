"""One interface for every change detector, and the registry that picks one by name.

A detector reads one series (run values in build order, NaN where a run is missing, or per-run
trial lists with None for missing) and says, per sample, whether a change is called there, with
the numbers behind each call. Detectors are pure: none imports the pipeline, so the accuracy
harness, the benchmarks and the analysis stage all call them the same way.

Detectors are found by name in ``pal.analysis.registry`` (one line per detector); the spec's
allowed names, ``pal validate``'s parameter checks and ``pal evaluate`` all read that registry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

import numpy as np

from pal.errors import SpecError
from pal.model import Change, TrendGroup

NORMAL = "normal"
REGRESSION = "regression"
PROGRESSION = "progression"
MISSING = "missing"

SeriesInput = Sequence[float] | np.ndarray | Sequence[Sequence[float] | None]


@dataclass
class Detection:
    """What a detector says about one series; every array has one entry per sample."""

    detector: str
    labels: list[str]  # normal | regression | progression (where a change is called) | missing
    trend: np.ndarray  # centre line per sample (group average, TMA, ...), NaN where none
    changes: list[Change]
    bands: dict[str, np.ndarray] = field(default_factory=dict)  # e.g. mm, tma, tma_lo, tma_hi
    verdict: str = NORMAL  # the last run: normal | regression | progression | missing
    params: dict[str, Any] = field(default_factory=dict)  # effective parameters, for reports
    groups: list[TrendGroup] = field(default_factory=list)  # levels; empty: one level per change
    # what the detector can go on from on this series' next run (``detect(..., keep=True)``), for
    # ``detect(..., resume=...)``; opaque to the pipeline, which keeps it between runs; None: nothing
    resume: Any = None


class Detector(Protocol):
    """The interface: a name, its effective parameters, whether it reads trials, and ``detect``.

    ``uses_trials``: the analysis passes per-run trial lists (MRR) when the samples have them,
    plain run values otherwise.

    ``detect(..., keep=True)`` asks for ``Detection.resume``: what the detector would need to
    analyse the same series with more runs appended without going over the old ones again; the
    next run passes it back as ``resume``. A detector checks that it fits the series it gets and
    gives exactly what it gives without it (``resume`` only saves time). One that keeps nothing
    ignores both (``resume`` stays None).

    A ``Detection`` is the caller's: ``detect`` keeps nothing of it for the next call (the
    analysis detects a batch of series before it reads their detections, ``analyse_many``).
    """

    name: str
    params: dict[str, Any]
    uses_trials: bool

    def detect(self, series: SeriesInput, direction: int = 1, resume: Any = None, keep: bool = False
               ) -> Detection: ...


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


def labels_from_changes(values: np.ndarray, changes: Iterable[Change]) -> list[str]:
    """Per-sample labels: the change's kind at its index, missing at NaN, normal elsewhere.

    Normal everywhere first, then the few missing runs: a Python test per run was a tenth of a
    resumed MDL detection (every series, every run of the pipeline)."""
    missing = np.isnan(np.asarray(values, dtype=np.float64))
    labels = [NORMAL] * len(missing)
    for i in np.flatnonzero(missing).tolist():
        labels[i] = MISSING
    for cp in changes:
        labels[cp.index] = cp.kind
    return labels


def verdict_of(values: np.ndarray, changes: Iterable[Change]) -> str:
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
) -> list[Change]:
    """Turn per-sample flags of a windowed detector into change points.

    A maximal run of consecutive valid samples flagged with the same kind (missing samples are
    skipped, a normal one ends the run) is one change at its first sample; ``before`` is the
    reference (e.g. TMA) there, ``after`` the mean of the flagged values, ``runs`` their count.
    """
    out: list[Change] = []
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
        out.append(Change(i, kind, float(reference[i]), after, len(members), i, ev))
        j = k + 1
    return out


def levels_from_changes(values: np.ndarray, changes: Sequence[Change]) -> tuple[list[TrendGroup], np.ndarray]:
    """Levels of a detector that reports only changes: a level runs from one change to the next.

    Each level's average and stdev are those of its valid runs; the trend is that average at
    each valid run, NaN at missing runs.
    """
    n = len(values)
    valid = ~np.isnan(values)
    cps = sorted(changes, key=lambda c: c.index)
    kinds = {c.index: c.kind for c in cps}
    cuts = sorted({0, n, *(c.index for c in cps if 0 < c.index < n)})
    groups: list[TrendGroup] = []
    trend = np.full(n, np.nan)
    for a, b in zip(cuts[:-1], cuts[1:]):
        seg = values[a:b][valid[a:b]]
        if len(seg) == 0:
            continue
        avg = float(np.mean(seg))
        groups.append(TrendGroup(a, b, avg, float(np.std(seg)), int(len(seg)), kinds.get(a, NORMAL) if a else NORMAL))
        trend[a:b][valid[a:b]] = avg
    return groups, trend

