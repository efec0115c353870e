"""The accuracy harness: every configuration scored on the code path that runs, and the peers.

A candidate turns one ``LabelledSeries`` into detections; ``evaluate`` scores each with
``pal.evaluation.metrics.score`` and measures its CPU time. Candidates have a ``path``:

* ``run``: what ``pal run`` alerts on for a test set. The series goes through
  ``pal.analysis.series.analyse_one`` (the function the pipeline calls) and its
  ``alertable`` changes are the detections, each at the run it is reported at. Offline, the
  whole history is analysed once; online (``online=True``), the history up to each run is
  analysed as a daily job would and each change is counted once, at the run the alerts stage
  would first report it as new (``pal.alerts.build.continued``: the previous run's alerts
  continue the same changes, exactly as ``build_alerts`` decides).
* ``detector``: the detector's own changes, unfiltered (what graphs mark).
* ``peer``: the tools a user would pick instead (bench extra: apache-otava, MongoDB's
  e-divisive, ruptures' Pelt, jumpavg), raw and through pal's alert decision ("+filters",
  ``pal.analysis.filters.alertable_changes``), so the filters' share is visible.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from pal.analysis.detector import Detection, as_values, kind_of, labels_from_changes, verdict_of
from pal.analysis.filters import alertable_changes
from pal.analysis.registry import detector_class, names
from pal.analysis.series import SeriesInput, analyse_one, detector_of
from pal.evaluation.datasets import LabelledSeries
from pal.evaluation.metrics import Detected, Score, Scored, breakdown, score
from pal.model import Change, SeriesKey
from pal.spec import DetectorSpec, TestSet

log = logging.getLogger("pal")

#: epoch of the synthetic run times (one run a day) given to analyse_one
_T0 = np.datetime64("2024-01-01T00:00:00", "ns")
_DAY = np.timedelta64(86_400_000_000_000, "ns")


@dataclass(frozen=True)
class Candidate:
    """A named way to find changes in a series, and the code path it measures."""

    name: str
    find: Callable[[LabelledSeries], list[Detected]]
    path: str = "run"  # "run" | "detector" | "peer"

    @property
    def group(self) -> str:
        return "peer" if self.path == "peer" else "pal"


def series_input(s: LabelledSeries, upto: int | None = None) -> SeriesInput:
    """A labelled series as the pipeline's series input: runs are builds 0..n-1, one a day."""
    n = len(s.values) if upto is None else upto
    trials = None if s.trials is None else [None if t is None else list(t) for t in s.trials[:n]]
    metric = "mrr" if s.direction >= 0 else "latency_pdr50_d1"
    return SeriesInput(SeriesKey("evaluate", s.name, metric), "evaluate", np.arange(n, dtype=np.int64),
                       _T0 + np.arange(n) * _DAY, np.asarray(s.values[:n], dtype=np.float64),
                       np.full(n, np.nan), {}, trials)


def _for_series(test_set: TestSet, s: LabelledSeries) -> TestSet:
    """The test set with the series' own direction (the labels say which way is better)."""
    return replace(test_set, name="evaluate", direction="higher-is-better" if s.direction >= 0 else "lower-is-better")


def run_alertable(test_set: TestSet, s: LabelledSeries, upto: int | None = None, detector: Any = None) -> list[Change]:
    """The alertable changes ``pal run`` decides for this series (history up to run ``upto``)."""
    return analyse_one(series_input(s, upto), _for_series(test_set, s), False, detector).alertable


