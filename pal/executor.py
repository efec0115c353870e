"""Executors: run one function over many small items, in this process, a local process pool,
or on a Dask cluster, with ordered results and a failure value per failed item.

Items and functions must be small and picklable (paths, BuildFile, dicts): workers read
archives and write store fragments by path, never DataFrames through the scheduler. An
exception in one item comes back as ``Failed(item, error)`` in its place; the run goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import gc
import logging
import multiprocessing
import os
import signal
import traceback
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal

from pal.progress import Progress
from pal.memory import release_memory, sparse_gc

log = logging.getLogger("pal")

#: what the forkserver imports once, before it forks a worker: the store's ingest (a parse worker
#: imports the readers of output.xml at its first build, 40 ms: preloading them too was not
#: measurably faster, stop 41), and the render and analysis that the render's worker runs
#: (``pal.render.site._pool``). The workers then share those pages with it instead of each
#: importing pandas, pyarrow, jinja2... again (about 35 MB and 0.5 s each for a parse worker, 1.3 s
#: for the render's).
WORKER_PRELOAD = ("pal.store.ingest", "pal.render.site", "pal.analysis.series")


def stop_forkserver() -> None:
    """End this process's forkserver (a new pool starts another): with its preloaded imports it
    would hold its memory through the stages that fork nothing. Call it only when no pool of
    the process has workers forked from it (their work is done; it would otherwise live as long
    as any process it forked).

    It is killed, not asked to stop: it has nothing to save, and asked, it tears its interpreter
    down (pandas, Arrow, Jinja), 0.2-0.35 s that the run waited for after each stage that forked
    (and at its very end); nor is a preload it is still importing waited for (a run with nothing
    to parse stops after the download check). ``_stop`` then reaps it.
    """
    import multiprocessing.forkserver as forkserver

    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)  # CPython's, since 3.8
    if stop is None:
        return
    pid = getattr(server, "_forkserver_pid", None)
    if isinstance(pid, int):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # already gone: _stop reaps it
    stop()


def worker_context() -> Any:
    """The multiprocessing context of ``LocalExecutor``'s pool: a forkserver (never a fork of
    this process, which may hold the store's lock and threads) that has preloaded
    ``WORKER_PRELOAD``. The preload applies when the forkserver starts: the pool starts it, and
    closing the pool ends it (``stop_forkserver``)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(WORKER_PRELOAD))
    return ctx


#: bytes each of a pool's pipes holds (``widen_pipes``; Linux allows up to
#: /proc/sys/fs/pipe-max-size, 1 MiB by default, without privileges)
POOL_PIPE_BYTES = 1 << 20


def widen_pipes(pool: cf.ProcessPoolExecutor, size: int = POOL_PIPE_BYTES) -> None:
    """Let the pipes of ``pool`` (its tasks' and its results') hold ``size`` bytes.

    A pipe holds 64 KiB: a worker's results for a chunk of a year's series (50 results of 365
    runs pickle to 0.4-0.8 MB) went over in up to a dozen writes, each waiting for this process
    to read, and this process's reading thread took the GIL back, up to a switch interval
    (5 ms), for every 64 KiB while its main thread analysed: the render's worker spent 10-30 %
    of the year's analysis blocked in its send (stop 52). A whole message now fits: the worker
    writes it and goes on, and it is read at once. Where the platform or the pool's internals
    (CPython's, since 3.8) do not allow it, the pipes stay as they are: only speed depends on it."""
    try:
        import fcntl
    except ImportError:  # not a Unix
        return
    op = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux, Python >= 3.10
    if op is None:
        return
    for queue, end in ((getattr(pool, "_result_queue", None), "_reader"), (getattr(pool, "_call_queue", None), "_writer")):
        try:
            fcntl.fcntl(getattr(queue, end).fileno(), op, size)
        except (AttributeError, OSError, ValueError):
            pass


#: ``map``'s ``done``: called with an item's index and its final result as each comes
Done = Callable[[int, Any], None]


