"""Executors: inline, local process pool and Dask (a real LocalCluster of 2 worker processes)
give the same ordered results, and one failing item does not lose the others."""

from __future__ import annotations

import gc
import hashlib
import os

import pytest

from pal.executor import Executor, Failed, LocalExecutor, make_executor, start_early
from pal.memory import sparse_gc
from pal.model import BuildFile
from pal.store import Store
from pal.store.ingest import Fragment, parse_to_fragment
from tests.store.data import fake_parse

ITEMS = list(range(12))


def square_or_fail(x: int) -> int:
    if x == 7:
        raise ValueError(f"bad item {x}")
    return x * x


def die_on_five(x: int) -> int:
    if x == 5:
        os._exit(3)  # the worker process dies (a segfault in a parser, the OOM killer)
    return x + 100


def expected() -> list:
    return [x * x for x in ITEMS[:7]] + ["failed"] + [x * x for x in ITEMS[8:]]


def shape(results: list) -> list:
    return ["failed" if isinstance(r, Failed) else r for r in results]


@pytest.fixture(scope="module")
def dask_executor():
    pytest.importorskip("dask.distributed")
    with make_executor("dask", workers=2) as ex:
        yield ex


def test_make_executor_kinds():
    with make_executor("local", workers=1) as ex:
        assert type(ex) is Executor and ex.kind == "inline"
    with make_executor("local", workers=2) as ex:
        assert isinstance(ex, LocalExecutor) and ex.workers == 2
    with pytest.raises(ValueError, match="'spark'"):
        make_executor("spark")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        make_executor("local", workers=0)


def test_inline_failure_value():
    with make_executor("local", workers=1) as ex:
        out = ex.map(square_or_fail, ITEMS, label="square")
    assert shape(out) == expected()
    assert out[7].item == 7 and out[7].error == "ValueError: bad item 7" and "square_or_fail" in out[7].traceback


def test_local_pool_same_results_and_progress(caplog):
    with caplog.at_level("INFO", logger="pal"), make_executor("local", workers=2) as ex:
        out = ex.map(square_or_fail, ITEMS, label="square")
        assert ex.map(square_or_fail, [], label="none") == []
    assert shape(out) == expected() and out[7].error == "ValueError: bad item 7"
    assert "square 12/12" in caplog.text


def test_local_pool_worker_death_loses_only_that_item():
    with make_executor("local", workers=2) as ex:
        out = ex.map(die_on_five, ITEMS, label="die")
        assert ex.map(die_on_five, [1, 2], label="again") == [101, 102]  # a fresh pool after the break
    assert [r for i, r in enumerate(out) if i != 5] == [x + 100 for x in ITEMS if x != 5]
    assert isinstance(out[5], Failed) and out[5].item == 5 and out[5].error.startswith("worker process died")


def test_dask_same_results_as_local(dask_executor):
    out = dask_executor.map(square_or_fail, ITEMS, label="square")
    assert dask_executor.kind == "dask" and len(dask_executor.client.scheduler_info()["workers"]) == 2
    assert shape(out) == expected()
    assert out[7] == Failed(7, "ValueError: bad item 7", out[7].traceback)
    pids = dask_executor.map(_pid, range(8), label="pids")
    assert os.getpid() not in pids  # ran in worker processes


def _pid(_: int) -> int:
    return os.getpid()


def test_a_worker_hands_back_what_each_item_freed(monkeypatch):
    """Pool and cluster workers call ``release_memory`` after every item, also after a failure
    (without it a Dask worker kept 670 MB after 2,140 parses and paused at its limit for good)."""
    import pal.executor

    calls = []
    monkeypatch.setattr(pal.executor, "release_memory", lambda min_free=0: calls.append(min_free))
    assert pal.executor._call_in_worker(square_or_fail, 3) == 9
    assert isinstance(pal.executor._call_in_worker(square_or_fail, 7), Failed)
    assert calls == [pal.executor.WORKER_TRIM_FREE] * 2


def _thresholds(_: int) -> tuple[int, int, int]:
    return gc.get_threshold()


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_workers_collect_at_the_submitting_runs_thresholds(kind, dask_executor):
    """A worker starts with CPython's collector thresholds whatever the run set; each item runs
    under the submitter's (the run's ``sparse_gc``), and the worker's own are back after it."""
    run = (12_345, 17, 99)
    assert gc.get_threshold() != run
    ex = dask_executor if kind == "dask" else LocalExecutor(2)
    try:
        with sparse_gc(run):
            seen = ex.map(_thresholds, range(4), label="gc")
        assert seen == [run] * 4
        after = ex.map(_thresholds, range(4), label="gc")  # submitted at this process's own thresholds
        assert after == [gc.get_threshold()] * 4
    finally:
        if kind == "local":
            ex.close()