def online_alerts(test_set: TestSet, s: LabelledSeries, start: int = 10, detector: Any = None) -> list[Detected]:
    """The alerts a daily ``pal run`` sends as new, replayed run by run from run ``start``.

    At each run, the history up to it is analysed; an alertable change becomes an alert when
    it is recent or continues one of the previous run's alerts, and counts as detected at
    the run where it is new (``pal.alerts.build.continued`` decides new vs ongoing; the
    alerts carried to the next run are ``pal.alerts.build.remembered``'s, as ``pal run`` saves).
    """
    from pal.alerts.build import continued, remembered
    from pal.alerts.model import alert_id

    det = detector or detector_of(test_set)
    sent: list[Detected] = []
    previous: list[dict] = []
    key = series_input(s, 1).key
    for t in range(start, len(s.values)):
        if math.isnan(s.values[t]):
            continue  # a run without a value adds nothing to analyse
        alertable = run_alertable(test_set, s, t + 1, det)
        cont = continued(key, np.arange(t + 1), alertable, previous)
        current = []
        for c in alertable:
            prev_id = cont.get(c.index)
            if not (c.recent or prev_id is not None):
                continue
            if prev_id is None:
                sent.append(Detected(c.index, c.kind, t))
            current.append({"id": alert_id(key, int(c.first_bad_build), c.kind), "job": key.job,
                            "test_id": key.test_id, "metric": key.metric, "kind": c.kind, "previous_id": prev_id,
                            "evidence": {"first_bad_build": int(c.first_bad_build)}})
        previous = remembered(previous, current, {key.job: range(t + 1)})
    return sent


def run_candidate_for(test_set: TestSet, name: str | None = None, online: bool = False) -> Candidate:
    """The ``run`` path of a test set: exactly what ``pal run`` alerts on (offline or replayed daily)."""
    det = detector_of(test_set)

    def find(s: LabelledSeries) -> list[Detected]:
        if online:
            return online_alerts(test_set, s, detector=det)
        return [Detected(c.index, c.kind, c.reported_at) for c in run_alertable(test_set, s, detector=det)]

    return Candidate(name or f"{test_set.name}:{test_set.detector.name}", find, "run")


def detector_candidate_for(test_set: TestSet, name: str | None = None) -> Candidate:
    """The ``detector`` path: the detector's own changes, as graphs mark them."""
    det = detector_of(test_set)

    def find(s: LabelledSeries) -> list[Detected]:
        series = s.trials if (det.uses_trials and s.trials is not None) else s.values
        return [Detected(c.index, c.kind, c.reported_at) for c in det.detect(series, s.direction).changes]

    return Candidate(name or f"{test_set.name}:{test_set.detector.name} (raw)", find, "detector")


def default_test_sets(detectors: Sequence[str] | None = None) -> list[TestSet]:
    """One test set per registered detector (or those named), every other setting at its default."""
    return [TestSet(f"default-{n}", detector=DetectorSpec(n)) for n in (detectors or names())]


def default_candidates(online: bool = False, detectors: Sequence[str] | None = None) -> list[Candidate]:
    """Each registered detector with the default test set: raw and on the run path."""
    out = []
    for ts in default_test_sets(detectors):
        out.append(detector_candidate_for(ts, f"{ts.detector.name} (raw)"))
        out.append(run_candidate_for(ts, f"{ts.detector.name}+filters (pal's alerts)", online))
    return out


def spec_candidates(spec: Any, online: bool = False) -> list[Candidate]:
    """The spec's test sets: raw detector and the run path with the set's own filters and windows."""
    out = []
    for ts in spec.test_sets:
        out.append(detector_candidate_for(ts))
        out.append(run_candidate_for(ts, None, online))
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


def changes_from_starts(values: np.ndarray, starts: Sequence[int], direction: int, source: str) -> list[Change]:
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
        out.append(Change(at, kind, means[k - 1], means[k], bounds[k + 1] - bounds[k], at, {"source": source}))
    return out


class PeerDetector:
    """A peer behind pal's detector interface (so that pal's alert decision can re-run it)."""

    uses_trials = False

    def __init__(self, name: str, fn: Callable[[np.ndarray, int], list[int]], seed: int):
        self.name, self.params, self._fn, self._seed = name, {}, fn, seed

    def detect(self, series: Any, direction: int = 1) -> Detection:
        values = as_values(series)
        x = values[~np.isnan(values)]
        changes = changes_from_starts(values, self._fn(x, self._seed) if len(x) > 2 else [], direction, self.name)
        return Detection(self.name, labels_from_changes(values, changes), np.full(len(values), np.nan), changes,
                         {}, verdict_of(values, changes))


