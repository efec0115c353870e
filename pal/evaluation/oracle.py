"""How much of a labelled set any detector could find: a bound that knows the answer's outline.

A goal such as "F1 >= 0.97" or "recall on changes under 2 noise sd >= 0.60" is only worth
chasing if the data allows it. ``oracle_calls`` judges each true change as a detector would
that was *told* everything but the change itself: where every other true change is, which
runs are one-run dips, and so the noise sd of a run (measured between the true changes).
Between its two neighbouring true changes it places one step where it best splits the runs
(least squares), and computes that split's two-sample z. ``bound`` counts a change as found
when the z reaches a threshold and the placed step lies within the scoring margin of the true
one (``pal.evaluation.metrics.match``), optionally with the alert filters' minimum relative
change too.

The threshold is what keeps a real detector quiet on runs without changes: ``stationary_z``
is the largest split z of each stationary series, one false alarm when it reaches the
threshold, and ``calibrated_z`` the least threshold at which those raise no more false alarms
per 1,000 stationary runs than a goal allows. A real detector at the same false-alarm rate has
less to go on, so the oracle's recall bounds any such detector's, with two exceptions it does
not model: a robust statistic may see a little more in heavy-tailed noise than the means do,
and a test that pools the levels on both sides of a change later undone (a window) has more
runs than one split. Its only false positives are those alarms (``pal evaluate --oracle``
scores it as a row of its own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from pal.analysis.detector import kind_of
from pal.evaluation.datasets import LabelledSeries
from pal.evaluation.metrics import SIZE_BINS, Detected


@dataclass(frozen=True)
class OracleCall:
    """One true change as the oracle sees it."""

    index: int  # the true first run of the new level
    kind: str
    size_sd: float  # the generator's size in noise sd (nan when unknown)
    category: str  # "step" | "excursion"
    placed: int  # where the oracle's least-squares split puts it
    placed_kind: str  # the kind of the placed split's move
    z: float  # the placed split's two-sample z under the known noise
    rel_pct: float  # the placed split's relative change of the mean, percent


def _split(v: np.ndarray, noise: float) -> tuple[int, float, float, float]:
    """Best single split of ``v`` (least squares): (k, z, mean before, mean after); k = first run after."""
    n = len(v)
    cs = np.cumsum(v)
    k = np.arange(1, n)
    left = cs[k - 1] / k
    right = (cs[-1] - cs[k - 1]) / (n - k)
    j = int(np.argmax(np.abs(right - left) * np.sqrt(k * (n - k) / n)))
    m1, m2 = float(left[j]), float(right[j])
    sd1, sd2 = noise * abs(m1), noise * abs(m2)  # relative noise: each level's own sd
    z = abs(m2 - m1) / math.sqrt(sd1 * sd1 / k[j] + sd2 * sd2 / (n - k[j])) if sd1 + sd2 > 0 else math.inf
    return int(k[j]), z, m1, m2


def _visible(series: LabelledSeries) -> np.ndarray:
    """The valid runs' positions once the known dips are masked."""
    x = np.array(series.values, dtype=np.float64)
    if series.dips:
        x[list(series.dips)] = np.nan
    return np.flatnonzero(~np.isnan(x))


def oracle_calls(series: LabelledSeries, noise: float | None = None) -> list[OracleCall]:
    """Each true change of ``series`` placed and sized between its neighbouring true changes.

    ``noise``: the relative sd of one run; None measures it on the series itself between its
    true changes (``_segment_noise``; the generators' ``noise`` fields do not all mean that).
    """
    valid = _visible(series)
    x = np.asarray(series.values, dtype=np.float64)
    noise = _segment_noise(series, valid) if noise is None else noise
    idx = [c[0] for c in series.changes]
    out = []
    for i, (at, kind) in enumerate(series.changes):
        lo = idx[i - 1] if i else 0
        hi = idx[i + 1] if i + 1 < len(idx) else len(x)
        pos = valid[(valid >= lo) & (valid < hi)]
        size = series.sizes[i] if i < len(series.sizes) else math.nan
        cat = series.categories[i] if i < len(series.categories) else "step"
        if len(pos) < 2:
            out.append(OracleCall(at, kind, size, cat, -1, "", 0.0, 0.0))
            continue
        k, z, m1, m2 = _split(x[pos], noise)
        rel = 100.0 * abs(m2 - m1) / abs(m1) if m1 else math.inf
        out.append(OracleCall(at, kind, size, cat, int(pos[k]), kind_of(m1, m2, series.direction), z, rel))
    return out


