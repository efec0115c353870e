"""CSV text the way ``pandas.to_csv`` / the ``csv`` module write it, built column-wise with Arrow.

Why: the exports (1 M rows) and the site's per-job downloads are written on every run, and
formatting cell by cell in Python costs seconds. ``pyarrow.csv.write_csv`` is fast but quotes
every string and prints floats differently (``100`` for ``100.0``, ``1e-7``), so users' files
would change. Here each column becomes an Arrow array of finished cell texts with vectorised
compute functions, and rows are joined by Arrow; only the few distinct texts of a text column
(and the rare floats Arrow prints in another notation) go through Python, through the ``csv``
module itself, so quoting is exactly that of the Python in use.

Cells follow pandas' defaults: floats as ``repr`` (``1.0``, ``1e-05``, ``inf``), missing values
empty, text quoted only when it holds the delimiter, a quote or the line terminator.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence, Union

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

#: Rows joined per Arrow call: a few MB of intermediate arrays, which the allocator reuses chunk
#: after chunk (131,072-row chunks went back to the OS each time: 0.4-0.6 s of page faults per 1 M rows).
CHUNK_ROWS = 1 << 14
#: Neighbouring coded columns are joined per combination while each combination has this many rows.
MIN_REUSE = 8


def quote_cells(texts: Iterable[str]) -> list[str]:
    """Each text as one CSV field (``QUOTE_MINIMAL``, ``"`` doubled), exactly as ``csv.writer`` does.

    An empty text stays empty (``csv`` writes ``""`` only for a row of one empty field).
    """
    out = []
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for text in texts:
        if text == "":
            out.append("")
            continue
        buf.seek(0)
        buf.truncate()
        writer.writerow([text])
        out.append(buf.getvalue()[:-1])
    return out


def csv_line(cells: Sequence[object]) -> str:
    """One row (with its ``\\n``) written by ``csv.writer``: for headers and other short rows."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()


def float_text(values: np.ndarray) -> pa.Array:
    """``repr`` of each float64 (``1.0``, ``0.0001``, ``1e-05``, ``1e+16``, ``inf``); NaN gives ``""``.

    Arrow prints the same shortest round-trip digits as Python but drops ``.0`` and picks
    scientific notation by other rules: whole numbers get ``.0`` back, and the values Python
    prints in scientific notation (or Arrow does) are formatted by ``repr`` (rare in
    throughputs and latencies).
    """
    v = np.ascontiguousarray(values, dtype=np.float64)
    arr = pa.array(v)  # no mask here: a masked conversion costs more than all the rest
    text = pc.cast(arr, pa.string())
    if len(v) == 0:
        return text
    with np.errstate(invalid="ignore"):
        mag = np.abs(v)
        positional = ((mag >= 1e-4) & (mag < 1e16)) | (mag == 0)  # where repr prints no exponent
    finite = np.isfinite(v)
    has_e = pc.match_substring(text, "e").to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        whole = finite & positional & ~has_e & (v == np.floor(v))  # printed without a "." by Arrow
    if whole.any():  # (only those joined: over every cell, the join took as long as the cast)
        at = pa.array(np.flatnonzero(whole))
        text = pc.replace_with_mask(text, pa.array(whole), pc.binary_join_element_wise(pc.take(text, at), ".0", ""))
    other = finite & (~positional | has_e)
    if other.any():
        repl = pa.array([repr(x) for x in v[other].tolist()], pa.string())
        text = pc.replace_with_mask(text, pa.array(other), repl)
    nan = np.isnan(v)
    if nan.any():
        text = pc.if_else(pa.array(nan), "", text)
    return text


def int_text(values: np.ndarray, missing: np.ndarray | None = None) -> pa.Array:
    """Integers as decimal text; ``""`` where ``missing`` is True."""
    arr = pa.array(np.asarray(values), mask=None if missing is None else np.asarray(missing, dtype=bool))
    return pc.fill_null(pc.cast(arr, pa.string()), "")


@dataclass(frozen=True)
class Coded:
    """A column of few distinct cells: ``codes`` (int64, one per row) into finished ``cells``.

    Kept coded until the rows are joined, so neighbouring coded columns are joined once per
    distinct combination (a series' test id, NIC, frame size...) instead of once per row.
    """

    codes: np.ndarray
    cells: list[str]

    def __len__(self) -> int:
        return len(self.codes)


@dataclass(frozen=True)
class Computed:
    """A column whose cells are made per chunk of rows (``make(start, stop)``), e.g. formatted floats.

    Chunk by chunk the same memory is reused, and nothing the size of the file is held.
    """

    length: int
    make: Callable[[int, int], pa.Array]

    def __len__(self) -> int:
        return self.length


#: A column ready to be joined: finished cells as an Arrow string array, ``Coded`` or ``Computed``.
Cells = Union[pa.Array, pa.ChunkedArray, Coded, Computed]


def coded_text(codes: np.ndarray, texts: Sequence[str | None],
               cell: Callable[[str], str] | None = None) -> Coded:
    """Cells of a column given as codes into its distinct ``texts`` (code -1 or a None text: ``""``).

    ``cell`` (e.g. formula neutralisation) is applied to each distinct text before quoting.
    """
    finished = quote_cells(("" if t is None else (cell(t) if cell else t)) for t in texts)
    finished.append("")  # code -1
    codes = np.asarray(codes, dtype=np.int64)
    return Coded(np.where(codes < 0, len(finished) - 1, codes), finished)


def neutralise_text(text: pa.Array, prefixes: Sequence[str]) -> pa.Array:
    """Cells starting with one of ``prefixes`` get a leading ``'`` (for numbers printed as text)."""
    risky = None
    for p in prefixes:
        hit = pc.starts_with(text, p)
        risky = hit if risky is None else pc.or_(risky, hit)
    if risky is None or not pc.any(risky).as_py():
        return text
    return pc.if_else(risky, pc.binary_join_element_wise("'", text, ""), text)


def join_rows(header: Sequence[str], columns: Sequence[Cells], chunk_rows: int = CHUNK_ROWS) -> bytes:
    """The whole CSV file as bytes (see ``iter_csv``)."""
    buf = io.BytesIO()  # grows in place; chunk by chunk Arrow reuses the same memory
    for piece in iter_csv(header, columns, chunk_rows):
        buf.write(piece)
    return buf.getvalue()


def iter_csv(header: Sequence[str], columns: Sequence[Cells],
             chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
    """The CSV file in pieces: ``header`` (written by ``csv.writer``), then lines of ``chunk_rows`` rows.

    ``columns``: equally long columns of finished cells (no nulls, already quoted). A row of a
    single empty cell is written ``""`` as ``csv.writer`` does (else it would read as no row).
    Pieces are views of Arrow buffers: a caller that writes each out and drops it keeps the
    memory of one chunk only.
    """
    yield csv_line(header).encode("utf-8")
    n = len(columns[0]) if columns else 0
    single = len(columns) == 1
    merged = merge_coded(columns, max(1, n // MIN_REUSE))
    tables = {i: pa.array(c.cells, pa.string()) for i, c in enumerate(merged) if isinstance(c, Coded)}
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        cols = []
        for i, c in enumerate(merged):
            if isinstance(c, Coded):
                col = tables[i].take(pa.array(c.codes[start:stop]))
            elif isinstance(c, Computed):
                col = c.make(start, stop)
            else:
                col = c.slice(start, stop - start)
            cols.append(_small_string(col))
        if single:
            cols[0] = pc.if_else(pc.equal(cols[0], ""), '""', cols[0])
        cols[-1] = pc.binary_join_element_wise(cols[-1], "\n", "")
        lines = pc.binary_join_element_wise(*cols, ",") if len(cols) > 1 else cols[0]
        del cols
        yield from data_views(lines)
        del lines


def _small_string(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One chunk's cells as a plain ``string`` array (Arrow joins only arrays of one type)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col if col.type == pa.string() else col.cast(pa.string())


def merge_coded(columns: Sequence[Cells], max_distinct: int) -> list[Cells]:
    """Neighbouring ``Coded`` columns as one (cells joined by ``,``) while combinations stay few."""
    out: list[Cells] = []
    for col in columns:
        last = out[-1] if out else None
        if isinstance(col, Coded) and isinstance(last, Coded):
            key = last.codes * len(col.cells) + col.codes
            codes, uniques = pd.factorize(key)
            if len(uniques) <= max_distinct:
                width = len(col.cells)
                cells = [f"{last.cells[u // width]},{col.cells[u % width]}" for u in uniques.tolist()]
                out[-1] = Coded(codes.astype(np.int64), cells)
                continue
        out.append(col)
    return out


def data_views(texts: pa.Array | pa.ChunkedArray) -> list[memoryview]:
    """The UTF-8 texts of a string array laid end to end: views of its data buffers, no copy."""
    chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    out = []
    for arr in chunks:
        if len(arr) == 0:
            continue
        width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
        off = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset:arr.offset + len(arr) + 1]
        out.append(memoryview(arr.buffers()[2])[int(off[0]):int(off[-1])])
    return out
