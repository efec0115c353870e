"""Arrow schemas of the stored tables and the DataFrame <-> Arrow conversions.

The samples table is stored with explicit Arrow types (not pandas' inferred ones) so that
every fragment has the same schema: ``trials`` is ``list<double>``, missing numbers are Arrow
nulls and come back as NaN (never 0.0). ``SAMPLES_SCHEMA`` is the table pal hands around
(``tags`` a ``list<string>``); a fragment holds ``STORED_SCHEMA``, where a row's tags are one
string joined by ``TAG_SEP`` (``to_stored`` / ``from_stored``): a CSIT test's ~30 tags repeat on
every row of its series, and as lists they were two thirds of a window's bytes and half of its
read; joined, Parquet keeps one copy per distinct tag set and a read hands out codes.
"""

from __future__ import annotations

import functools
import math
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pal.model import SAMPLE_COLUMNS, coerce_samples

#: Bumped whenever the on-disk layout or the samples schema changes incompatibly. Version 2: a
#: manifest entry may name a row group of a compacted fragment (several builds in one file).
#: Version 3: new fragments hold the tags joined (``STORED_SCHEMA``; older ones, read as they
#: are, keep their lists), which a pal reading version 2 could not read.
SCHEMA_VERSION = 3
#: versions this pal reads; older ones are rewritten as SCHEMA_VERSION on the next write
READABLE_VERSIONS = (1, 2, 3)

_ARROW_OF_PANDAS = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "datetime64[ns, UTC]": pa.timestamp("ns", tz="UTC"),
}
_LIST_TYPES = {"trials": pa.list_(pa.float64()), "tags": pa.list_(pa.string())}


def _arrow_type(col: str) -> pa.DataType:
    if col in _LIST_TYPES:
        return _LIST_TYPES[col]
    return _ARROW_OF_PANDAS[SAMPLE_COLUMNS[col]]


SAMPLES_SCHEMA = pa.schema([pa.field(c, _arrow_type(c)) for c in SAMPLE_COLUMNS])
#: what a fragment holds (since schema version 3): ``tags`` joined by TAG_SEP, "" for no tags
STORED_SCHEMA = SAMPLES_SCHEMA.set(SAMPLES_SCHEMA.get_field_index("tags"), pa.field("tags", pa.string()))

#: string columns: Parquet keeps them dictionary-encoded on disk, and they are read as Arrow
#: dictionaries (``read_dictionary``), so a value repeated on every row of a series is held once
STRING_COLUMNS = tuple(c for c, t in SAMPLE_COLUMNS.items() if t == "string")
#: joins a row's tags into one string (a control character no XML file can hold in a tag; one in
#: a tag from JSON becomes a space when stored, ``to_stored``)
TAG_SEP = "\x1f"

#: Columns the samples table is always sorted by.
SORT_KEYS = ("job", "build", "test_id", "metric")


def _list_cell(value: object, as_str: bool) -> list | None:
    """A trials/tags cell as a plain list (None stays None; numpy arrays and tuples become lists)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    items = list(value)  # type: ignore[call-overload]
    return [str(v) for v in items] if as_str else [float(v) for v in items]


def column_array(values: list, typ: pa.DataType) -> pa.Array:
    """One samples column from per-row Python values, as ``samples_to_arrow`` stores the same
    values after ``coerce_samples``: None and NaN are null in number and text columns, a
    non-text value in a text column is its ``str``, list cells are lists (NaN inside trials
    stays NaN)."""
    if pa.types.is_list(typ):
        if not any(isinstance(v, (float, str)) or v is pd.NA for v in values):  # lists, tuples, arrays, None
            try:
                return pa.array(values, type=typ)  # what _list_cell makes of each, without the Python loop
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                pass  # a number among the tags, a text among the trials: converted one by one
        as_str = pa.types.is_string(typ.value_type)
        return pa.array([_list_cell(v, as_str) for v in values], type=typ)
    if pa.types.is_string(typ):
        try:
            return pa.array(values, type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # a number or NaN among the texts
            return pa.array([None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
                             else str(v) for v in values], type=typ)
    return pa.array(values, type=typ, from_pandas=True)  # NaN -> null


@functools.lru_cache(maxsize=1 << 14)
def joined_tags(tags: tuple[str, ...]) -> str:
    """A row's tags as ``to_stored`` joins them (TAG_SEP inside a tag made a space). Memoised: a
    parse meets the same ~1,500 tag tuples (one object per test, ``build._identity``) build after
    build, and joining them once each is what spares it the list column's 27,000 strings a build."""
    return TAG_SEP.join(t.replace(TAG_SEP, " ") for t in tags)


def stored_tags(values: list) -> pa.Array:
    """The ``tags`` column of ``STORED_SCHEMA`` from per-row cells, equal to ``to_stored`` of
    ``column_array(values, list<string>)``: tuples of strings joined (``joined_tags``), any
    other cell (None, a list, a number among the tags) through the list column."""
    if all(type(v) is tuple for v in values):
        try:
            return pa.array([joined_tags(v) for v in values], pa.string())
        except (AttributeError, TypeError):  # a non-text tag: converted as the list column converts it
            pass
    lists = column_array(values, _LIST_TYPES["tags"])
    return to_stored(pa.table({"tags": lists})).column(0).combine_chunks()


