"""The exports of a run (``Exports``): a file per build, written again only when its rows
change, and the trend groups; every file equals what a fresh write of the same results makes,
and the build files hold the rows of the whole-series table (``series_frame``)."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pandas as pd
import pytest

from pal.alerts.export import (
    GROUP_COLUMNS, SAMPLE_EXPORT_COLUMNS, SAMPLES_INDEX, Exports, csv_bytes, file_bytes, groups_frame, job_dir_name,
    samples_dir, series_frame,
)
from tests.alerts.factory import ALT, DAY, ICX, T0, builds_for, make_result

SPR = "csit-vpp-perf-mrr-daily-master-2n-spr"


def history(last: float = 6.5, extra: int = 0, first: int = 10) -> list:
    """Three jobs; ``last`` is the newest value of ALT's first series, ``extra`` runs more on ICX
    (``first``: ICX's first build, so a later window can drop its oldest ones)."""
    return [
        make_result([5.0, 6.0, math.nan, last], (1,), job=ALT, name="b", first_build=1),
        make_result([1.0, 1.0, 2.0], job=ALT, name="a", first_build=1),
        make_result([3.0] * (4 + extra - (first - 10)), (), job=ICX, name="d", first_build=first, test_set="=x",
                    t0=T0 + (first - 10) * DAY),  # a build keeps its time when the window slides
        make_result([7.0, 7.5, 9.0], (2,), job=SPR, name="c", first_build=5),
    ]


def write(root, results, formats=("csv", "parquet"), builds=None):
    builds = builds_for(results) if builds is None else builds
    problems = []
    ex = Exports(root / "exports", results, builds, formats)
    paths = ex.write(lambda path, exc: problems.append((path, exc)))
    assert not problems
    return ex, paths


def files(root) -> dict[str, bytes]:
    base = root / "exports"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_build_files_hold_the_rows_of_the_series_table_build_by_build(tmp_path):
    results = history()
    builds = builds_for(results)
    builds.loc[builds["job"] == SPR, "testbed"] = "tb-spr"
    _, paths = write(tmp_path, results, ("csv", "parquet", "json"), builds)
    whole = series_frame(results, builds)[SAMPLE_EXPORT_COLUMNS]
    whole = whole.sort_values(["job", "build", "test_id", "metric"], kind="stable").reset_index(drop=True)
    assert paths["samples-csv"] == samples_dir(tmp_path / "exports", "csv")
    seen = 0
    for (job, build), rows in whole.groupby(["job", "build"], sort=True):
        rows = rows.reset_index(drop=True)
        base = f"{job_dir_name(job)}/{build}"
        assert (tmp_path / "exports" / "samples-csv" / f"{base}.csv").read_bytes() == csv_bytes(rows)
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "exports" / "samples-parquet" / f"{base}.parquet"),
                                      rows)
        back = json.loads((tmp_path / "exports" / "samples-json" / f"{base}.json").read_text())
        assert [r["value"] for r in back] == [None if math.isnan(v) else v for v in rows["value"]]
        seen += len(rows)
    assert seen == len(whole) == sum(len(r.values) for r in results)
    # ALT's build 3 is the missing run of series b: an empty value, not 0
    alt3 = (tmp_path / "exports" / "samples-csv" / f"{ALT}" / "3.csv").read_text().splitlines()
    assert alt3[0] == ",".join(SAMPLE_EXPORT_COLUMNS) and len(alt3) == 3
    assert alt3[2].endswith(",,")  # value and stdev empty
    assert "tb-spr" in (tmp_path / "exports" / "samples-csv" / SPR / "5.csv").read_text()
    # a text cell starting with "=" is neutralised in the CSV, kept raw in Parquet
    assert b",'=x," in (tmp_path / "exports" / "samples-csv" / ICX / "10.csv").read_bytes()
    assert pd.read_parquet(tmp_path / "exports" / "samples-parquet" / ICX / "10.parquet")["test_set"][0] == "=x"
    # the whole directory reads as one table
    assert len(pd.read_parquet(tmp_path / "exports" / "samples-parquet")) == len(whole)


