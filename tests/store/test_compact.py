"""Compaction (``Store.vacuum``), reading chosen builds through the manifest, and stores written by
the previous schema version (tests/data/store-v1, made by pal at c6149c1 with MADE_BY.py there)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pal.store import Store
from pal.store.schema import SCHEMA_VERSION
from tests.store.data import make_meta, make_samples
from tests.store.test_crash import leftovers, run_writer

A = "csit-vpp-perf-mrr-daily-master-2n-icx"
B = "csit-vpp-perf-ndrpdr-weekly-master-3n-icx"
V1 = Path(__file__).resolve().parents[1] / "data" / "store-v1"


def filled(path: Path, builds: int = 5) -> Store:
    store = Store(path)
    for job in (A, B):
        for b in range(1, builds + 1):
            store.insert(make_samples(job, b, scale=float(b)), make_meta(job, b), f"{b:064d}")
    return store


def parquet_files(store: Store) -> list[str]:
    return sorted(p.relative_to(store.path).as_posix() for p in (store.path / "samples").rglob("*.parquet"))


def test_vacuum_compacts_each_job_into_one_file_and_keeps_every_row(tmp_path):
    store = filled(tmp_path / "s")
    before, builds_before = store.samples(), store.builds()
    assert len(parquet_files(store)) == 10
    out = store.vacuum()
    assert out["compacted"] == 10 and len(out["fragments"]) == 2
    assert len(out["removed"]) == 0  # the old files went with the manifest that dropped them
    files = parquet_files(store)
    assert len(files) == 2 and all(Path(f).name.startswith("c1-5-") for f in files)
    reopened = Store(store.path)
    pd.testing.assert_frame_equal(reopened.samples(), before)
    pd.testing.assert_frame_equal(reopened.builds(), builds_before)
    manifest = json.loads((store.path / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    # 3 rows a build, all five in one row group, one after the other
    assert [(e["row_group"], e["offset"]) for e in manifest["builds"] if e["job"] == A] == \
        [(0, 0), (0, 3), (0, 6), (0, 9), (0, 12)]
    assert reopened.vacuum()["compacted"] == 0  # nothing left to compact


def test_vacuum_respects_the_target_size(tmp_path):
    store = filled(tmp_path / "s")
    store.vacuum(target_rows=6)  # 3 rows a build: two builds a file
    names = sorted(Path(f).name.split("-")[0] + "-" + Path(f).name.split("-")[1] for f in parquet_files(store))
    assert names == ["5-00000000", "5-00000000", "c1-2", "c1-2", "c3-4", "c3-4"]


def test_table_reads_only_the_chosen_builds_in_order(tmp_path, monkeypatch):
    import pal.store.store

    monkeypatch.setattr(pal.store.store, "GROUP_ROWS", 6)  # row groups of two builds
    store = filled(tmp_path / "s", builds=6)
    store.vacuum(target_rows=9)  # builds 1-3 and 4-6 of each job in two files
    spans = [(e["build"], e["row_group"], e["offset"]) for e in
             json.loads((store.path / "manifest.json").read_text())["builds"] if e["job"] == A]
    assert spans == [(1, 0, 0), (2, 0, 3), (3, 1, 0), (4, 0, 0), (5, 0, 3), (6, 1, 0)]
    full = store.table().to_pandas()
    chosen = [(A, 2), (A, 3), (A, 4), (B, 6), (B, 99)]  # across a file boundary; 99 is not stored
    got = store.table(builds=chosen).to_pandas()
    keep = full.set_index(["job", "build"]).index.isin([(j, b) for j, b in chosen])
    pd.testing.assert_frame_equal(got, full[keep].reset_index(drop=True))
    assert got["build"].tolist() == [2] * 3 + [3] * 3 + [4] * 3 + [6] * 3
    # values: the NDR row of each build is 18123456.5 x the build's scale
    assert got.loc[got.metric == "ndr", "value"].tolist() == [18123456.5 * b for b in (2, 3, 4, 6)]
    gaps = [(A, 1), (A, 3), (A, 5), (A, 6)]  # not adjacent: separate slices of the row groups read
    assert store.table(builds=gaps).to_pandas()["build"].tolist() == [1] * 3 + [3] * 3 + [5] * 3 + [6] * 3


def test_dictionary_read_holds_each_string_once_per_fragment(tmp_path):
    store = filled(tmp_path / "s")
    store.vacuum()
    t = store.table(columns=["job", "test_id", "value"], dictionary=True)
    assert str(t.schema.field("test_id").type) == "dictionary<values=string, indices=int32, ordered=0>"
    assert t["test_id"].to_pylist() == store.table(columns=["test_id"])["test_id"].to_pylist()
    assert max(len(c.dictionary) for c in t["test_id"].chunks) == 3


def test_dictionary_read_joins_each_rows_tags_once_read(tmp_path, monkeypatch):
    """Tags arrive as one dictionary string per row, joined by TAG_SEP, from single-build fragments
    and from row groups of compacted ones alike (read a group at a time, then sliced)."""
    import pal.store.store
    from pal.store.schema import TAG_SEP

    monkeypatch.setattr(pal.store.store, "GROUP_ROWS", 6)  # row groups of two builds
    store = filled(tmp_path / "s", builds=6)
    store.vacuum(target_rows=9)
    store.insert(make_samples(A, 7), make_meta(A, 7), "7" * 64)  # and one single-build fragment
    chosen = [(A, 2), (A, 3), (A, 5), (A, 7), (B, 1)]
    plain = store.table(columns=["build", "tags"], builds=chosen)["tags"].to_pylist()
    t = store.table(columns=["build", "tags"], builds=chosen, dictionary=True)
    assert str(t.schema.field("tags").type) == "dictionary<values=string, indices=int32, ordered=0>"
    joined = t["tags"].to_pylist()
    assert sorted(joined[:3]) == ["", "2T1C" + TAG_SEP + "64B" + TAG_SEP + "MRR", "MRR"]  # a build's 3 rows
    assert [None if j is None else (j.split(TAG_SEP) if j else []) for j in joined] == plain
    assert t["build"].to_pylist() == [2] * 3 + [3] * 3 + [5] * 3 + [7] * 3 + [1] * 3


def test_replacing_a_compacted_build_keeps_the_others(tmp_path):
    store = filled(tmp_path / "s", builds=3)
    store.vacuum()
    [compacted] = [f for f in parquet_files(store) if A.split("-")[3] in f and "/c1-3-" in f]
    assert store.insert(make_samples(A, 2, scale=7.0), make_meta(A, 2), "f" * 64) == "replaced"
    assert compacted in parquet_files(store)  # still holds builds 1 and 3
    got = store.samples(A)
    assert got.loc[got.metric == "ndr", "value"].tolist() == [18123456.5, 18123456.5 * 7, 18123456.5 * 3]
    assert store.remove_build(A, 1) and store.remove_build(A, 3)
    assert compacted not in parquet_files(store)  # no build left in it
    assert store.samples(A)["build"].tolist() == [2, 2, 2]


@pytest.mark.parametrize("step", ["fragment-temp", "fragments-placed", "manifest-temp", "manifest-replaced"])
def test_vacuum_killed_at_any_step_leaves_the_same_content(tmp_path, step):
    store = filled(tmp_path / "s")
    before, builds_before = store.samples(), store.builds()
    proc = run_writer("vacuum", str(store.path), crash_at=step)
    assert proc.returncode == 137, proc.stderr
    reopened = Store(store.path)
    pd.testing.assert_frame_equal(reopened.samples(), before)
    pd.testing.assert_frame_equal(reopened.builds(), builds_before)
    # a clean rerun finishes the job and leaves no temp file, no unlisted fragment
    proc = run_writer("vacuum", str(store.path))
    assert proc.returncode == 0, proc.stderr
    final = Store(store.path)
    pd.testing.assert_frame_equal(final.samples(), before)
    assert leftovers(final) == [] and len(parquet_files(final)) == 2


def test_a_version_1_store_is_read_and_migrated_by_its_next_write(tmp_path):
    path = tmp_path / "old"
    shutil.copytree(V1, path)
    store = Store(path)
    assert json.loads((path / "manifest.json").read_text())["schema_version"] == 1
    expected = pd.concat([make_samples(j, b, scale=2.0 if (j, b) == (A, 2) else 1.0) for j in (A, B) for b in (1, 2, 3)],
                         ignore_index=True).sort_values(["job", "build", "test_id", "metric"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(store.samples(), expected)
    assert store.load_state("digests") == {"x|y|mrr": "abc"}
    assert store.load_alerts() == [{"id": "a1", "kind": "regression"}]
    assert store.builds()["sha256"].tolist()[1] == "f" * 64
    assert store.vacuum()["compacted"] == 6
    assert json.loads((path / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    pd.testing.assert_frame_equal(Store(path).samples(), expected)
    assert store.insert(make_samples(A, 4), make_meta(A, 4), "4" * 64) == "added"
    assert Store(path).samples(A)["build"].tolist() == [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3


def test_a_commit_of_many_builds_compacts_them_by_itself(tmp_path):
    from pal.model import BuildFile
    from pal.store.ingest import parse_to_fragment
    from tests.store.data import fake_parse

    store = Store(tmp_path / "s", auto_compact=4)
    frags = []
    for b in range(1, 7):
        f = tmp_path / f"{b}.txt"
        f.write_text(str(float(b)))
        frags.append(parse_to_fragment(BuildFile(A, b, f, "test"), str(store.staging_dir()), {}, parse_fn=fake_parse))
    assert len(store.commit_fragments(frags[:3]).added) == 3
    assert len(parquet_files(store)) == 3  # three singles: below the threshold of 4
    assert len(store.commit_fragments(frags[3:]).added) == 3
    assert [Path(f).name.split("-")[:2] for f in parquet_files(store)] == [["c1", "6"]]
    got = store.samples()
    assert got.loc[got.metric == "ndr", "value"].tolist() == [18123456.5 * b for b in range(1, 7)]
    assert Store(tmp_path / "t", auto_compact=None).auto_compact is None


V2 = Path(__file__).resolve().parents[1] / "data" / "store-v2"


def test_a_version_2_store_with_tags_as_lists_reads_as_a_new_one(tmp_path):
    """Fragments written before version 3 hold the tags as lists; they are read as they are (both
    reads), compacted into the joined form, and live beside new fragments in one store."""
    path = tmp_path / "old"
    shutil.copytree(V2, path)
    store = Store(path, auto_compact=None)
    assert json.loads((path / "manifest.json").read_text())["schema_version"] == 2
    old = [(A, b, float(b)) for b in (1, 2, 3, 4)] + [(B, b, 1.0) for b in (1, 2)]

    def expected(extra=()):
        frames = [make_samples(j, b, scale=s) for j, b, s in [*old, *extra]]
        return pd.concat(frames, ignore_index=True).sort_values(["job", "build", "test_id", "metric"]).reset_index(
            drop=True)

    def joined_tags(s: Store) -> list:
        table = s.table(dictionary=True)
        return table.column("tags").cast(pa.string()).to_pylist()

    pd.testing.assert_frame_equal(store.samples(), expected())
    assert joined_tags(store) == ["\x1f".join(t) for t in expected()["tags"]]
    assert store.insert(make_samples(A, 5), make_meta(A, 5), "5" * 64) == "added"  # a version-3 fragment
    both = expected([(A, 5, 1.0)])
    pd.testing.assert_frame_equal(Store(path).samples(), both)
    assert joined_tags(Store(path)) == ["\x1f".join(t) for t in both["tags"]]
    assert store.vacuum()["compacted"] == 2  # B's two old single-build fragments, into the joined form
    assert json.loads((path / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    pd.testing.assert_frame_equal(Store(path).samples(), both)
    assert joined_tags(Store(path)) == ["\x1f".join(t) for t in both["tags"]]
    compacted = [f for f in parquet_files(store) if "ndrpdr" in f]
    assert len(compacted) == 1 and str(pq.read_schema(path / compacted[0]).field("tags").type) == "string"


def _staged(store: Store, tmp_path: Path, builds: range, job: str = A) -> list:
    """Fragments of ``builds`` as the parse's workers stage them (``parse_to_fragment``)."""
    from pal.model import BuildFile
    from pal.store.ingest import parse_to_fragment
    from tests.store.data import fake_parse

    frags = []
    for b in builds:
        f = tmp_path / f"{job[-6:]}-{b}.txt"
        f.write_text(str(float(b)))
        frags.append(parse_to_fragment(BuildFile(job, b, f, "test"), str(store.staging_dir()), {}, parse_fn=fake_parse))
    return frags


