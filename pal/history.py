"""The history step: which stored builds the spec's window selects, read from the store with
renames, the ignore list and testbed names applied. What every later stage sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from pal.memory import release_memory
from pal.report import RunReport
from pal.spec import Spec


@dataclass
class History:
    """What the analysis sees: the samples and builds of the spec's window."""

    samples: pd.DataFrame
    builds: pd.DataFrame


#: columns no later stage reads: left out of ``History.samples``. ``trials`` (alone ~40 % of the
#: memory of a CSIT-scale history as Python lists) is read only when a test set's detector
#: reads trials (``Detector.uses_trials``), so that such a detector sees them in production too.
UNREAD_COLUMNS = ("trials", "source_file")


def needs_trials(spec: Spec) -> bool:
    """Whether any test set's detector reads per-run trial lists."""
    from pal.analysis.registry import detector_class

    return any(getattr(detector_class(ts.detector.name), "uses_trials", False) for ts in spec.test_sets)


def load_history(spec: Spec, store: Any, now: datetime, report: RunReport) -> History:
    """The samples and builds of the spec's window, with renames, ignore list and testbed names applied.

    Only the window's builds are kept and only the columns later stages read (not
    ``source_file``; ``trials`` only for detectors that read them). ``tags`` hold one shared
    tuple per distinct tag set, not one per row. ``pal run`` reads the same rows one job at a
    time (``pipeline.window_series``).
    """
    builds = window_builds(spec, store, now)
    samples = read_samples(spec, store, builds)
    report.count("history.builds", len(builds))
    report.count("history.samples", len(samples))
    return History(samples, builds)


def window_builds(spec: Spec, store: Any, now: datetime) -> pd.DataFrame:
    """The stored builds of the spec's window (``select_window``), testbed names applied."""
    builds = store.builds([j.name for j in spec.jobs])
    builds = builds[select_window(spec, builds, now)].reset_index(drop=True)
    if spec.testbeds and not builds.empty:
        builds["testbed"] = builds["testbed"].map(lambda t: spec.testbeds.get(t, t) if isinstance(t, str) else t)
    return builds


def growing_jobs(spec: Spec, store: Any, builds: pd.DataFrame) -> set[str]:
    """The jobs whose window (``builds``: ``window_builds``) holds every build of the job stored
    and will take the next one without dropping any: no explicit build list or last build, no
    ``period-days``, fewer builds than ``max-builds``. Their series only grow from run to run: the
    analysis keeps their MDL search states (``pal.analysis.mdl_states``), which a window that slides
    could not use."""
    if builds.empty:
        return set()
    in_window = builds["job"].astype(str).value_counts().to_dict()
    stored = store.builds(list(in_window))["job"].astype(str).value_counts().to_dict()
    out = set()
    for js in spec.jobs:
        n = in_window.get(js.name, 0)
        if (n and n == stored.get(js.name) and js.builds is None and not isinstance(js.end, int)
                and js.period_days is None and (js.max_builds is None or n < js.max_builds)):
            out.add(js.name)
    return out


def window_jobs(builds: pd.DataFrame) -> list[str]:
    """The jobs of ``builds`` in the store's order (a read of several jobs returns theirs in this order)."""
    return sorted(set(builds["job"].astype(str))) if not builds.empty else []


def read_samples(spec: Spec, store: Any, builds: pd.DataFrame) -> pd.DataFrame:
    """The stored samples of ``builds`` (rows of ``window_builds``) with renames, the ignore list
    and testbed names applied, in the store's order (job, build, test id, metric)."""
    samples = _read_window(store, window_jobs(builds), builds, trials=needs_trials(spec))
    return apply_names(spec, samples).reset_index(drop=True)