def test_groups_hand_computed():
    """b: 5 | 6, NaN, 6.5 (a progression at run 1); a: one group; the rows say each group's builds,
    runs (with the missing one), valid runs, average and the change called inside it."""
    g = groups_frame(history())
    assert list(g.columns) == GROUP_COLUMNS
    alt = g[g["job"] == ALT].reset_index(drop=True)
    assert alt["test_id"].str.endswith(".a").tolist() == [True, False, False]
    a, b0, b1 = (alt.iloc[i] for i in range(3))
    assert (a["group"], a["first_build"], a["last_build"], a["runs"], a["valid"], a["trend"]) == (0, 1, 3, 3, 3, 4.0 / 3)
    assert a["label"] == "normal" and pd.isna(a["anomaly"]) and pd.isna(a["anomaly_build"])
    assert (b0["first_build"], b0["last_build"], b0["runs"], b0["valid"], b0["trend"]) == (1, 1, 1, 1, 5.0)
    assert (b1["group"], b1["first_build"], b1["last_build"], b1["runs"], b1["valid"]) == (1, 2, 4, 3, 2)
    assert b1["trend"] == pytest.approx(6.25) and b1["stdev"] == pytest.approx(0.25)
    assert (b1["label"], b1["anomaly"], b1["anomaly_build"]) == ("progression", "progression", 2)
    spr = g[g["job"] == SPR].reset_index(drop=True)
    assert spr[["first_build", "last_build", "label", "anomaly", "anomaly_build"]].astype(object).values.tolist() == [
        [5, 6, "normal", pd.NA, pd.NA], [7, 7, "progression", "progression", 7]]


def test_a_daily_run_writes_its_new_builds_drops_the_old_and_equals_a_fresh_write(tmp_path):
    write(tmp_path / "inc", history(first=10))
    before = files(tmp_path / "inc")
    slid = history(last=8.0, extra=1, first=11)  # ICX: build 10 left the window, 14 is new; ALT's 4 changed
    ex, _ = write(tmp_path / "inc", slid)
    assert sorted(ex.formatted) == sorted([(ALT, 4), (ICX, 14)])
    fresh, _ = write(tmp_path / "fresh", slid)
    assert len(fresh.formatted) == 4 + 4 + 3
    after = files(tmp_path / "inc")
    assert after == files(tmp_path / "fresh")
    assert f"samples-csv/{ICX}/10.csv" in before and f"samples-csv/{ICX}/10.csv" not in after
    unchanged = [k for k in after if k.startswith("samples-") and k != SAMPLES_INDEX and "/4." not in k and "/14." not in k]
    assert unchanged and all(after[k] == before[k] for k in unchanged)
    index = json.loads(after[SAMPLES_INDEX])
    assert sorted(index["jobs"][ICX]["builds"]) == ["11", "12", "13", "14"]


def test_a_changed_build_fact_or_a_spoiled_file_is_written_again(tmp_path):
    results = history()
    builds = builds_for(results)
    write(tmp_path, results, builds=builds)
    builds.loc[(builds["job"] == SPR) & (builds["build"] == 6), "dut_version"] = "26.02-rc1"
    ex, _ = write(tmp_path, results, builds=builds)
    assert ex.formatted == [(SPR, 6)]
    os.truncate(tmp_path / "exports" / "samples-csv" / ALT / "2.csv", 10)
    (tmp_path / "exports" / "samples-parquet" / ICX / "11.parquet").unlink()
    ex, _ = write(tmp_path, results, builds=builds)
    assert sorted(ex.formatted) == sorted([(ALT, 2), (ICX, 11)])
    write(tmp_path / "fresh", results, builds=builds)
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_an_index_of_other_formats_or_a_garbled_one_writes_everything_again(tmp_path):
    results = history()
    write(tmp_path, results, ("csv", "parquet", "json"))
    ex, _ = write(tmp_path, results, ("csv",))  # parquet and json no longer asked for: removed
    assert len(ex.formatted) == 11
    assert sorted(p.name for p in (tmp_path / "exports").iterdir()) == sorted(["groups.csv", SAMPLES_INDEX, "samples-csv"])
    (tmp_path / "exports" / SAMPLES_INDEX).write_text("{not json")
    ex, _ = write(tmp_path, results, ("csv",))
    assert len(ex.formatted) == 11
    write(tmp_path / "fresh", results, ("csv",))
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_what_an_older_pal_or_a_killed_run_left_is_removed(tmp_path):
    exports = tmp_path / "exports"
    (exports / ".parts").mkdir(parents=True)
    (exports / ".parts" / ("ab" * 20 + ".csv")).write_text("an older version's kept rows")
    (exports / "series.csv").write_text("job,test_id\n")
    write(tmp_path, history())
    stale = [exports / "samples-csv" / ALT / ".2.csv.tmp-999-abcdef01", exports / "samples-csv" / ALT / "99.csv",
             exports / "samples-csv" / "gone-job" / "1.csv", exports / f".groups.csv.tmp-999-abcdef01"]
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half a file")
    write(tmp_path, history())
    assert not (exports / ".parts").exists() and not (exports / "series.csv").exists()
    assert not any(p.exists() for p in stale)
    write(tmp_path / "fresh", history())
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_no_results_give_header_only_groups_and_no_build_files(tmp_path):
    write(tmp_path, [])
    assert (tmp_path / "exports" / "groups.csv").read_text() == ",".join(GROUP_COLUMNS) + "\n"
    assert len(pd.read_parquet(tmp_path / "exports" / "groups.parquet")) == 0
    assert not any((tmp_path / "exports" / "samples-csv").glob("*/*")) if (tmp_path / "exports" / "samples-csv").exists() \
        else True
    assert file_bytes(groups_frame([]), "csv") == (",".join(GROUP_COLUMNS) + "\n").encode()


