"""What ``pal analyse`` prints: one row per series, as an aligned table for people or JSON/CSV.

The table shows throughput in Mpps (connections in kcps, latency in µs) with the unit on
every value, changes as signed percentages and blanks as ``-``; rows are grouped under their
job so the long job name is not repeated on every line. JSON and CSV keep full precision in
base units (pps, cps, µs) with NaN as null / empty, for machines.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable

from pal.model import METRICS, SeriesResult

#: the machine columns, in order (JSON keys, CSV header)
COLUMNS = ("job", "test_id", "metric", "unit", "test_set", "trend", "runs", "short_term_change",
           "long_term_change", "regressions", "progressions", "verdict")

LEGEND = (
    "trend: average of the last trend group; runs: its runs",
    "short-term: % change over the short-term window; long-term: % change vs the best trend of the long-term window",
    "regr/progr: anomalies in the short-term window; last run: the verdict on the newest run",
)

#: base unit -> (shown unit, divisor, decimals)
DISPLAY_UNITS = {"pps": ("Mpps", 1e6, 2), "cps": ("kcps", 1e3, 1), "us": ("µs", 1.0, 1)}


def series_rows(results: Iterable[SeriesResult]) -> list[dict[str, Any]]:
    """One plain row per series (NaN as None), sorted by job, test set, test and metric."""
    rows = []
    for r in results:
        c = r.compliance
        rows.append({
            "job": r.key.job, "test_id": r.key.test_id, "metric": r.key.metric,
            "unit": METRICS.get(r.key.metric, ("",))[0], "test_set": r.test_set,
            "trend": _num(c.trend), "runs": int(c.runs),
            "short_term_change": _num(c.short_term_change), "long_term_change": _num(c.long_term_change),
            "regressions": int(c.regressions), "progressions": int(c.progressions), "verdict": r.verdict,
            "_label": _label(r),
        })
    rows.sort(key=lambda row: (row["job"], row["test_set"], row["_label"], row["metric"]))
    return rows


def to_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps([{k: row[k] for k in COLUMNS} for row in rows], indent=1) + "\n"


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for row in rows:
        w.writerow(["" if row[k] is None else repr(row[k]) if isinstance(row[k], float) else row[k]
                    for k in COLUMNS])
    return buf.getvalue()


def to_table(rows: list[dict[str, Any]]) -> str:
    """The people's view: per job a title line, then aligned columns with units."""
    if not rows:
        return "no series\n"
    headers = ("test", "set", "metric", "trend", "runs", "short-term", "long-term", "regr", "progr", "last run")
    right = {"trend", "runs", "short-term", "long-term", "regr", "progr"}
    out: list[str] = []
    by_job: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_job.setdefault(row["job"], []).append(row)
    cells = {job: [(row["_label"], row["test_set"], row["metric"], format_value(row["trend"], row["unit"]),
                    str(row["runs"]), format_pct(row["short_term_change"]), format_pct(row["long_term_change"]),
                    str(row["regressions"]), str(row["progressions"]), row["verdict"]) for row in jrows]
             for job, jrows in by_job.items()}
    widths = [max(len(h), *(len(r[i]) for rs in cells.values() for r in rs)) for i, h in enumerate(headers)]

    def line(values: Iterable[str]) -> str:
        return "  ".join(v.rjust(w) if h in right else v.ljust(w)
                         for v, w, h in zip(values, widths, headers)).rstrip()

    for job, jrows in by_job.items():
        regressed = sum(1 for r in jrows if r["verdict"] == "regression")
        out.append(f"{job}: {len(jrows)} series, {regressed} with a regression at the last run")
        out.append(line(headers))
        out.extend(line(r) for r in cells[job])
        out.append("")
    out.extend(LEGEND)
    return "\n".join(out) + "\n"


def format_value(value: float | None, unit: str) -> str:
    """``11.29 Mpps``, ``305.2 kcps``, ``15.0 µs``; ``-`` when unknown."""
    if value is None:
        return "-"
    shown, div, decimals = DISPLAY_UNITS.get(unit, (unit, 1.0, 2))
    return f"{value / div:,.{decimals}f} {shown}".strip()


def format_pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f} %"


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _label(r: SeriesResult) -> str:
    """NIC and test name (``25ge2p1xxv710 64b-2t1c-ethip4-ip4base-mrr``), the id's last part otherwise."""
    name = str(r.attrs.get("test_name") or r.key.test_id.rsplit(".", 1)[-1])
    nic = r.attrs.get("nic")
    return f"{nic} {name}" if nic else name