def _as_parquet(frags: list) -> list:
    """The same fragments staged as Parquet files, as workers staged them before ``write_staged``."""
    import dataclasses

    from pal.store.store import read_fragment_file, write_fragment

    out = []
    for frag in frags:
        path = Path(frag.path).with_suffix(".parquet")
        write_fragment(read_fragment_file(Path(frag.path)), path)
        out.append(dataclasses.replace(frag, path=str(path)))
    return out


def _layout(store: Store) -> list[tuple]:
    """Each build's place: its file's name without the unique part, row group and offset."""
    doc = json.loads((store.path / "manifest.json").read_text())
    return [(e["job"], e["build"], "-".join(Path(e["fragment"]).name.split("-")[:2]), e.get("row_group"), e.get("offset"))
            for e in doc["builds"]]


def test_staged_fragments_are_arrow_files_the_commit_turns_into_parquet(tmp_path):
    store = Store(tmp_path / "s")
    frags = _staged(store, tmp_path, range(1, 3))
    assert all(f.path.endswith(".arrow") for f in frags)
    assert pa.ipc.open_file(frags[0].path).read_all().num_rows == frags[0].rows
    store.commit_fragments(frags)
    assert [Path(f).suffix for f in parquet_files(store)] == [".parquet"] * 2
    assert not list(store.staging_dir().iterdir())  # each staged file gone once the manifest lists its build
    old = Store(tmp_path / "old")
    old.commit_fragments(_as_parquet(_staged(old, tmp_path, range(1, 3))))  # the path before: moved in as staged
    pd.testing.assert_frame_equal(store.samples(), old.samples())
    for a, b in zip(parquet_files(store), parquet_files(old)):  # the same Parquet bytes
        assert (store.path / a).read_bytes() == (old.path / b).read_bytes()