def test_no_formats_and_no_exports_dir_writes_nothing(tmp_path):
    assert Exports(tmp_path / "exports", history(), None, ()).write(lambda p, e: None) == {}
    assert not (tmp_path / "exports").exists()


def test_exports_no_longer_asked_for_are_removed(tmp_path):
    write(tmp_path, history(), ("csv", "parquet", "json"))
    (tmp_path / "exports" / "notes.txt").write_text("a user's file is not pal's to remove")
    assert Exports(tmp_path / "exports", history(), None, ()).write(lambda p, e: None) == {}
    assert sorted(p.name for p in (tmp_path / "exports").iterdir()) == ["notes.txt"]


def test_an_index_that_cannot_be_written_is_reported_and_the_next_run_writes_everything(tmp_path, monkeypatch):
    import pal.alerts.export

    real = pal.alerts.export.write_atomic

    def no_index(target, write, **kw):
        if target.name == SAMPLES_INDEX:
            raise OSError(28, "No space left on device")
        return real(target, write, **kw)

    monkeypatch.setattr(pal.alerts.export, "write_atomic", no_index)
    problems = []
    Exports(tmp_path / "exports", history(), builds_for(history()), ("csv",)).write(
        lambda path, exc: problems.append((path.name, exc.errno)))
    assert problems == [(SAMPLES_INDEX, 28)]
    monkeypatch.setattr(pal.alerts.export, "write_atomic", real)
    ex, _ = write(tmp_path, history(), ("csv",))
    assert len(ex.formatted) == 11  # no index to trust: every build written again
    write(tmp_path / "fresh", history(), ("csv",))
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_a_file_that_cannot_be_written_is_reported_and_written_by_the_next_run(tmp_path):
    blocked = samples_dir(tmp_path / "exports", "csv") / SPR / "6.csv"
    blocked.mkdir(parents=True)  # a directory where the file goes
    problems = []
    ex = Exports(tmp_path / "exports", history(), builds_for(history()), ("csv", "parquet"))
    ex.write(lambda path, exc: problems.append(path))
    assert problems == [blocked]
    assert (SPR, 6) not in ex.formatted and len(ex.formatted) == 10
    index = json.loads((tmp_path / "exports" / SAMPLES_INDEX).read_text())
    assert "6" not in index["jobs"][SPR]["builds"]
    assert not blocked.exists()  # what is not in the index is cleaned away
    ex, _ = write(tmp_path, history())
    assert ex.formatted == [(SPR, 6)]
    write(tmp_path / "fresh", history())
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_a_run_killed_while_writing_build_files_leaves_the_next_run_equal_to_a_fresh_one(tmp_path):
    """Killed (``os._exit``, as ``kill -9``) with a build file's temp written and not renamed: the
    next run cleans up and its exports equal an uninterrupted run's byte for byte."""
    write(tmp_path, history(first=10))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.alerts.test_export_layout import history, write;"
            "from pathlib import Path; write(Path(sys.argv[2]), history(last=8.0, extra=1, first=11))")
    env = dict(os.environ, PAL_STORE_CRASH_AT="export-build")
    done = subprocess.run([sys.executable, "-c", code, os.getcwd(), str(tmp_path)], env=env, timeout=120)
    assert done.returncode == 137
    assert any(".tmp-" in p.name for p in (tmp_path / "exports").rglob("*"))
    write(tmp_path, history(last=8.0, extra=1, first=11))
    write(tmp_path / "fresh", history(last=8.0, extra=1, first=11))
    assert files(tmp_path) == files(tmp_path / "fresh")


