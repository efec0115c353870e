"""Series exports written job by job (``SeriesExports``): the files equal the whole frame's, and a
job whose rows did not change is not formatted again (its CSV rows copied from the kept file of
the previous run, its Parquet part reused)."""

from __future__ import annotations

import math
import os

import pandas as pd
import pyarrow.parquet as pq
import pytest

from pal.alerts.export import PARTS_DIR, SeriesExports, csv_bytes, series_frame
from tests.alerts.factory import ALT, ICX, builds_for, make_result

SPR = "csit-vpp-perf-mrr-daily-master-2n-spr"


def history(last: float = 6.5, extra: int = 0) -> list:
    """Three jobs; ``last`` is the newest value of ALT's first series, ``extra`` runs more on ICX."""
    return [
        make_result([5.0, 6.0, math.nan, last], (1,), job=ALT, name="b", first_build=1),
        make_result([1.0, 1.0, 2.0], job=ALT, name="a", first_build=1),
        make_result([3.0] * (4 + extra), (), job=ICX, name="d", first_build=10, test_set="=x"),
        make_result([7.0, 7.5, 9.0], (2,), job=SPR, name="c", first_build=5),
    ]


def write_all(root, results):
    builds = builds_for(results)
    ex = SeriesExports(root / "exports", results, builds)
    for fmt in ("csv", "parquet"):
        ex.write(fmt, root / "exports" / f"series.{fmt}")
    return ex, builds


def test_files_equal_the_whole_frame(tmp_path):
    results = history()
    ex, builds = write_all(tmp_path, results)
    whole = series_frame(results, builds)
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(whole)
    back = pd.read_parquet(tmp_path / "exports" / "series.parquet")
    pd.testing.assert_frame_equal(back, whole)
    meta = pq.ParquetFile(tmp_path / "exports" / "series.parquet").metadata
    column = {meta.schema.column(i).name: meta.row_group(0).column(i) for i in range(meta.num_columns)}
    assert "RLE_DICTIONARY" in column["test_id"].encodings and "RLE_DICTIONARY" not in column["value"].encodings
    assert column["value"].statistics.has_min_max  # readers can still skip row groups by value
    assert sorted(ex.formatted) == sorted([ALT, ICX, SPR])  # one pass over a job's rows makes both parts
    # a text cell starting with "=" is neutralised in the CSV, kept raw in Parquet
    assert b",'=x," in (tmp_path / "exports" / "series.csv").read_bytes()
    assert "=x" in back["test_set"].tolist()


def test_unchanged_jobs_are_copied_and_the_result_equals_a_fresh_write(tmp_path):
    write_all(tmp_path / "inc", history())
    changed = history(last=8.0, extra=1)  # ALT and ICX change, SPR does not
    ex, _ = write_all(tmp_path / "inc", changed)
    assert sorted(ex.formatted) == sorted([ALT, ICX])
    fresh, _ = write_all(tmp_path / "fresh", changed)
    assert sorted(fresh.formatted) == sorted([ALT, ICX, SPR])
    for name in ("series.csv", "series.parquet"):
        assert (tmp_path / "inc" / "exports" / name).read_bytes() == (tmp_path / "fresh" / "exports" / name).read_bytes()
    # what the first run kept is gone: this run's two files and their index are left
    left = sorted(p.name for p in (tmp_path / "inc" / "exports" / PARTS_DIR).iterdir())
    assert [n.split(".", 1)[1] for n in left] == ["csv", "json", "parquet"] and len({n.split(".")[0] for n in left}) == 1
    assert left == sorted(p.name for p in (tmp_path / "fresh" / "exports" / PARTS_DIR).iterdir())


def test_the_kept_files_are_the_published_ones_not_second_copies(tmp_path):
    write_all(tmp_path, history())
    for fmt in ("csv", "parquet"):
        kept = next((tmp_path / "exports" / PARTS_DIR).glob(f"*.{fmt}"))
        assert kept.stat().st_ino == (tmp_path / "exports" / f"series.{fmt}").stat().st_ino


def test_kept_files_that_do_not_match_their_index_are_not_used(tmp_path):
    """A kill before the index was written, a lost or cut file, an index of another format
    version, garbage or places out of range: the rows are formatted again and the exports are
    still the whole frame's."""
    import json

    results = history()
    changed = history(last=8.0)  # ALT changes
    builds = builds_for(changed)
    parts = tmp_path / "exports" / PARTS_DIR
    spoils = ("no index", "lost parquet", "short csv", "version", "garbage", "out of range", "row groups")
    for spoil in spoils:
        write_all(tmp_path, results)
        index = next(parts.glob("*.json"))
        layout = index.name[: -len(".json")]
        doc = json.loads(index.read_text())
        if spoil == "no index":
            index.unlink()
        elif spoil == "lost parquet":
            (parts / f"{layout}.parquet").unlink()
        elif spoil == "short csv":
            os.truncate(parts / f"{layout}.csv", doc["files"]["csv"]["size"] - 1)  # (series.csv too: same inode)
        elif spoil == "version":
            index.write_text(json.dumps({**doc, "format": "0" * 40}))
        elif spoil == "garbage":
            index.write_text("{not json")
        elif spoil == "out of range":
            doc["layout"] = {f: [[d, o + 10 ** 9, n] for d, o, n in rows] for f, rows in doc["layout"].items()}
            index.write_text(json.dumps(doc))
        else:
            doc["files"]["parquet"]["row_groups"] += 1
            index.write_text(json.dumps(doc))
        ex, _ = write_all(tmp_path, changed)
        assert sorted(ex.formatted) == sorted([ALT, ICX, SPR]), spoil  # every job's rows formatted again
        assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(series_frame(changed, builds)), spoil
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "exports" / "series.parquet"),
                                      series_frame(changed, builds))
        assert sorted(p.name.split(".", 1)[1] for p in parts.iterdir()) == ["csv", "json", "parquet"], spoil