@pytest.mark.parametrize("before", [0, 2], ids=["all-new", "after-two-stored-singles"])
def test_a_commit_compacts_straight_from_the_staged_files_as_a_commit_then_a_vacuum_did(tmp_path, before):
    """The staged files of a run go into the compacted file without a Parquet file of their own;
    the store holds what committing them one by one and compacting after held: the same rows,
    files, row groups and offsets."""
    new = Store(tmp_path / "new", auto_compact=4)
    ref = Store(tmp_path / "ref", auto_compact=None)
    for store in (new, ref):
        store.commit_fragments(_staged(store, tmp_path, range(1, 3), job=B))
        if before:
            store.commit_fragments(_staged(store, tmp_path, range(1, before + 1)))
    assert len(parquet_files(new)) == before + 2  # below the threshold: singles
    new.commit_fragments(_staged(new, tmp_path, range(before + 1, 7)))
    ref.commit_fragments(_as_parquet(_staged(ref, tmp_path, range(before + 1, 7))))
    ref._compact(500_000, min_builds=4)
    assert _layout(new) == _layout(ref)
    assert [a[2:] for a in _layout(new) if a[0] == A] == [("c1-6", 0, 3 * i) for i in range(6)]
    assert sorted(Path(f).name.split("-")[0] for f in parquet_files(new)) == ["1", "2", "c1"]  # B's two singles stay
    pd.testing.assert_frame_equal(new.samples(), ref.samples())
    assert not list(new.staging_dir().iterdir()) and leftovers(new) == []


def test_fragments_have_dictionary_pages_for_their_texts_only(tmp_path):
    """Text columns dictionary-encoded (a read hands out their codes); number columns plain (their
    distinct values only filled a dictionary page the writer then gave up)."""
    store = Store(tmp_path / "s", auto_compact=2)
    store.commit_fragments(_staged(store, tmp_path, range(1, 4)))  # one compacted file
    store.commit_fragments(_staged(store, tmp_path, range(1, 2), job=B))  # one single
    for rel in parquet_files(store):
        meta = pq.ParquetFile(store.path / rel).metadata
        group = meta.row_group(0)
        encoded = {group.column(i).path_in_schema: "dictionary" in " ".join(group.column(i).encodings).lower()
                   for i in range(group.num_columns)}
        assert encoded["test_id"] and encoded["tags"] and encoded["job"], rel
        assert not encoded["value"] and not encoded["stdev"] and not encoded["build"], rel