@dataclass(frozen=True)
class Failed:
    """An item whose call raised (or whose worker died): the error text instead of a result."""

    item: Any
    error: str  # "ExceptionType: message"
    traceback: str = ""


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """Runs in the worker: the result, or Failed with the exception text (never raises)."""
    try:
        return fn(item)
    except Exception as exc:  # noqa: BLE001 - one bad item must not end the run
        return Failed(item, f"{type(exc).__name__}: {exc}", traceback.format_exc())


#: a worker trims its heap once this much of it is free, not after every item: trimming after
#: every build made the parse about 6 % slower (pages faulted in again), gated it is not slower
#: and the worker stays 15 % smaller than untrimmed
WORKER_TRIM_FREE = 64 << 20


def _call_in_worker(fn: Callable[[Any], Any], item: Any, gc_thresholds: tuple[int, ...] | None = None) -> Any:
    """``_call`` in a pool or cluster worker, which then hands freed memory back (its heap once
    ``WORKER_TRIM_FREE`` of it is free).

    A worker parses thousands of archives: without this its heap keeps what every parse freed
    (670 MB after 2,140 CSIT-scale builds), and a Dask worker with a 1 GB limit pauses at 80 %
    and the run waits for it forever (seen with a year of history on two workers).

    ``gc_thresholds``: the cyclic collector's thresholds of the process that submitted the item,
    applied while the item runs (``pal.memory.sparse_gc``) and restored after it. A worker starts
    with CPython's (a pass every 700 allocations) whatever the run set: a parse walks through
    millions of short-lived objects, and at the run's thresholds it costs about 5 % less.
    """
    try:
        if gc_thresholds is None:
            return _call(fn, item)
        with sparse_gc(tuple(gc_thresholds)):  # type: ignore[arg-type]
            return _call(fn, item)
    finally:
        release_memory(min_free=WORKER_TRIM_FREE)


class Executor:
    """A context manager with ``map(fn, items, *, label) -> list`` (results in item order)."""

    kind = "inline"

    def __init__(self, workers: int = 1):
        self.workers = workers

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, keep_forkserver: bool = False) -> None:
        """Release workers (nothing to do inline). ``keep_forkserver``: leave the process's
        forkserver running, for a pool outside this executor forked from it (the render's);
        whoever made that pool stops it after the pool (``stop_forkserver``)."""

    def prepare(self) -> None:
        """Get ready for a ``map`` soon: workers that take long to start begin now (nothing inline)."""

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, label: str, done: Done | None = None) -> list[Any]:
        """``[fn(item) ...]`` in order; an item that raises gives ``Failed`` in its place.

        ``done(i, result)`` is called in this thread with each item's final result as it comes
        (in any order with a pool): the caller can act on some results while the others are made."""
        items = list(items)
        progress = Progress(label, len(items))
        out = []
        for i, item in enumerate(items):
            out.append(_call(fn, item))
            if done is not None:
                done(i, out[i])
            progress.advance()
        return out


