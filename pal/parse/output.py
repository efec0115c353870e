"""Writing a samples table for ``pal parse``: CSV / JSON (text) or Parquet (file).

List-valued columns (``trials``, ``tags``) become JSON arrays in CSV so a reader can load
them back without eval; Parquet keeps them as lists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

import pandas as pd


def _jsonable(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for col in ("trials", "tags"):
        out[col] = [None if v is None else json.dumps(list(v)) for v in out[col]]
    return out


def write_samples(df: pd.DataFrame, fmt: str, path: Path | None, stream: TextIO) -> None:
    """Write ``df`` as ``fmt`` (csv | json | parquet) to ``path``, or to ``stream`` when path is None."""
    if fmt == "parquet":
        if path is None:
            raise ValueError("parquet output needs a file path")
        df.assign(tags=[list(t) if t is not None else None for t in df["tags"]]).to_parquet(path, index=False)
        return
    if fmt == "csv":
        text = _jsonable(df).to_csv(index=False)
    elif fmt == "json":
        rows = df.assign(tags=[list(t) if t is not None else None for t in df["tags"]])
        text = rows.to_json(orient="records", date_format="iso", force_ascii=False) + "\n"
    else:
        raise ValueError(f"unknown format {fmt!r}")
    if path is None:
        stream.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")
