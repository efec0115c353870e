"""Series export: every sample of every series with its group, as CSV / Parquet / JSON.

One row per (job, test_id, metric, build) run the series has, columns ``EXPORT_COLUMNS``:
the value (NaN = missing, never 0.0), the trend (group average), the group's index in the
series (null for a run outside every group) and label, the sample's label (``regression`` /
``progression`` at the first run of an anomalous group, ``missing`` where the run has no
value, else ``normal``), and testbed / DUT version of the build.

CSV cells are neutralised against formula injection: a text cell starting with ``=``, ``+``,
``-``, ``@``, tab or CR gets a leading ``'``; numeric columns stay numbers. Parquet keeps the
raw text (it is not opened by spreadsheets as formulas).

``SeriesExports`` writes ``series.csv`` and ``series.parquet`` in one pass over the rows, job by
job (rows are sorted by job first). Each file is kept for the next run as ``exports/.parts/<layout>``
``.csv`` / ``.parquet`` (hard links: no byte written twice), with ``<layout>.json``, where each
job's rows are in them (CSV bytes, Parquet row groups) under the digest of everything in them;
``<layout>`` is the digest of the jobs and their digests. A later run copies the rows of a job
whose digest is there instead of formatting them. The files are byte for byte what the same
code writes from scratch.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import io
import json
import logging
import os
import re
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pal import csvtext
from pal.model import SeriesResult
from pal.atomic import TMP_MARK, write_atomic
from pal.memory import release_memory

log = logging.getLogger("pal")

EXPORT_COLUMNS = ["job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "build",
                  "build_time", "testbed", "dut_version", "value", "stdev", "trend", "group", "group_label", "label"]
_TEXT = ("job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "testbed",
         "dut_version", "group_label", "label")
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
# Per-job parts: a daily run formats only the jobs whose rows changed
# ---------------------------------------------------------------------------

PARTS_DIR = ".parts"
#: the exports made in one pass, job by job (JSON is one array, made from the whole frame)
PART_FORMATS = ("csv", "parquet")
EXPORT_CHUNK_SERIES = 100  # series formatted at a time (a row group of series.parquet each)
#: a kept ``series.<fmt>`` (also the per-job parts of older versions): ``.parts/<digest>.<fmt>``
_KEPT_FILE = re.compile(r"^(?P<digest>[0-9a-f]{40})\.(?P<fmt>csv|parquet)$")
#: where each job's rows are in the kept files of one layout: ``.parts/<layout>.json``
_KEPT_INDEX = re.compile(r"^(?P<digest>[0-9a-f]{40})\.json$")


def _format_version() -> bytes:
    """What else decides a part's bytes: this module's and csvtext's code, the pandas/Arrow versions."""
    h = hashlib.sha1(f"{pd.__version__}|{pa.__version__}".encode())
    for mod in (__file__, csvtext.__file__):
        h.update(Path(mod).read_bytes())
    return h.digest()


def job_digest(results: list[SeriesResult], builds: pd.DataFrame | None, version: bytes = b"") -> str:
    """A digest of every value a job's export rows hold: series keys, attributes, arrays, groups,
    anomalies and the testbed / DUT version of its builds (``results`` of one job)."""
    h = hashlib.sha1(version)
    for r in sorted(results, key=lambda r: (r.key.test_id, r.key.metric)):
        head = [r.key.job, r.key.test_id, r.key.metric, r.test_set,
                [r.attrs.get(k) for k in ("topo_arch", "nic", "frame_size", "cores")],
                [(g.start, g.end, g.label) for g in r.groups], [(a.index, a.kind) for a in r.changes],
                len(r.values)]
        h.update(json.dumps(head, default=str).encode())
        h.update(np.asarray(r.builds, dtype=np.int64).tobytes())
        h.update(np.asarray(r.times, dtype="datetime64[ns]").view(np.int64).tobytes())
        for arr in (r.values, r.stdevs, r.trend):
            h.update(np.asarray(arr, dtype=np.float64).tobytes())
    if builds is not None and not builds.empty:
        cols = [c for c in ("job", "build", "testbed", "dut_version") if c in builds.columns]
        h.update(builds[cols].to_json(orient="values", date_format="iso").encode())
    return h.hexdigest()


