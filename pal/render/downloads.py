"""Per-job CSV of the trended values: build, date, version, one column per series.

Built as a (build x series) matrix with numpy and joined by Arrow (``pal.csvtext``): a job of
1,500 series x 180 builds is 270,000 cells, too many to format one by one on every run.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pal import csvtext
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


def job_csv(job: str, results: list[SeriesResult], facts: BuildIndex) -> str:
    """CSV text; values in the metric's unit (pps, cps, µs) at measurement precision (``measured``),
    empty where a run is missing.

    Text cells (test ids, versions) are neutralised against formula injection. A build's date
    is that of its first sample in series order.
    """
    results = sorted((r for r in results if r.key.job == job), key=lambda r: (r.key.test_id, r.key.metric))
    header = ["build", "date", "version", *(csv_cell(f"{r.key.test_id} [{r.key.metric}]") for r in results)]
    if not results:
        return csvtext.csv_line(header)
    lengths = [len(r.builds) for r in results]
    builds = np.concatenate([np.asarray(r.builds, dtype=np.int64) for r in results])
    rows, first = np.unique(builds, return_index=True)
    times = np.concatenate([np.asarray(r.times, dtype="datetime64[ns]") for r in results])
    values = measured(np.concatenate([np.asarray(r.values, dtype=np.float64) for r in results]))
    matrix = np.full((len(rows), len(results)), np.nan)
    matrix[np.searchsorted(rows, builds), np.repeat(np.arange(len(results)), lengths)] = values
    matrix[~np.isfinite(matrix)] = np.nan  # inf is no value either: an empty cell
    versions = csvtext.quote_cells(csv_cell(facts.get(job, b).version) for b in rows.tolist())
    dates = csvtext.quote_cells(t or "" for t in time_labels(times[first]))
    width = len(results)
    offsets = pa.array(np.arange(0, len(rows) * width + 1, width, dtype=np.int32))
    cells = pa.ListArray.from_arrays(offsets, csvtext.float_text(matrix.ravel()))  # one list per build
    lines = pc.binary_join(cells, ",").to_pylist()
    return csvtext.csv_line(header) + "".join(
        f"{b},{d},{v},{line}\n" for b, d, v, line in zip(rows.tolist(), dates, versions, lines))
