"""Seeded, labelled synthetic series that look like CSIT trending data, and a labelled-CSV reader.

Accuracy is only measurable against known answers. ``csit_like`` draws series the way CSIT MRR
trending data looks (see docs/accuracy.md for the exact recipe):

- a level between 1e6 and 3e7 pps (log-uniform); each run is the mean of 10 trials, each trial
  level·(1 + s·N(0, 1)) with a per-series relative trial noise s in [0.5 %, 5 %];
- changing series have 1 to 3 steps up or down of 2 % to 30 %, but never below 3 standard
  deviations of the run mean (s/√10): a smaller step is not a change anyone can label;
  steps are at least ``MIN_GAP`` runs apart and from either end;
- every series may have one-run dips (an infrastructure hiccup: the whole run 5 % to 50 % low,
  the next run back at the level): these are NOT changes;
- about 2 % of runs are missing (a failed test: NaN value, no trials); never a step's first run.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pal.errors import ParseError

MIN_GAP = 15  # runs between steps, and from a step to either end of the series
KINDS = ("regression", "progression")


@dataclass(frozen=True)
class LabelledSeries:
    """One series with its true changes: (index of the new level's first run, kind)."""

    name: str
    values: np.ndarray  # run values, NaN = missing
    changes: tuple[tuple[int, str], ...]
    direction: int = 1
    trials: tuple[tuple[float, ...] | None, ...] | None = None
    dips: tuple[int, ...] = ()
    noise: float = math.nan  # relative trial noise (csit_like) or run-to-run noise (honest)
    sizes: tuple[float, ...] = ()  # per change: its size in noise sd (run-mean sd); empty when unknown
    categories: tuple[str, ...] = ()  # per change: "step" or "excursion" (start or end); empty: all steps

    @property
    def stationary(self) -> bool:
        return not self.changes

    @property
    def valid_runs(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.values)))


def _series(rng: np.random.Generator, name: str, runs: int, n_steps: int, trials: int,
            dip_rate: float, missing_rate: float, min_step_sigma: float = 3.0) -> LabelledSeries:
    level = math.exp(rng.uniform(math.log(1e6), math.log(3e7)))
    noise = rng.uniform(0.005, 0.05)
    run_sd = noise / math.sqrt(trials)
    steps: list[int] = []
    while len(steps) < n_steps:  # rejection sampling of well separated positions
        cand = sorted(int(i) for i in rng.integers(MIN_GAP, runs - MIN_GAP + 1, size=n_steps))
        gaps = np.diff([0] + cand + [runs])
        if n_steps == 0 or min(gaps) >= MIN_GAP:
            steps = cand
            break
    levels = np.full(runs, level)
    changes = []
    sizes: list[float] = []
    for at in steps:
        mag = max(rng.uniform(0.02, 0.30), min_step_sigma * run_sd)
        up = bool(rng.random() < 0.5)
        levels[at:] *= (1 + mag) if up else 1 / (1 + mag)
        changes.append((at, "progression" if up else "regression"))
        sizes.append(mag / run_sd)
    dips = []
    for i in range(2, runs - 2):  # the last runs: no one can tell yet that a dip reverts
        near = any(abs(i - s) <= 3 for s in steps) or any(abs(i - d) <= 3 for d in dips)
        if not near and rng.random() < dip_rate:
            dips.append(i)
    factor = np.ones(runs)
    for d in dips:
        factor[d] = 1.0 - rng.uniform(0.05, 0.5)
    all_trials = levels[:, None] * factor[:, None] * (1.0 + noise * rng.standard_normal((runs, trials)))
    values = all_trials.mean(axis=1)
    trial_list: list[tuple[float, ...] | None] = [tuple(map(float, t)) for t in all_trials]
    for i in range(runs):
        if i not in steps and i not in dips and rng.random() < missing_rate:
            values[i] = np.nan
            trial_list[i] = None
    return LabelledSeries(name, values, tuple(changes), 1, tuple(trial_list), tuple(dips), noise, tuple(sizes),
                          ("step",) * len(changes))