def peer_candidates(seed: int = 1, test_set: TestSet | None = None) -> tuple[list[Candidate], list[str]]:
    """The installed peers, raw and through pal's alert decision, and the names of missing ones."""
    import importlib

    from pal.analysis.compliance import week_runs

    ts = test_set or TestSet("default")
    f = ts.alert_filters
    out, missing = [], []
    for name, (module, fn) in PEERS.items():
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
            log.warning("peer %s not available (%s: %s); skipped", name, type(exc).__name__, exc)
            missing.append(name)
            continue

        peer = PeerDetector(name, fn, seed)

        def find(s: LabelledSeries, peer=peer) -> list[Detected]:
            return [Detected(c.index, c.kind, c.reported_at) for c in peer.detect(s.values, s.direction).changes]

        def find_filtered(s: LabelledSeries, peer=peer) -> list[Detected]:
            kept = alertable_changes(peer, s.values, s.direction, min_change_pct=f.min_change_pct,
                                     confirm_runs=f.confirm_runs, window_runs=week_runs(ts.windows, False))
            return [Detected(c.index, c.kind, c.reported_at) for c in kept]

        out.append(Candidate(name, find, "peer"))
        out.append(Candidate(f"{name}+filters", find_filtered, "peer"))
    return out, missing


# ---------------------------------------------------------------------------
# Running and printing
# ---------------------------------------------------------------------------


def run_candidate(cand: Candidate, series: Sequence[LabelledSeries], margin: int = 3) -> Score:
    """Score one candidate on every series, with the CPU seconds it took."""
    results = []
    items = []
    cpu = 0.0
    for s in series:
        t0 = time.process_time()
        det = cand.find(s)
        cpu += time.process_time() - t0
        results.append((s.changes, det, s.valid_runs))
        items.append(Scored(s.changes, det, s.valid_runs, len(s.values), s.sizes, s.categories))
    return replace(score(cand.name, results, margin, cpu), breakdown=breakdown(items, margin))


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


def format_breakdown(scores: Sequence[Score]) -> str:
    """Markdown tables of recall by change size (noise sd) and category, and F1 by series length."""
    from pal.evaluation.metrics import LENGTH_BINS, SIZE_BINS

    def cell(d: dict, key: str = "recall") -> str:
        v = d.get(key)
        return "-" if v is None else f"{v:.3f}"

    have = [s for s in scores if s.breakdown]
    if not have:
        return ""
    sizes = [b[0] for b in SIZE_BINS] + ["<2"]
    first = have[0].breakdown
    lines = ["recall by change size (noise sd; true changes per bin: "
             + ", ".join(f"{k} {first['by_size'][k]['truth']}" for k in sizes) + ") and category", "",
             "| detector | " + " | ".join(sizes) + " | steps | excursions |",
             "|---|" + "---:|" * (len(sizes) + 2)]
    for s in have:
        b = s.breakdown
        lines.append(f"| {s.detector} | " + " | ".join(cell(b["by_size"][k]) for k in sizes) + " | "
                     + cell(b["by_category"]["step"]) + " | " + cell(b["by_category"]["excursion"]) + " |")
    lengths = [b[0] for b in LENGTH_BINS]
    lines += ["", "F1 / false alarms per 1k stationary runs by series length (runs; series per bin: "
              + ", ".join(f"{k} {first['by_length'][k]['series']}" for k in lengths) + ")", "",
              "| detector | " + " | ".join(lengths) + " |", "|---|" + "---:|" * len(lengths)]
    for s in have:
        b = s.breakdown["by_length"]
        lines.append(f"| {s.detector} | " + " | ".join(
            f"{cell(b[k], 'f1')} / {cell(b[k], 'false_alarms_per_1k')}" for k in lengths) + " |")
    return "\n".join(lines)


def score_row(cand: Candidate, sc: Score) -> dict[str, Any]:
    """One scored configuration as ``pal evaluate --format json`` prints it."""
    def num(x: float) -> float | None:
        return None if math.isnan(x) else round(float(x), 6)

    return {"name": cand.name, "path": cand.path, "precision": num(sc.precision), "recall": num(sc.recall),
            "f1": num(sc.f1), "false_alarms_per_1k": num(sc.false_alarms_per_1k),
            "mean_delay_runs": num(sc.mean_delay), "cpu_s": num(sc.cpu_seconds), "true_changes": sc.truth,
            "detected": sc.detected, "true_positives": sc.tp,
            "cpu_ms_per_series": num(1000.0 * sc.cpu_seconds / n) if (n := sc.breakdown.get("series")) else None,
            **{k: sc.breakdown[k] for k in ("by_size", "by_category", "by_length") if k in sc.breakdown}}