def samples_to_arrow(df: pd.DataFrame) -> pa.Table:
    """A samples DataFrame (any column order, missing columns allowed) as a Table of SAMPLES_SCHEMA."""
    exact = list(df.columns) == list(SAMPLE_COLUMNS) and all(
        str(df[c].dtype) == str(pd.Series(dtype=t).dtype) for c, t in SAMPLE_COLUMNS.items()
    )
    if not exact:
        df = coerce_samples(df)
    arrays = []
    for col in SAMPLE_COLUMNS:
        typ = SAMPLES_SCHEMA.field(col).type
        if col in _LIST_TYPES:
            cells = [_list_cell(v, col == "tags") for v in df[col].tolist()]
            arrays.append(pa.array(cells, type=typ))  # NaN inside trials stays NaN
        else:
            arrays.append(pa.array(df[col], type=typ, from_pandas=True))  # NaN/NA -> null
    return pa.Table.from_arrays(arrays, schema=SAMPLES_SCHEMA)


def to_stored(table: pa.Table) -> pa.Table:
    """A table of SAMPLES_SCHEMA (or already STORED_SCHEMA) as a fragment stores it: each row's
    tags joined by TAG_SEP (an empty list as "", none as null; a null among a row's tags is
    left out, and TAG_SEP inside a tag becomes a space)."""
    i = table.schema.get_field_index("tags")
    if i < 0 or not pa.types.is_list(table.schema.field(i).type):
        return table
    tags = table.column(i)
    flat = pc.list_flatten(tags)
    if flat.null_count or pc.any(pc.match_substring(flat, TAG_SEP)).as_py():  # only from odd JSON: in Python
        tags = pa.chunked_array([pa.array([None if v is None else [t.replace(TAG_SEP, " ") for t in v if t is not None]
                                           for v in c.to_pylist()], type=tags.type) for c in tags.chunks],
                                type=tags.type)
    return table.set_column(i, "tags", pc.binary_join(tags, TAG_SEP))


def from_stored(table: pa.Table, joined: bool) -> pa.Table:
    """A fragment's table (STORED_SCHEMA, or the lists of a fragment written before version 3)
    with its tags joined (``joined``: as a fragment stores them) or as lists (SAMPLES_SCHEMA)."""
    i = table.schema.get_field_index("tags")
    if i < 0:
        return table
    typ = table.schema.field(i).type
    if pa.types.is_list(typ):
        return to_stored(table) if joined else table
    if joined:
        return table
    tags = table.column(i)
    if pa.types.is_dictionary(typ):
        tags = tags.cast(pa.string())
    lists = pc.if_else(pc.equal(tags, ""), pa.scalar([], pa.list_(pa.string())), pc.split_pattern(tags, TAG_SEP))
    return table.set_column(i, "tags", lists)


def _lists_of(column: pa.ChunkedArray, as_tuple: bool) -> list:
    out: list = column.to_pylist()
    if as_tuple:
        out = [None if v is None else tuple(v) for v in out]
    return out


def arrow_to_samples(table: pa.Table, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """A Table of (a subset of) SAMPLES_SCHEMA as a DataFrame with pal.model dtypes.

    ``trials`` comes back as Python lists of floats (or None), ``tags`` as tuples of strings.
    With ``columns`` None the result has exactly SAMPLE_COLUMNS (coerce_samples).
    """
    names = list(columns) if columns is not None else list(SAMPLE_COLUMNS)
    data: dict[str, object] = {}
    n = table.num_rows
    for col in names:
        arr = table.column(col)
        if col in _LIST_TYPES:
            data[col] = pd.Series(_lists_of(arr, col == "tags"), dtype="object")
        else:
            data[col] = arr.to_pandas()
    df = pd.DataFrame(data, index=pd.RangeIndex(n))
    if columns is None:
        return coerce_samples(df)
    for col in names:
        dtype = SAMPLE_COLUMNS[col]
        if dtype.startswith("datetime64"):
            df[col] = pd.to_datetime(df[col], utc=True)
        elif dtype != "object":
            df[col] = df[col].astype(dtype)
    return df


def dictionary_to_categorical(column: pa.ChunkedArray) -> pd.Categorical:
    """A dictionary column (chunks sharing one dictionary: ``Table.unify_dictionaries``) as a
    pandas Categorical of the values used, lexically sorted; nulls are missing (code -1).

    A row group's dictionary may hold values of rows not read (other builds of a compacted
    fragment): categories are only the values some row has, whatever was read around them.
    """
    chunks = column.chunks
    if not chunks:
        return pd.Categorical.from_codes(np.zeros(0, dtype=np.int8), categories=pd.Index([], dtype="str"))
    dictionary = chunks[0].dictionary
    indices = pa.chunked_array([c.indices for c in chunks]).combine_chunks() if len(chunks) > 1 else chunks[0].indices
    # a null is one more index past the dictionary's: one gather then maps every row (3 passes)
    idx = indices.fill_null(len(dictionary)).to_numpy(zero_copy_only=False)
    used = np.flatnonzero(np.bincount(idx, minlength=len(dictionary) + 1)[:-1])
    values = np.asarray(dictionary.take(pa.array(used, type=pa.int64())).to_pylist(), dtype=object)
    order = np.argsort(values, kind="stable") if len(values) else np.zeros(0, dtype=np.int64)
    small = np.int8 if len(order) < 127 else np.int16 if len(order) < 32767 else np.int32
    rank = np.full(len(dictionary) + 1, -1, dtype=small)
    rank[used[order]] = np.arange(len(order))
    categories = pd.Index(values[order].tolist(), dtype="str")
    return pd.Categorical.from_codes(rank[idx], categories=categories, validate=False)


def empty_table() -> pa.Table:
    return SAMPLES_SCHEMA.empty_table()


def json_safe(obj: object) -> object:
    """``json.dumps(default=...)``: numpy scalars/arrays, timestamps, tuples and sets to JSON types."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (pd.Timestamp,)):
        return obj.isoformat()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()  # datetime, date
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")