def csit_like(n_changing: int = 100, n_stationary: int = 200, runs: int = 120, seed: int = 1,
              trials: int = 10, dip_rate: float = 1 / 40, missing_rate: float = 0.02,
              min_step_sigma: float = 3.0) -> list[LabelledSeries]:
    """``n_changing`` series with 1-3 steps and ``n_stationary`` without, all with dips and gaps.

    ``min_step_sigma``: the smallest step in run-mean standard deviations (0: plain 2-30 %).
    """
    if runs < 2 * MIN_GAP + 1:
        raise ValueError(f"csit_like: runs={runs}, need at least {2 * MIN_GAP + 1}")
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_changing):
        out.append(_series(rng, f"changing-{i:03d}", runs, int(rng.integers(1, 4)), trials, dip_rate, missing_rate,
                           min_step_sigma))
    for i in range(n_stationary):
        out.append(_series(rng, f"stationary-{i:03d}", runs, 0, trials, dip_rate, missing_rate, min_step_sigma))
    return out


#: the honest set's ranges (docs/accuracy.md "The honest set")
HONEST_RUNS = (50, 1000)  # series length, log-uniform
HONEST_NOISE = (0.005, 0.05)  # run-to-run noise sd of the run mean, relative, log-uniform
HONEST_SIZE_SD = (0.5, 30.0)  # step size in noise sd, log-uniform ...
HONEST_SIZE_PCT = (0.01, 0.30)  # ... and 1-30 % relative (redrawn otherwise)
HONEST_EXCURSION = (3, 10)  # runs of an excursion that reverts
HONEST_EXCURSION_SD = 3.0  # an excursion is at least this many noise sd (and 1 %) away
HONEST_MIN_SEGMENT = 10  # runs between change points (an excursion's own runs excepted)


def _honest_size(rng: np.random.Generator, noise: float, low_sd: float) -> float | None:
    """A relative change: log-uniform in noise sd over [low_sd, 30], kept within 1-30 %."""
    for _ in range(50):
        sd = math.exp(rng.uniform(math.log(low_sd), math.log(HONEST_SIZE_SD[1])))
        rel = sd * noise
        if HONEST_SIZE_PCT[0] <= rel <= HONEST_SIZE_PCT[1]:
            return rel
    return None


