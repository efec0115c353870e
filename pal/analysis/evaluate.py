"""The accuracy harness: every detector (with and without post-filters) and peers on labelled series.

A candidate turns one ``LabelledSeries`` into change points; ``evaluate`` scores each candidate
with ``pal.metrics.score`` and measures its CPU time. pal's own candidates come from a spec's
test sets or from ``default_candidates``; peers (``peer_candidates``) are the tools a user would
pick instead, each imported only if installed (the ``bench`` extra): apache-otava, MongoDB's
e-divisive (signal-processing-algorithms), ruptures' Pelt and plain jumpavg. Each peer also runs
through pal's post-filters ("+filters") so the filters' share of the result is visible.

Scoring is offline: each series is analysed once with its whole history, as graphs show it;
``reported_at`` models when an alert would go out (the confirming run for filtered candidates).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from pal.analysis.detector import ChangePoint, Detection, as_values, get_detector, kind_of, labels_from_changes, verdict_of
from pal.analysis.filters import alert_changes
from pal.datasets import LabelledSeries
from pal.metrics import Detected, Score, score

log = logging.getLogger("pal")

#: The post-filters chosen from the accuracy table (docs/accuracy.md).
DEFAULT_MIN_CHANGE_PCT = 1.0
DEFAULT_CONFIRM_RUNS = 2


@dataclass(frozen=True)
class Candidate:
    """A named way to find changes in a series."""

    name: str
    find: Callable[[LabelledSeries], list[ChangePoint]]
    group: str = "pal"  # "pal" | "peer"


def pal_candidate(name: str, detector: str, params: dict[str, Any] | None = None,
                  min_change_pct: float = 0.0, confirm_runs: int = 1, classify: Callable[..., Any] | None = None) -> Candidate:
    """A pal detector by registry name, followed by the post-filters when they do anything."""
    if detector == "mdl" and classify is not None:
        from pal.analysis.detector import MdlDetector

        det = MdlDetector(params, classify=classify)
    else:
        det = get_detector(detector, params)
    filtered = min_change_pct > 0 or confirm_runs > 1

    def find(s: LabelledSeries) -> list[ChangePoint]:
        series = s.trials if (detector == "wda" and s.trials is not None) else s.values
        if filtered:
            return alert_changes(det, series, s.direction, min_change_pct, confirm_runs)
        return det.detect(series, s.direction).changes

    return Candidate(name, find, "pal")


def default_candidates(min_change_pct: float = DEFAULT_MIN_CHANGE_PCT, confirm_runs: int = DEFAULT_CONFIRM_RUNS) -> list[Candidate]:
    """Each pal detector with its default parameters, raw (what graphs show) and filtered (alerts)."""
    out = []
    for name in ("mdl", "tma", "fisher", "wda"):
        out.append(pal_candidate(name, name))
        out.append(pal_candidate(f"{name}+filters", name, None, min_change_pct, confirm_runs))
    return out


def spec_candidates(spec: Any) -> list[Candidate]:
    """The detectors of a spec's test sets, raw and with each set's alert filters."""
    out = []
    for ts in spec.test_sets:
        d, f = ts.detector, ts.alert_filters
        out.append(pal_candidate(f"{ts.name}:{d.name}", d.name, d.params))
        out.append(pal_candidate(f"{ts.name}:{d.name}+filters", d.name, d.params, f.min_change_pct, f.confirm_runs))
    return out


# ---------------------------------------------------------------------------
# Peers: bench-only dependencies, each as a user would call it
# ---------------------------------------------------------------------------


def _jumpavg(x: np.ndarray, seed: int) -> list[int]:
    import jumpavg

    starts, pos = [], 0
    for g in jumpavg.classify([float(v) for v in x]):
        if pos:
            starts.append(pos)
        pos += len(g.run_list)
    return starts


def _pelt(x: np.ndarray, seed: int) -> list[int]:
    import ruptures

    # BIC-style penalty 2*sigma^2*ln(n), sigma from the MAD of first differences (robust to steps).
    sigma = float(np.median(np.abs(np.diff(x) - np.median(np.diff(x))))) / 0.6745 / math.sqrt(2.0)
    pen = 2.0 * max(sigma, 1e-12) ** 2 * math.log(len(x))
    return [int(b) for b in ruptures.Pelt(model="l2", min_size=1, jump=1).fit(x).predict(pen=pen)[:-1]]


def _edivisive(x: np.ndarray, seed: int) -> list[int]:
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    np.random.seed(seed)  # its permutation test draws from numpy's global generator
    return sorted(int(i) for i in e_divisive(x, pvalue=0.05, permutations=100))


def _otava(x: np.ndarray, seed: int) -> list[int]:
    from otava.analysis import compute_change_points

    cps, _ = compute_change_points([float(v) for v in x])
    return sorted(int(cp.index) for cp in cps)


PEERS: dict[str, tuple[str, Callable[[np.ndarray, int], list[int]]]] = {
    "otava": ("otava.analysis", _otava),
    "e-divisive": ("signal_processing_algorithms.energy_statistics.energy_statistics", _edivisive),
    "pelt": ("ruptures", _pelt),
    "jumpavg": ("jumpavg", _jumpavg),
}


def changes_from_starts(values: np.ndarray, starts: Sequence[int], direction: int, source: str) -> list[ChangePoint]:
    """Change points from segment starts given on the valid runs (peers report only indices)."""
    valid = np.flatnonzero(~np.isnan(values))
    x = values[valid]
    bounds = [0] + [s for s in sorted(set(starts)) if 0 < s < len(x)] + [len(x)]
    means = [float(np.mean(x[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
    out = []
    for k in range(1, len(bounds) - 1):
        kind = kind_of(means[k - 1], means[k], direction)
        if kind == "normal":
            continue
        at = int(valid[bounds[k]])
        out.append(ChangePoint(at, kind, means[k - 1], means[k], bounds[k + 1] - bounds[k], at, {"source": source}))
    return out


class PeerDetector:
    """A peer behind pal's detector interface (so that pal's post-filters can re-run it)."""

    def __init__(self, name: str, fn: Callable[[np.ndarray, int], list[int]], seed: int):
        self.name, self.params, self._fn, self._seed = name, {}, fn, seed

    def detect(self, series: Any, direction: int = 1) -> Detection:
        values = as_values(series)
        x = values[~np.isnan(values)]
        changes = changes_from_starts(values, self._fn(x, self._seed) if len(x) > 2 else [], direction, self.name)
        return Detection(self.name, labels_from_changes(values, changes), np.full(len(values), np.nan), changes,
                         {}, verdict_of(values, changes))


def peer_candidates(seed: int = 1, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                    confirm_runs: int = DEFAULT_CONFIRM_RUNS) -> tuple[list[Candidate], list[str]]:
    """The installed peers, raw and with pal's post-filters, and the names of missing ones."""
    import importlib

    out, missing = [], []
    for name, (module, fn) in PEERS.items():
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
            log.warning("peer %s not available (%s: %s); skipped", name, type(exc).__name__, exc)
            missing.append(name)
            continue

        peer = PeerDetector(name, fn, seed)

        def find(s: LabelledSeries, peer=peer) -> list[ChangePoint]:
            return peer.detect(s.values, s.direction).changes

        def find_filtered(s: LabelledSeries, peer=peer) -> list[ChangePoint]:
            return alert_changes(peer, s.values, s.direction, min_change_pct, confirm_runs)

        out.append(Candidate(name, find, "peer"))
        out.append(Candidate(f"{name}+filters", find_filtered, "peer"))
    return out, missing


