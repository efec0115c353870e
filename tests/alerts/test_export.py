"""The series export: frame built from results, CSV identical to pandas' ``to_csv``, streamed writes."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pal.alerts.export import EXPORT_COLUMNS, csv_bytes, series_frame, write_csv
from tests.alerts.factory import ALT, ICX, builds_for, make_result, version_of

TEXT = ("job", "test_id", "metric", "test_set", "topo_arch", "nic", "frame_size", "cores", "testbed",
        "dut_version", "group_label", "label")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def pandas_reference(df: pd.DataFrame) -> bytes:
    """What the export wrote with pandas: text cells neutralised, times strftime'd, ``to_csv``."""
    out = df.copy()
    for col in out.columns:
        if col in TEXT or out[col].dtype == object:
            text = out[col].astype("string")
            risky = text.str.startswith(FORMULA).fillna(False).astype(bool)
            if risky.any():
                out[col] = text.where(~risky, "'" + text)
    if "build_time" in out.columns:
        out["build_time"] = pd.to_datetime(out["build_time"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    buf = io.StringIO()
    out.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")


AWKWARD_TEXT = ["plain", "with,comma", 'with"quote', "multi\nline", "cr\rinside", "", None, "=SUM(A1)",
                "+1", "-2", "@cmd", "\tTab", "\rCR", "  spaced  ", "ünï©ødé µs", "'already"]


def awkward_frame(n: int = 64, seed: int = 5) -> pd.DataFrame:
    """Every column of the export with hostile text, NaN/inf/-0.0/tiny/huge floats, NA ints, NaT."""
    rng = np.random.default_rng(seed)
    pick = lambda: pd.array([AWKWARD_TEXT[i] for i in rng.integers(0, len(AWKWARD_TEXT), n)], dtype="string")
    floats = np.array([0.0, -0.0, 1.0, 100.0, 1e15, 1e16, 1e-05, 0.0001, 2.5e-07, math.inf, -math.inf, math.nan,
                       21752588.29, 0.1 + 0.2, -3.5, 1e22])
    times = pd.to_datetime(rng.integers(1.6e18, 1.7e18, n)).tz_localize("UTC")
    times = times.where(rng.random(n) > 0.1)  # NaT
    df = pd.DataFrame({c: pick() for c in EXPORT_COLUMNS if c in TEXT})
    df["build"] = rng.integers(-5, 10**12, n)
    df["build_time"] = times
    for col in ("value", "stdev", "trend"):
        df[col] = floats[rng.integers(0, len(floats), n)]
    df["value"] = np.where(rng.random(n) < 0.5, df["value"], rng.normal(2e7, 1e6, n))
    df["group"] = pd.array([None if i < 0 else i for i in rng.integers(-1, 4, n).tolist()], dtype="Int64")
    return df[EXPORT_COLUMNS]


def test_small_export_pinned_bytes():
    """One series, 3 runs (second missing), groups [0,1) and [2,3) with a regression at run 2."""
    r = make_result([10.0, math.nan, 8.5], (2,), job=ICX, name="64b-1c-x-mrr", suite="tests.s", first_build=7)
    builds = builds_for([r])
    builds.loc[builds["build"] == 8, "testbed"] = "=cmd|' /C calc'!A0"
    text = csv_bytes(series_frame([r], builds)).decode()
    assert text == (
        "job,test_id,metric,test_set,topo_arch,nic,frame_size,cores,build,build_time,testbed,dut_version,"
        "value,stdev,trend,group,group_label,label\n"
        f"{ICX},tests.s.64b-1c-x-mrr,mrr,mrr-daily,2n-icx,25ge2p1xxv710,64B,1C,7,2022-01-01T03:00:00Z,"
        f"2n-icx-tb2,{version_of(7)},10.0,,10.0,0,normal,normal\n"
        f"{ICX},tests.s.64b-1c-x-mrr,mrr,mrr-daily,2n-icx,25ge2p1xxv710,64B,1C,8,2022-01-02T03:00:00Z,"
        f"'=cmd|' /C calc'!A0,{version_of(8)},,,,,,missing\n"
        f"{ICX},tests.s.64b-1c-x-mrr,mrr,mrr-daily,2n-icx,25ge2p1xxv710,64B,1C,9,2022-01-03T03:00:00Z,"
        f"2n-icx-tb2,{version_of(9)},8.5,,8.5,1,regression,regression\n"
    )


@pytest.mark.parametrize("n", [1, 64, 3000])  # 3000 rows: few distinct texts/ints/floats, coded and merged
def test_csv_equals_pandas_on_awkward_frame(n):
    df = awkward_frame(n)
    assert csv_bytes(df) == pandas_reference(df)


def test_csv_equals_pandas_with_object_columns_and_other_dtypes():
    df = awkward_frame(40)
    df["tags"] = [("a", "b"), ["x", 1], None, math.nan, True, 1, 1.0, -2.5, pd.NA, "=x"] * 4  # tuples, lists...
    df["label"] = df["label"].astype(object)
    df["flag"] = np.arange(40) % 3 == 0
    df["count32"] = np.arange(40, dtype=np.int32) - 20
    df["big"] = np.arange(40, dtype=np.uint64) + np.uint64(2**63)  # beyond int64: left to pandas
    df["nice"] = pd.array(["-not neutralised", "ok"] * 20, dtype="string")  # not a text column of the export
    assert csv_bytes(df) == pandas_reference(df)
    df["cat"] = pd.Categorical(["a", "b"] * 20)  # a dtype left to pandas
    df["f32"] = np.linspace(0, 1, 40, dtype=np.float32)
    assert csv_bytes(df) == pandas_reference(df)


def test_build_time_in_another_zone_and_naive_is_written_in_utc():
    df = pd.DataFrame({"build_time": pd.to_datetime(["2022-01-24 04:09:00.9", "1969-12-31 23:59:59.5"]),
                       "x": [1.0, 2.0]})
    assert csv_bytes(df) == b"build_time,x\n2022-01-24T04:09:00Z,1.0\n1969-12-31T23:59:59Z,2.0\n"
    df["build_time"] = df["build_time"].dt.tz_localize("Europe/Bratislava")
    assert csv_bytes(df) == pandas_reference(df) == b"build_time,x\n2022-01-24T03:09:00Z,1.0\n1969-12-31T22:59:59Z,2.0\n"


cells = st.one_of(st.none(), st.sampled_from(AWKWARD_TEXT), st.text(max_size=6))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(cells, st.floats(), st.one_of(st.none(), st.integers(-(2**62), 2**62))),
                min_size=0, max_size=30))
