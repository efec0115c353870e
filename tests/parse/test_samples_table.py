"""``samples_table``: a build's rows straight into the store's Arrow types equal the same rows
through pandas (``coerce_samples``, ``samples_to_arrow`` then ``to_stored``: the path the parse
and the store took before)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pal.model import BuildMeta, coerce_samples
from pal.parse.build import ParseResult, samples_table
from pal.store.schema import (
    SAMPLES_SCHEMA, STORED_SCHEMA, TAG_SEP, arrow_to_samples, column_array, from_stored, joined_tags, samples_to_arrow,
    stored_tags, to_stored,
)

META = BuildMeta(job="csit-vpp-perf-mrr-daily-master-2n-icx", build=42,
                 build_time=datetime(2026, 11, 25, 2, 7, 19, 123456, tzinfo=timezone.utc), start_time=None,
                 dut="vpp", dut_version="26.02-rc0~276", testbed=None, passed=3, failed=1, duration_s=None,
                 source_file="/w/42/output.xml.gz")


def through_pandas(rows, meta):
    """The old path, as the reference: a DataFrame of the rows, the build-wide columns, coerced, and
    the tags joined as the store joins them."""
    df = pd.DataFrame(rows) if isinstance(rows, dict) else pd.DataFrame.from_records(rows)
    for col, value in (("job", meta.job), ("build", int(meta.build)),
                       ("build_time", pd.Timestamp(meta.build_time) if meta.build_time else pd.NaT),
                       ("topo_arch", "2n-icx"), ("testbed", meta.testbed), ("dut", meta.dut),
                       ("dut_version", meta.dut_version), ("source_file", meta.source_file)):
        df[col] = value
    return to_stored(samples_to_arrow(coerce_samples(df)))


def plain(table: pa.Table) -> tuple:
    """The table's schema and cells, NaN written as "nan" (Arrow's ``equals`` finds NaN unequal to NaN)."""
    def cell(v):
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        return [cell(x) for x in v] if isinstance(v, list) else v
    return table.schema, {c: [cell(v) for v in col] for c, col in table.to_pydict().items()}


def row(test_id, metric="mrr", value=1.0, **kw):
    base = {"test_id": test_id, "test_name": test_id.rsplit(".", 1)[-1], "suite": "tests.vpp", "nic": "25ge",
            "frame_size": "64B", "cores": "1C", "threads_cores": "2T1C", "driver": None, "topology": "2_NODE",
            "tags": ("MRR", "64B"), "status": "PASS", "test_type": "MRR", "metric": metric, "unit": "pps",
            "value": value, "stdev": 0.5, "trials": [1.0, 2.0], "message": ""}
    return {**base, **kw}


ROWS = [
    row("a.t1"),
    row("a.t2", value=math.nan, stdev=math.nan, trials=None, status="FAIL", message="timeout <&>", tags=()),
    row("a.t3", trials=[1.0, math.nan, 3.0], tags=("X",) * 30, driver="avf"),
    row("a.t4", metric="latency_pdr50_d1", unit="us", value=None, stdev=None, trials=None, nic=None),
    row("a.t5", frame_size=1518, cores=math.nan, trials=np.array([4.0, 5.5]), tags=["ETH", "IP4"]),  # odd types
]


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], []], ids=["mixed", "one", "none"])
def test_equals_the_pandas_path(rows):
    table = samples_table(rows, META)
    assert table.schema == STORED_SCHEMA
    if rows:
        assert plain(table) == plain(through_pandas(rows, META))
        assert table.num_rows == len(rows)
    else:
        assert table.num_rows == 0


def test_columns_input_equals_records_input():
    cols = {k: [r[k] for r in ROWS] for k in ROWS[0]}
    assert plain(samples_table(cols, META)) == plain(samples_table(ROWS, META))


def test_values_as_stored():
    t = samples_table(ROWS, META).to_pydict()
    assert t["value"] == [1.0, None, 1.0, None, 1.0]  # NaN and None are nulls: never 0.0
    assert t["trials"][2][0] == 1.0 and math.isnan(t["trials"][2][1])  # NaN inside trials stays NaN
    assert t["frame_size"][4] == "1518" and t["cores"][4] is None and t["tags"][4] == f"ETH{TAG_SEP}IP4"
    assert t["tags"][0] == f"MRR{TAG_SEP}64B" and t["tags"][1] == "" and t["tags"][2] == TAG_SEP.join(["X"] * 30)
    assert t["testbed"] == [None] * 5 and t["build"] == [42] * 5
    assert t["build_time"][0] == datetime(2026, 11, 25, 2, 7, 19, 123456, tzinfo=timezone.utc)


def test_parse_result_samples_are_the_table_as_pandas():
    result = ParseResult(samples_table(ROWS, META), META)
    pd.testing.assert_frame_equal(result.samples, arrow_to_samples(from_stored(through_pandas(ROWS, META), joined=False)))
    assert result.samples["tags"][0] == ("MRR", "64B") and math.isnan(result.samples["value"][1])
    back = ParseResult(to_stored(samples_to_arrow(result.samples)), META)
    assert plain(back.table) == plain(result.table)


def test_list_columns_fall_back_cell_by_cell():
    """A number among the tags or a NaN cell: the same cells as converting each one."""
    typ = SAMPLES_SCHEMA.field("tags").type
    assert column_array([("A", 1), math.nan, None], typ).to_pylist() == [["A", "1"], None, None]
    assert column_array([["1.5"], (2,)], pa.list_(pa.float64())).to_pylist() == [[1.5], [2.0]]


@pytest.mark.parametrize("cells", [
    [("A", "B"), ("A", "B"), ()],  # the joined path
    [("A", f"x{TAG_SEP}y"), ("",)],  # the separator inside a tag is a space, an empty tag stays
    [("A", 1), None, ["L", "M"]],  # a number, a missing cell, a list: through the list column
    [(None, "A")],  # a null among a row's tags is left out
])
def test_stored_tags_equal_the_list_column_joined(cells):
    lists = column_array(cells, SAMPLES_SCHEMA.field("tags").type)
    expected = to_stored(pa.table({"tags": lists})).column(0).to_pylist()
    assert stored_tags(cells).to_pylist() == expected


def test_joined_tags_read_back_as_the_tuples():
    table = samples_table(ROWS, META)
    assert table.column("tags").to_pylist()[2] == joined_tags(("X",) * 30)
    back = from_stored(table, joined=False).column("tags").to_pylist()
    assert back == [["MRR", "64B"], [], ["X"] * 30, ["MRR", "64B"], ["ETH", "IP4"]]