@dataclass
class Evaluation:
    """What ``pal evaluate`` measured: the data it used and one score per candidate."""

    source: str
    description: str
    margin: int
    online: bool
    candidates: list[Candidate]
    scores: list[Score]
    missing_peers: list[str]

    def rows(self) -> list[dict[str, Any]]:
        return [score_row(c, s) for c, s in zip(self.candidates, self.scores)]

    def markdown(self) -> str:
        mode = "online (daily replay)" if self.online else "offline"
        lines = [f"data: {self.source}: {self.description}; margin {self.margin} runs; {mode}", "",
                 format_table(self.scores), "", format_breakdown(self.scores)]
        if self.missing_peers:
            lines += ["", "peers not installed: " + ", ".join(self.missing_peers)]
        return "\n".join(lines)


DATA_SETS = ("csit-like", "honest")


def generated(data: str, seed: int) -> list[LabelledSeries]:
    """A generated labelled set by name: ``csit-like`` (pal's first, easy set) or ``honest``."""
    from pal.evaluation.datasets import csit_like, honest

    if data == "csit-like":
        return csit_like(seed=seed)
    if data == "honest":
        return honest(seed=seed)
    raise ValueError(f"evaluate: data set {data!r}, expected one of {', '.join(DATA_SETS)}")


def run(spec: Any = None, csv_paths: Sequence[Any] = (), peers: bool = False, margin: int = 3,
        seed: int = 1, online: bool = False, detectors: Sequence[str] | None = None,
        data: str = "csit-like", oracle: bool = False) -> Evaluation:
    """The whole harness as ``pal evaluate`` runs it.

    Data: the labelled CSVs when given, else the generated set ``data`` (``generated``). Candidates: the spec's
    test sets when given, else one default test set per registered detector; with ``peers``
    also the installed peers. ``online`` scores the run path replayed daily (peers and raw
    detectors stay offline: they have no daily job). ``oracle`` adds the bound
    (``oracle_candidate``), always offline.
    """
    from pal.evaluation.datasets import read_csv

    series: list[LabelledSeries] = []
    for path in csv_paths:
        series.extend(read_csv(path))
    source = ", ".join(str(p) for p in csv_paths) if csv_paths else f"{data.replace('-', '_')}(seed={seed})"
    if not csv_paths:
        series = generated(data, seed)
    for name in detectors or ():
        detector_class(name)  # SpecError naming the registered ones
    cands = spec_candidates(spec, online) if spec is not None else default_candidates(online, detectors)
    missing: list[str] = []
    if peers:
        more, missing = peer_candidates(seed, spec.test_sets[0] if spec is not None and spec.test_sets else None)
        cands = cands + more
    if oracle:
        cands = cands + [oracle_candidate(series, margin)]
    scores = evaluate(series, cands, margin)
    return Evaluation(source, describe(series), margin, online, cands, scores, missing)


#: the oracle row's false-alarm allowance (the offline goal) and minimum change (the default filters')
ORACLE_PER_1K = 0.05
ORACLE_MIN_CHANGE_PCT = 1.0


def oracle_candidate(series: Sequence[LabelledSeries], margin: int = 3, per_1k: float = ORACLE_PER_1K,
                     min_change_pct: float = ORACLE_MIN_CHANGE_PCT) -> Candidate:
    """What a detector told every other change and every dip could find on this set
    (``pal.evaluation.oracle``), its threshold calibrated on the set's stationary series to
    ``per_1k`` false alarms per 1,000 runs: the row a detector's recall is read against."""
    from pal.evaluation.oracle import calibrated_z, oracle_detections

    z = calibrated_z(series, per_1k)
    return Candidate(f"oracle (bound, z {z:.2f})", lambda s: oracle_detections(s, z, margin, min_change_pct), "oracle")
