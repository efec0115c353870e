"""From the samples table to one analysed ``SeriesResult`` per (job, test, metric).

The analysis runs once per series; dashboards, graphs, alerts, exports and the accuracy
harness all reuse its result. ``analyse_one`` is the single place where a detector runs and
where the alertable changes are decided (``pal.analysis.filters.alertable_changes``): the
alerts stage only groups, matches and writes them; ``pal evaluate`` scores the same list.
A series' whole window is analysed whenever it is (the compiled MDL search costs less than any
saved search state would, and the window slides daily); ``pal run`` skips only the jobs whose
series did not change since the run before (``pal.analysis.result_cache``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from pal.analysis.compliance import compliance, week_runs
from pal.analysis.detector import Detection, Detector, levels_from_changes
from pal.analysis.filters import MaskedSearch, alertable_changes
from pal.analysis.registry import get_detector
from pal.model import Change, SearchStates, SeriesKey, SeriesResult, TrendGroup
from pal.spec import Spec, TestSet

#: columns a series carries as attributes (constant per series, the last row's value wins)
ATTR_COLUMNS = ("topo_arch", "test_name", "suite", "test_type", "nic", "frame_size", "cores",
                "threads_cores", "driver", "topology", "unit")

@dataclass(frozen=True)
class SeriesInput:
    """One series, cut out of the samples table, ready for a detector (small and picklable)."""

    key: SeriesKey
    test_set: str
    builds: np.ndarray
    times: np.ndarray
    values: np.ndarray
    stdevs: np.ndarray
    attrs: dict[str, Any]
    trials: list | None = None  # per run: the trial list (MRR) or None; None when not read
    resume: SearchStates | None = None  # the last run's search states (``SearchStates``) to go on from
    keep: bool = False  # ask for the search states for the next run (the job's window grows)


def assign_test_sets(samples: pd.DataFrame, spec: Spec) -> pd.Series:
    """The test set of every row ("" when none matches); the first matching test set wins."""
    codes, names = _test_set_codes(samples, spec)
    return pd.Series(names[codes], index=samples.index, dtype=object)


def _test_set_codes(samples: pd.DataFrame, spec: Spec) -> tuple[np.ndarray, np.ndarray]:
    """Every row's test set as an index into the names returned (0: "", none matches).

    Decided per distinct value, never per row: jobs and metrics per category (history's
    columns are categoricals), selections per distinct (test id, tag set) pair. A million
    rows cost a few factorisations, not a million Python strings.
    """
    names = np.array(["", *(ts.name for ts in spec.test_sets)], dtype=object)
    if samples.empty:
        return np.zeros(0, dtype=np.int64), names
    chosen = np.zeros(len(samples), dtype=np.int64)  # index into names; 0: none
    job_codes, job_uniq = _codes(samples["job"])
    metric_codes, metric_uniq = _codes(samples["metric"])
    id_codes, id_uniq = _codes(samples["test_id"])
    # selections depend on (test id, tags) only. Tags are told apart by object identity
    # (shared tuples from load_history); equal tuples that are distinct objects are merely
    # decided twice.
    tags = samples["tags"].to_numpy(dtype=object)
    # hashed, not sorted (np.unique): the pairs' order does not matter, and a year's 13 M rows
    # took 1.8 s of sorting
    tag_codes, _ = pd.factorize(np.fromiter(map(id, tags), dtype=np.int64, count=len(tags)))
    inverse, pair_codes = pd.factorize(id_codes.astype(np.int64) * (int(tag_codes.max()) + 1) + tag_codes)
    first_row = np.zeros(len(pair_codes), dtype=np.int64)
    first_row[inverse] = np.arange(len(inverse))  # a row of every pair (all rows of a pair are alike)
    for n, ts in enumerate(spec.test_sets, start=1):
        job_ok = _job_mask(job_uniq, ts)
        metric_ok = np.isin(metric_uniq, list(ts.metrics))
        sel = ts.select.compiled()
        cand = _pick(job_ok, job_codes) & _pick(metric_ok, metric_codes) & (chosen == 0)
        wanted = np.flatnonzero(np.bincount(inverse[cand], minlength=len(pair_codes)))  # the pairs, sorted: no sort
        ok = np.zeros(len(pair_codes), dtype=bool)
        for k in wanted.tolist():
            row = first_row[k]
            test_id = str(id_uniq[id_codes[row]]) if id_codes[row] >= 0 else ""
            ok[k] = sel.match(test_id, tuple(tags[row] or ()))
        chosen[cand & ok[inverse]] = n
    return chosen, names


def _codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 for missing) and the distinct values as str: a categorical's own, else factorised."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories.astype(str).to_numpy(dtype=object)
    codes, uniq = pd.factorize(column, use_na_sentinel=True)
    return codes, np.asarray(uniq.astype(str), dtype=object)


def _pick(per_value: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per-row booleans from per-distinct-value ones; a missing value (-1) is never picked."""
    return np.append(per_value, False)[codes]