def concat_samples(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Frames of ``read_samples`` (of different builds) as one, in the given order.

    Categorical columns stay categorical, their categories the sorted union (what one read of
    all the rows gives); other columns are concatenated as they are.
    """
    if len(frames) == 1:
        return frames[0]
    columns: dict[str, Any] = {}
    for col in frames[0].columns:
        parts = [f[col] for f in frames]
        if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
            columns[col] = pd.api.types.union_categoricals([p.array for p in parts], sort_categories=True)
        else:
            columns[col] = pd.concat(parts, ignore_index=True)
    return pd.DataFrame(columns, index=pd.RangeIndex(sum(len(f) for f in frames)))


def _read_window(store: Any, jobs: list[str], builds: pd.DataFrame, trials: bool = False) -> pd.DataFrame:
    """The stored samples of ``builds`` as a DataFrame.

    The store reads only the window's fragments (row groups of compacted ones), through the
    manifest; string columns arrive as Arrow dictionaries and become pandas categoricals whose
    categories are sorted (so sorting or factorising with ``sort=True`` orders rows as the strings
    would): each distinct value is held once, the rows hold 1-4 byte codes.
    """
    from pal.model import SAMPLE_COLUMNS
    from pal.store.schema import STRING_COLUMNS, arrow_to_samples, dictionary_to_categorical

    columns = [c for c in SAMPLE_COLUMNS if c not in UNREAD_COLUMNS or (trials and c == "trials")]
    keys = list(zip(builds["job"].astype(str), builds["build"].astype(np.int64).tolist()))
    table = store.table(jobs, columns, builds=keys, dictionary=True).unify_dictionaries()
    numeric = [c for c in columns if c != "tags" and c not in STRING_COLUMNS]
    samples = arrow_to_samples(table.select(numeric), numeric)
    for col in columns:
        if col in STRING_COLUMNS:
            samples[col] = dictionary_to_categorical(table[col])
    samples["tags"] = shared_tags(table["tags"])
    del table
    release_memory()  # the read's buffers, or the whole run would carry the read's peak
    return samples[columns]


def used_categories(samples: pd.DataFrame) -> pd.DataFrame:
    """``samples`` with each categorical column's categories cut to the values its rows use (sorted,
    as the store's read gives them): rows kept of a larger read (``alert_samples``) and the same
    rows slid from the last run's (``pal.window.slide``) then have the same categories."""
    out = samples
    for col in samples.columns:
        column = samples[col]
        if isinstance(column.dtype, pd.CategoricalDtype):
            trimmed = column.cat.remove_unused_categories()
            if len(trimmed.cat.categories) != len(column.cat.categories):
                if out is samples:
                    out = samples.copy(deep=False)
                out[col] = trimmed
    return out


def shared_tags(tags: Any) -> np.ndarray:
    """Joined tag sets (``Store.table(dictionary=True)``'s ``tags``, chunks sharing one dictionary)
    as an object array of tuples, one tuple object per distinct tag set."""
    from pal.store.schema import TAG_SEP

    chunks = tags.chunks if tags.num_chunks else [pa.array([], pa.dictionary(pa.int32(), pa.string()))]
    uniq = np.empty(len(chunks[0].dictionary) + 1, dtype=object)
    uniq[:-1] = [tuple(t.split(TAG_SEP)) if t else () for t in chunks[0].dictionary.to_pylist()]
    uniq[-1] = None  # a row without a tag list
    idx = [c.indices.fill_null(len(uniq) - 1).to_numpy(zero_copy_only=False) for c in chunks]
    return uniq[np.concatenate(idx)] if idx else uniq[:0]


def select_window(spec: Spec, builds: pd.DataFrame, now: datetime) -> np.ndarray:
    """Which stored builds the spec's job ranges select (explicit list, start/end, max-builds, period);
    ``now`` matters only for jobs with ``period-days``."""
    keep = np.zeros(len(builds), dtype=bool)
    if builds.empty:
        return keep
    jobs = builds["job"].astype(str).to_numpy()
    numbers = builds["build"].to_numpy(dtype=np.int64)
    times = pd.to_datetime(builds["build_time"], utc=True)
    for js in spec.jobs:
        mask = jobs == js.name
        if js.builds is not None:
            mask &= np.isin(numbers, js.builds)
        else:
            mask &= numbers >= js.start
            if isinstance(js.end, int):
                mask &= numbers <= js.end
        if js.period_days is not None:
            cutoff = pd.Timestamp(now) - pd.Timedelta(days=js.period_days)
            mask &= ~(times < cutoff).to_numpy()
        if js.max_builds is not None:
            idx = np.flatnonzero(mask)
            if len(idx) > js.max_builds:
                mask[idx[np.argsort(numbers[idx])][: -js.max_builds]] = False
        keep |= mask
    return keep


def apply_names(spec: Spec, samples: pd.DataFrame) -> pd.DataFrame:
    """Test renames (old id -> new id), the ignore list and testbed names, on stored samples."""
    if samples.empty:
        return samples
    out = samples.copy(deep=False)  # columns are replaced, never written in place
    renames = spec.renames()
    if renames:
        out["test_id"] = _map_distinct(out["test_id"], renames)
    if spec.ignore:
        pats = [re.compile(p) for p in spec.ignore]
        uniq = out["test_id"].dropna().astype(str).unique()
        dropped = [i for i in uniq if any(p.search(i) for p in pats)]
        if dropped:
            out = out[~out["test_id"].isin(dropped).fillna(False).to_numpy(dtype=bool)]
    if spec.testbeds:
        out["testbed"] = _map_distinct(out["testbed"], spec.testbeds)
    return out


def _map_distinct(column: pd.Series, mapping: dict[str, str]) -> pd.Series:
    """``mapping.get(v, v)`` per cell, computed once per distinct value (a million rows, a few thousand values).

    A categorical column stays categorical (categories sorted, merged where two map to one).
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        mapped = np.array([mapping.get(c, c) for c in column.cat.categories.astype(object)], dtype=object)
        cats = np.array(sorted(set(mapped.tolist())), dtype=object)
        remap = np.searchsorted(cats, mapped) if len(cats) else np.zeros(0, dtype=np.int64)
        codes = column.cat.codes.to_numpy()
        new = np.where(codes >= 0, remap[np.maximum(codes, 0)] if len(remap) else -1, -1)
        return pd.Series(pd.Categorical.from_codes(new, categories=pd.Index(cats, dtype=column.cat.categories.dtype),
                                                   validate=False), index=column.index)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    mapped = np.array([mapping.get(u, u) for u in uniques.astype(object)] + [None], dtype=object)
    return pd.Series(mapped[codes], index=column.index, dtype="string")