def test_csv_equals_pandas_property(rows):
    df = pd.DataFrame({
        "nic": pd.array([r[0] for r in rows], dtype="string"),
        "value": np.array([r[1] for r in rows], dtype=np.float64),
        "group": pd.array([r[2] for r in rows], dtype="Int64"),
    })
    assert csv_bytes(df) == pandas_reference(df)


def test_write_csv_streams_the_same_bytes_atomically(tmp_path):
    df = awkward_frame(500)
    target = tmp_path / "exports" / "series.csv"
    assert write_csv(df, target) == target
    assert target.read_bytes() == csv_bytes(df)
    assert [p.name for p in target.parent.iterdir()] == ["series.csv"]  # no temp file left


def test_series_frame_facts_attrs_and_types():
    a = make_result([5.0, 6.0, math.nan, 6.5], (1,), job=ALT, name="b", first_build=1)
    b = make_result([1.0, 1.0], job=ICX, name="a", first_build=3)
    a.attrs["nic"] = None
    builds = builds_for([a, b])
    builds = pd.concat([builds, builds.iloc[[0]].assign(testbed="later")])  # duplicate (job, build): last wins
    builds = builds[~((builds["job"] == ICX) & (builds["build"] == 4))]  # a build the table does not know
    df = series_frame([a, b], builds)
    assert list(df.columns) == EXPORT_COLUMNS and all(df[c].dtype == "string" for c in TEXT)
    assert df["job"].tolist() == [ICX, ICX, ALT, ALT, ALT, ALT]  # sorted by job, test id, metric, build
    assert df["build"].tolist() == [3, 4, 1, 2, 3, 4]
    assert df["testbed"].fillna("<NA>").tolist() == ["later", "<NA>", "3n-alt-tb2", "3n-alt-tb1", "3n-alt-tb2", "3n-alt-tb1"]
    first = builds.iloc[-1]
    assert df.loc[(df["job"] == first["job"]) & (df["build"] == first["build"]), "testbed"].tolist() == ["later"]
    assert df["dut_version"].isna().tolist() == [False, True, False, False, False, False]
    assert df["nic"].isna().tolist() == [False, False, True, True, True, True]
    assert df["group"].fillna(-1).tolist() == [0, 0, 0, 1, 1, 1]  # the missing run lies inside group 1
    assert df["group_label"].tolist()[2:] == ["normal", "progression", "progression", "progression"]
    assert df["label"].tolist()[2:] == ["normal", "progression", "missing", "normal"]


def test_series_frame_without_builds_table():
    df = series_frame([make_result([1.0, 2.0])], None)
    assert df["testbed"].isna().all() and df["dut_version"].isna().all() and len(df) == 2
    assert series_frame([], None).columns.tolist() == EXPORT_COLUMNS


@pytest.mark.parametrize("dtype", ["str", pd.StringDtype("python"), pd.StringDtype("pyarrow"), object])
def test_csv_equals_pandas_for_every_kind_of_text_column(dtype):
    values = AWKWARD_TEXT * 3
    df = pd.DataFrame({"nic": pd.Series(values, dtype=dtype), "free": pd.Series(values, dtype=dtype),
                       "n": np.arange(len(values))})
    assert csv_bytes(df) == pandas_reference(df)


def test_csv_of_a_float_column_with_few_values_is_coded_and_equals_pandas():
    """A trend-like column (one value per group, NaN for missing runs) goes the coded way."""
    trend = np.repeat([30e6, 27.5e6, 1e-05, 1e16, 100.0, math.nan, math.inf], 40)
    df = pd.DataFrame({"trend": trend, "cores": np.repeat([-1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 40),
                       "value": np.linspace(1e6, 2e6, len(trend))})
    assert csv_bytes(df) == pandas_reference(df)
    lines = csv_bytes(df).decode().splitlines()
    assert lines[1] == "30000000.0,'-1.5,1000000.0" and lines[-1].startswith("inf,7.0,")