def test_job_dir_names_are_safe_and_distinct():
    assert job_dir_name(ICX) == ICX
    odd = [job_dir_name(j) for j in ("..", "a/b", "a b", "a_b", ".hidden", "")]
    assert len(set(odd)) == len(odd)
    assert all("/" not in n and n not in (".", "..") and not n.startswith(".") and n for n in odd)


def test_series_frame_still_orders_rows_by_series(tmp_path):
    """The whole-series table (benchmarks, ``series_frame``) keeps one row per sample, series by series."""
    results = history()
    whole = series_frame(results, builds_for(results))
    assert len(whole) == sum(len(r.values) for r in results)
    assert whole["job"].tolist() == sorted(whole["job"].tolist())
    assert np.array_equal(whole["build"].to_numpy()[:3], [10, 11, 12])


@pytest.mark.parametrize("batch", [1, 2])
def test_builds_formatted_in_batches_give_the_same_files(tmp_path, monkeypatch, batch):
    """A cold run formats the window a batch of builds at a time (memory: a batch's table, not a
    job's): the files are those of one table of every build."""
    import pal.alerts.export

    write(tmp_path / "whole", history(), ("csv", "parquet", "json"))
    monkeypatch.setattr(pal.alerts.export, "EXPORT_BATCH_BUILDS", batch)
    ex, _ = write(tmp_path / "batched", history(), ("csv", "parquet", "json"))
    assert len(ex.formatted) == 11
    assert files(tmp_path / "batched") == files(tmp_path / "whole")


class _CountingPool(Executor):
    """A real process pool that counts the batches handed to it."""

    def __init__(self):
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))
        self.taken = 0

    def submit(self, fn, *args, **kwargs):
        self.taken += 1
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, **kwargs):
        self.pool.shutdown(wait, **kwargs)


class _FailingPool(Executor):
    """A pool whose every batch fails, as a broken pool's futures do."""

    def __init__(self):
        self.taken = 0

    def submit(self, fn, *args, **kwargs):
        self.taken += 1
        future = Future()
        future.set_exception(BrokenProcessPool("a worker died"))
        return future


@pytest.mark.parametrize("pool_kind", ["processes", "shut down", "failing"])
def test_build_files_written_with_the_render_pool_are_those_written_alone(tmp_path, monkeypatch, pool_kind):
    """Batches handed to another process's pool (``Exports.write(pool=...)``; a cold run hands
    some to the render's) give the same files, index and order of builds as this process alone;
    a pool that is shut down or fails a batch leaves it to this process, with the same result."""
    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_BATCH_BUILDS", 1)  # 11 batches: several go to the pool
    formats = ("csv", "parquet", "json")
    alone, _ = write(tmp_path / "alone", history(), formats)
    if pool_kind == "processes":
        pool = _CountingPool()
    elif pool_kind == "shut down":
        pool = ProcessPoolExecutor(1)
        pool.shutdown()
    else:
        pool = _FailingPool()
    try:
        problems = []
        shared = Exports(tmp_path / "shared" / "exports", history(), builds_for(history()), formats)
        shared.write(lambda path, exc: problems.append((path, exc)), pool=pool)
    finally:
        pool.shutdown()
    assert not problems
    assert shared.formatted == alone.formatted and len(alone.formatted) == 11
    assert files(tmp_path / "shared") == files(tmp_path / "alone")
    if pool_kind == "processes":
        assert pool.taken >= 1 and 1 <= shared.by_pool <= pool.taken  # the first batch at least: the pool had none
    else:
        assert shared.by_pool == 0
    if pool_kind == "failing":
        assert pool.taken == 1  # after one failure the pool is not asked again


