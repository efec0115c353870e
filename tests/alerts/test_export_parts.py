"""Series exports written job by job (``SeriesExports``): the files equal the whole frame's, and a
job whose rows did not change is not formatted again."""

from __future__ import annotations

import math

import pandas as pd
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
    assert sorted(ex.formatted) == sorted([ALT, ICX, SPR])  # one pass over a job's rows makes both parts
    # a text cell starting with "=" is neutralised in the CSV, kept raw in Parquet
    assert b",'=x," in (tmp_path / "exports" / "series.csv").read_bytes()
    assert "=x" in back["test_set"].tolist()


def test_a_missing_part_alone_is_made_again_with_the_same_bytes(tmp_path):
    """A kill between the renames of a job's CSV and Parquet parts leaves one of them: the next
    run makes the other alone, and the exports equal a fresh write."""
    results = history()
    write_all(tmp_path / "a", results)
    before = {n: (tmp_path / "a" / "exports" / n).read_bytes() for n in ("series.csv", "series.parquet")}
    parts = tmp_path / "a" / "exports" / PARTS_DIR
    lost = sorted(parts.glob("*.parquet"))[0]
    lost.unlink()
    ex, _ = write_all(tmp_path / "a", results)
    assert len(ex.formatted) == 1 and lost.exists()
    assert len(list(parts.glob("*.csv"))) == 3 and len(list(parts.glob("*.parquet"))) == 3
    assert {n: (tmp_path / "a" / "exports" / n).read_bytes() for n in before} == before


def test_unchanged_jobs_are_reused_and_the_result_equals_a_fresh_write(tmp_path):
    write_all(tmp_path / "inc", history())
    changed = history(last=8.0, extra=1)  # ALT and ICX change, SPR does not
    ex, _ = write_all(tmp_path / "inc", changed)
    assert sorted(set(ex.formatted)) == sorted([ALT, ICX])
    fresh, _ = write_all(tmp_path / "fresh", changed)
    assert sorted(set(fresh.formatted)) == sorted([ALT, ICX, SPR])
    for name in ("series.csv", "series.parquet"):
        assert (tmp_path / "inc" / "exports" / name).read_bytes() == (tmp_path / "fresh" / "exports" / name).read_bytes()
    # the parts of the old ALT and ICX rows are gone: one part per job and format is left
    assert len(list((tmp_path / "inc" / "exports" / PARTS_DIR).iterdir())) == 6


def test_no_results_give_a_header_only_csv_and_an_empty_parquet(tmp_path):
    ex = SeriesExports(tmp_path / "exports", [], None)
    ex.write("csv", tmp_path / "exports" / "series.csv")
    ex.write("parquet", tmp_path / "exports" / "series.parquet")
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(series_frame([], None))
    assert len(pd.read_parquet(tmp_path / "exports" / "series.parquet")) == 0


def test_a_changed_build_fact_changes_the_part(tmp_path):
    results = history()
    builds = builds_for(results)
    SeriesExports(tmp_path / "exports", results, builds).write("csv", tmp_path / "exports" / "series.csv")
    builds.loc[builds["job"] == SPR, "testbed"] = "moved"
    ex = SeriesExports(tmp_path / "exports", results, builds)
    ex.write("csv", tmp_path / "exports" / "series.csv")
    assert ex.formatted == [SPR]
    assert (tmp_path / "exports" / "series.csv").read_bytes() == csv_bytes(series_frame(results, builds))


def test_parquet_is_streamed_in_batches_and_still_equals_the_frame(tmp_path, monkeypatch):
    """series.parquet is written batch by batch (memory: a batch, not the export): rows, order
    and types are the whole frame's, in row groups of at most EXPORT_BATCH_ROWS."""
    import pyarrow.parquet as pq

    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_BATCH_ROWS", 2)
    results = history()
    _, builds = write_all(tmp_path, results)
    path = tmp_path / "exports" / "series.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(path), series_frame(results, builds))
    meta = pq.ParquetFile(path).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert max(sizes) == 2 and sum(sizes) == len(series_frame(results, builds))


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


def test_append_file_gives_the_same_bytes_by_the_kernel_and_by_hand(tmp_path, monkeypatch):
    """Parts are appended by copy_file_range where it works and by a plain copy where it does
    not (here: made to fail at the first call, and after half of a part); the bytes are the same."""
    import errno
    import os

    from pal.alerts import export

    parts = []
    for i, size in enumerate((0, 1, 5 << 20, 12345)):
        p = tmp_path / f"part{i}"
        p.write_bytes(os.urandom(size))
        parts.append(p)
    expected = b"head\n" + b"".join(p.read_bytes() for p in parts)

    def cat(name):
        with open(tmp_path / name, "wb") as out:
            out.write(b"head\n")
            for p in parts:
                export.append_file(out, p)
            out.write(b"")  # the buffered writer still works after the kernel's copies
        return (tmp_path / name).read_bytes()

    assert cat("kernel") == expected
    real = os.copy_file_range

    def unsupported(*args):
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    assert cat("by-hand") == expected
    calls = []

    def half_then_fail(src, dst, count):
        calls.append(count)
        if len(calls) % 2:
            return real(src, dst, max(1, count // 2))
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
