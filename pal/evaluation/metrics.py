"""Scoring change detection against known changes: precision, recall, F1, false alarms, delay.

A detected change matches a true one when both are the same kind and the detected index (first
run of the new level) is within ``margin`` runs of the true index; matching is one-to-one,
closest pairs first. Every unmatched detection is a false positive (a one-run dip that is
called a change is one). False alarms are counted on stationary series only, per 1,000 valid
runs. The delay of a match is ``reported_at - true index``: how many runs after the change the
alert (or graph mark) appears.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Detected:
    """What a detector said: the new level's first run, the kind and when it was reported."""

    index: int
    kind: str
    reported_at: int


@dataclass(frozen=True)
class Score:
    """The accuracy of one detector over a set of labelled series."""

    detector: str
    truth: int
    detected: int
    tp: int
    fp: int
    fn: int
    stationary_runs: int
    false_alarms: int  # detections on stationary series
    delays: tuple[int, ...]
    cpu_seconds: float = math.nan
    breakdown: dict = field(default_factory=dict, compare=False, repr=False)  # see ``breakdown``

    @property
    def precision(self) -> float:
        return self.tp / self.detected if self.detected else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.truth if self.truth else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_alarms_per_1k(self) -> float:
        return 1000.0 * self.false_alarms / self.stationary_runs if self.stationary_runs else math.nan

    @property
    def mean_delay(self) -> float:
        return sum(self.delays) / len(self.delays) if self.delays else math.nan


def match(truth: Sequence[tuple[int, str]], detected: Sequence[Detected], margin: int = 3) -> list[tuple[int, int]]:
    """One-to-one (truth position, detected position) pairs of the same kind within ``margin``."""
    pairs = sorted(
        (abs(d.index - t[0]), ti, di)
        for ti, t in enumerate(truth)
        for di, d in enumerate(detected)
        if d.kind == t[1] and abs(d.index - t[0]) <= margin
    )
    used_t: set[int] = set()
    used_d: set[int] = set()
    out = []
    for _, ti, di in pairs:
        if ti not in used_t and di not in used_d:
            used_t.add(ti)
            used_d.add(di)
            out.append((ti, di))
    return sorted(out)


def score(
    detector: str,
    results: Iterable[tuple[Sequence[tuple[int, str]], Sequence[Detected], int]],
    margin: int = 3,
    cpu_seconds: float = math.nan,
) -> Score:
    """Score ``(truth, detected, valid_runs)`` per series; a series with no truth is stationary."""
    truth_n = det_n = tp = stat_runs = fa = 0
    delays: list[int] = []
    for truth, detected, valid_runs in results:
        pairs = match(truth, detected, margin)
        truth_n += len(truth)
        det_n += len(detected)
        tp += len(pairs)
        delays.extend(detected[di].reported_at - truth[ti][0] for ti, di in pairs)
        if not truth:
            stat_runs += valid_runs
            fa += len(detected)
    return Score(detector, truth_n, det_n, tp, det_n - tp, truth_n - tp, stat_runs, fa, tuple(delays), cpu_seconds)


#: change size in noise sd (run-mean sd): the bins of the by-size tables
SIZE_BINS: tuple[tuple[str, float, float], ...] = (
    ("<1", 0.0, 1.0), ("1-2", 1.0, 2.0), ("2-3", 2.0, 3.0), ("3-5", 3.0, 5.0), ("5-10", 5.0, 10.0),
    (">=10", 10.0, math.inf))
#: series length in runs: the bins of the by-length tables
LENGTH_BINS: tuple[tuple[str, int, float], ...] = (
    ("50-99", 0, 100), ("100-199", 100, 200), ("200-499", 200, 500), ("500-1000", 500, math.inf))


@dataclass(frozen=True)
class Scored:
    """One series as scored: its truth, what was detected, and what the breakdowns group by."""

    truth: Sequence[tuple[int, str]]
    detected: Sequence[Detected]
    valid_runs: int
    length: int
    sizes: Sequence[float] = ()  # per truth: size in noise sd ("" bins when unknown)
    categories: Sequence[str] = ()  # per truth: "step" | "excursion"


def _recall(truth: int, tp: int) -> dict:
    return {"truth": truth, "tp": tp, "recall": round(tp / truth, 6) if truth else None}


def breakdown(items: Sequence[Scored], margin: int = 3) -> dict:
    """Recall by change size (noise sd) and by category, and every measure by series length.

    A true change is found when ``match`` pairs it (the same rule as ``score``). Sizes and
    categories are per true change; false positives cannot be given a size, so by-size tables
    hold recall only. By length, each bin is scored as a set of its own (precision, recall, F1,
    false alarms), so a detector that fails on long or short series shows it.
    """
    found: list[tuple[float, str, bool]] = []
    for it in items:
        hit = {ti for ti, _ in match(it.truth, it.detected, margin)}
        for ti in range(len(it.truth)):
            size = it.sizes[ti] if ti < len(it.sizes) else math.nan
            cat = it.categories[ti] if ti < len(it.categories) else "step"
            found.append((size, cat, ti in hit))
    by_size = {}
    for label, lo, hi in SIZE_BINS:
        sel = [f for s, _, f in found if lo <= s < hi]
        by_size[label] = _recall(len(sel), sum(sel))
    small = [f for s, _, f in found if s < 2.0]
    by_size["<2"] = _recall(len(small), sum(small))
    by_cat = {}
    for cat in ("step", "excursion"):
        sel = [f for _, c, f in found if c == cat]
        by_cat[cat] = _recall(len(sel), sum(sel))
    by_length = {}
    for label, lo, hi in LENGTH_BINS:
        part = [it for it in items if lo <= it.length < hi]
        sc = score(label, [(it.truth, it.detected, it.valid_runs) for it in part], margin)
        by_length[label] = {"series": len(part), "truth": sc.truth, "detected": sc.detected, "tp": sc.tp,
                            "precision": _r(sc.precision), "recall": _r(sc.recall), "f1": _r(sc.f1),
                            "false_alarms_per_1k": _r(sc.false_alarms_per_1k)}
    return {"series": len(items), "by_size": by_size, "by_category": by_cat, "by_length": by_length}


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 6)
