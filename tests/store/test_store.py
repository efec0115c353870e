"""Store: round-trip of every column, idempotent insert, replacement, queries, state, alerts, schema version."""

from __future__ import annotations

import json
import math

import pandas as pd
import pyarrow.parquet as pq
import pytest

from pal.errors import StoreError
from pal.model import BUILD_COLUMNS, SAMPLE_COLUMNS
from pal.store import SAMPLES_SCHEMA, SCHEMA_VERSION, Store
from pal.store.schema import STORED_SCHEMA, TAG_SEP
from tests.store.data import T0, make_meta, make_samples

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
JOB2 = "csit-vpp-perf-ndrpdr-weekly-master-3n-alt"
SHA_A, SHA_B = "a" * 64, "b" * 64


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "store")


def test_roundtrip_every_column_and_dtype(store):
    given = make_samples(JOB, 7)
    assert store.insert(given, make_meta(JOB, 7), SHA_A) == "added"
    got = store.samples()
    assert list(got.columns) == list(SAMPLE_COLUMNS)
    assert {c: str(t) for c, t in got.dtypes.items()} == {c: str(pd.Series(dtype=t).dtype) for c, t in SAMPLE_COLUMNS.items()}
    # sorted by job, build, test_id, metric: a-mrr (FAIL), b-mrr (PASS), c-ndrpdr
    assert got["test_id"].tolist() == ["tests.vpp.perf.ip4.a-mrr", "tests.vpp.perf.ip4.b-mrr", "tests.vpp.perf.ip4.c-ndrpdr"]
    exp = given.sort_values("test_id").reset_index(drop=True)
    for col in SAMPLE_COLUMNS:
        if col in ("trials", "tags", "value", "stdev"):
            continue
        assert got[col].tolist() == exp[col].tolist(), col
    # the FAIL row: value and stdev NaN (never 0.0), message kept, trials None
    fail = got.iloc[0]
    assert math.isnan(fail["value"]) and math.isnan(fail["stdev"])
    assert fail["message"] == "Traffic lost: 100 %" and fail["trials"] is None and fail["tags"] == ("MRR",)
    # the MRR PASS row: trials a list of floats, mean and population stdev as given
    mrr = got.iloc[1]
    assert mrr["trials"] == [21752588.29, 21712091.77, 21836008.33] and isinstance(mrr["trials"], list)
    assert mrr["value"] == pytest.approx(21766896.13, abs=0.005)
    # deviations -14307.84, -54804.36, +69112.20 -> sqrt(sum of squares / 3) = 51590.465
    assert mrr["stdev"] == pytest.approx(51590.465, abs=0.001)
    assert mrr["tags"] == ("2T1C", "64B", "MRR") and isinstance(mrr["tags"], tuple)
    # the NDR row: NaN stdev, empty tags tuple (not None), missing driver stays <NA>
    ndr = got.iloc[2]
    assert ndr["value"] == 18123456.5 and math.isnan(ndr["stdev"]) and ndr["tags"] == ()
    assert pd.isna(ndr["driver"])
    assert got["build_time"].tolist() == [pd.Timestamp("2022-01-31T03:00:00Z")] * 3


def test_fragment_has_the_stored_types(store):
    samples = make_samples(JOB, 1)
    store.insert(samples, make_meta(JOB, 1), SHA_A)
    (frag,) = (store.path / "samples").rglob("*.parquet")
    assert frag.parent.name == f"job={JOB}" and frag.name.startswith("1-aaaaaaaa-")
    schema = pq.read_schema(frag)
    assert str(schema.field("trials").type) == "list<element: double>"
    assert str(schema.field("tags").type) == "string"  # joined by TAG_SEP (schema version 3)
    assert schema.equals(STORED_SCHEMA, check_metadata=False)
    stored = pq.read_table(frag).column("tags").to_pylist()
    assert stored == [TAG_SEP.join(t) for t in samples.sort_values(["test_id", "metric"])["tags"]]
    # the store hands out SAMPLES_SCHEMA: the tags as lists again
    assert store.table().schema.equals(SAMPLES_SCHEMA, check_metadata=False)


def test_insert_is_idempotent(store):
    df = make_samples(JOB, 3)
    assert store.insert(df, make_meta(JOB, 3), SHA_A) == "added"
    first = store.samples()
    assert store.insert(df, make_meta(JOB, 3), SHA_A) == "unchanged"
    again = store.samples()
    assert len(again) == 3 and store.info()["builds"] == 1
    pd.testing.assert_frame_equal(first, again)
    assert len(list((store.path / "samples").rglob("*.parquet"))) == 1
    assert store.has_build(JOB, 3, SHA_A) and store.has_build(JOB, 3)
    assert not store.has_build(JOB, 3, SHA_B) and not store.has_build(JOB, 4)