def test_what_an_older_pal_or_a_killed_run_left_in_parts_is_removed(tmp_path):
    write_all(tmp_path, history())
    left = [tmp_path / "exports" / PARTS_DIR / n for n in ("ab" * 20 + ".csv", "cd" * 20 + ".parquet",
                                                            ".series.csv.tmp-999999999")]
    for p in left:
        p.write_text("rows of a job, as an older version kept them, or half a file")
    write_all(tmp_path, history(last=8.0))
    assert not any(p.exists() for p in left)


def test_no_results_give_a_header_only_csv_and_an_empty_parquet(tmp_path):
    ex = SeriesExports(tmp_path / "exports", [], None)
    ex.write("csv", tmp_path / "exports" / "series.csv")
    ex.write("parquet", tmp_path / "exports" / "series.parquet")
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(series_frame([], None))
    assert len(pd.read_parquet(tmp_path / "exports" / "series.parquet")) == 0


def test_a_changed_build_fact_changes_the_part(tmp_path):
    results = history()
    builds = builds_for(results)
    SeriesExports(tmp_path / "exports", results, builds, ["csv"]).write("csv", tmp_path / "exports" / "series.csv")
    builds.loc[builds["job"] == SPR, "testbed"] = "moved"
    ex = SeriesExports(tmp_path / "exports", results, builds, ["csv"])
    ex.write("csv", tmp_path / "exports" / "series.csv")
    assert ex.formatted == [SPR]
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(series_frame(results, builds))


def test_parquet_row_groups_are_chunks_of_series_and_copied_ones_equal_them(tmp_path, monkeypatch):
    """series.parquet is written a chunk of EXPORT_CHUNK_SERIES series at a time, a row group each
    (memory: a chunk, not the export), and a job copied from the kept file keeps its row groups:
    rows, order, types and bytes are those of a fresh write."""
    import pyarrow.parquet as pq

    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_CHUNK_SERIES", 1)
    results = history()
    _, builds = write_all(tmp_path / "a", results)
    path = tmp_path / "a" / "exports" / "series.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(path), series_frame(results, builds))
    meta = pq.ParquetFile(path).metadata
    in_order = sorted(results, key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [len(r.values) for r in in_order]
    changed = history(last=8.0)
    ex, _ = write_all(tmp_path / "a", changed)
    assert ex.formatted == [ALT]
    write_all(tmp_path / "b", changed)
    assert path.read_bytes() == (tmp_path / "b" / "exports" / "series.parquet").read_bytes()


def test_parts_are_formatted_a_few_series_at_a_time_with_the_same_bytes(tmp_path, monkeypatch):
    """A job's part is written chunk by chunk (memory: a chunk of series, not the job): with one
    series a chunk, series.csv is still byte for byte the whole frame's, series.parquet its rows."""
    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_CHUNK_SERIES", 1)
    results = history()
    _, builds = write_all(tmp_path, results)
    whole = series_frame(results, builds)
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(whole)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "exports" / "series.parquet"), whole)


def test_copy_range_gives_the_same_bytes_by_the_kernel_and_by_hand(tmp_path, monkeypatch):
    """Rows are copied by copy_file_range where it works and by a plain copy where it does
    not (here: made to fail at the first call, and after half of a part); the bytes are the same."""
    import errno
    import os

    from pal.alerts import export

    parts = []
    for i, size in enumerate((0, 1, 5 << 20, 12345)):
        p = tmp_path / f"part{i}"
        p.write_bytes(os.urandom(size))
        parts.append(p)
    expected = b"head\n" + b"".join(p.read_bytes() for p in parts) + parts[2].read_bytes()[100:4100]

    def cat(name):
        with open(tmp_path / name, "wb") as out:
            out.write(b"head\n")
            for p in parts:
                export.copy_range(out, p)
            export.copy_range(out, parts[2], 100, 4000)  # a range in the middle
            out.write(b"")  # the buffered writer still works after the kernel's copies
        return (tmp_path / name).read_bytes()

    assert cat("kernel") == expected
    real = os.copy_file_range

    def unsupported(*args):
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    assert cat("by-hand") == expected
    calls = []

    def half_then_fail(src, dst, count, offset_src=None):
        calls.append(count)
        if len(calls) % 2:
            return real(src, dst, max(1, count // 2), offset_src)
        raise OSError(errno.EINVAL, "not here")

    monkeypatch.setattr(os, "copy_file_range", half_then_fail)
    assert cat("mixed") == expected
    assert calls  # the mixed path ran

    def broken(*args):
        raise OSError(errno.EIO, "disk error")

    monkeypatch.setattr(os, "copy_file_range", broken)
    with pytest.raises(OSError) as raised:  # a real error is not hidden behind the fallback
        cat("broken")
    assert raised.value.errno == errno.EIO
    monkeypatch.setattr(os, "copy_file_range", real)
    with open(tmp_path / "too-far", "wb") as out, pytest.raises(ValueError, match="bytes wanted"):
        export.copy_range(out, parts[3], 12000, 1000)  # past the end: an error, not a short copy
