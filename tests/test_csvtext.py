"""CSV cells built with Arrow against what Python's ``repr`` and ``csv`` module write."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pal import csvtext


def csv_reference(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


def test_float_text_hand_cases():
    cases = [
        (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (100.0, "100.0"), (123000.0, "123000.0"),
        (1e15, "1000000000000000.0"), (9999999999999998.0, "9999999999999998.0"), (1e16, "1e+16"),
        (1.5e16, "1.5e+16"), (1e22, "1e+22"), (0.0001, "0.0001"), (1e-05, "1e-05"), (2.5e-07, "2.5e-07"),
        (21752588.29, "21752588.29"), (0.1 + 0.2, "0.30000000000000004"), (1 / 3, "0.3333333333333333"),
        (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
        (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, ""),
    ]
    values = np.array([v for v, _ in cases])
    assert csvtext.float_text(values).to_pylist() == [text for _, text in cases]


def test_float_text_is_repr_on_random_bit_patterns():
    rng = np.random.default_rng(11)
    values = np.concatenate([
        rng.integers(0, 2**64, size=20_000, dtype=np.uint64).view(np.float64),  # every exponent, NaNs too
        np.round(rng.normal(2e7, 1e6, 5_000), 3), np.round(rng.normal(2e7, 1e6, 1_000)),  # pps, whole pps
        10.0 ** rng.integers(-12, 24, 2_000), rng.uniform(0, 2e-4, 2_000),  # around both thresholds
    ])
    expected = ["" if math.isnan(v) else repr(v) for v in values.tolist()]
    assert csvtext.float_text(values).to_pylist() == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40))
def test_float_text_property(values):
    expected = ["" if math.isnan(v) else repr(v) for v in values]
    assert csvtext.float_text(np.array(values, dtype=np.float64)).to_pylist() == expected


def test_quote_cells_as_the_csv_module():
    texts = ["a", "b,c", 'd"e', "f\ng", "", " x ", "é", "tab\tx", "cr\rx", '"']
    assert csvtext.quote_cells(texts)[:5] == ["a", '"b,c"', '"d""e"', '"f\ng"', ""]
    for text, cell in zip(texts[1:], csvtext.quote_cells(texts[1:])):
        assert csv_reference(["h", "x"], [[text, "x"]]).decode().split("\n", 1)[1] == f"{cell},x\n"


def test_int_text_with_missing():
    out = csvtext.int_text(np.array([0, -7, 2**62]), np.array([False, False, True]))
    assert out.to_pylist() == ["0", "-7", ""]


def test_coded_text_neutralises_before_quoting():
    col = csvtext.coded_text(np.array([1, 0, -1, 1]), ["=a,b", "x"], lambda t: "'" + t if t[0] == "=" else t)
    assert [col.cells[c] for c in col.codes] == ["x", "\"'=a,b\"", "", "x"]


def test_join_rows_chunks_and_merged_columns_match_csv_writer():
    n = 23
    rng = np.random.default_rng(3)
    names = ["a,1", "b", 'q"'] * 3
    code_a = rng.integers(0, 3, n)
    code_b = rng.integers(-1, 2, n)
    values = rng.normal(100, 10, n)
    values[::5] = np.nan
    cols = [
        csvtext.coded_text(code_a, names[:3]),
        csvtext.coded_text(code_b, ["x", None]),
        csvtext.Computed(n, lambda a, b: csvtext.float_text(values[a:b])),
        pa.array([f"r{i}" for i in range(n)]),
    ]
    rows = [[names[a], "" if b < 0 else ["x", ""][b], "" if math.isnan(v) else repr(v), f"r{i}"]
            for i, (a, b, v) in enumerate(zip(code_a.tolist(), code_b.tolist(), values.tolist()))]
    expected = csv_reference(["h1", "h,2", "h3", "h4"], rows)
    for chunk in (1, 4, 23, 100):
        assert csvtext.join_rows(["h1", "h,2", "h3", "h4"], cols, chunk_rows=chunk) == expected


def test_merge_coded_joins_neighbours_only_while_combinations_are_few():
    a = csvtext.Coded(np.array([0, 0, 1, 1, 0, 0, 1, 1]), ["p", "q"])
    b = csvtext.Coded(np.array([0, 0, 0, 0, 1, 1, 1, 1]), ["x", "y"])
    unique = csvtext.Coded(np.arange(8), [str(i) for i in range(8)])
    merged = csvtext.merge_coded([a, b, unique], max_distinct=4)
    assert len(merged) == 2 and merged[1] is unique
    assert [merged[0].cells[c] for c in merged[0].codes] == ["p,x", "p,x", "q,x", "q,x", "p,y", "p,y", "q,y", "q,y"]
    assert len(csvtext.merge_coded([a, b], max_distinct=3)) == 2  # 4 combinations > 3: kept apart


def test_single_empty_cell_row_is_quoted_as_csv_writer_does():
    col = pa.array(["a", "", "b"])
    assert csvtext.join_rows(["h"], [col]) == csv_reference(["h"], [["a"], [""], ["b"]]) == b'h\na\n""\nb\n'


def test_no_rows_is_the_header_only():
    assert csvtext.join_rows(["a", "b"], [pa.array([], pa.string()), pa.array([], pa.string())]) == b"a,b\n"


def test_join_rows_takes_large_string_and_chunked_columns():
    big = pa.chunked_array([pa.array(["a", '"b,c"'], pa.large_string()), pa.array(["d"], pa.large_string())])
    small = pa.array(["1", "2", "3"])
    assert csvtext.join_rows(["x", "y"], [big, small], chunk_rows=2) == b'x,y\na,1\n"b,c",2\nd,3\n'