def test_a_build_file_the_pool_cannot_write_is_reported_in_order(tmp_path, monkeypatch):
    """A problem met in the pool's process reaches ``problem`` like one met here, in the order
    of the batches, and its build stays out of the index."""
    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_BATCH_BUILDS", 1)
    first = sorted((ALT, ICX, SPR))[0]  # its first build is the first batch: the pool's
    build = {ALT: 1, ICX: 10, SPR: 5}[first]
    blocked = samples_dir(tmp_path / "exports", "csv") / job_dir_name(first) / f"{build}.csv"
    blocked.mkdir(parents=True)  # a directory where the file goes: its rename fails
    problems = []
    pool = _CountingPool()
    try:
        ex = Exports(tmp_path / "exports", history(), builds_for(history()), ("csv",))
        ex.write(lambda path, exc: problems.append((path, exc)), pool=pool)
    finally:
        pool.shutdown()
    assert pool.taken >= 1
    assert [p for p, _ in problems] == [blocked] and isinstance(problems[0][1], OSError)
    assert (first, build) not in ex.formatted and len(ex.formatted) == 10
    index = json.loads((tmp_path / "exports" / SAMPLES_INDEX).read_text())
    assert str(build) not in index["jobs"][first]["builds"]


def test_a_job_with_one_batch_to_write_is_not_handed_to_the_pool(tmp_path):
    """A daily run writes one build a job: one batch, written here (behind the worker's
    drill-downs it would keep this process waiting)."""
    pool = _CountingPool()
    try:
        ex = Exports(tmp_path / "exports", history(), builds_for(history()), ("csv",))
        ex.write(lambda path, exc: None, pool=pool)
    finally:
        pool.shutdown()
    assert pool.taken == 0 and ex.by_pool == 0 and len(ex.formatted) == 11


class _LateFuture(Future):
    """A finished batch that says it is not done at the first look, as one that ends between
    two looks does."""

    def __init__(self, outcome):
        super().__init__()
        self.set_result(outcome)
        self.looks = 0

    def done(self):
        self.looks += 1
        return self.looks > 1


class _LatePool(Executor):
    """Writes each batch at once (in this process) and hands back a ``_LateFuture``."""

    def submit(self, fn, *args, **kwargs):
        return _LateFuture(fn(*args, **kwargs))


def test_a_batch_that_ends_while_the_pool_is_polled_is_not_lost(tmp_path, monkeypatch):
    """``_Helper.finished`` looks at each batch once: one that ends between two looks is taken
    as finished now or later, never dropped (its build would have no index entry)."""
    import pal.alerts.export

    monkeypatch.setattr(pal.alerts.export, "EXPORT_BATCH_BUILDS", 1)
    alone, _ = write(tmp_path / "alone", history())
    ex = Exports(tmp_path / "late" / "exports", history(), builds_for(history()), ("csv", "parquet"))
    ex.write(lambda path, exc: None, pool=_LatePool())
    assert ex.formatted == alone.formatted and len(ex.formatted) == 11
    assert files(tmp_path / "late") == files(tmp_path / "alone")


def test_the_rows_of_series_on_one_axis_are_those_of_the_sort_by_build():
    """Series sharing their builds and times arrays (a job that ran every test in each build) take
    the transpose; the same series on copies of the arrays take the stable sort by build: the
    rows, spans and digests are the same (a gap in the builds, a NaN and a stdev included)."""
    from pal.alerts.export import _JobRows, _one_axis, _format_version

    rng = np.random.default_rng(2)
    shared = [make_result(list(rng.normal(10.0, 1.0, 6)), job=ICX, name=f"t{i}", first_build=3) for i in range(4)]
    axis, times = np.array([3, 4, 6, 7, 8, 11], dtype=np.int64), shared[0].times
    for i, r in enumerate(shared):
        r.builds, r.times = axis, times
        r.stdevs = np.full(6, 0.5 * i)
    shared[2].values[3] = math.nan
    copied = [make_result(list(r.values), job=ICX, name=f"t{i}", first_build=3) for i, r in enumerate(shared)]
    for r, s in zip(copied, shared):
        r.builds, r.times, r.stdevs = axis.copy(), times.copy(), s.stdevs.copy()
    assert _one_axis(shared) and not _one_axis(copied)
    a, b = _JobRows(ICX, shared[::-1]), _JobRows(ICX, copied)
    for name in ("series", "build", "time", "value", "stdev"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=name in ("value", "stdev")), name
    assert a.spans == b.spans == [(int(x), 4 * k, 4 * k + 4) for k, x in enumerate(axis)]
    version = _format_version()
    assert [a.digest(lo, hi, ("tb", "v"), version) for _, lo, hi in a.spans] == \
        [b.digest(lo, hi, ("tb", "v"), version) for _, lo, hi in b.spans]
    assert a.value[4 * 3 + 2] != a.value[4 * 3 + 2]  # series t2's NaN at build 7, in its place