class LocalExecutor(Executor):
    """A ``ProcessPoolExecutor`` of ``workers`` processes (forkserver: safe beside threads)."""

    kind = "local"

    def __init__(self, workers: int = 2):
        super().__init__(workers)
        self._pool: cf.ProcessPoolExecutor | None = None
        self._prepared = False

    def _get_pool(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=worker_context())
            widen_pipes(self._pool)
        return self._pool

    def close(self, keep_forkserver: bool = False) -> None:
        started = self._prepared or self._pool is not None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if started and not keep_forkserver:
            stop_forkserver()
        self._prepared = False

    def prepare(self) -> None:
        """Start the forkserver now, without waiting for it: its preload (about 0.8 s of imports) runs
        while the caller downloads, and the pool's workers are forked ready at the first ``map``."""
        import multiprocessing.forkserver as forkserver

        worker_context()
        forkserver.ensure_running()
        self._prepared = True

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, label: str, done: Done | None = None) -> list[Any]:
        """As Executor.map. A worker that dies breaks the whole pool and every pending item with it:
        those items are rerun once in a fresh pool, then one at a time, so that only the item that
        kills its worker ends as ``Failed("worker process died")``."""
        items = list(items)
        progress = Progress(label, len(items))
        out: list[Any] = [None] * len(items)
        broken = self._run(fn, items, range(len(items)), out, progress, done)
        if broken:
            broken = self._run(fn, items, broken, out, progress, done)
        for i in broken:
            self._run(fn, items, [i], out, progress, done, last_try=True)
        return out

    def _run(self, fn: Callable[[Any], Any], items: list[Any], indices: Iterable[int], out: list[Any],
             progress: Progress, done: Done | None, last_try: bool = False) -> list[int]:
        """Run ``items[indices]`` in the pool; return the indices lost to a broken pool (to retry)."""
        pool = self._get_pool()
        thresholds = gc.get_threshold()  # the run's collector settings, for the workers too (_call_in_worker)
        futures = {pool.submit(_call_in_worker, fn, items[i], thresholds): i for i in indices}
        lost: list[int] = []
        broken = False
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                out[i] = fut.result()
            except BrokenProcessPool as exc:
                broken = True
                if not last_try:
                    lost.append(i)
                    continue
                out[i] = Failed(items[i], f"worker process died: {exc}")
            except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
                out[i] = Failed(items[i], f"{type(exc).__name__}: {exc}")
            if done is not None:
                done(i, out[i])
            progress.advance()
        if broken:
            self.close()  # a broken pool cannot be reused: start a fresh one next time
        return sorted(lost)


class DaskExecutor(Executor):
    """A ``dask.distributed.Client`` on ``scheduler``, or on a LocalCluster of ``workers`` processes."""

    kind = "dask"

    def __init__(self, workers: int = 2, scheduler: str | None = None):
        super().__init__(workers)
        from dask.distributed import Client, LocalCluster

        self.scheduler = scheduler
        self._cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.ERROR,
            )
            self.client = Client(self._cluster)
        log.debug("dask executor: %s", self.client)

    def close(self, keep_forkserver: bool = False) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, label: str, done: Done | None = None) -> list[Any]:
        from dask.distributed import as_completed

        items = list(items)
        progress = Progress(label, len(items))
        if not items:
            return []
        thresholds = gc.get_threshold()  # the run's collector settings, for the workers too (_call_in_worker)
        futures = self.client.map(_call_in_worker, [fn] * len(items), items, [thresholds] * len(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        pending = as_completed(futures)
        del futures  # each result is released from its worker once fetched, not all at the end
        out: list[Any] = [None] * len(items)
        for fut in pending:
            i = index[fut.key]
            try:
                out[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a killed worker, an unpicklable result
                out[i] = Failed(items[i], f"{type(exc).__name__}: {exc}")
            fut.release()
            if done is not None:
                done(i, out[i])
            progress.advance()
        return out


def start_early(kind: str, workers: int) -> None:
    """Start the forkserver of the pool that ``make_executor(kind, workers)`` makes, without
    waiting for it. ``pal run`` calls this before it imports its stages: the server's preload
    (pandas, pyarrow, lxml...: about 0.8 s of CPU) then runs beside the run's own imports, where
    it followed them before, and the parse's workers start about a second sooner. The pool's
    ``prepare`` finds it running. Nothing for an inline executor or a Dask cluster."""
    if starts_forkserver(kind, workers):
        make_executor("local", workers).prepare()


def starts_forkserver(kind: str, workers: int) -> bool:
    """Whether the executor ``make_executor(kind, workers)`` makes forks its workers from a
    forkserver (a local pool; not one worker inline, nor a Dask cluster)."""
    return kind == "local" and workers > 1


def make_executor(kind: Literal["local", "dask"] = "local", workers: int = 2, scheduler: str | None = None) -> Executor:
    """The executor named by ``kind``; ``local`` with ``workers=1`` runs inline (no pool)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if kind == "local":
        return Executor(1) if workers == 1 else LocalExecutor(workers)
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    raise ValueError(f"executor kind must be 'local' or 'dask', got {kind!r}")