def _job_mask(jobs: np.ndarray, ts: TestSet) -> np.ndarray:
    """Which of the (distinct) job names the test set's ``jobs`` patterns take."""
    if not ts.jobs:
        return np.ones(len(jobs), dtype=bool)
    pats = [re.compile(p) for p in ts.jobs]
    return np.fromiter((any(p.fullmatch(j) for p in pats) for j in jobs), dtype=bool, count=len(jobs))


@dataclass(frozen=True)
class Cut:
    """A samples table cut into series (``cut_series``). ``uniform``: every series' runs all have
    the test set of its first run, so a series cut from the same rows without its oldest builds
    has the same test set (what ``pal.window.slide`` relies on to drop them from the last run's)."""

    series: list[SeriesInput]
    uniform: bool


def split_series(samples: pd.DataFrame, spec: Spec) -> list[SeriesInput]:
    """Cut the samples table into series inputs, in a stable order (job, test id, metric)."""
    return cut_series(samples, spec).series


def cut_series(samples: pd.DataFrame, spec: Spec) -> Cut:
    """``split_series`` and whether its series' test sets are uniform (``Cut``).

    Vectorised: the three key columns are factorised (sorted codes keep the string order), rows
    are ordered by one lexsort of codes and build, and each series is a slice of plain arrays.
    A series takes the test set of its first run and the attributes of its last.
    """
    if samples.empty:
        return Cut([], True)
    set_codes, set_names = _test_set_codes(samples, spec)
    rows = np.flatnonzero(set_codes != 0)
    if not len(rows):
        return Cut([], True)
    df = samples if len(rows) == len(samples) else samples.iloc[rows]  # (a copy: a year's window is GBs)
    codes = [_sorted_codes(df[c]) for c in ("job", "test_id", "metric")]
    builds_all = df["build"].to_numpy(dtype=np.int64)
    order = np.lexsort((builds_all, codes[2], codes[1], codes[0]))  # stable: the last key is primary
    key_code = np.stack([c[order] for c in codes], axis=1)
    b_sorted = builds_all[order]
    # duplicates of (series, build): keep the last one in table order (as drop_duplicates keep="last")
    same_next = np.zeros(len(order), dtype=bool)
    same_next[:-1] = (key_code[1:] == key_code[:-1]).all(axis=1) & (b_sorted[1:] == b_sorted[:-1])
    keep = order[~same_next]
    key_code = key_code[~same_next]
    n = len(keep)
    bounds = np.flatnonzero((key_code[1:] != key_code[:-1]).any(axis=1)) + 1
    starts = np.concatenate([[0], bounds]).astype(np.int64)
    ends = np.concatenate([bounds, [n]]).astype(np.int64)

    def num(name: str, dtype: Any) -> np.ndarray:
        return df[name].to_numpy(dtype=dtype)[keep]

    def text(name: str, at: np.ndarray) -> np.ndarray:
        """The column's texts at sorted rows ``at`` (shared str objects, None for NA): taken at
        those rows only, not for every row of the window first (a year's window is 13 M rows)."""
        codes, uniques = _codes(df[name])  # a categorical's (the store's columns) as they are
        table = np.empty(len(uniques) + 1, dtype=object)
        table[:-1] = uniques
        table[-1] = None
        return table[codes[keep[at]]]

    times_all = num("build_time", "datetime64[ns]")
    builds = builds_all[keep]
    values_all = num("value", np.float64)
    stdevs_all = num("stdev", np.float64)
    trials_all = df["trials"].to_numpy(dtype=object)[keep] if "trials" in df.columns else None
    jobs, ids, metrics = (text(c, starts) for c in ("job", "test_id", "metric"))
    lasts = ends - 1
    attr_cols = {c: text(c, lasts) for c in ATTR_COLUMNS}
    run_sets = set_codes[rows][keep]
    sets = set_names[run_sets[starts]]
    uniform = bool((run_sets == np.repeat(run_sets[starts], ends - starts)).all())
    out: list[SeriesInput] = []
    # The series of a job mostly ran in the same builds: they share one builds array and one
    # times array (read-only), so a pickle of many series (a chunk sent to a worker, its results
    # sent back, a render chunk) holds them once, and so does memory (a year: 36,000 series)
    axes: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        # per-series texts only: the build facts of each run (testbed, DUT version) are in the builds
        # table, once per build; three per-run lists here were half of a result's pickle and unread
        attrs: dict[str, Any] = {c: v[i] for c, v in attr_cols.items()}
        key = SeriesKey(jobs[i], ids[i], metrics[i])
        trials = None if trials_all is None else [_trial_list(t) for t in trials_all[s:e]]
        b, t = shared_axis(axes, builds[s:e], times_all[s:e])
        out.append(SeriesInput(key, str(sets[i]), b, t, values_all[s:e], stdevs_all[s:e], attrs, trials))
    return Cut(out, uniform)