def test_changed_archive_replaces_build(store):
    store.insert(make_samples(JOB, 3), make_meta(JOB, 3), SHA_A)
    assert store.insert(make_samples(JOB, 3, scale=2.0), make_meta(JOB, 3), SHA_B) == "replaced"
    got = store.samples()
    assert len(got) == 3
    assert got.loc[got.metric == "ndr", "value"].tolist() == [2 * 18123456.5]
    assert store.builds()["sha256"].tolist() == [SHA_B]
    files = list((store.path / "samples").rglob("*.parquet"))
    assert [f.name[:10] for f in files] == ["3-bbbbbbbb"]  # the replaced fragment is gone


def test_builds_table(store):
    store.insert(make_samples(JOB2, 5), make_meta(JOB2, 5), SHA_B)
    store.insert(make_samples(JOB, 9), make_meta(JOB, 9), SHA_A)
    b = store.builds()
    assert list(b.columns) == list(BUILD_COLUMNS)
    assert {c: str(t) for c, t in b.dtypes.items()} == {c: str(pd.Series(dtype=t).dtype) for c, t in BUILD_COLUMNS.items()}
    assert b["job"].tolist() == [JOB, JOB2] and b["build"].tolist() == [9, 5]
    assert b["build_time"].tolist() == [pd.Timestamp("2022-02-02T03:00:00Z"), pd.Timestamp("2022-01-29T03:00:00Z")]
    assert b["start_time"].iloc[0] == pd.Timestamp("2022-02-02T01:00:00Z")
    assert b["sha256"].tolist() == [SHA_A, SHA_B]  # the hash given to insert, not BuildMeta's
    assert b["duration_s"].tolist() == [7200.5, 7200.5] and b["passed"].tolist() == [2, 2]
    assert store.builds(JOB2)["build"].tolist() == [5]


def test_widest_builds_are_each_jobs_most_rows_in_one_build(store):
    assert store.widest_builds() == {}
    store.insert(make_samples(JOB, 9), make_meta(JOB, 9), SHA_A)  # three rows
    store.insert(make_samples(JOB, 10).iloc[:1], make_meta(JOB, 10), SHA_B)  # one
    store.insert(make_samples(JOB2, 5).iloc[:2], make_meta(JOB2, 5), SHA_B)  # two
    assert store.widest_builds() == {JOB: 3, JOB2: 2}


def test_none_meta_fields_round_trip(store):
    from dataclasses import replace

    meta = replace(make_meta(JOB, 1), build_time=None, dut_version=None, duration_s=None)
    store.insert(make_samples(JOB, 1), meta, SHA_A)
    row = store.builds().iloc[0]
    assert pd.isna(row["build_time"]) and pd.isna(row["dut_version"]) and math.isnan(row["duration_s"])


def test_query_by_job_and_columns(store):
    for b in (1, 2):
        store.insert(make_samples(JOB, b), make_meta(JOB, b), f"{b}" * 64)
    store.insert(make_samples(JOB2, 1), make_meta(JOB2, 1), SHA_B)
    assert len(store.samples()) == 9
    only = store.samples(jobs=[JOB2])
    assert set(only["job"]) == {JOB2} and len(only) == 3
    sub = store.samples(jobs=JOB, columns=["build", "value", "tags"])
    assert list(sub.columns) == ["build", "value", "tags"]
    assert sub["build"].tolist() == [1, 1, 1, 2, 2, 2] and str(sub["build"].dtype) == "int64"
    assert sub["tags"].tolist()[:3] == [("MRR",), ("2T1C", "64B", "MRR"), ()]
    assert store.samples(jobs=["no-such-job"]).empty
    with pytest.raises(StoreError, match="unknown sample columns"):
        store.samples(columns=["nope"])


def test_empty_store(tmp_path):
    store = Store(tmp_path / "new")
    assert store.samples().empty and list(store.samples().columns) == list(SAMPLE_COLUMNS)
    assert store.builds().empty
    assert store.info() == {"path": str(tmp_path / "new"), "schema_version": SCHEMA_VERSION, "jobs": 0, "builds": 0,
                            "rows": 0, "size_bytes": 0, "per_job": {}}
    assert store.load_state("x") == {} and store.load_alerts() == []


def test_remove_build(store):
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    store.insert(make_samples(JOB, 2), make_meta(JOB, 2), SHA_B)
    assert store.remove_build(JOB, 1) is True
    assert store.remove_build(JOB, 1) is False
    assert store.samples()["build"].unique().tolist() == [2]
    assert len(list((store.path / "samples").rglob("*.parquet"))) == 1


def test_schema_version_mismatch(store):
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    manifest = store.path / "manifest.json"
    data = json.loads(manifest.read_text())
    data["schema_version"] = 99
    manifest.write_text(json.dumps(data))
    with pytest.raises(StoreError, match=r"manifest.json: store schema version 99 .*\(1, 2, 3\)"):
        Store(store.path)


def test_damaged_manifest(store):
    store.path.mkdir(parents=True)
    (store.path / "manifest.json").write_text("{not json")
    with pytest.raises(StoreError, match="damaged store manifest"):
        Store(store.path)