def test_an_item_leaves_its_workers_thresholds_as_they_were():
    import pal.executor

    before = gc.get_threshold()
    assert pal.executor._call_in_worker(_thresholds, 0, (11_111, 12, 13)) == (11_111, 12, 13)
    assert isinstance(pal.executor._call_in_worker(square_or_fail, 7, (11_111, 12, 13)), Failed)
    assert gc.get_threshold() == before


def _ingest(args: tuple) -> Fragment:
    build_file, staging = args
    return parse_to_fragment(build_file, staging, {"testbeds": {}}, parse_fn=fake_parse)


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_ingest_by_path_then_commit(tmp_path, kind, dask_executor):
    """Workers parse archives and write fragments by path; the driver commits them: same store either way."""
    job = "csit-vpp-perf-mrr-daily-master-2n-icx"
    files = []
    for build, text in ((1, "1.0"), (2, "bad"), (3, "3.0")):
        p = tmp_path / f"{build}.txt"
        p.write_text(text)
        files.append(BuildFile(job, build, p, "test"))
    store = Store(tmp_path / "store")
    staging = str(store.staging_dir())
    if kind == "dask":
        frags = dask_executor.map(_ingest, [(f, staging) for f in files], label="parse")
    else:
        with make_executor("local", workers=2) as ex:
            frags = ex.map(_ingest, [(f, staging) for f in files], label="parse")
    assert [f.error is None for f in frags] == [True, False, True]
    assert frags[1].error == f"{files[1].path} (build 2): not an output.xml" and frags[1].path is None
    assert frags[0].rows == 3 and frags[0].sha256 == hashlib.sha256(b"1.0").hexdigest()
    result = store.commit_fragments(frags)
    assert result.added == [f"{job}/1", f"{job}/3"] and [f.build for f in result.skipped] == [2]
    got = store.samples()
    assert got["build"].tolist() == [1, 1, 1, 3, 3, 3]
    assert got.query("build == 3 and metric == 'ndr'")["value"].tolist() == [3 * 18123456.5]
    assert list(store.staging_dir().iterdir()) == []
    again = store.commit_fragments([_ingest((files[0], staging))])
    assert again.unchanged == [f"{job}/1"] and list(store.staging_dir().iterdir()) == []


def preloaded(_: int) -> bool:
    """Whether the parse was imported before this test package (whose import imports it too)."""
    import sys
    names = list(sys.modules)
    return names.index("pal.store.ingest") < names.index(__name__.split(".")[0])


def test_workers_start_with_the_preload_and_a_closed_pool_takes_its_forkserver_along():
    """Workers fork from a forkserver that imported the parse once; closing the pool ends that
    forkserver (its memory is not carried through the analysis), and the next pool starts a
    new one."""
    import multiprocessing.forkserver as forkserver

    import psutil

    def server_pid() -> int | None:
        return forkserver._forkserver._forkserver_pid

    with make_executor("local", workers=2) as ex:
        assert ex.map(preloaded, [1, 2], label="preload") == [True, True]
        first = server_pid()
        assert first is not None and psutil.pid_exists(first)
    assert server_pid() is None and not psutil.pid_exists(first)
    with make_executor("local", workers=2) as ex:
        assert ex.map(square_or_fail, [2, 3], label="again") == [4, 9]
        assert server_pid() not in (None, first)


def test_a_prepared_pool_starts_its_forkserver_at_once_and_closing_ends_it():
    """``prepare`` starts the forkserver before any map (its preload runs meanwhile); the map's
    workers fork from that server; closing ends it even when nothing was mapped."""
    import multiprocessing.forkserver as forkserver

    import psutil

    def server_pid() -> int | None:
        return forkserver._forkserver._forkserver_pid

    with make_executor("local", workers=2) as ex:
        assert server_pid() is None
        ex.prepare()
        started = server_pid()
        assert started is not None and psutil.pid_exists(started)
        assert ex.map(preloaded, [1, 2], label="preload") == [True, True]
        assert server_pid() == started
    assert server_pid() is None and not psutil.pid_exists(started)
    with make_executor("local", workers=2) as ex:  # prepared, never used
        ex.prepare()
        unused = server_pid()
        assert unused is not None and psutil.pid_exists(unused)
    assert server_pid() is None and not psutil.pid_exists(unused)
    with make_executor("local", workers=1) as ex:  # inline: nothing to start
        ex.prepare()
        assert server_pid() is None and ex.map(square_or_fail, [2], label="inline") == [4]