def _honest_series(rng: np.random.Generator, name: str, changing: bool, trials: int, heavy: float,
                   spike_rate: float, missing_rate: float) -> LabelledSeries:
    runs = int(round(math.exp(rng.uniform(math.log(HONEST_RUNS[0]), math.log(HONEST_RUNS[1])))))
    level = math.exp(rng.uniform(math.log(1e6), math.log(3e7)))
    noise = math.exp(rng.uniform(math.log(HONEST_NOISE[0]), math.log(HONEST_NOISE[1])))
    shape = np.ones(runs)
    events: list[tuple[int, str, float, str]] = []  # (index, kind, size in sd, category)
    busy = np.zeros(runs, dtype=bool)  # runs inside an excursion, or next to a change point
    if changing:
        n_events = 1 + int(rng.poisson(runs / 200))
        pos = 0
        for _ in range(n_events):
            at = pos + HONEST_MIN_SEGMENT + int(rng.integers(0, max(1, (runs - pos) // 2)))
            excursion = bool(rng.random() < 1 / 3)
            length = int(rng.integers(HONEST_EXCURSION[0], HONEST_EXCURSION[1] + 1)) if excursion else 0
            if at + length + HONEST_MIN_SEGMENT > runs:
                break
            rel = _honest_size(rng, noise, HONEST_EXCURSION_SD if excursion else HONEST_SIZE_SD[0])
            if rel is None:
                break
            up = bool(rng.random() < 0.5)
            factor = (1 + rel) if up else 1 / (1 + rel)
            kind, back = ("progression", "regression") if up else ("regression", "progression")
            if excursion:
                shape[at:at + length] *= factor
                events += [(at, kind, rel / noise, "excursion"), (at + length, back, rel / noise, "excursion")]
                busy[at - 1:at + length + 2] = True
                pos = at + length
            else:
                shape[at:] *= factor
                events.append((at, kind, rel / noise, "step"))
                busy[max(0, at - 2):at + 2] = True
                pos = at
    # one-run dips and spikes, both ways, 5-50 %: not changes; never in the last 2 runs
    dips: list[int] = []
    for i in range(2, runs - 2):
        if not busy[i] and not busy[i - 1] and rng.random() < spike_rate:
            shape[i] *= (1 - rng.uniform(0.05, 0.5)) if rng.random() < 0.7 else (1 + rng.uniform(0.05, 0.5))
            dips.append(i)
            busy[i - 1:i + 2] = True
    # run mean noise sd = noise: a run-to-run part (heavy-tailed in some series) and a trial part
    within = noise * math.sqrt(trials) * rng.uniform(0.3, 0.9)  # trial sd within a run
    between = math.sqrt(max(noise**2 - within**2 / trials, 0.0))
    if rng.random() < heavy:
        run_eff = rng.standard_t(3, runs) / math.sqrt(3.0)
    else:
        run_eff = rng.standard_normal(runs)
    base = level * shape * (1.0 + between * run_eff)
    all_trials = base[:, None] * (1.0 + within * rng.standard_normal((runs, trials)))
    values = all_trials.mean(axis=1)
    trial_list: list[tuple[float, ...] | None] = [tuple(map(float, t)) for t in all_trials]
    starts = {e[0] for e in events}
    for i in range(runs):
        if i not in starts and i not in dips and rng.random() < missing_rate:
            values[i] = np.nan
            trial_list[i] = None
    return LabelledSeries(name, values, tuple((e[0], e[1]) for e in events), 1, tuple(trial_list), tuple(dips),
                          noise, tuple(e[2] for e in events), tuple(e[3] for e in events))


def honest(seed: int = 1, n_changing: int = 120, n_stationary: int = 80, trials: int = 10, heavy: float = 0.3,
           spike_rate: float = 1 / 50, missing_rate: float = 0.02) -> list[LabelledSeries]:
    """A harder set than ``csit_like``, closer to real trending data (docs/accuracy.md).

    Lengths 50-1,000 runs; run-mean noise 0.5-5 % (a run-to-run part, Student-t with 3 degrees
    of freedom in a ``heavy`` share of series, and a within-run trial part: 10 trials per run);
    steps of 0.5-30 noise sd (1-30 %) at least 10 runs apart; a third of the change events are
    excursions of 3-10 runs (at least 3 sd) that revert, labelled as two changes (the move and
    the way back, category "excursion"); one-run dips and spikes both ways (not changes);
    about 2 % missing runs.
    """
    rng = np.random.default_rng(seed)
    out = [_honest_series(rng, f"changing-{i:03d}", True, trials, heavy, spike_rate, missing_rate)
           for i in range(n_changing)]
    out += [_honest_series(rng, f"stationary-{i:03d}", False, trials, heavy, spike_rate, missing_rate)
            for i in range(n_stationary)]
    return out


def read_csv(path: str | Path) -> list[LabelledSeries]:
    """A user's labelled series: columns ``series,value,label`` (+ optional ``direction``).

    Rows are runs in order within each series; ``value`` empty means a missing run; ``label``
    is empty, ``regression`` or ``progression`` on the first run of a new level (``dip`` marks a
    known one-run dip, kept for reference only); ``direction`` is 1 or -1 (default 1).
    """
    path = Path(path)
    rows: dict[str, list[tuple[float, str, int]]] = {}
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = {"series", "value", "label"} - set(reader.fieldnames or [])
            if missing:
                raise ParseError(str(path), f"missing column(s) {', '.join(sorted(missing))}", line=1)
            for line, row in enumerate(reader, start=2):
                raw = (row.get("value") or "").strip()
                try:
                    value = float(raw) if raw else math.nan
                    direction = int(row.get("direction") or 1)
                except ValueError:
                    raise ParseError(str(path), f"bad value {raw!r} or direction", line=line) from None
                label = (row.get("label") or "").strip().lower()
                if label not in ("", "dip") + KINDS or direction not in (1, -1):
                    raise ParseError(str(path), f"bad label {label!r} or direction {direction}", line=line)
                rows.setdefault(row["series"], []).append((value, label, direction))
    except OSError as exc:
        raise ParseError(str(path), f"cannot read: {exc.strerror}") from None
    out = []
    for name, rs in rows.items():
        values = np.array([r[0] for r in rs], dtype=np.float64)
        changes = tuple((i, r[1]) for i, r in enumerate(rs) if r[1] in KINDS)
        dips = tuple(i for i, r in enumerate(rs) if r[1] == "dip")
        out.append(LabelledSeries(name, values, changes, rs[0][2], None, dips))
    return out


def write_csv(series: list[LabelledSeries], path: str | Path) -> None:
    """Write series in the ``read_csv`` format (to hand a generated set to another tool)."""
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["series", "value", "label", "direction"])
        for s in series:
            labels = dict(s.changes)
            for i, v in enumerate(s.values):
                label = labels.get(i, "dip" if i in s.dips else "")
                w.writerow([s.name, "" if math.isnan(v) else repr(float(v)), label, s.direction])