class SeriesExports:
    """``series.csv`` / ``series.parquet`` / ``series.json`` of a run, written job by job.

    The first ``write`` of CSV or Parquet makes every format of ``formats`` in one pass over the
    rows, into temp files; each ``write(fmt, target)`` then puts its own in place atomically (a
    format not declared gets a pass of its own). A job whose digest is in the files kept by an earlier run (same
    ``exports_dir``) is not formatted: its CSV bytes and Parquet row groups are copied from
    them. The JSON export is made from the whole frame (it is one array).
    """

    def __init__(self, exports_dir: Path, results: list[SeriesResult], builds: pd.DataFrame | None,
                 formats: Iterable[str] = PART_FORMATS):
        #: the formats made in the one pass over the rows
        self.formats = tuple(f for f in PART_FORMATS if f in set(formats))
        self.parts = Path(exports_dir) / PARTS_DIR
        self.results = results
        self.builds = builds
        by_job: dict[str, list[SeriesResult]] = {}
        for r in results:
            by_job.setdefault(r.key.job, []).append(r)
        self.jobs = sorted(by_job)
        self._by_job = by_job
        self._digests: dict[str, str] = {}
        self.formatted: list[str] = []  # jobs whose rows were formatted by this object (not copied)
        self._made: dict[str, Path] = {}  # temp files made and not yet put in place
        self._passed = False
        self._layout: dict[str, list] = {}  # per format: each job's [digest, start, length]
        self._placed: dict[str, dict[str, int]] = {}  # formats in place and kept: size (and row groups)

    def _job_builds(self, job: str) -> pd.DataFrame | None:
        if self.builds is None or self.builds.empty:
            return self.builds
        return self.builds[self.builds["job"].astype(str).to_numpy() == job]

    @functools.cached_property
    def _version(self) -> bytes:
        return _format_version()

    def digest(self, job: str) -> str:
        if job not in self._digests:
            self._digests[job] = job_digest(self._by_job[job], self._job_builds(job), self._version)
        return self._digests[job]

    def _frames(self, job: str) -> Iterator[pd.DataFrame]:
        """The job's rows as frames of EXPORT_CHUNK_SERIES series each, in export order: they are
        written chunk by chunk, so the memory is a chunk's, not the job's (250,000 rows a job)."""
        ordered = sorted(self._by_job[job], key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
        builds = self._job_builds(job)
        for i in range(0, max(len(ordered), 1), EXPORT_CHUNK_SERIES):
            yield series_frame(ordered[i:i + EXPORT_CHUNK_SERIES], builds)
            release_memory()  # the chunk's Arrow buffers: the peak is one chunk's, not the sum

    def write(self, fmt: str, target: Path) -> None:
        """Write ``series.<fmt>`` to ``target`` atomically."""
        if fmt == "json":
            write_atomic(target, lambda tmp: tmp.write_bytes(json_bytes(series_frame(self.results, self.builds))))
            return
        if fmt not in PART_FORMATS:
            raise ValueError(f"unknown export format {fmt!r}")
        if fmt not in self._made:  # the first pass makes every declared format; a later one, just this
            wanted = [f for f in PART_FORMATS if f == fmt or (not self._passed and f in self.formats)]
            self._passed = True
            self._made.update(self._pass(wanted))
        made = self._made.pop(fmt)
        write_atomic(Path(target), lambda tmp: os.replace(made, tmp))
        self._keep(fmt, Path(target))

    def _pass(self, formats: list[str]) -> dict[str, Path]:
        """Each of ``formats`` into a temp file under ``.parts``, job by job: copied from the kept
        files where the job's digest is there in each of them, else formatted."""
        self.parts.mkdir(parents=True, exist_ok=True)
        kept = self._kept()
        tmps = {fmt: self.parts / f".series.{fmt}{TMP_MARK}{os.getpid()}" for fmt in formats}
        header = csvtext.csv_line(EXPORT_COLUMNS).encode("utf-8")
        layout: dict[str, list] = {fmt: [] for fmt in formats}
        csv_out: BinaryIO | None = None
        writer: pq.ParquetWriter | None = None
        groups = 0
        try:
            if "csv" in tmps:
                csv_out = open(tmps["csv"], "wb")
                csv_out.write(header)
            if "parquet" in tmps:
                schema = pa.Table.from_pandas(series_frame([], self.builds), preserve_index=False).schema
                # dictionary pages for the texts only: numbers are nearly all distinct, and trying
                # them first cost 20 % of the write (and the file is 10 % smaller)
                writer = pq.ParquetWriter(tmps["parquet"], schema, compression="zstd", use_dictionary=list(_TEXT))
            for job in self.jobs:
                digest = self.digest(job)
                start = {"csv": csv_out.tell() if csv_out else 0, "parquet": groups}
                old = kept.get(digest)
                if old is not None and all(fmt in old for fmt in tmps):
                    if csv_out is not None:
                        copy_range(csv_out, *old["csv"])
                    if writer is not None:
                        path, first, stop = old["parquet"]
                        reader = pq.ParquetFile(path)
                        for i in range(first, stop):
                            writer.write_table(reader.read_row_group(i, use_threads=False).cast(writer.schema))
                        groups += stop - first
                else:
                    self.formatted.append(job)
                    for df in self._frames(job):
                        if csv_out is not None:
                            pieces = csv_chunks(df)
                            first_piece = bytes(next(pieces))
                            if not first_piece.startswith(header):
                                raise ValueError(f"export of {job}: unexpected CSV header")
                            csv_out.write(first_piece[len(header):])
                            for piece in pieces:
                                csv_out.write(piece)
                        if writer is not None:
                            writer.write_table(pa.Table.from_pandas(df, preserve_index=False).cast(writer.schema))
                            groups += 1
                if csv_out is not None:
                    csv_out.flush()
                    layout["csv"].append([digest, start["csv"], csv_out.tell() - start["csv"]])
                if writer is not None:
                    layout["parquet"].append([digest, start["parquet"], groups - start["parquet"]])
        except BaseException:
            for tmp in tmps.values():
                tmp.unlink(missing_ok=True)
            raise
        finally:
            if csv_out is not None:
                csv_out.close()
            if writer is not None:
                writer.close()
        self._layout.update(layout)
        self._name = hashlib.sha1(json.dumps([self.jobs, [self.digest(j) for j in self.jobs]]).encode()).hexdigest()
        return tmps

    def _kept(self) -> dict[str, dict[str, tuple[Path, int, int]]]:
        """Job digest -> format -> (kept file, start, length: bytes for CSV, row groups for Parquet),
        from every kept index whose files are there with the sizes it says (else not used)."""
        found: dict[str, dict[str, tuple[Path, int, int]]] = {}
        if not self.parts.is_dir():
            return found
        for entry in sorted(os.scandir(self.parts), key=lambda e: e.name):
            m = _KEPT_INDEX.match(entry.name)
            if not m:
                continue
            try:
                index = json.loads(Path(entry.path).read_text("utf-8"))
                if index.get("format") != self._version.hex():
                    continue
                for fmt, facts in index["files"].items():
                    if fmt not in PART_FORMATS:
                        continue
                    path = self.parts / f"{m.group('digest')}.{fmt}"
                    size = path.stat().st_size
                    if facts.get("size") != size:
                        continue
                    total = size if fmt == "csv" else pq.ParquetFile(path).metadata.num_row_groups
                    if fmt == "parquet" and facts.get("row_groups") != total:
                        continue
                    for digest, start, length in index["layout"][fmt]:
                        if isinstance(start, int) and isinstance(length, int) and 0 <= start <= start + length <= total:
                            found.setdefault(str(digest), {}).setdefault(fmt, (path, start, start + length)
                                                                         if fmt == "parquet" else (path, start, length))
            except (OSError, ValueError, KeyError, TypeError, AttributeError, pa.ArrowException):
                continue
        return found

    def _keep(self, fmt: str, target: Path) -> None:
        """Keep ``target`` (in place, whole) as ``.parts/<layout>.<fmt>``, a hard link, and say so in
        the index ``.parts/<layout>.json``; remove what earlier runs kept. A kill on the way leaves
        at worst a kept file without its index: the next run formats the jobs again."""
        kept = self.parts / f"{self._name}.{fmt}"
        try:
            link = self.parts / f".{kept.name}{TMP_MARK}{os.getpid()}"
            link.unlink(missing_ok=True)
            os.link(target, link)
            os.replace(link, kept)
        except OSError as exc:  # no hard links here: the next run formats every job again
            log.info("exports: %s not kept for the next run (%s)", target, exc)
        else:
            facts = {"size": kept.stat().st_size}
            if fmt == "parquet":
                facts["row_groups"] = pq.ParquetFile(kept).metadata.num_row_groups
            self._placed[fmt] = facts
            index = {"format": self._version.hex(), "files": dict(sorted(self._placed.items())),
                     "layout": {f: self._layout[f] for f in sorted(self._placed)}}
            write_atomic(self.parts / f"{self._name}.json", lambda tmp: tmp.write_text(json.dumps(index), "utf-8"))
        self._prune()

    def _prune(self) -> None:
        """Remove from ``.parts`` what this run does not keep: earlier runs' kept files and indexes,
        per-job parts of older versions, temp files of killed runs (not this run's)."""
        keep = {f"{self._name}.json", *(f"{self._name}.{f}" for f in self._placed)}
        mine = {p.name for p in self._made.values()}
        for entry in os.scandir(self.parts):
            ours = _KEPT_FILE.match(entry.name) or _KEPT_INDEX.match(entry.name) or (
                TMP_MARK in entry.name and entry.name.startswith(".") and entry.name not in mine)
            if ours and entry.name not in keep:
                os.unlink(entry.path)


def copy_range(out: BinaryIO, source: Path, offset: int = 0, length: int | None = None) -> None:
    """Append ``length`` bytes of ``source`` from ``offset`` (default: the rest of it) to the open
    file ``out`` (both regular files).

    The kernel copies (``copy_file_range``): a day's CSV is 330 MB, which a copy through this
    process took 0.9 s of system time to move and the kernel 0.1 s. Where the call is not
    supported (other kernels, file systems), a plain copy. A source shorter than asked is an error.
    """
    out.flush()
    with open(source, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        left = size - offset if length is None else length
        if offset + left > size:
            raise ValueError(f"{source}: {offset + left} bytes wanted, {size} there")
        pos = offset
        try:
            while left > 0:
                done = os.copy_file_range(src.fileno(), out.fileno(), left, pos)
                if done == 0:
                    break
                left -= done
                pos += done
        except (AttributeError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in _NO_COPY_RANGE:
                raise
        if left > 0:  # not supported here: the rest by hand
            src.seek(pos)
            while left > 0:
                chunk = src.read(min(left, 1 << 22))
                if not chunk:
                    raise ValueError(f"{source}: ended {left} bytes early")
                out.write(chunk)
                left -= len(chunk)


#: errnos of a copy_file_range the kernel or file system does not offer
_NO_COPY_RANGE = {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP}
