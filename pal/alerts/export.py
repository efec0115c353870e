"""Series exports, as CSV / Parquet / JSON: every sample of the window, and its trend groups.

A run writes, for each format of ``outputs.exports`` (``Exports``):

- ``exports/samples-<fmt>/<job>/<build>.<fmt>``: every sample of one build, columns
  ``SAMPLE_EXPORT_COLUMNS`` (the value, NaN = missing and never 0.0; its stdev; the test's
  attributes; the build's time, testbed and DUT version). What a build's file holds does not
  depend on the window, so a daily run writes the files of its new builds only (and removes
  those of builds that left the window), whatever the size of the history;
- ``exports/groups.<fmt>``: every trend group of every series, ``GROUP_COLUMNS`` (its builds,
  runs, average, label and the change called inside it): what the analysis of the window
  decides, a few rows per series, written every run.

A build's file joins its groups on (job, test_id, metric) with ``first_build <= build <=
last_build``. ``series_frame`` is the same samples with their groups as one table (benchmarks).

CSV cells are neutralised against formula injection: a text cell starting with ``=``, ``+``,
``-``, ``@``, tab or CR gets a leading ``'``; numeric columns stay numbers. Parquet keeps the
raw text (it is not opened by spreadsheets as formulas).
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import math
import os
import re
import shutil
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pal import csvtext
from pal.model import SeriesResult
from pal.atomic import TMP_MARK, write_atomic, write_files_atomic
from pal.digest import data_hasher
from pal.memory import release_memory

log = logging.getLogger("pal")

EXPORT_COLUMNS = ["job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "build",
                  "build_time", "testbed", "dut_version", "value", "stdev", "trend", "group", "group_label", "label"]
_TEXT = ("job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "testbed",
         "dut_version", "group_label", "label", "anomaly")
_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def series_frame(results: list[SeriesResult], builds: pd.DataFrame | None = None) -> pd.DataFrame:
    """All samples of ``results`` as one table (rows sorted by job, test id, metric, build).

    Text columns are Arrow-backed ``string``; per-series texts are converted once per series and
    repeated by Arrow (``take``), the build facts looked up per job by binary search.
    """
    ordered = sorted(results, key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
    lengths = np.array([len(r.values) for r in ordered], dtype=np.int64)
    series_of_row = np.repeat(np.arange(len(ordered), dtype=np.int64), lengths)
    per_series = {  # one value per series, repeated over its samples
        "job": [r.key.job for r in ordered], "test_id": [r.key.test_id for r in ordered],
        "metric": [r.key.metric for r in ordered], "test_set": [r.test_set for r in ordered],
        **{k: [r.attrs.get(k) for r in ordered] for k in ("topo_arch", "nic", "frame_size", "cores")},
    }
    data: dict[str, object] = {k: _text_array(v, series_of_row) for k, v in per_series.items()}
    data["build"] = _cat([np.asarray(r.builds, dtype=np.int64) for r in ordered], np.int64)
    data["build_time"] = pd.to_datetime(_cat([np.asarray(r.times, dtype="datetime64[ns]") for r in ordered],
                                             "datetime64[ns]"), utc=True)
    for col, attr in (("value", "values"), ("stdev", "stdevs"), ("trend", "trend")):
        data[col] = _cat([np.asarray(getattr(r, attr), dtype=np.float64) for r in ordered], np.float64)
    group, glabel, label, names = _group_codes(ordered, data["value"])
    data["group"] = pd.array(np.where(group >= 0, group, 0), dtype="Int64")
    data["group"][group < 0] = pd.NA
    data["group_label"] = _text_array(names, glabel)
    data["label"] = _text_array(names, label)
    facts = _build_facts(builds, per_series["job"], lengths, data["build"])
    data["testbed"], data["dut_version"] = facts
    return pd.DataFrame({col: data[col] for col in EXPORT_COLUMNS})


def _cat(arrays: list, dtype: object) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype) if arrays else np.empty(0, dtype=dtype)


def _one_axis(results: list[SeriesResult]) -> bool:
    """Whether the series share one builds array and one times array (``series.shared_axis``: the
    series of a job that ran every test in each build), their builds increasing: then the
    stable sort of their rows by build is the transpose of the (series x build) matrix."""
    if not results:
        return False
    builds, times = results[0].builds, results[0].times
    if any(r.builds is not builds or r.times is not times for r in results):
        return False
    b = np.asarray(builds)
    return b.ndim == 1 and len(b) == len(times) and all(len(r.values) == len(b) == len(r.stdevs) for r in results) \
        and bool(np.all(b[1:] > b[:-1]))


def _text_array(values: list, index: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``values[index]`` as a ``string`` column (index -1: missing), converting each value once."""
    small = pa.array(pd.array([*values, None], dtype="string"))  # what astype("string") makes of each
    if isinstance(small, pa.ChunkedArray):
        small = small.combine_chunks()
    taken = small.take(pa.array(np.where(index < 0, len(small) - 1, index)))
    return pd.arrays.ArrowStringArray(pa.chunked_array([taken], type=small.type))


