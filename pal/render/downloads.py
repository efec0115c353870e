"""Per-job CSV of the trended values: build, date, version, one column per series."""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from pal.model import SeriesResult
from pal.render.buildinfo import BuildIndex
from pal.render.escape import csv_cell
from pal.render.graphs import time_labels


def job_csv(job: str, results: list[SeriesResult], facts: BuildIndex) -> str:
    """CSV text; values in the metric's unit (pps, cps, µs), empty where a run is missing.

    Text cells (test ids, versions) are neutralised against formula injection.
    """
    results = sorted((r for r in results if r.key.job == job), key=lambda r: (r.key.test_id, r.key.metric))
    times: dict[int, str] = {}
    columns: list[dict[int, float]] = []
    for r in results:
        col = {}
        for b, t, v in zip(r.builds.tolist(), time_labels(r.times), np.asarray(r.values, dtype=float).tolist()):
            times.setdefault(int(b), t or "")
            col[int(b)] = v
        columns.append(col)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["build", "date", "version", *(csv_cell(f"{r.key.test_id} [{r.key.metric}]") for r in results)])
    for b in sorted(times):
        vals = []
        for col in columns:
            v = col.get(b, math.nan)
            vals.append(repr(v) if math.isfinite(v) else "")
        w.writerow([b, times[b], csv_cell(facts.get(job, b).version), *vals])
    return buf.getvalue()