def test_state_and_alerts(store):
    import numpy as np

    key1 = f"{JOB}|tests.vpp.perf.ip4.b-mrr|mrr"
    store.save_state(JOB, {key1: {"groups": [[0, 5, 1.5]], "n": np.int64(5)}})
    store.save_state(JOB, "k2", {"avg": np.float64(2.5)})  # one entry, the others kept
    assert store.load_state(JOB) == {key1: {"groups": [[0, 5, 1.5]], "n": 5}, "k2": {"avg": 2.5}}
    store.save_state(JOB, {"k3": 1})  # a whole mapping replaces
    assert store.load_state(JOB) == {"k3": 1}
    assert store.load_state(JOB2) == {}
    with pytest.raises(TypeError, match="state keys must be strings"):
        store.save_state(JOB, {("a", "b"): 1})
    assert store.drop_state(JOB) is True and store.load_state(JOB) == {} and store.drop_state(JOB) is False
    store.save_alerts([{"test_id": "t", "kind": "regression", "build": 7, "time": T0, "change": float("nan")}])
    (alert,) = store.load_alerts()
    assert alert["time"] == "2022-01-24T03:00:00+00:00" and alert["build"] == 7 and math.isnan(alert["change"])
    assert not list(store.path.rglob("*.tmp-*"))


def test_info_vacuum_and_export(store, tmp_path):
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    store.insert(make_samples(JOB2, 2), make_meta(JOB2, 2), SHA_B)
    info = store.info()
    assert (info["jobs"], info["builds"], info["rows"], info["schema_version"]) == (2, 2, 6, SCHEMA_VERSION)
    assert info["per_job"][JOB] == {"builds": 1, "rows": 3, "first_build": 1, "last_build": 1}
    assert info["size_bytes"] == sum(p.stat().st_size for p in store.path.rglob("*") if p.is_file())
    # leftovers of killed runs: a temp file, an unlisted fragment, a staged file
    orphan = store.path / "samples" / f"job={JOB}" / "5-cccccccc-000000.parquet"
    orphan.write_bytes(b"x" * 10)
    (store.path / ".manifest.json.tmp-1-abc").write_text("{")
    (store.staging_dir() / "x.parquet").write_bytes(b"yy")
    gone = store.vacuum()
    assert sorted(gone["removed"]) == [".manifest.json.tmp-1-abc", f"samples/job={JOB}/5-cccccccc-000000.parquet",
                                       "staging/x.parquet"]
    assert gone["bytes"] == 13 and len(store.samples()) == 6
    assert store.vacuum()["removed"] == []
    out = store.export(tmp_path / "all.csv")
    csv = pd.read_csv(out)
    assert len(csv) == 6 and csv["trials"].dropna().map(json.loads).tolist()[0] == [21752588.29, 21712091.77, 21836008.33]
    assert csv["value"].isna().sum() == 2  # FAIL rows stay empty, not 0
    pq_out = store.export(tmp_path / "all.parquet")
    assert pq.read_table(pq_out).num_rows == 6
    with pytest.raises(StoreError, match=r"\.json: export format"):
        store.export(tmp_path / "all.json")


def test_samples_sorted_by_job_then_numeric_build(store):
    # inserted out of order; builds 10 and 9 must come back numerically (9 before 10), jobs by name
    for job, build in ((JOB2, 10), (JOB, 10), (JOB2, 9), (JOB, 9)):
        store.insert(make_samples(job, build), make_meta(job, build), f"{build}" * 32)
    got = store.samples(columns=["job", "build", "test_id"])
    keys = list(zip(got["job"], got["build"], got["test_id"]))
    assert keys == sorted(keys) and [k[:2] for k in keys[::3]] == [(JOB, 9), (JOB, 10), (JOB2, 9), (JOB2, 10)]


def test_odd_tags_are_stored_joined_without_losing_the_others():
    """A tag holding TAG_SEP (from JSON) gets a space there, a null among a row's tags is left out,
    an empty list and no list stay apart; sliced and chunked tables alike (to_stored / from_stored)."""
    import pyarrow as pa

    from pal.store.schema import from_stored, to_stored

    tags = pa.array([["A", "B"], [f"C{TAG_SEP}D", None, "E"], None, [], ["F"]], pa.list_(pa.string()))
    want_joined = ["A\x1fB", "C D\x1fE", None, "", "F"]
    want_lists = [["A", "B"], ["C D", "E"], None, [], ["F"]]
    for table, lo in ((pa.table({"tags": tags}), 0), (pa.table({"tags": tags.slice(1, 4)}), 1),
                      (pa.table({"tags": pa.chunked_array([tags.slice(0, 2), tags.slice(2)])}), 0)):
        stored = to_stored(table)
        assert stored.column("tags").to_pylist() == want_joined[lo:]
        assert from_stored(stored, joined=False).column("tags").to_pylist() == want_lists[lo:]
        assert from_stored(table, joined=True).column("tags").to_pylist() == want_joined[lo:]