def test_start_early_starts_the_forkserver_the_runs_pool_then_forks_from():
    """``pal run`` starts its forkserver before its own imports (``start_early``): only for the
    executor that forks from one, and the pool the run then makes uses that same server."""
    import multiprocessing.forkserver as forkserver

    import psutil

    def server_pid() -> int | None:
        return forkserver._forkserver._forkserver_pid

    start_early("local", 1)  # inline
    start_early("dask", 2)  # a cluster's own processes
    assert server_pid() is None
    start_early("local", 2)
    early = server_pid()
    assert early is not None and psutil.pid_exists(early)
    with make_executor("local", workers=2) as ex:
        ex.prepare()
        assert server_pid() == early
        assert ex.map(preloaded, [1, 2], label="preload") == [True, True]
    assert server_pid() is None and not psutil.pid_exists(early)


def test_an_unused_forkserver_is_ended_without_waiting_for_its_preload(tmp_path, monkeypatch):
    """A run with nothing to parse closes the executor it prepared while the forkserver may still
    be importing its preload: closing kills it at once instead of waiting for those imports
    (a nothing-new run waited 0.2-0.7 s for them)."""
    import multiprocessing.forkserver as forkserver
    import os
    import sys
    import time

    import psutil

    import pal.executor as executor_mod

    (tmp_path / "pal_slow_preload.py").write_text("import time\ntime.sleep(30)\n")
    # the forkserver (3.11) does not take the parent's sys.path for its preload: the environment's
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setattr(executor_mod, "WORKER_PRELOAD", ("pal_slow_preload",))
    ex = make_executor("local", workers=2)
    ex.prepare()
    pid = forkserver._forkserver._forkserver_pid
    assert pid is not None and psutil.pid_exists(pid)
    time.sleep(1.0)  # the server is in its preload's sleep by now
    t0 = time.monotonic()
    ex.close()
    assert time.monotonic() - t0 < 5  # not the 30 s of its preload
    assert forkserver._forkserver._forkserver_pid is None and not psutil.pid_exists(pid)
    assert "pal_slow_preload" not in sys.modules


@pytest.mark.parametrize("kind", ["inline", "local", "dask"])
def test_done_gets_each_items_final_result_once(kind, dask_executor):
    """``done(i, result)`` is called in the caller's thread once per item, with the result ``map``
    returns for it, as the results come."""
    import threading

    seen: list[tuple[int, object, str]] = []

    def done(i: int, result: object) -> None:
        seen.append((i, result, threading.current_thread().name))

    if kind == "dask":
        out = dask_executor.map(square_or_fail, ITEMS, label="square", done=done)
    else:
        with make_executor("local", workers=1 if kind == "inline" else 2) as ex:
            out = ex.map(square_or_fail, ITEMS, label="square", done=done)
    assert sorted(i for i, _, _ in seen) == ITEMS
    assert all(out[i] == result for i, result, _ in seen)
    assert {name for _, _, name in seen} == {threading.current_thread().name}
    if kind == "inline":
        assert [i for i, _, _ in seen] == ITEMS  # in order, each as soon as it is made


def test_done_is_not_told_of_an_item_lost_with_a_broken_pool_until_it_is_run_again():
    seen: list[int] = []
    with make_executor("local", workers=2) as ex:
        out = ex.map(die_on_five, ITEMS, label="die", done=lambda i, _: seen.append(i))
    assert sorted(seen) == ITEMS  # once each, the items rerun after the break included
    assert isinstance(out[5], Failed)


def echo(blob: bytes) -> bytes:
    return blob


def test_a_pools_pipes_hold_a_whole_message_and_carry_it_whole():
    """``widen_pipes``: the render's pool and the local executor's pool get 1 MiB pipes (a year's
    chunk of results, ~600 KB, goes over in one write; stop 52); a message larger than a pipe
    still arrives whole."""
    import fcntl

    from pal.executor import POOL_PIPE_BYTES
    from pal.render.site import _pool

    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no pipe sizes on this platform")
    with open("/proc/sys/fs/pipe-max-size") as fh:
        if int(fh.read()) < POOL_PIPE_BYTES:
            pytest.skip("pipes are limited below 1 MiB here")
    pool = _pool(2, 10**6)
    ex = LocalExecutor(workers=2)
    try:
        for p in (pool, ex._get_pool()):
            for conn in (p._result_queue._reader, p._call_queue._writer):
                assert fcntl.fcntl(conn.fileno(), fcntl.F_GETPIPE_SZ) == POOL_PIPE_BYTES
        big = os.urandom(3 * POOL_PIPE_BYTES + 7)
        assert pool.submit(echo, big).result() == big
        assert ex.map(echo, [big, b"x"], label="echo") == [big, b"x"]
    finally:
        pool.shutdown()
        ex.close()