# ---------------------------------------------------------------------------
# Running and printing
# ---------------------------------------------------------------------------


def run_candidate(cand: Candidate, series: Sequence[LabelledSeries], margin: int = 3) -> Score:
    """Score one candidate on every series, with the CPU seconds it took."""
    results = []
    cpu = 0.0
    for s in series:
        t0 = time.process_time()
        changes = cand.find(s)
        cpu += time.process_time() - t0
        det = [Detected(c.index, c.kind, c.reported_at) for c in changes]
        results.append((s.changes, det, s.valid_runs))
    return score(cand.name, results, margin, cpu)


def evaluate(series: Sequence[LabelledSeries], candidates: Sequence[Candidate], margin: int = 3) -> list[Score]:
    """Scores of every candidate, in the given order."""
    out = []
    for cand in candidates:
        log.info("evaluate: %s on %d series", cand.name, len(series))
        out.append(run_candidate(cand, series, margin))
    return out


def describe(series: Sequence[LabelledSeries]) -> str:
    """One line on the data set: series, runs, true changes, dips, stationary runs."""
    runs = sum(s.valid_runs for s in series)
    stat = sum(s.valid_runs for s in series if s.stationary)
    changes = sum(len(s.changes) for s in series)
    dips = sum(len(s.dips) for s in series)
    return (f"{len(series)} series ({sum(1 for s in series if s.stationary)} stationary), {runs} valid runs, "
            f"{changes} true changes, {dips} one-run dips (not changes), {stat} stationary runs")


