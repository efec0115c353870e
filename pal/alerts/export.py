"""Series export: every sample of every series with its group, as CSV / Parquet / JSON.

One row per (job, test_id, metric, build) run the series has, columns ``EXPORT_COLUMNS``:
the value (NaN = missing, never 0.0), the trend (group average), the group's index in the
series (null for a run outside every group) and label, the sample's label (``regression`` /
``progression`` at the first run of an anomalous group, ``missing`` where the run has no
value, else ``normal``), and testbed / DUT version of the build.

CSV cells are neutralised against formula injection: a text cell starting with ``=``, ``+``,
``-``, ``@``, tab or CR gets a leading ``'``; numeric columns stay numbers. Parquet keeps the
raw text (it is not opened by spreadsheets as formulas).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from pal.model import SeriesResult

EXPORT_COLUMNS = ["job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "build",
                  "build_time", "testbed", "dut_version", "value", "stdev", "trend", "group", "group_label", "label"]
_TEXT = ("job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "testbed",
         "dut_version", "group_label", "label")
_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def series_frame(results: list[SeriesResult], builds: pd.DataFrame | None = None) -> pd.DataFrame:
    """All samples of ``results`` as one table (rows sorted by job, test id, metric, build)."""
    ordered = sorted(results, key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
    lengths = np.array([len(r.values) for r in ordered], dtype=np.int64)
    per_series = {  # one value per series, repeated over its samples
        "job": [r.key.job for r in ordered], "test_id": [r.key.test_id for r in ordered],
        "metric": [r.key.metric for r in ordered], "test_set": [r.test_set for r in ordered],
        **{k: [r.attrs.get(k) for r in ordered] for k in ("topo_arch", "nic", "frame_size", "cores")},
    }
    groups, glabels, labels = [], [], []
    for r in ordered:
        n = len(r.values)
        values = np.asarray(r.values, dtype=np.float64)
        group = np.full(n, -1, dtype=np.int64)
        glabel = np.full(n, None, dtype=object)
        for gi, g in enumerate(r.groups):
            group[g.start:g.end] = gi
            glabel[g.start:g.end] = g.label
        label = np.where(np.isnan(values), "missing", "normal").astype(object)
        for a in r.anomalies:
            if 0 <= a.index < n and not np.isnan(values[a.index]):
                label[a.index] = a.kind
        groups.append(group)
        glabels.append(glabel)
        labels.append(label)

    def cat(arrays: list, dtype: object) -> np.ndarray:
        return np.concatenate(arrays).astype(dtype) if arrays else np.empty(0, dtype=dtype)

    data: dict[str, object] = {k: np.repeat(np.asarray(v, dtype=object), lengths) for k, v in per_series.items()}
    data["build"] = cat([np.asarray(r.builds, dtype=np.int64) for r in ordered], np.int64)
    data["build_time"] = pd.to_datetime(cat([np.asarray(r.times, dtype="datetime64[ns]") for r in ordered],
                                            "datetime64[ns]"), utc=True)
    for col, attr in (("value", "values"), ("stdev", "stdevs"), ("trend", "trend")):
        data[col] = cat([np.asarray(getattr(r, attr), dtype=np.float64) for r in ordered], np.float64)
    group = cat(groups, np.int64)
    data["group"] = pd.array(np.where(group >= 0, group, 0), dtype="Int64")
    data["group"][group < 0] = pd.NA
    data["group_label"] = cat(glabels, object)
    data["label"] = cat(labels, object)
    df = pd.DataFrame(data)
    facts = pd.DataFrame({"job": pd.Series(dtype="object"), "build": pd.Series(dtype="int64")})
    if builds is not None and not builds.empty:
        facts = builds[[c for c in ("job", "build", "testbed", "dut_version") if c in builds.columns]]
        facts = facts.drop_duplicates(["job", "build"], keep="last").astype({"job": "object", "build": "int64"})
    df = df.merge(facts, on=["job", "build"], how="left")
    for col in ("testbed", "dut_version"):
        if col not in df.columns:
            df[col] = None
    df = df[EXPORT_COLUMNS]
    for col in _TEXT:
        df[col] = df[col].astype("string")
    return df


def neutralise(value: object) -> object:
    """A text cell a spreadsheet would run as a formula, made inert with a leading ``'``."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The CSV text: text columns neutralised, numbers as numbers, times ISO-8601 UTC."""
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


def parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


def json_bytes(df: pd.DataFrame) -> bytes:
    return (df.to_json(orient="records", date_format="iso", indent=1) + "\n").encode("utf-8")
