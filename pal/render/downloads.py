"""Per-job CSV of the trended values: build, date, version, one column per series.

Built as a (build x series) matrix with numpy and joined by Arrow (``pal.csvtext``): a job of
1,500 series x 180 builds is 270,000 cells, too many to format one by one on every run. A
daily run adds a build and drops one: the rows of the other builds are taken from the last
run's file (``job_csv_file``), so it formats one row, not 170 (a year of 12 jobs: 12.9 M
cells, 8 s of CPU, every day).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pal import csvtext
from pal.digest import data_hasher
from pal.model import SeriesResult
from pal.render.buildinfo import BuildIndex
from pal.render.escape import csv_cell
from pal.render.graphs import time_labels


#: significant digits kept in the downloads: more than any measurement has (a throughput in pps
#: with three decimals has 11), fewer than the float noise of averaging (17)
SIGNIFICANT = 12


def measured(values: np.ndarray, significant: int = SIGNIFICANT) -> np.ndarray:
    """Values rounded to ``significant`` digits, so they print as measured (``5426666.277``,
    not ``5426666.277000001``); NaN and inf stay as they are.

    Rounding is a division of an integer by a power of ten (both exact, the quotient correctly
    rounded), so the shortest text of the result is the rounded decimal itself.
    """
    v = np.asarray(values, dtype=np.float64)
    out = v.copy()
    ok = np.isfinite(v) & (v != 0)
    if not ok.any():
        return out
    with np.errstate(divide="ignore"):
        decimals = significant - 1 - np.floor(np.log10(np.abs(np.where(ok, v, 1.0)))).astype(np.int64)
    ok &= decimals <= 22  # 10**22 is the largest exact power of ten; tinier values are kept as they are
    decimals = np.clip(decimals[ok], 0, None)  # whole numbers beyond 12 digits are kept
    scale = 10.0 ** decimals
    out[ok] = np.round(v[ok] * scale) / scale
    return out


@dataclass(frozen=True)
class JobCsv:
    """A job's CSV and its row index (``index``): the digest of the header and of each build's
    row with the row's place in ``text``, what the next run needs to take the rows that did
    not change from this file (written beside it: ``site._write_jobs``)."""

    text: str
    index: dict[str, Any] = field(default_factory=dict)


def job_csv(job: str, results: list[SeriesResult], facts: BuildIndex) -> str:
    """CSV text; values in the metric's unit (pps, cps, µs) at measurement precision (``measured``),
    empty where a run is missing.

    Text cells (test ids, versions) are neutralised against formula injection. A build's date
    is that of its first sample in series order.
    """
    return job_csv_file(job, results, facts).text


@functools.lru_cache(maxsize=1)
def _format_digest() -> bytes:
    """What decides a row's text besides its cells: pal's code (``fingerprint.code_digest``) and
    the NumPy and Arrow that round and print its numbers (``measured``, ``csvtext.float_text``)."""
    from pal.fingerprint import code_digest

    return hashlib.blake2b(f"{code_digest()}|{np.__version__}|{pa.__version__}".encode(), digest_size=16).digest()


def job_csv_file(job: str, results: list[SeriesResult], facts: BuildIndex,
                 previous: JobCsv | None = None) -> JobCsv:
    """``job_csv`` and its row index; the rows whose digest (build, date, version and values) and
    header equal ``previous``'s are that file's text, the others are formatted. The text is
    ``job_csv``'s either way: a row's text is a function of what its digest covers, and the
    code that formats it is in the header's digest."""
    results = sorted((r for r in results if r.key.job == job), key=lambda r: (r.key.test_id, r.key.metric))
    head = csvtext.csv_line(["build", "date", "version",
                             *(csv_cell(f"{r.key.test_id} [{r.key.metric}]") for r in results)])
    header_digest = hashlib.blake2b(_format_digest() + head.encode("utf-8"), digest_size=16).hexdigest()
    if not results:
        return JobCsv(head, {"header": header_digest, "length": len(head), "rows": {}})
    # The series of a job share their builds (``series.shared_axis``): each distinct builds array
    # is placed once, with its series' columns; a build's date is its time in the first series
    # (in series order) that has it.
    axes: dict[int, list[int]] = {}
    for j, r in enumerate(results):
        axes.setdefault(id(r.builds), []).append(j)
    rows = np.unique(np.concatenate([np.asarray(results[js[0]].builds, dtype=np.int64) for js in axes.values()]))
    matrix = np.full((len(rows), len(results)), np.nan)  # the values as they are: the digests' input
    date_of = np.full(len(rows), np.datetime64("NaT"), dtype="datetime64[ns]")
    dated = np.zeros(len(rows), dtype=bool)
    for js in axes.values():
        r = results[js[0]]
        pos = np.searchsorted(rows, np.asarray(r.builds, dtype=np.int64))
        matrix[pos[:, None], np.asarray(js)] = np.stack([np.asarray(results[j].values, dtype=np.float64) for j in js],
                                                       axis=1)
        new = np.flatnonzero(~dated[pos])
        if len(new):
            place, first = np.unique(pos[new], return_index=True)
            date_of[place] = np.asarray(r.times, dtype="datetime64[ns]")[new[first]]
            dated[place] = True
    matrix[~np.isfinite(matrix)] = np.nan  # inf is no value either: an empty cell (one NaN, one digest)
    numbers = rows.tolist()
    versions = csvtext.quote_cells(csv_cell(facts.get(job, b).version) for b in numbers)
    dates = csvtext.quote_cells(t or "" for t in time_labels(date_of))
    digests = [_row_digest(f"{b},{d},{v},", matrix[i]) for i, (b, d, v) in enumerate(zip(numbers, dates, versions))]
    old = _previous_rows(previous, header_digest)
    kept: dict[int, str] = {}
    for i, (b, digest) in enumerate(zip(numbers, digests)):
        last = old.get(str(b))
        if last is not None and last[0] == digest and last[1].startswith(f"{b},"):
            kept[i] = last[1]
    todo = [i for i in range(len(numbers)) if i not in kept]
    if todo:
        width = len(results)
        offsets = pa.array(np.arange(0, len(todo) * width + 1, width, dtype=np.int32))
        shown = measured(matrix[todo])
        shown[~np.isfinite(shown)] = np.nan
        cells = pa.ListArray.from_arrays(offsets, csvtext.float_text(shown.ravel()))  # one list per build
        for i, line in zip(todo, pc.binary_join(cells, ",").to_pylist()):
            kept[i] = f"{numbers[i]},{dates[i]},{versions[i]},{line}\n"
    lines = [kept[i] for i in range(len(numbers))]
    index: dict[str, list[Any]] = {}
    end = len(head)
    for b, digest, line in zip(numbers, digests, lines):
        index[str(b)] = [digest, end, end + len(line)]
        end += len(line)
    return JobCsv(head + "".join(lines), {"header": header_digest, "length": end, "rows": index})


def _row_digest(head: str, values: np.ndarray) -> str:
    """A row's digest: its build, date and version cells and its values' bytes (NaN for a missing one)."""
    h = data_hasher(head.encode("utf-8"))
    h.update(values)  # (a row of a C-ordered matrix: contiguous, hashed in place)
    return h.hexdigest()


def _previous_rows(previous: JobCsv | None, header_digest: str) -> dict[str, tuple[str, str]]:
    """{build: (row digest, row text)} of ``previous``, when its header digest is ``header_digest``
    and its index fits its text (a file cut short or edited by hand gives nothing)."""
    if previous is None or not isinstance(previous.index, dict) or previous.index.get("header") != header_digest:
        return {}
    text, rows = previous.text, previous.index.get("rows")
    if previous.index.get("length") != len(text) or not isinstance(rows, dict):
        return {}
    out = {}
    for build, entry in rows.items():
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and all(type(x) is int for x in entry[1:])):
            return {}
        digest, lo, hi = entry
        if not (0 < lo < hi <= len(text) and text[lo - 1] == "\n" and text[hi - 1] == "\n"):
            return {}
        out[build] = (digest, text[lo:hi])
    return out