def format_table(scores: Sequence[Score]) -> str:
    """A Markdown table: precision, recall, F1, false alarms per 1k stationary runs, delay, CPU."""
    lines = ["| detector | precision | recall | F1 | false alarms /1k | mean delay (runs) | CPU s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for s in scores:
        delay = "-" if math.isnan(s.mean_delay) else f"{s.mean_delay:.2f}"
        lines.append(f"| {s.detector} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | "
                     f"{s.false_alarms_per_1k:.2f} | {delay} | {s.cpu_seconds:.2f} |")
    return "\n".join(lines)


def run(spec: Any = None, csv_paths: Sequence[Any] = (), peers: bool = False, margin: int = 3,
        seed: int = 1) -> tuple[str, list[Score]]:
    """The whole harness as ``pal evaluate`` runs it: a Markdown report and the scores.

    Data: the labelled CSVs when given, else ``csit_like(seed=seed)``. Detectors: the spec's
    test sets when given, else ``default_candidates()``; with ``peers`` also the installed peers.
    """
    from pal.datasets import csit_like, read_csv

    series: list[LabelledSeries] = []
    for path in csv_paths:
        series.extend(read_csv(path))
    source = ", ".join(str(p) for p in csv_paths) if csv_paths else f"csit_like(seed={seed})"
    if not csv_paths:
        series = csit_like(seed=seed)
    cands = spec_candidates(spec) if spec is not None else default_candidates()
    missing: list[str] = []
    if peers:
        more, missing = peer_candidates(seed)
        cands = cands + more
    scores = evaluate(series, cands, margin)
    lines = [f"data: {source}: {describe(series)}; margin {margin} runs", "", format_table(scores)]
    if missing:
        lines += ["", "peers not installed: " + ", ".join(missing)]
    return "\n".join(lines), scores


def online_alerts(detector: Any, s: LabelledSeries, min_change_pct: float, confirm_runs: int,
                  margin: int = 3, lookback: int = 10, start: int = 10) -> list[Detected]:
    """Alerts as a daily job would send them: the history up to each run analysed afresh.

    At each analysis time t, every filtered change whose first run is within ``lookback`` runs
    of t and that was not alerted before (same kind within ``margin`` runs) is alerted at t.
    This measures what offline scoring cannot: changes that "appear late" and the real delay.
    """
    sent: list[Detected] = []
    series = s.trials if (getattr(detector, "name", "") == "wda" and s.trials is not None) else s.values
    for t in range(start, len(s.values)):
        if math.isnan(s.values[t]):
            continue
        prefix = series[: t + 1]
        for c in alert_changes(detector, prefix, s.direction, min_change_pct, confirm_runs):
            if c.index < t - lookback:
                continue
            if any(a.kind == c.kind and abs(a.index - c.index) <= margin for a in sent):
                continue
            sent.append(Detected(c.index, c.kind, t))
    return sent


def evaluate_online(series: Sequence[LabelledSeries], name: str, detector: Any, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                    confirm_runs: int = DEFAULT_CONFIRM_RUNS, margin: int = 3, lookback: int = 10) -> Score:
    """``online_alerts`` scored over ``series`` (slow: one analysis per run)."""
    results = []
    t0 = time.process_time()
    for s in series:
        results.append((s.changes, online_alerts(detector, s, min_change_pct, confirm_runs, margin, lookback), s.valid_runs))
    return score(name, results, margin, time.process_time() - t0)