def _segment_noise(series: LabelledSeries, valid: np.ndarray) -> float:
    """The median relative sd of the runs between true changes (known dips masked): the oracle
    knows where the levels are, so this is the noise itself, not a guess through the steps."""
    x = np.asarray(series.values, dtype=np.float64)
    edges = [0] + [c[0] for c in series.changes] + [len(x)]
    rel = []
    for a, b in zip(edges[:-1], edges[1:]):
        v = x[valid[(valid >= a) & (valid < b)]]
        if len(v) > 2 and np.mean(v):
            rel.append(float(np.std(v, ddof=1) / abs(np.mean(v))))
    return float(np.median(rel)) if rel else math.nan


def _whole_split(series: LabelledSeries, noise: float | None) -> tuple[int, float, float, float] | None:
    """``_split`` of a series' visible runs as one level (k as a run index); None under 2 runs."""
    valid = _visible(series)
    x = np.asarray(series.values, dtype=np.float64)[valid]
    if len(x) < 2:
        return None
    k, z, m1, m2 = _split(x, _segment_noise(series, valid) if noise is None else noise)
    return int(valid[k]), z, m1, m2


def stationary_z(series: LabelledSeries, noise: float | None = None) -> float:
    """The largest split z of a series without changes under the oracle's noise (its dips masked)."""
    split = _whole_split(series, noise)
    return 0.0 if split is None else split[1]


def calibrated_z(sets: Iterable[LabelledSeries], per_1k: float, noise: float | None = None) -> float:
    """The least threshold at which the stationary series' largest split z raise at most
    ``per_1k`` false alarms per 1,000 of their valid runs (one alarm per series whose z reaches it).
    0.0 when the set has no stationary series: there is no false alarm to calibrate against, and
    the bound is then recall by placement alone (``pal evaluate --oracle`` shows the z it used)."""
    zs, runs = [], 0
    for s in sets:
        if s.stationary:
            zs.append(stationary_z(s, noise))
            runs += s.valid_runs
    allowed = int(math.floor(per_1k * runs / 1000.0))
    ordered = sorted(zs, reverse=True)
    if allowed >= len(ordered):
        return 0.0
    return float(np.nextafter(ordered[allowed], math.inf))  # the (allowed+1)-th largest stays below


def found(call: OracleCall, z_min: float, margin: int, min_change_pct: float = 0.0) -> bool:
    """Whether the oracle finds ``call`` at threshold ``z_min`` and scoring ``margin``."""
    return (call.z >= z_min and call.placed_kind == call.kind and abs(call.placed - call.index) <= margin
            and call.rel_pct >= min_change_pct)


def bound(series: Sequence[LabelledSeries], z_min: float, margin: int = 3, min_change_pct: float = 0.0,
          noise: float | None = None) -> dict:
    """The oracle's recall (overall, by size in noise sd, under 2 sd, excursions) and the F1 it
    bounds: no detector keeping the same threshold's false alarms finds more.
    ``false_alarms_per_1k``: what the threshold costs on the stationary series (one alarm per
    series whose largest split z reaches it, per 1,000 of their valid runs); those alarms are
    its only false positives (``precision``)."""
    calls = [c for s in series for c in oracle_calls(s, noise)]
    quiet = [s for s in series if s.stationary]
    runs = sum(s.valid_runs for s in quiet)
    alarms = sum(1 for s in quiet if stationary_z(s, noise) >= z_min)
    hits = [(c, found(c, z_min, margin, min_change_pct)) for c in calls]

    def recall(sel: list[bool]) -> float | None:
        return round(sum(sel) / len(sel), 6) if sel else None

    r = recall([h for _, h in hits])
    tp = sum(h for _, h in hits)
    p = tp / (tp + alarms) if tp + alarms else 1.0
    out = {"z_min": z_min, "margin": margin, "min_change_pct": min_change_pct, "truth": len(calls),
           "recall": r, "precision": round(p, 6),
           "f1_bound": round(2 * p * r / (p + r), 6) if r is not None and p + r else None,
           "false_alarms_per_1k": round(1000.0 * alarms / runs, 6) if runs else None,
           "by_size": {label: recall([h for c, h in hits if lo <= c.size_sd < hi]) for label, lo, hi in SIZE_BINS}}
    out["by_size"]["<2"] = recall([h for c, h in hits if c.size_sd < 2.0])
    out["excursion"] = recall([h for c, h in hits if c.category == "excursion"])
    return out


def oracle_detections(series: LabelledSeries, z_min: float, margin: int, min_change_pct: float = 0.0,
                      noise: float | None = None) -> list[Detected]:
    """The changes of ``series`` the oracle finds (``found``), at their true first runs and
    reported there, or on a series without changes its one false alarm when its largest split
    z reaches ``z_min``: scored like any detector, they give ``bound``'s figures."""
    if series.stationary:
        split = _whole_split(series, noise)
        if split is None or not split[1] >= z_min:
            return []
        at, _, m1, m2 = split
        return [Detected(at, kind_of(m1, m2, series.direction), at)]
    return [Detected(c.index, c.kind, c.index) for c in oracle_calls(series, noise)
            if found(c, z_min, margin, min_change_pct)]