def shared_axis(axes: dict[bytes, tuple[np.ndarray, np.ndarray]], builds: np.ndarray, times: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """``builds`` and ``times`` of a series as the pair ``axes`` already holds for series with the
    same ones, else these, made read-only and added: the series share one pair (``cut_series``)."""
    seen = builds.tobytes() + times.tobytes()
    axis = axes.get(seen)
    if axis is None:
        builds.flags.writeable = times.flags.writeable = False
        axis = axes[seen] = (builds, times)
    return axis


def _sorted_codes(column: pd.Series) -> np.ndarray:
    """Codes in the sort order of the values as text (-1 for missing), as ``pd.factorize(sort=True)``
    gives for text. A categorical with sorted categories (the store's) has them already; another
    categorical's are ranked by their texts (factorising it would sort by the categories' order)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        cats = column.cat.categories
        if cats.is_monotonic_increasing and cats.is_unique:
            return codes
        rank = np.empty(len(cats) + 1, dtype=np.int64)
        rank[:-1] = pd.factorize(np.asarray(cats.astype(str), dtype=object), sort=True)[0]
        rank[-1] = -1
        return rank[codes]
    return pd.factorize(column, sort=True)[0]


def single_testbed_jobs(builds: pd.DataFrame, spec: Spec) -> set[str]:
    """Jobs whose topo-arch has one testbed: from the spec when given, else from the data."""
    out = set()
    counts = {}
    if not builds.empty:
        counts = builds.dropna(subset=["testbed"]).groupby("job")["testbed"].nunique().to_dict()
    jobs = set(builds["job"].astype(str)) if not builds.empty else set()
    jobs |= {j.name for j in spec.jobs}
    for job in jobs:
        js = spec.job(job)
        n = js.testbeds if js is not None and js.testbeds is not None else counts.get(job, 0)
        if n <= 1:
            out.add(job)
    return out


def _trial_list(cell: Any) -> list[float] | None:
    if cell is None or (isinstance(cell, float) and np.isnan(cell)):
        return None
    trials = [float(t) for t in cell]
    return trials or None


def detector_of(test_set: TestSet) -> Detector:
    """The test set's detector, built from the registry with its parameters."""
    return get_detector(test_set.detector.name, test_set.detector.params)


def analyse_one(series: SeriesInput, test_set: TestSet, single_testbed: bool,
                detector: Detector | None = None) -> SeriesResult:
    """Detector, alertable changes, compliance and the detector's bands of one series.

    The detector sees the trial lists when it reads them (``uses_trials``) and the samples
    have them, the run values otherwise. Its trend, levels, bands and verdict are kept as it
    gave them; a detector that reports only changes gets one level per change. The alertable
    changes (``SeriesResult.alertable``) use the test set's alert filters and the short-term
    window (``compliance.week_runs``), the same window the dashboard counts regressions in.
    (``analyse_many`` of one series.)
    """
    return analyse_many([Analysis(series, test_set, detector or detector_of(test_set), single_testbed)])[0]


@dataclass(eq=False, slots=True)
class Analysis:
    """One series as ``analyse_many`` analyses it: its input, test set, detector and whether its
    job runs on a single testbed; then each step's result."""

    series: SeriesInput
    test_set: TestSet
    detector: Detector
    single_testbed: bool
    direction: int = 1
    given: Any = None
    states: SearchStates | None = None
    detection: Detection | None = None
    groups: list[TrendGroup] | None = None
    trend: np.ndarray | None = None
    changes: list[Change] | None = None
    alertable: list[Change] | None = None
    masked: MaskedSearch | None = None


#: series ``analyse_many`` takes each step of together
ANALYSE_BATCH = 32


def analyse_many(items: list[Analysis]) -> list[SeriesResult]:
    """``analyse_one`` of each item, in order: ``ANALYSE_BATCH`` at a time, each step for all of
    them before the next (``_ANALYSIS_STEPS``). A series analysed from start to end ran through
    so much code (the detector's search, the alert filters, the compliance) that the processor's
    caches kept little of it from one series to the next: 432-500 -> 387-392 us a daily series
    (docs/scaling.md, thirty-second round)."""
    out = []
    for i in range(0, len(items), ANALYSE_BATCH):
        batch = items[i:i + ANALYSE_BATCH]
        for step in _ANALYSIS_STEPS:
            for a in batch:
                step(a)
        out += map(_result, batch)
    return out


def _start(a: Analysis) -> None:
    series = a.series
    a.direction = a.test_set.direction_of(series.key.metric)
    a.given = series.values
    if a.detector.uses_trials and series.trials is not None:
        a.given = [t if t is not None else (None if np.isnan(v) else [float(v)])
                   for t, v in zip(series.trials, series.values)]
    a.states = series.resume or SearchStates()


def _detect(a: Analysis) -> None:
    a.detection = a.detector.detect(a.given, a.direction, resume=a.states.detector, keep=a.series.keep)


def _levels(a: Analysis) -> None:
    series, detection = a.series, a.detection
    values = series.values
    a.groups, level_trend = (detection.groups, None) if detection.groups else levels_from_changes(values, detection.changes)
    trend = detection.trend if np.isfinite(detection.trend).any() else level_trend
    a.trend = np.full(len(values), np.nan) if trend is None else trend
    a.changes = [_with_builds(c, series.builds, values, a.detector.name) for c in detection.changes]


def _alertable(a: Analysis) -> None:
    window = week_runs(a.test_set.windows, a.single_testbed)
    filters = a.test_set.alert_filters
    a.masked = MaskedSearch(a.states.masked) if a.series.keep else None
    a.alertable = alertable_changes(a.detector, a.given, a.direction, a.series.builds,
                                    min_change_pct=filters.min_change_pct, confirm_runs=filters.confirm_runs,
                                    window_runs=window, changes=a.detection.changes, masked_search=a.masked)


#: the steps of an analysis, in order (``analyse_many``; ``_result`` makes its result)
_ANALYSIS_STEPS = (_start, _detect, _levels, _alertable)


def _result(a: Analysis) -> SeriesResult:
    series, detection, masked = a.series, a.detection, a.masked
    comp = compliance(a.trend, series.times, a.changes, a.test_set.windows, a.single_testbed, a.direction,
                      groups=a.groups)
    # the detector's own bands; the MM / TMA bands every drill-down draws are the render's
    # (``pal.render.graphs.drawn_bands``): a function of the values, not held for every series
    bands = {k: np.asarray(v, dtype=np.float64) for k, v in detection.bands.items()}
    return SeriesResult(
        key=series.key, builds=series.builds, times=series.times, values=series.values, stdevs=series.stdevs,
        trend=a.trend, groups=a.groups, changes=a.changes, compliance=comp, verdict=detection.verdict,
        direction=a.direction, detector=a.detector.name, test_set=series.test_set,
        attrs=dict(series.attrs), bands=bands, alertable=a.alertable,
        resume=SearchStates(detection.resume, masked.kept) if masked is not None else None,
    )


def _with_builds(c: Change, builds: np.ndarray, values: np.ndarray, detector: str) -> Change:
    """A detector's change with its first bad / last good build and JSON-friendly evidence."""
    before = np.flatnonzero(~np.isnan(values[: c.index]))
    return replace(c, first_bad_build=int(builds[c.index]),
                   last_good_build=int(builds[before[-1]]) if len(before) else None,
                   detector=c.detector or detector, evidence=_plain(c.evidence))


def _plain(d: dict) -> dict:
    """Evidence as JSON-friendly scalars (numpy types become Python numbers)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


#: series per executor task: big enough that pickling a chunk costs little beside its MDL work
CHUNK_SERIES = 200
#: series per chunk a render worker analyses ahead (``AnalysisAhead``): the run's process waits
#: at the end for the two chunks the worker holds (the one it analyses and the next), about
#: 0.3 s with 200; a task's own cost (spec and hand-over) is well under a millisecond
AHEAD_CHUNK = 50


def analyse_all(inputs: Iterable[SeriesInput], spec: Spec, single_testbed: set[str], executor: Any = None,
                chunk: int | None = None) -> list[SeriesResult]:
    """Analyse every series in order.

    With an ``executor`` (pal.executor) of more than one worker, chunks of ``chunk`` series
    (default CHUNK_SERIES; their inputs and the spec: numbers, no DataFrames) are mapped over
    it; the results are the inline ones, in the same order. A chunk that fails is analysed
    again inline, so its error surfaces here as it would without an executor.
    """
    inputs = list(inputs)
    chunk = chunk or CHUNK_SERIES
    if executor is None or getattr(executor, "workers", 1) <= 1 or len(inputs) <= chunk:
        return _analyse_chunk((inputs, spec, single_testbed))
    items = []
    for i in range(0, len(inputs), chunk):
        part = inputs[i:i + chunk]
        items.append((part, spec, {s.key.job for s in part} & single_testbed))
    results: list[SeriesResult] = []
    for item, out in zip(items, executor.map(analyse_remote, items, label="series chunks analysed")):
        results += joined(item[0], out[0]) if isinstance(out, tuple) else _analyse_chunk(item)  # (Failed: redo here)
    return results


class AnalysisAhead:
    """Series analysed on a pool's worker while this process is still reading the window.

    ``add`` sends the series of each job, as they are cut, in chunks of ``chunk`` series
    (``AHEAD_CHUNK``) to the pool (``concurrent.futures``; a spawned render worker, which is idle
    until the drawing).
    ``results`` analyses here the chunks no worker has started, from the last one back, waits
    for the others, and returns every result in the order added: the same results as
    ``analyse_all`` (the same code on the same inputs). A chunk whose worker failed is analysed
    again here; ``broken`` then says the pool is unusable.

    ``then``: a digest of each result made where it is analysed, on the worker or here as the
    chunks are (the render's ``page_content``: not left for after the analysis, when the worker
    would wait for it); ``contents`` holds them by series key.
    """

    def __init__(self, pool: Any, spec: Spec, single_testbed: set[str], chunk: int | None = None,
                 then: Callable[[SeriesResult], bytes] | None = None):
        self._pool, self._spec, self._single, self._then = pool, spec, single_testbed, then
        self._chunk = chunk or AHEAD_CHUNK
        self._items: list[tuple[list[SeriesInput], Spec, set[str]]] = []
        self._futures: list[Any] = []
        self.broken = False
        self.by_worker = 0  # series whose results came from the pool
        self.contents: dict[SeriesKey, bytes] = {}

    def add(self, inputs: list[SeriesInput]) -> None:
        for i in range(0, len(inputs), self._chunk):
            part = inputs[i:i + self._chunk]
            item = (part, self._spec, {s.key.job for s in part} & self._single)
            self._items.append(item)
            try:
                self._futures.append(self._pool.submit(analyse_remote, item, self._then))
            except Exception:  # noqa: BLE001 - a broken pool: this process does the chunk
                self.broken = True
                self._futures.append(None)

    def results(self) -> list[SeriesResult]:
        done: list[list[SeriesResult] | None] = [None] * len(self._items)
        for i in range(len(self._items) - 1, -1, -1):
            future = self._futures[i]
            if future is not None and not future.cancel():
                break  # a worker has this one and those before it
            done[i] = self._here(self._items[i])
        out: list[SeriesResult] = []
        for i, (item, future) in enumerate(zip(self._items, self._futures)):
            if done[i] is None:
                try:
                    found, digests = future.result()
                    done[i] = joined(item[0], found)
                    if digests is not None:
                        self.contents.update(zip((s.key for s in item[0]), digests))
                    self.by_worker += len(done[i])
                except Exception:  # noqa: BLE001 - the worker died or raised: redo here, errors surface here
                    self.broken = True
                    done[i] = self._here(item)
            out += done[i]
        self._items, self._futures = [], []  # the inputs are the caller's to free
        return out

    def _here(self, item: tuple[list[SeriesInput], Spec, set[str]]) -> list[SeriesResult]:
        results = _analyse_chunk(item)
        if self._then is not None:
            self.contents.update((r.key, self._then(r)) for r in results)
        return results


def _analyse_chunk(item: tuple[list[SeriesInput], Spec, set[str]]) -> list[SeriesResult]:
    """Analyse a chunk's series in order (``analyse_all``, ``AnalysisAhead``)."""
    inputs, spec, single_testbed = item
    sets = {ts.name: ts for ts in spec.test_sets}
    detectors = {ts.name: detector_of(ts) for ts in spec.test_sets}
    return analyse_many([Analysis(s, sets[s.test_set], detectors[s.test_set], s.key.job in single_testbed)
                         for s in inputs])


#: what ``analyse_one`` adds to a series' input, in the order ``analyse_remote`` sends it
FOUND_FIELDS = ("trend", "groups", "changes", "compliance", "verdict", "direction", "detector", "bands", "alertable",
                "resume")


def analyse_remote(item: tuple[list[SeriesInput], Spec, set[str]],
                   then: Callable[[SeriesResult], bytes] | None = None) -> tuple[list[tuple], list[bytes] | None]:
    """A pool worker's side of a chunk: each result without what its input holds (key, arrays,
    texts), as a tuple of ``FOUND_FIELDS``, and ``then`` of each result (None without). The caller
    has the inputs (``joined``): a result's builds, times, values and stdevs are its input's, and
    were two thirds of what a result pickles to (the worker's dumps and the run's loads: 79 -> 23
    us a series of 170 runs)."""
    results = _analyse_chunk(item)
    return ([tuple(getattr(r, f) for f in FOUND_FIELDS) for r in results],
            [then(r) for r in results] if then is not None else None)


def joined(inputs: list[SeriesInput], found: list[tuple]) -> list[SeriesResult]:
    """The results ``analyse_one`` gives, from the inputs and what ``analyse_remote`` sent for them."""
    if len(inputs) != len(found):
        raise ValueError(f"analysis: {len(found)} results for {len(inputs)} series")
    return [SeriesResult(key=s.key, builds=s.builds, times=s.times, values=s.values, stdevs=s.stdevs,
                         test_set=s.test_set, attrs=dict(s.attrs), **dict(zip(FOUND_FIELDS, f, strict=True)))
            for s, f in zip(inputs, found)]