def _group_codes(ordered: list[SeriesResult], values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per sample: group index (-1 outside every group), codes of its group's label and of its own
    label into ``names``: ``regression`` / ``progression`` at an anomaly's first valid run,
    ``missing`` where there is no value, else ``normal``."""
    names: list[str] = ["normal", "missing"]
    code: dict[str, int] = {n: i for i, n in enumerate(names)}

    def of(name: str) -> int:
        if name not in code:
            code[name] = len(names)
            names.append(name)
        return code[name]

    n = len(values)
    group = np.full(n, -1, dtype=np.int64)
    glabel = np.full(n, -1, dtype=np.int64)
    missing = np.isnan(values)
    label = np.where(missing, 1, 0).astype(np.int64)
    start = 0
    for r in ordered:
        size = len(r.values)
        for gi, g in enumerate(r.groups):
            lo, hi = start + max(0, min(g.start, size)), start + max(0, min(g.end, size))
            group[lo:hi] = gi
            glabel[lo:hi] = of(g.label)
        for a in r.changes:
            if 0 <= a.index < size and not missing[start + a.index]:
                label[start + a.index] = of(a.kind)
        start += size
    return group, glabel, label, names


def _build_facts(builds: pd.DataFrame | None, jobs: list[str], lengths: np.ndarray,
                 build: np.ndarray) -> tuple[pd.api.extensions.ExtensionArray, ...]:
    """Testbed and DUT version of each row's (job, build) from the builds table (last row wins)."""
    index = np.full(len(build), -1, dtype=np.int64)
    cols = {"testbed": [None], "dut_version": [None]}
    if builds is not None and not builds.empty:
        facts = builds.drop_duplicates(["job", "build"], keep="last").reset_index(drop=True)
        cols = {c: (facts[c].tolist() if c in facts.columns else [None] * len(facts)) for c in cols}
        where = {j: np.flatnonzero(facts["job"].astype(str).to_numpy() == j) for j in set(jobs)}
        fbuild = facts["build"].to_numpy(dtype=np.int64)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        bounds: dict[str, tuple[int, int]] = {}
        for j, a, b in zip(jobs, starts.tolist(), ends.tolist()):  # a job's rows are contiguous
            lo, hi = bounds.get(j, (a, b))
            bounds[j] = (min(lo, a), max(hi, b))
        for j, (a, b) in bounds.items():
            rows = where[j]
            if len(rows) == 0:
                continue
            order = rows[np.argsort(fbuild[rows], kind="stable")]
            pos = np.searchsorted(fbuild[order], build[a:b])
            pos = np.minimum(pos, len(order) - 1)
            hit = fbuild[order][pos] == build[a:b]
            index[a:b] = np.where(hit, order[pos], -1)
    return tuple(_text_array(cols[c], index) for c in ("testbed", "dut_version"))


def _neutralise_str(text: str) -> str:
    return "'" + text if text.startswith(_DANGEROUS) else text


def neutralise(value: object) -> object:
    """A text cell a spreadsheet would run as a formula, made inert with a leading ``'``."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The CSV text: text columns neutralised, numbers as numbers, times ISO-8601 UTC.

    Byte for byte what ``DataFrame.to_csv(index=False, lineterminator="\\n")`` writes after the
    neutralisation (floats as ``repr``, missing values empty, minimal quoting), built with Arrow
    compute (``pal.csvtext``): 1 M rows in about a second instead of ten.
    """
    buf = io.BytesIO()  # grows in place; chunk by chunk Arrow reuses the same memory
    for piece in csv_chunks(df):
        buf.write(piece)
    return buf.getvalue()


def csv_chunks(df: pd.DataFrame) -> Iterator[bytes | memoryview]:
    """``csv_bytes`` in pieces, to stream into a file. A column of a dtype the fast path does not
    know (categorical, float32, other datetimes...) sends the frame through pandas."""
    few = max(1, len(df) // csvtext.MIN_REUSE)
    cells = [_column_cells(col, df[col], few) for col in df.columns]
    if any(c is None for c in cells):
        yield _csv_bytes_pandas(df)
        return
    yield from csvtext.iter_csv([str(c) for c in df.columns], cells)


def write_csv(df: pd.DataFrame, target: Path) -> Path:
    """``csv_bytes(df)`` written to ``target`` atomically, streamed chunk by chunk."""
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            for piece in csv_chunks(df):
                fh.write(piece)

    write_atomic(target, write)
    return target


def _column_cells(name: object, col: pd.Series, few: int) -> csvtext.Cells | None:
    """Finished CSV cells of one column, or None for a dtype left to pandas.

    Text, booleans and integers with at most ``few`` distinct values stay coded by value.
    """
    text_like = name in _TEXT or col.dtype == object
    cell = _neutralise_str if text_like else None
    if name == "build_time":
        return _time_cells(col)
    if col.dtype == np.float64:
        values = col.to_numpy()
        coded = _few_floats(values, few)  # e.g. the trend: one value per group
        if coded is not None:
            return csvtext.coded_text(coded[0], csvtext.float_text(coded[1]).to_pylist(), cell)
        return _computed(len(values), lambda a, b: csvtext.float_text(values[a:b]), text_like)
    if col.dtype == object and not _all_text(col):
        missing = pd.isna(col).to_numpy()
        texts = [None if m else str(v) for v, m in zip(col.tolist(), missing.tolist())]
        return csvtext.coded_text(np.where(missing, -1, np.arange(len(texts))), texts, cell)
    text = isinstance(col.dtype, pd.StringDtype) or col.dtype == object or col.dtype == np.bool_
    integer = isinstance(col.dtype, pd.Int64Dtype) or (
        isinstance(col.dtype, np.dtype) and (col.dtype.kind == "i" or (col.dtype.kind == "u" and col.dtype.itemsize < 8)))
    if not (text or integer):
        return None
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    if text or len(uniques) <= few:
        return csvtext.coded_text(codes, [str(u) for u in uniques], cell)
    values, missing = col.to_numpy(dtype=np.int64, na_value=0), col.isna().to_numpy()
    return _computed(len(values), lambda a, b: csvtext.int_text(values[a:b], missing[a:b]), text_like)


def _few_floats(values: np.ndarray, few: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes, distinct values) when ``values`` has at most ``few`` distinct ones, else None.

    The first rows decide first (rows come series by series), so a column of all-distinct values
    costs no full hashing. Columns holding -0.0 are not coded (hashing takes it for 0.0, but it
    prints ``-0.0``).
    """
    sample = values[:8192]
    if len(pd.unique(sample)) > max(1, len(sample) // csvtext.MIN_REUSE):
        return None
    if bool(np.any((values == 0) & np.signbit(values))):
        return None
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return (codes, uniques) if len(uniques) <= few else None


def _computed(length: int, cells: Callable[[int, int], pa.Array], text_like: bool) -> csvtext.Computed:
    """Cells made per chunk of rows, neutralised when the column is text-like (a ``-`` number)."""
    if not text_like:
        return csvtext.Computed(length, cells)
    return csvtext.Computed(length, lambda a, b: csvtext.neutralise_text(cells(a, b), _DANGEROUS))


def _all_text(col: pd.Series) -> bool:
    return pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty")


def _time_cells(col: pd.Series) -> csvtext.Coded:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (seconds truncated as ``strftime`` does), empty for NaT."""
    stamps = pd.to_datetime(col, utc=True).dt.tz_localize(None).to_numpy().astype("datetime64[s]")
    codes, uniques = pd.factorize(stamps.view(np.int64))
    codes[np.isnat(stamps)] = -1
    texts = np.datetime_as_string(uniques.astype("datetime64[s]"), unit="s").tolist()
    return csvtext.coded_text(codes, [None if t == "NaT" else t + "Z" for t in texts])


def _csv_bytes_pandas(df: pd.DataFrame) -> bytes:
    """The same file by ``DataFrame.to_csv`` (any dtype; about ten times slower)."""
    out = df.copy()
    for col in out.columns:
        if col in _TEXT or out[col].dtype == object:
            text = out[col].astype("string")
            risky = text.str.startswith(_DANGEROUS).fillna(False).astype(bool)
            if risky.any():
                out[col] = text.where(~risky, "'" + text)
    if "build_time" in out.columns:
        out["build_time"] = pd.to_datetime(out["build_time"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    buf = io.StringIO()
    out.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")


def json_bytes(df: pd.DataFrame) -> bytes:
    return (df.to_json(orient="records", date_format="iso", indent=1) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------
# The exports of a run: a file per build, kept while its rows do not change, and the groups
# ---------------------------------------------------------------------------

#: a build's file: what was measured, nothing that the analysis of the window decides
SAMPLE_EXPORT_COLUMNS = ["job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores",
                         "build", "build_time", "testbed", "dut_version", "value", "stdev"]
#: ``groups.<fmt>``: one row per trend group of a series, what the window's analysis decides
GROUP_COLUMNS = ["job", "test_id", "metric", "test_set", "group", "first_build", "last_build", "runs", "valid",
                 "trend", "stdev", "label", "anomaly", "anomaly_build"]
EXPORT_FORMATS = ("csv", "parquet", "json")
#: changed builds formatted as one table (their test ids quoted once): a daily run has one a job,
#: a cold run the whole window, whose table would hold every row of the job at once
EXPORT_BATCH_BUILDS = 16
#: the index of the build files that are current: ``exports/samples-index.json``
SAMPLES_INDEX = "samples-index.json"
#: what earlier versions wrote here (one file of every sample a run, rewritten daily), removed
_OLD_LAYOUT = ("series.csv", "series.parquet", "series.json", ".parts")
_SERIES_TEXT = ("job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores")
_GROUP_TEXT = ("job", "test_id", "metric", "test_set", "label", "anomaly")


def samples_dir(exports_dir: Path, fmt: str) -> Path:
    """``exports/samples-<fmt>/``: one directory per job, one ``<build>.<fmt>`` file per build."""
    return Path(exports_dir) / f"samples-{fmt}"


def job_dir_name(job: str) -> str:
    """A job's directory under ``samples-<fmt>/``: its name where that is a safe file name, else
    its name made safe plus a digest (two jobs never share a directory, none can be ``..``)."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}", job):
        return job
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", job).strip("-")[:80] or "job"
    return f"{safe}-{hashlib.sha1(job.encode()).hexdigest()[:8]}"


class _JobRows:
    """One job's samples as row arrays, build after build (series order within a build)."""

    def __init__(self, job: str, results: list[SeriesResult]):
        ordered = sorted(results, key=lambda r: (r.key.test_id, r.key.metric))
        self.job = job
        self.texts = {"job": [job] * len(ordered), "test_id": [r.key.test_id for r in ordered],
                      "metric": [r.key.metric for r in ordered], "test_set": [r.test_set for r in ordered],
                      **{k: [r.attrs.get(k) for r in ordered] for k in ("topo_arch", "nic", "frame_size", "cores")}}
        if _one_axis(ordered):  # the rows build after build, series after series: a transpose
            axis, count = np.asarray(ordered[0].builds, dtype=np.int64), len(ordered)
            self.series = np.tile(np.arange(count, dtype=np.int64), len(axis))
            self.build = np.repeat(axis, count)
            self.time = np.repeat(np.asarray(ordered[0].times, dtype="datetime64[ns]"), count)
            self.value = np.stack([np.asarray(r.values, dtype=np.float64) for r in ordered], axis=1).ravel()
            self.stdev = np.stack([np.asarray(r.stdevs, dtype=np.float64) for r in ordered], axis=1).ravel()
        else:
            lengths = np.array([len(r.values) for r in ordered], dtype=np.int64)
            series = np.repeat(np.arange(len(ordered), dtype=np.int64), lengths)
            build = _cat([np.asarray(r.builds, dtype=np.int64) for r in ordered], np.int64)
            order = np.argsort(build, kind="stable")
            self.series, self.build = series[order], build[order]
            self.time = _cat([np.asarray(r.times, dtype="datetime64[ns]") for r in ordered], "datetime64[ns]")[order]
            self.value = _cat([np.asarray(r.values, dtype=np.float64) for r in ordered], np.float64)[order]
            self.stdev = _cat([np.asarray(r.stdevs, dtype=np.float64) for r in ordered], np.float64)[order]
        cuts = np.flatnonzero(np.diff(self.build)) + 1
        starts = np.concatenate(([0], cuts)).astype(np.int64)
        ends = np.concatenate((cuts, [len(self.build)])).astype(np.int64)
        #: (build, first row, end row) of each build
        self.spans = [(int(self.build[a]), int(a), int(b)) for a, b in zip(starts, ends) if b > a]
        self._sdigest = np.array([int.from_bytes(hashlib.sha1(json.dumps(
            [self.texts[c][i] for c in _SERIES_TEXT], default=str).encode()).digest()[:8], "little")
            for i in range(len(ordered))], dtype=np.uint64)

    def digest(self, lo: int, hi: int, facts: tuple[object, object], version: bytes) -> str:
        """Of every value in the rows ``lo:hi`` (one build): texts, times, values, build facts."""
        h = data_hasher(version)
        h.update(json.dumps([self.job, int(self.build[lo]) if hi > lo else None, *facts], default=str).encode())
        for arr in (self._sdigest[self.series[lo:hi]], self.time[lo:hi].view(np.int64), self.value[lo:hi],
                    self.stdev[lo:hi]):
            h.update(np.ascontiguousarray(arr))
        return h.hexdigest()

    def frame(self, spans: list[tuple[int, int, int]], facts: dict[tuple[str, int], tuple[object, object]]) -> pd.DataFrame:
        """The rows of ``spans`` (some of ``self.spans``), one after the other, as a table of
        SAMPLE_EXPORT_COLUMNS; testbed and DUT version from ``facts`` by (job, build)."""
        return self.part(spans, facts).frame()

    def part(self, spans: list[tuple[int, int, int]], facts: dict[tuple[str, int], tuple[object, object]]) -> "_Part":
        """The rows of ``spans`` and what their table is made of, without the job's other rows:
        what a batch of builds sends to the process that writes its files (a few hundred KB;
        its table would be 8 MB of Arrow strings)."""
        sel = np.concatenate([np.arange(lo, hi, dtype=np.int64) for _, lo, hi in spans]) if spans \
            else np.empty(0, dtype=np.int64)
        return _Part(self.job, self.texts, self.series[sel], self.build[sel], self.time[sel], self.value[sel],
                     self.stdev[sel], [hi - lo for _, lo, hi in spans],
                     [facts.get((self.job, b), (None, None)) for b, _, _ in spans])


@dataclass(frozen=True)
class _Part:
    """Some builds' rows of one job (``_JobRows.part``): per row its series, build, time, value
    and stdev; the job's per-series texts; each build's row count and (testbed, DUT version)."""

    job: str
    texts: dict[str, list]
    series: np.ndarray
    build: np.ndarray
    time: np.ndarray
    value: np.ndarray
    stdev: np.ndarray
    counts: list[int]
    facts: list[tuple[object, object]]

    def frame(self) -> pd.DataFrame:
        """The rows as a table of SAMPLE_EXPORT_COLUMNS."""
        data: dict[str, object] = {c: _text_array(self.texts[c], self.series) for c in _SERIES_TEXT}
        data["build"] = self.build
        data["build_time"] = pd.to_datetime(self.time, utc=True)
        of_row = np.repeat(np.arange(len(self.counts), dtype=np.int64), self.counts)
        data["testbed"], data["dut_version"] = (_text_array([f[i] for f in self.facts], of_row) for i in (0, 1))
        data["value"], data["stdev"] = self.value, self.stdev
        return pd.DataFrame({c: data[c] for c in SAMPLE_EXPORT_COLUMNS})


def _facts_of(builds: pd.DataFrame | None) -> dict[tuple[str, int], tuple[object, object]]:
    """(job, build) -> (testbed, DUT version) from the builds table, its last row winning."""
    if builds is None or builds.empty:
        return {}
    facts = builds.drop_duplicates(["job", "build"], keep="last")
    cols = [facts[c].tolist() if c in facts.columns else [None] * len(facts) for c in ("testbed", "dut_version")]
    return {(str(j), int(b)): (_text_or_none(t), _text_or_none(v))
            for j, b, t, v in zip(facts["job"].tolist(), facts["build"].tolist(), *cols)}


def _text_or_none(v: object) -> str | None:
    return None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)


def groups_frame(results: list[SeriesResult]) -> pd.DataFrame:
    """Every trend group of ``results``, one row each (GROUP_COLUMNS), sorted by series and group.

    ``runs`` counts the group's runs, missing ones included, ``valid`` those with a value;
    ``anomaly`` / ``anomaly_build`` are the change the detector calls inside the group (its kind
    and the build of its first run), empty when there is none.
    """
    ordered = sorted(results, key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
    cols: dict[str, list] = {c: [] for c in GROUP_COLUMNS}
    for r in ordered:
        n = len(r.values)
        builds = np.asarray(r.builds, dtype=np.int64)
        values = np.asarray(r.values, dtype=np.float64)
        changes = sorted((a.index, a.kind) for a in r.changes if 0 <= a.index < n and not math.isnan(values[a.index]))
        for gi, g in enumerate(r.groups):
            lo, hi = max(0, min(g.start, n)), max(0, min(g.end, n))
            inside = next(((i, kind) for i, kind in changes if lo <= i < hi), None)
            for c, v in (("job", r.key.job), ("test_id", r.key.test_id), ("metric", r.key.metric),
                         ("test_set", r.test_set), ("group", gi),
                         ("first_build", int(builds[lo]) if hi > lo else None),
                         ("last_build", int(builds[hi - 1]) if hi > lo else None), ("runs", hi - lo),
                         ("valid", int(g.size)), ("trend", float(g.avg)), ("stdev", float(g.stdev)),
                         ("label", g.label), ("anomaly", inside[1] if inside else None),
                         ("anomaly_build", int(builds[inside[0]]) if inside else None)):
                cols[c].append(v)
    frame = {c: pd.array(cols[c], dtype="string") for c in _GROUP_TEXT}
    for c in ("group", "first_build", "last_build", "runs", "valid", "anomaly_build"):
        frame[c] = pd.array(cols[c], dtype="Int64")
    for c in ("trend", "stdev"):
        frame[c] = np.asarray(cols[c], dtype=np.float64)
    return pd.DataFrame({c: frame[c] for c in GROUP_COLUMNS})


def _format_version() -> bytes:
    """What else decides a file's bytes: this module's and csvtext's code, the pandas/Arrow versions."""
    h = hashlib.sha1(f"{pd.__version__}|{pa.__version__}".encode())
    for mod in (__file__, csvtext.__file__):
        h.update(Path(mod).read_bytes())
    return h.digest()


@functools.lru_cache(maxsize=None)
def _parquet_schema(columns: tuple[str, ...]) -> pa.Schema:
    """The Arrow schema of a build's file or of the groups (from an empty table): every build's
    file has the same types, whatever its own columns hold (an all-empty testbed stays text)."""
    frame = _JobRows("", []).frame([], {}) if columns == tuple(SAMPLE_EXPORT_COLUMNS) else groups_frame([])
    return pa.Table.from_pandas(frame, preserve_index=False).schema


def file_bytes(df: pd.DataFrame, fmt: str) -> bytes:
    """One export file of ``df`` (SAMPLE_EXPORT_COLUMNS or GROUP_COLUMNS) in ``fmt``."""
    return b"".join(bytes(p) for p in _Formatted(df, fmt).pieces(0, len(df)))


class _Formatted:
    """A table made ready once for files of any of its row ranges in one format: the texts of
    a CSV column quoted once for all ranges (a job's test ids, not a build's), the Arrow table
    converted once. A range's file is what ``file_bytes`` of those rows alone makes."""

    def __init__(self, df: pd.DataFrame, fmt: str):
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown export format {fmt!r}")
        self.fmt, self.df = fmt, df
        if fmt == "csv":
            few = max(1, len(df) // csvtext.MIN_REUSE)
            cells = [_column_cells(col, df[col], few) for col in df.columns]
            if any(c is None for c in cells):
                raise ValueError(f"a column of a type the CSV writer does not know: {list(df.dtypes)}")
            self.header, self.cells = [str(c) for c in df.columns], cells
        elif fmt == "parquet":
            self.table = pa.Table.from_pandas(df, preserve_index=False).cast(_parquet_schema(tuple(df.columns)))

    def pieces(self, lo: int, hi: int) -> Iterator[bytes | memoryview]:
        if self.fmt == "csv":
            yield from csvtext.iter_csv(self.header, [_rows(c, lo, hi) for c in self.cells])
        elif self.fmt == "json":
            yield json_bytes(self.df.iloc[lo:hi].reset_index(drop=True))
        else:
            sink = pa.BufferOutputStream()
            # dictionary pages for the texts only: numbers are nearly all distinct
            pq.write_table(self.table.slice(lo, hi - lo), sink, compression="zstd",
                           use_dictionary=[c for c in self.df.columns if c in _TEXT])
            yield sink.getvalue().to_pybytes()


def _rows(cells: csvtext.Cells, lo: int, hi: int) -> csvtext.Cells:
    """The rows ``lo:hi`` of a column's CSV cells."""
    if isinstance(cells, csvtext.Coded):
        return csvtext.Coded(cells.codes[lo:hi], cells.cells)
    if isinstance(cells, csvtext.Computed):
        return csvtext.Computed(hi - lo, lambda a, b, make=cells.make: make(lo + a, lo + b))
    return cells.slice(lo, hi - lo)


Batch = list[tuple[int, int, int]]
#: a batch's outcome: each build's file sizes per format (None: a file could not be made or
#: written), and the problems (path, error) met
Outcome = tuple[list[tuple[int, dict[str, int] | None]], list[tuple[Path, Exception]]]


def write_batch(exports_dir: Path, formats: tuple[str, ...], name: str, batch: Batch, part: _Part) -> Outcome:
    """Every format's file of each build of ``batch`` (``part``: its rows, one build after the
    other, ``_JobRows.part``), written as one batch (``write_files_atomic``).

    A module function of plain arguments: the run's process calls it, and so does the render's
    pool for the batches it takes (``_Helper``)."""
    frame = part.frame()
    ready = {fmt: _Formatted(frame, fmt) for fmt in formats}
    problems: list[tuple[Path, Exception]] = []
    files: list[tuple[Path, bytes]] = []
    build_of: dict[Path, int] = {}
    made: list[tuple[int, dict[str, int] | None]] = []
    at = 0
    for build, lo, hi in batch:
        sizes: dict[str, int] | None = {}
        for fmt in formats:
            target = samples_dir(exports_dir, fmt) / name / f"{build}.{fmt}"
            try:
                data = b"".join(bytes(p) for p in ready[fmt].pieces(at, at + hi - lo))
            except (OSError, ValueError) as exc:
                problems.append((target, exc))
                sizes = None
                break
            files.append((target, data))
            build_of[target] = build
            sizes[fmt] = len(data)
        made.append((build, sizes))
        at += hi - lo
    errors = write_files_atomic(files, step="export-build")
    problems.extend(errors.items())
    failed = {build_of[t] for t in errors}
    del frame, ready, files
    release_memory()  # the batch's Arrow buffers: a cold run's peak is a batch's, not a job's
    return [(build, None if build in failed else sizes) for build, sizes in made], problems


class _Helper:
    """Batches handed to the render's pool, ``IN_POOL`` at a time, while this process writes the others.

    Few at a time: the pool's worker draws drill-downs too (``render_site``), and a batch queued
    behind its chunks is one this process could have written meanwhile; four, so that the worker
    has the next at hand when it ends one, its drill-downs done or not. At the end a batch the worker has not started is
    taken back (``Future.cancel``) and written here rather than waited for. A batch the pool
    could not take or finish (shut down, broken) is written here too: the pool wrote whole
    files or none, each atomically, so writing it again gives the same files."""

    IN_POOL = 4

    def __init__(self, pool: Executor | None):
        self.pool = pool
        self.pending: list[tuple[int, tuple, Future]] = []
        self.by_pool: set[int] = set()  # the batches the pool wrote

    def offer(self, seq: int, args: tuple) -> bool:
        """Hand batch ``seq`` (``write_batch``'s arguments) to the pool if it has room: True if taken."""
        if self.pool is None or len(self.pending) >= self.IN_POOL:
            return False
        try:
            self.pending.append((seq, args, self.pool.submit(write_batch, *args)))
        except RuntimeError:  # shut down or broken: this process writes the rest
            self.pool = None
            return False
        return True

    def finished(self) -> dict[int, Outcome]:
        """The batches the pool finished since the last call."""
        done: list[tuple[int, tuple, Future]] = []
        still: list[tuple[int, tuple, Future]] = []
        for p in self.pending:  # one look at each: a batch that ends meanwhile is in one list, not neither
            (done if p[2].done() else still).append(p)
        self.pending = still
        return dict(self._outcome(p) for p in done)

    def drain(self) -> dict[int, Outcome]:
        """Every batch handed out, finished: those the worker has not started written here."""
        pending, self.pending = self.pending, []
        return dict(self._outcome(p, steal=True) for p in pending)

    def _outcome(self, item: tuple[int, tuple, Future], steal: bool = False) -> tuple[int, Outcome]:
        seq, args, future = item
        if steal and future.cancel():
            return seq, write_batch(*args)
        try:
            outcome = future.result()
            self.by_pool.add(seq)
            return seq, outcome
        except Exception as exc:  # noqa: BLE001 - a broken pool, a worker's crash: this process writes it
            log.info("exports: the render's pool could not write a batch (%s); written here", exc)
            self.pool = None
            return seq, write_batch(*args)


class Exports:
    """The exports of a run under ``exports_dir``, in each of ``formats``:

    - ``samples-<fmt>/<job>/<build>.<fmt>``: every sample of one build (SAMPLE_EXPORT_COLUMNS).
      A build's rows change only when it is parsed again or the spec renames or regroups its
      tests, so a daily run writes the files of its new builds, removes those of builds that
      left the window, and keeps the rest: ``samples-index.json`` holds the digest of each
      file's rows and its size, and a file is written again only when they differ.
    - ``groups.<fmt>``: the trend groups of every series (GROUP_COLUMNS), written every run.

    Every file is written atomically. A kill leaves, at worst, files the index does not vouch
    for: the next run writes them again, so its exports equal an uninterrupted run's.
    """

    def __init__(self, exports_dir: Path, results: list[SeriesResult], builds: pd.DataFrame | None,
                 formats: Iterable[str]):
        self.dir = Path(exports_dir)
        self.formats = tuple(f for f in EXPORT_FORMATS if f in set(formats))
        self.results = results
        self._facts = _facts_of(builds)
        self.formatted: list[tuple[str, int]] = []  # the builds whose files this run wrote
        self.by_pool = 0  # how many of them the pool given to ``write`` wrote

    def write(self, problem: Callable[[Path, Exception], None], pool: Executor | None = None) -> dict[str, Path]:
        """Write every export; a file that cannot be written goes to ``problem(path, error)`` (it is
        not in the index, so the next run tries again) and the others still are. Returns
        ``{"groups.<fmt>": path, "samples-<fmt>": dir}`` of what was written.

        ``pool``: another process's pool (the render's) that writes some of the changed builds'
        batches while this process writes the others (``_Helper``): a cold run's 679 builds took
        this process 10 s while the render's worker, its drill-downs done, waited for it."""
        if not self.formats:  # no exports asked for: none of an earlier run's is left to mislead
            if self.dir.exists():
                self._remove_old_layout()
                self._tidy(problem, {})
                (self.dir / SAMPLES_INDEX).unlink(missing_ok=True)
            return {}
        self.dir.mkdir(parents=True, exist_ok=True)
        self._remove_old_layout()
        version = _format_version()
        old = self._load_index(version)
        by_job: dict[str, list[SeriesResult]] = {}
        for r in self.results:
            by_job.setdefault(r.key.job, []).append(r)
        entries: dict[str, dict[str, dict]] = {}  # job -> build -> its index entry
        digests: dict[str, dict[int, str]] = {}
        names: dict[str, str] = {}
        job_of: list[str] = []  # each batch's job, in the order written
        outcomes: dict[int, Outcome] = {}
        helper = _Helper(pool)
        for job in sorted(by_job):
            rows = _JobRows(job, by_job[job])
            name = names[job] = job_dir_name(job)
            kept = old.get(job, {}) if old.get(job, {}).get("dir") == name else {}
            entries[job], digests[job] = {}, {}
            todo: list[tuple[int, int, int]] = []
            for build, lo, hi in rows.spans:
                digest = digests[job][build] = rows.digest(lo, hi, self._facts.get((job, build), (None, None)), version)
                entry = kept.get("builds", {}).get(str(build))
                if entry is not None and entry.get("digest") == digest and self._intact(name, build, entry):
                    entries[job][str(build)] = entry
                else:
                    todo.append((build, lo, hi))
            # a job with one batch to write (a daily run's) writes it here: behind the worker's
            # drill-downs, it would keep this process waiting for it at the end
            shared = len(todo) > EXPORT_BATCH_BUILDS
            for first in range(0, len(todo), EXPORT_BATCH_BUILDS):  # the changed builds, a batch a table
                batch = todo[first:first + EXPORT_BATCH_BUILDS]
                seq = len(job_of)
                job_of.append(job)
                args = (self.dir, self.formats, name, batch, rows.part(batch, self._facts))
                if not (shared and helper.offer(seq, args)):
                    outcomes[seq] = write_batch(*args)
                outcomes.update(helper.finished())
            del rows
        outcomes.update(helper.drain())
        failed = False
        for seq, job in enumerate(job_of):  # in the order written, whoever wrote them
            made, problems = outcomes[seq]
            for target, exc in problems:
                problem(target, exc)
            for build, sizes in made:
                failed |= sizes is None
                if sizes is not None:
                    entries[job][str(build)] = {"digest": digests[job][build], **sizes}
                    self.formatted.append((job, build))
                    self.by_pool += seq in helper.by_pool
        index = {job: {"dir": names[job], "builds": dict(sorted(entries[job].items(), key=lambda kv: int(kv[0])))}
                 for job in sorted(by_job)}
        paths: dict[str, Path] = {}
        groups = groups_frame(self.results) if self.formats else None
        for fmt in self.formats:
            target = self.dir / f"groups.{fmt}"
            try:
                data = file_bytes(groups, fmt)
                write_atomic(target, lambda tmp, data=data: tmp.write_bytes(data))
                paths[f"groups.{fmt}"] = target
            except (OSError, ValueError) as exc:
                problem(target, exc)
            paths[f"samples-{fmt}"] = samples_dir(self.dir, fmt)
        document = {"format": version.hex(), "formats": list(self.formats),
                    "jobs": {j: index[j] for j in sorted(index)}}
        try:
            write_atomic(self.dir / SAMPLES_INDEX,
                         lambda tmp: tmp.write_text(json.dumps(document, sort_keys=True, indent=1) + "\n", "utf-8"))
        except OSError as exc:  # the next run finds no index it trusts and writes every file again
            problem(self.dir / SAMPLES_INDEX, exc)
        self._tidy(problem, index)
        if failed:
            log.info("exports: some build files could not be written; the next run writes them again")
        return paths

    def _intact(self, name: str, build: int, entry: dict) -> bool:
        """The build's file of every format is there with the size the index says."""
        for fmt in self.formats:
            try:
                if (samples_dir(self.dir, fmt) / name / f"{build}.{fmt}").stat().st_size != entry.get(fmt):
                    return False
            except OSError:
                return False
        return True

    def _load_index(self, version: bytes) -> dict[str, dict]:
        """The last run's index, if it was written by this version for the same formats, else {}."""
        try:
            doc = json.loads((self.dir / SAMPLES_INDEX).read_text("utf-8"))
            if doc.get("format") != version.hex() or doc.get("formats") != list(self.formats):
                return {}
            jobs = doc.get("jobs")
            return {str(j): v for j, v in jobs.items() if isinstance(v, dict) and isinstance(v.get("builds"), dict)}
        except (OSError, ValueError, AttributeError, TypeError):
            return {}

    def _remove_old_layout(self) -> None:
        for name in _OLD_LAYOUT:
            path = self.dir / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
                log.info("exports: removed %s (the layout before per-build files)", path)
            elif path.exists() or path.is_symlink():
                path.unlink(missing_ok=True)
                log.info("exports: removed %s (the layout before per-build files)", path)

    def _tidy(self, problem: Callable[[Path, Exception], None], index: dict[str, dict]) -> None:
        """``_prune``; what cannot be removed goes to ``problem`` (the next run tries again)."""
        try:
            self._prune(index)
        except OSError as exc:
            problem(Path(exc.filename) if exc.filename else self.dir, exc)

    def _prune(self, index: dict[str, dict]) -> None:
        """Remove what the index does not hold: files of builds that left the window, directories of
        jobs no longer analysed, formats no longer asked for, temp files of killed runs."""
        wanted = {v["dir"]: {f"{b}" for b in v["builds"]} for v in index.values()}
        for fmt in EXPORT_FORMATS:
            root = samples_dir(self.dir, fmt)
            if fmt not in self.formats:
                if root.is_dir():
                    shutil.rmtree(root, ignore_errors=True)
                (self.dir / f"groups.{fmt}").unlink(missing_ok=True)
                continue
            if not root.is_dir():
                continue
            for job_entry in os.scandir(root):
                builds = wanted.get(job_entry.name)
                if builds is None or not job_entry.is_dir(follow_symlinks=False):
                    if job_entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(job_entry.path, ignore_errors=True)
                    else:
                        os.unlink(job_entry.path)
                    continue
                for f in os.scandir(job_entry.path):
                    stem, dot, ext = f.name.partition(".")
                    if not (dot and ext == fmt and stem in builds):
                        if f.is_dir(follow_symlinks=False):
                            shutil.rmtree(f.path, ignore_errors=True)
                        else:
                            os.unlink(f.path)
        for f in os.scandir(self.dir):  # temp files of a killed run's groups / index
            if TMP_MARK in f.name and f.name.startswith(".") and f.is_file(follow_symlinks=False):
                os.unlink(f.path)
