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
from dataclasses import dataclass
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
