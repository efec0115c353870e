"""``render_site``: the whole static site, written beside the old one and swapped in at the end.

Layout of ``out_dir/site/``::

    index.html              dashboards, failed tests, alerts, missing builds, jobs
    s/<slug>.html           drill-down per series, its static SVG and graph data inline
    g/<group>.html          trend graphs per group       data/jobs/<job>.js  per-build facts
    data/g/<group>.js       graph data of a group's series (its page's only data file)
    svg/*.svg               static group and statistics graphs (what Jenkins' CSP lets a reader see)
    stats/<job>.html        per-job statistics           downloads/<job>.csv  trended values
    data/csv/<job>.json     the row index of the job's CSV (the next run takes the unchanged rows from it)
    static/                 pal.css, pal.js, graph.js, plotly.min.js (once, offline)

Output is a function of the inputs only (sorted, no wall-clock time), so reruns are byte-identical.
Speed (CSIT scale, 6,000 series all changed): drill-downs and group pages are drawn per group
on a process pool while this process writes the alert outputs, the job files and the index;
one file per series, written over a file of the site before the previous one (``.site-spare``,
see ``SiteFiles``: creating a file cost up to ten times more than writing over one); what is
left of that spare is deleted by a detached process after the swap, and the replaced site
becomes the next run's spare.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from pal import __version__ as pal_version
from pal.libc import function
from pal.memory import use_sparse_gc
from pal.analysis import bands as bands_module
from pal.atomic import swap_dirs
from pal.digest import data_hasher
from pal.model import AlertView, SeriesKey, SeriesResult
from pal.render import dashboard, graphs, stats, svg
from pal.render.buildinfo import BuildIndex
from pal.render.downloads import JobCsv, job_csv_file
from pal.render.escape import js_assign, js_assign_all
from pal.render.files import SiteFiles
from pal.render.naming import build_label, graph_key, graph_order, group_key, metric_label, safe_slug, short_name
from pal.render.pages import (
    DEFAULT_TEMPLATES,
    GroupGraph,
    Links,
    Pages,
    SeriesExtras,
    SiteInfo,
    alert_context,
    dash_rows,
    group_label,
    group_sections,
    misaligned,
    series_key_text,
)
from pal.report import RunReport
from pal.spec import Spec

log = logging.getLogger("pal")

SUBDIRS = ("static", "data", "data/jobs", "data/g", "data/csv", "svg", "s", "g", "stats", "downloads")
MAX_TRACES = 10  # tests per group graph; more are split over several graphs
POOL_MIN_SERIES = 300  # below this a process pool costs more than it saves
#: A chunk is 1 / (this x drawing processes) of the drill-downs not yet handed out (guided
#: self-scheduling): large while there is plenty, small at the end, where this process waits for
#: the chunks a worker holds (two: the one it draws and the next, sized when it took it). At the
#: end of a daily run (6,000 drill-downs, two processes) fixed chunks (24 a worker, in group
#: order) left this process idle 0.3-0.9 s; a share of 2 in group order, 0.4 s (a large group
#: handed out late); this share with the largest groups first (``_Chunks``), 0.05-0.07 s.
GUIDED_SHARE = 4
#: the smallest chunk, in drill-downs (and group pages): each chunk carries the build facts too
MIN_CHUNK = 16
#: chunks a pool worker holds at once: the one it draws and the next, so it never waits for one
IN_FLIGHT = 2
FAILURES_SHOWN = 10
OLD_PREFIX = ".site-old-"
#: the site before the previous one, whose files the next render writes over (``SiteFiles``)
SPARE = ".site-spare"
#: where the kernel cannot tell whether a spare's files are in memory, a spare older than this
#: is not written over (``_fresh_spare``): a run a day after the last
SPARE_FRESH_S = 1800.0
#: drill-downs of a spare asked about (``_in_memory``): enough to tell, a few microseconds each
SPARE_SAMPLE = 16
NEW_PREFIX = ".site-new-"
#: directories of the spare the render takes whole (``SiteFiles.adopted``): the drill-downs, a
#: file per series, all written again when the window slides
ADOPTED = ("s",)


def render_site(
    out_dir: Path,
    results: list[SeriesResult],
    samples: pd.DataFrame,
    builds: pd.DataFrame,
    report: RunReport,
    spec: Spec,
    alerts: list[AlertView] | None = None,
    changed: set[SeriesKey] | None = None,
    *,
    workers: int | None = None,
    templates_dir: Path | None = None,
    generated_at: datetime | None = None,
    meanwhile: Callable[[], object] | None = None,
    pool: ProcessPoolExecutor | None = None,
) -> Path:
    """Write ``out_dir/site/`` and return the path of its ``index.html``.

    ``changed`` names the series whose pages are re-rendered; the others are taken from the
    previous site when it has them (None: render all). Problems with one series are recorded
    in ``report`` (stage "render") and the rest goes on. The replaced site is kept as the next
    run's spare (``out_dir/.site-spare``, ``SiteFiles``), which holds a second copy of the site
    on disk; what this run did not take of its own spare is deleted after the swap by a detached
    process (``remove_in_background``; ``wait_for_cleanup`` waits for it).

    ``meanwhile`` is other work of the run that does not read the site (the alert outputs):
    this process does it once the pool has its drill-downs, so the pool's core is not idle
    while it runs. An exception from it abandons the site like any other.

    ``pool``: a ``render_pool`` the caller started ahead and shuts down (else one is made here
    when the pages to draw are many enough).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "site"
    tmp = out_dir / f"{NEW_PREFIX}{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    # old sites a killed run did not finish deleting, and half-written sites of killed runs
    stale = sorted(out_dir.glob(f"{OLD_PREFIX}*")) + _abandoned(out_dir)
    for d in SUBDIRS:
        (tmp / d).mkdir(parents=True)
    templates_dir = Path(templates_dir) if templates_dir else DEFAULT_TEMPLATES
    spare = _fresh_spare(out_dir)
    adopted = _adopt(spare, tmp)
    trash = None
    if adopted:  # (named as an old site: a killed run's is deleted by the next run)
        trash = out_dir / f"{OLD_PREFIX}{os.getpid()}-taken"
        shutil.rmtree(trash, ignore_errors=True)
        trash.mkdir()
    files = SiteFiles(tmp, spare, adopted, trash)
    try:
        _write(files, target, results, samples, builds, report, spec, alerts, changed,
               workers, templates_dir, generated_at, meanwhile, pool)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = swap_dirs(tmp, target, OLD_PREFIX)
    _keep_spare(out_dir, old)
    remove_in_background([*stale, old, *([trash] if trash is not None else [])])
    return target / "index.html"


def _keep_spare(out_dir: Path, old: Path) -> None:
    """The site just replaced (``old/site``) becomes the next run's spare (``SiteFiles``); what
    this run did not take from the current spare goes into ``old``, which is deleted.

    Each step is a rename, and a kill between them leaves either no spare (the next run creates
    its files) or the spare inside an ``.site-old-*`` (deleted by the next run)."""
    spare = out_dir / SPARE
    if os.path.lexists(spare):  # whatever it is (a file put there too): deleted with ``old``
        os.rename(spare, old / "spare")
    if (old / "site").is_dir():
        os.rename(old / "site", spare)
        os.utime(spare)  # when it became the spare (``_fresh_spare``)


def _adopt(spare: Path | None, tmp: Path) -> frozenset[str]:
    """The spare's directories of ``ADOPTED`` moved into the new site ``tmp`` whole, in place of
    its empty ones (``SiteFiles.adopted``); which were. A kill after this leaves the spare
    without them: the next run creates those files."""
    taken = []
    for d in ADOPTED if spare is not None else ():
        try:
            if not stat.S_ISDIR(os.lstat(spare / d).st_mode):
                continue
        except OSError:
            continue
        os.rmdir(tmp / d)
        os.rename(spare / d, tmp / d)
        taken.append(d)
    return frozenset(taken)


def _fresh_spare(out_dir: Path, now: float | None = None) -> Path | None:
    """The spare to write over, if its files are in memory.

    Writing over a file in memory costs less than creating one. Writing over one that is not
    reads its last block back, and cutting it frees blocks, which together cost more than
    creating the file (docs/site.md). So the kernel is asked, for a sample of the spare's
    drill-downs, whether their last bytes are in the page cache (``_in_memory``): on a machine
    that runs little else they still are a day later, on a busy one they are gone in minutes.
    Where it cannot tell, the spare's age stands in: less than ``SPARE_FRESH_S`` since the run
    before ended (``now``: the clock, for tests).
    """
    spare = out_dir / SPARE
    try:
        st = os.lstat(spare)  # a symlink is no spare: its files would be moved out of elsewhere
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    resident = _in_memory(spare / "s")
    if resident is None:
        resident = (time.time() if now is None else now) - st.st_mtime < SPARE_FRESH_S
    return spare if resident else None


def _in_memory(pages: Path, sample: int = SPARE_SAMPLE) -> bool | None:
    """Whether most of the first ``sample`` files in ``pages`` have their last byte in the page
    cache: a one-byte read that must not wait (``RWF_NOWAIT``) returns it or fails with EAGAIN
    (the kernel may then read that block ahead: 16 small reads). None when the system or the
    file system cannot tell, or there is no file to ask about."""
    nowait = getattr(os, "RWF_NOWAIT", None)
    if nowait is None or not hasattr(os, "preadv"):
        return None
    byte = bytearray(1)
    asked = resident = 0
    try:
        with os.scandir(pages) as entries:
            for entry in entries:
                if asked >= sample:
                    break
                if not entry.is_file(follow_symlinks=False):
                    continue
                fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                try:
                    size = os.fstat(fd).st_size
                    if not size:
                        continue
                    asked += 1
                    try:
                        os.preadv(fd, [byte], size - 1, nowait)
                        resident += 1
                    except BlockingIOError:
                        pass
                finally:
                    os.close(fd)
    except OSError:  # no such directory, a file system without RWF_NOWAIT (EOPNOTSUPP), ...
        return None
    return resident * 2 > asked if asked else None


def _write(files: SiteFiles, previous: Path, results: list[SeriesResult], samples: pd.DataFrame, builds: pd.DataFrame,
           report: RunReport, spec: Spec, alerts: list[AlertView] | None, changed: set[SeriesKey] | None,
           workers: int | None, templates_dir: Path, generated_at: datetime | None,
           meanwhile: Callable[[], object] | None = None, given: ProcessPoolExecutor | None = None) -> None:
    results = sorted({r.key: r for r in results}.values(), key=lambda r: (r.key.job, r.key.test_id, r.key.metric))
    drawable = []
    for r in results:
        problem = misaligned(r)
        if problem:
            report.add("render", series_key_text(r.key), f"series left out of the site: {problem}")
        else:
            drawable.append(r)
    results = drawable
    facts = BuildIndex(builds, samples)
    info = SiteInfo(spec.outputs.title, _data_until(results, builds, generated_at), _links(spec, report))
    extras = _extras(results, samples, alerts)
    changed_groups = None if changed is None else {group_key(r) for r in results if r.key in changed}
    tasks, reused = _plan(files, previous, results, extras, changed, changed_groups)
    todo = sum(len(t.render) for t in tasks)
    group_links = _group_links(tasks)
    pool = given if given is not None and todo else _pool(workers, todo)
    args = (files, str(previous), info, str(templates_dir), facts)
    feed = None
    try:
        if pool is not None:  # the pool draws series and group pages while this process does the rest
            feed = _Feed(pool, _Chunks(tasks, _workers(workers)), args, _workers(workers) - 1)
        # what the pool's drawing needs nothing of: after its first chunks went (its worker waited)
        pages = Pages(info, templates_dir)
        copy_static(files, templates_dir)
        jobs = sorted({r.key.job for r in results} | set(_jobs_of(builds)))
        for job in jobs:
            body = js_assign("jobs", job, graphs.job_payload(job, facts.job_table(job)))
            files.write_text(f"data/jobs/{safe_slug(job)}.js", body)
        if meanwhile is not None:
            meanwhile()
        if pool is None:
            problems = sorted(_render_groups(*args, tasks))  # as the pool's: whoever drew them
        # (a render of everything, ``changed`` None, takes nothing from the previous site: ``pal run --full``)
        _write_jobs(files, previous if changed is not None else None, pages, jobs, results, builds, facts, info.links)
        _write_index(files, pages, results, samples, builds, report, alerts, jobs, group_links, info.links, spec)
        if feed is not None:
            problems = feed.finish()
    finally:
        if feed is not None:
            feed.stop()
        if pool is not None and pool is not given:
            pool.shutdown(cancel_futures=True)
    if files.adopted:  # the spare's pages of series gone, or not drawn, go
        failed = {item for item, _ in problems}
        files.prune({p for r in results if not failed or series_key_text(r.key) not in failed
                     for p in series_files(r.key.slug())})
    for item, message in problems:
        report.add("render", item, message)
    report.count("render.series_pages", todo)
    report.count("render.series_reused", reused)
    log.info("render: %d series pages written, %d kept from the previous site", todo, reused)


# --------------------------------------------------------------------------- series and group pages


@dataclass(frozen=True)
class GroupTask:
    """One group page (testbed x NIC x area) and the drill-downs of its series to draw again."""

    key: tuple[str, str, str]
    members: list[SeriesResult]  # every series on the page, sorted
    render: list[tuple[SeriesResult, SeriesExtras]]  # drill-downs to write (the others were kept)
    changed: bool  # False: its graphs may be taken from the previous site

    @property
    def slug(self) -> str:
        return safe_slug(*self.key)


def series_files(slug: str) -> list[str]:
    return [f"s/{slug}.html"]


def _plan(files: SiteFiles, previous: Path, results: list[SeriesResult], extras: dict, changed: set | None,
          changed_groups: set | None) -> tuple[list[GroupTask], int]:
    """Group the series and keep unchanged drill-downs from the previous site (hard links)."""
    groups: dict[tuple[str, str, str], list[SeriesResult]] = {}
    for r in results:
        groups.setdefault(group_key(r), []).append(r)
    tasks, reused = [], 0
    for gkey in sorted(groups):
        render = []
        for r in groups[gkey]:
            if changed is not None and r.key not in changed and _reuse(previous, files, series_files(r.key.slug())):
                reused += 1
            else:
                render.append((r, extras.get(r.key, SeriesExtras())))
        tasks.append(GroupTask(gkey, groups[gkey], render, changed_groups is None or gkey in changed_groups))
    return tasks, reused


def _group_links(tasks: list[GroupTask]) -> dict[str, list[dict]]:
    links: dict[str, list[dict]] = {}
    for t in tasks:
        links.setdefault(t.key[0], []).append({"href": f"g/{t.slug}.html", "label": " ".join(p for p in t.key[1:] if p)})
    return links


def _reuse(previous: Path, files: SiteFiles, rel: Iterable[str]) -> bool:
    """Hard-link (or copy) files of the previous site into the new one, in place of what the new
    site has there (``SiteFiles.discard``); False if any is missing."""
    rel = list(rel)
    if not all((previous / p).is_file() for p in rel):
        return False
    for p in rel:
        src, dst = previous / p, files.root / p
        files.discard(p)  # an adopted directory's file: the link takes its place, never written through
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)
    return True


def _workers(workers: int | None) -> int:
    return workers if workers is not None else min(os.cpu_count() or 1, 4)


def render_pool(workers: int | None = None) -> ProcessPoolExecutor | None:
    """The render's pool (``_pool``), started now: its workers import pal while the caller does
    other work (a daily run: while it analyses, on the core the analysis leaves idle; a worker's
    start-up is 0.6 s of CPU). None on one core. The caller shuts it down."""
    pool = _pool(workers, POOL_MIN_SERIES)
    if pool is not None:
        pool.submit(_started)
    return pool


def _started() -> None:
    """A first task for a new worker: unpickling it imported this module and what it draws with."""


def _pool(workers: int | None, todo: int) -> ProcessPoolExecutor | None:
    """A pool of ``workers - 1`` processes when it pays (this process draws too, ``_Feed.finish``).

    Workers are forked by the run's forkserver (``pal.executor.worker_context``), never a fork
    of this process: a worker forked from the run inherits the store's flock (held by
    ``pipeline.run`` around render), and after a ``kill -9`` of the run it kept the store locked
    for every later run. The forkserver has imported the render and the analysis once
    (``WORKER_PRELOAD``), for the parse's workers too, so a worker starts ready instead of
    importing them again (1.3 s of CPU spawned). A worker also ends with the run (see
    :func:`_end_with`), so none is left writing into a site directory the next run removes.
    """
    from pal.executor import widen_pipes, worker_context

    n = _workers(workers) - 1  # this process is the other worker (``_Feed.finish``)
    if n < 1 or todo < POOL_MIN_SERIES:
        return None
    pool = ProcessPoolExecutor(max_workers=n, mp_context=worker_context(),
                               initializer=_start_worker, initargs=(os.getpid(),))
    widen_pipes(pool)  # a chunk's series and results go over at once (``AnalysisAhead``)
    return pool


def _start_worker(run_pid: int) -> None:
    """Pool worker initializer: the run's collector thresholds (``use_sparse_gc``; the worker
    draws thousands of drill-downs and analyses series) and an end with the run (``_end_with``)."""
    use_sparse_gc()
    _end_with(run_pid)


#: PR_SET_PDEATHSIG of prctl(2): the signal a process gets when its parent ends.
_PR_SET_PDEATHSIG = 1


def _end_with(run_pid: int, poll: float = 0.2) -> None:
    """Pool worker initializer: end this worker when the run ``run_pid`` is gone.

    SIGKILL on the death of the parent where that is the run and prctl exists (a worker forked
    by the run's forkserver has the forkserver for parent, which ends after the parse), and a
    daemon thread that watches ``run_pid`` itself everywhere.
    """
    prctl = function("prctl")
    if prctl is not None and os.getppid() == run_pid:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    def watch() -> None:
        while _alive(run_pid):
            threading.Event().wait(poll)
        os._exit(1)

    if not _alive(run_pid):
        os._exit(1)
    threading.Thread(target=watch, name="pal-render-watch", daemon=True).start()


def _weight(task: GroupTask) -> int:
    return len(task.render) + 1  # its drill-downs and its group page


class _Chunks:
    """The group tasks, largest first, handed out a chunk at a time (``take``, thread-safe) to
    whichever drawing process asks.

    A chunk is about 1 / (``GUIDED_SHARE`` x ``processes``) of the drill-downs left, and at least
    ``MIN_CHUNK``: the last ones are small, so the processes end together. A group is drawn by
    one process (its page needs its drill-downs' graph data), so the large groups go first: one
    of 300 drill-downs handed out late kept the other process waiting for it. The first chunk is
    ``MIN_CHUNK`` (the largest group, about): a worker starts drawing once its first chunk is
    pickled, sent and unpickled, and a guided first chunk of a year's site (4,500 drill-downs of
    365 runs) kept it waiting 0.6 s, the next one going over while it drew.
    """

    def __init__(self, tasks: list[GroupTask], processes: int):
        self._tasks = sorted(tasks, key=_weight, reverse=True)  # stable: equal ones in group order
        self._processes = max(processes, 1)
        self._at, self._left = 0, sum(_weight(t) for t in tasks)
        self._lock = threading.Lock()

    def take(self) -> list[GroupTask] | None:
        """The next chunk, or None when all are handed out."""
        with self._lock:
            start = self._at
            if start >= len(self._tasks):
                return None
            size = MIN_CHUNK if start == 0 else max(MIN_CHUNK, -(-self._left // (GUIDED_SHARE * self._processes)))
            load = 0
            while self._at < len(self._tasks) and load < size:
                load += _weight(self._tasks[self._at])
                self._at += 1
            self._left -= load
            return self._tasks[start:self._at]


class _Feed:
    """A pool's workers and this process drawing the chunks of one ``_Chunks``.

    A thread of this process keeps each worker holding ``IN_FLIGHT`` chunks from the start
    (while this process writes the alert outputs, the job files and the index) until the chunks
    run out; ``finish`` then makes this process one of the drawing processes (the pool is one
    process smaller, a worker holds ~100 MB, for the same cores) and returns the problems,
    sorted, whoever drew them. A chunk the pool refused is drawn here; a worker's error is
    raised here, as the chunk's result.
    """

    def __init__(self, pool: ProcessPoolExecutor, chunks: _Chunks, args: tuple, pool_workers: int):
        self._pool, self._chunks, self._args = pool, chunks, args
        self._handed: list[tuple[list[GroupTask], Future | None]] = []  # (chunk, its future)
        self._lock = threading.Lock()  # a chunk is taken and recorded in ``_handed`` under it
        self._free = threading.Semaphore(max(1, pool_workers) * IN_FLIGHT)  # chunks the pool may take now
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="pal-render-feed", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._free.acquire()  # released as each chunk the pool holds is done
            with self._lock:
                chunk = None if self._stopping else self._chunks.take()
                if chunk is None:
                    return
                try:
                    future = self._pool.submit(_render_groups, *self._args, chunk)
                except Exception:  # noqa: BLE001 - a broken or closed pool: this process draws it
                    self._handed.append((chunk, None))
                    return
                self._handed.append((chunk, future))
            future.add_done_callback(lambda _: self._free.release())

    def finish(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        while (chunk := self._chunks.take()) is not None:
            problems += _render_groups(*self._args, chunk)
        with self._lock:  # every chunk is handed out: the thread records no more
            handed = list(self._handed)
        for chunk, future in handed:
            problems += future.result() if future is not None else _render_groups(*self._args, chunk)
        return sorted(problems)

    def stop(self) -> None:
        """No more chunks to the pool; those it has not started are cancelled (after ``finish``: none)."""
        with self._lock:
            self._stopping = True
        self._free.release()  # wakes the thread if it waits for a free slot
        self._thread.join()
        for _, future in self._handed:
            if future is not None:
                future.cancel()


def _render_groups(files: SiteFiles, previous: str, info: SiteInfo, templates_dir: str, facts: BuildIndex,
                   tasks: Sequence[GroupTask]) -> list[tuple[str, str]]:
    """Drill-downs and group pages; returns (series, problem) for drill-downs that could not be rendered."""
    pages = _pages(info, templates_dir)
    prev = Path(previous)
    problems = []
    for task in tasks:
        data: dict[SeriesKey, str] = {}
        for (result, _), done in zip(task.render, pages.write_all(files, task.render, facts)):
            if isinstance(done, Exception):
                problems.append((series_key_text(result.key), f"drill-down not rendered: {done}"))
            else:
                data[result.key] = done
        _write_group(files, prev, pages, task, data)
    return problems


@functools.lru_cache(maxsize=2)
def _pages(info: SiteInfo, templates_dir: str) -> Pages:
    """A site's compiled templates, made once per process: a process draws many chunks, and each
    took 10-15 ms to set up its Jinja environment (0.6 s of CPU over the 48 chunks of a daily run then).
    Jinja reloads a template whose file changed."""
    return Pages(info, Path(templates_dir))


def _write_group(files: SiteFiles, previous: Path, pages: Pages, task: GroupTask, data: dict[SeriesKey, str]) -> None:
    """One page per testbed x NIC x area; one graph per metric x frame size x cores (<= 10 tests).

    Its series' graph data (``Pages.group_json``) is one file, ``data/g/<group>.js``: ``data``
    holds what the drill-downs just drawn made; the others' is made here (a changed group), or
    the file is kept."""
    gkey, gslug = task.key, task.slug
    slugs = {id(r): r.key.slug() for r in task.members}  # a slug is a hash: once per series
    data_file = f"data/g/{gslug}.js"
    if task.changed or not _reuse(previous, files, [data_file]):
        items = []
        for r in task.members:
            text = data.get(r.key)
            if text is None:
                try:
                    text = pages.group_json(r)
                except (ValueError, TypeError, IndexError, KeyError) as exc:
                    log.debug("group %s: no graph data for %s: %s", gslug, series_key_text(r.key), exc)
                    continue  # its drill-down reported the problem
            items.append((slugs[id(r)], text))
        files.write_text(data_file, js_assign_all("series", items))
    by_graph: dict[tuple[str, str, str], list[SeriesResult]] = {}
    for r in task.members:
        by_graph.setdefault(graph_key(r), []).append(r)
    graphs_ctx = []
    for n, (gk, members) in enumerate(_chunks(by_graph)):
        metric, fs, cores = gk
        title = " ".join(p for p in (group_label(gkey), fs, cores, metric_label(metric)) if p)
        name = f"g-{gslug}-{n}.svg"
        chart = graphs.group_chart(title, members, [pages.axis_seconds(m) for m in members])
        if task.changed or not _reuse(previous, files, [f"svg/{name}"]):
            files.write_text(f"svg/{name}", svg.render_svg(chart))
        graphs_ctx.append(GroupGraph(title, name, svg.total_height(chart), [
            (slugs[id(m)], short_name(m.key, str(m.attrs.get("nic") or "")), m.verdict) for m in members]))
    job_scripts = sorted({f"../data/jobs/{safe_slug(r.key.job)}.js" for r in task.members})
    html = pages.render("group.html", "../", group_label(gkey),
                        ["../static/plotly.min.js", *job_scripts, f"../{data_file}", "../static/graph.js"],
                        label=group_label(gkey), testbed=gkey[0], sections=group_sections(graphs_ctx))
    files.write_text(f"g/{gslug}.html", html)


def _chunks(by_graph: dict) -> list[tuple[tuple, list[SeriesResult]]]:
    out = []
    for gk in sorted(by_graph, key=graph_order):
        members = by_graph[gk]
        for i in range(0, len(members), MAX_TRACES):
            out.append((gk, members[i:i + MAX_TRACES]))
    return out


def _extras(results: list[SeriesResult], samples: pd.DataFrame, alerts: list[AlertView] | None
            ) -> dict[SeriesKey, SeriesExtras]:
    by_key: dict[SeriesKey, dict] = {}
    for a in sorted(alerts or [], key=lambda a: a.id):
        by_key.setdefault(a.key, {"alerts": [], "failures": []})["alerts"].append(a)
    if samples is not None and not samples.empty and "status" in samples.columns:
        fails = samples[samples["status"] == "FAIL"].sort_values(["job", "test_id", "metric", "build"], kind="stable")
        for (job, test_id, metric), grp in fails.groupby(["job", "test_id", "metric"], sort=True):
            rows = []
            for rec in grp.tail(FAILURES_SHOWN).to_dict("records")[::-1]:
                t = rec.get("build_time")
                rows.append((int(rec["build"]), "" if t is None or pd.isna(t) else pd.Timestamp(t).strftime("%Y-%m-%d %H:%M"),
                             "" if pd.isna(rec.get("message")) else str(rec.get("message"))))
            by_key.setdefault(SeriesKey(str(job), str(test_id), str(metric)), {"alerts": [], "failures": []})[
                "failures"] = rows
    return {k: SeriesExtras(tuple(v["alerts"]), tuple(v["failures"])) for k, v in by_key.items()}


def render_files(templates_dir: Path | None = None) -> list[tuple[str, Path]]:
    """What draws the pages, by name: the templates and static files, the render code (the text
    kernel's C source where the checkout has it, and its build) and the bands' code and kernel (the
    drawn bands are made at render time)."""
    out = []
    for root in (Path(templates_dir) if templates_dir else DEFAULT_TEMPLATES, Path(__file__).resolve().parent):
        out += [(str(path.relative_to(root)), path) for path in sorted(root.rglob("*"))
                if path.is_file() and path.suffix in (".py", ".html", ".css", ".js", ".svg", ".c", ".so")]
    bands_code = Path(bands_module.__file__)
    out += [("", path) for path in [bands_code, *sorted(bands_code.parent.glob("bands_kernel*"))] if path.is_file()]
    return out


def render_fingerprint(templates_dir: Path | None = None) -> str:
    """A digest of what draws the pages (``render_files``) and pal's version.

    Part of every page digest, so a new pal (or an edited template) draws every page again
    instead of keeping pages (and group graphs) drawn by the old one.
    """
    h = hashlib.sha1(pal_version.encode())
    for name, path in render_files(templates_dir):
        h.update(name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def page_content(r: SeriesResult) -> bytes:
    """The digest of what a drill-down shows that its result alone decides: every array, the
    changes, bands, verdict, texts and compliance (``page_digests`` adds its alerts, the code and
    the spec's texts). Made where the series is analysed (``pal.analysis.series.AnalysisAhead``):
    a daily run's 6,000 took the run's process 0.3 s between the analysis and the drawing, the
    render's worker idle."""
    h = data_hasher()
    for arr in (r.builds, r.times, r.values, r.stdevs, r.trend, *(r.bands[k] for k in sorted(r.bands))):
        h.update(np.ascontiguousarray(arr))
    comp = r.compliance
    h.update(_TEXTS.encode([[(c.index, c.kind, c.detector, c.first_bad_build, c.last_good_build) for c in r.changes],
                            sorted(r.bands), r.detector, r.verdict, r.direction, r.attrs,
                            [repr(comp.trend), comp.runs, repr(comp.short_term_change), repr(comp.long_term_change),
                             comp.regressions, comp.progressions]]).encode())
    return h.digest()


#: the encoder of the texts ``page_content`` and ``page_digests`` hash
_TEXTS = json.JSONEncoder(sort_keys=True, default=str)


def page_digests(results: list[SeriesResult], alerts: list[AlertView] | None = None,
                 templates_dir: Path | None = None, site: Sequence[str] = (),
                 contents: Mapping[SeriesKey, bytes] | None = None) -> dict[str, str]:
    """A fingerprint of what each drill-down page shows, by ``"<job>|<test id>|<metric>"``.

    Pages whose digest is unchanged since the last render are kept. The page lists the
    series' alerts (id, kind, ack, suspect, bisect trigger), so an alert that appears, goes or
    is acked without new data changes the digest too; so does a change of the templates or
    the render code (``render_fingerprint``), of its compliance (the spec's windows decide it,
    not the data alone) or of ``site``: what every page shows from the spec (``site_texts``).
    ``contents``: the series' ``page_content`` where it was made already (by key).
    """
    code = render_fingerprint(templates_dir).encode() + json.dumps(list(site)).encode()
    by_key: dict[SeriesKey, list[AlertView]] = {}
    for a in alerts or []:
        by_key.setdefault(a.key, []).append(a)
    contents = contents or {}
    out = {}
    for r in results:
        h = hashlib.sha1(code)
        content = contents.get(r.key)
        h.update(content if content is not None else page_content(r))
        # what the page shows of each alert (not its status: new turns ongoing on every rerun)
        shown = sorted((a.id, a.kind, a.state, a.acked, a.ack_reason or "", a.ack_snippet, a.suspect_verdict,
                        a.suspect_summary, a.suspect_url or "", a.bisect_comment or "")
                       for a in by_key.get(r.key, ()))
        h.update(_TEXTS.encode(shown).encode())
        out[f"{r.key.job}|{r.key.test_id}|{r.key.metric}"] = h.hexdigest()
    return out


# --------------------------------------------------------------------------- jobs, index


def _jobs_of(builds: pd.DataFrame) -> list[str]:
    if builds is None or builds.empty or "job" not in builds.columns:
        return []
    return [str(j) for j in builds["job"].dropna().unique()]


def _write_jobs(files: SiteFiles, previous: Path | None, pages: Pages, jobs: list[str], results: list[SeriesResult],
                builds: pd.DataFrame, facts: BuildIndex, links: Links) -> None:
    """Each job's download, statistics graphs and page; ``previous``: the site whose downloads'
    unchanged rows may be taken (``job_csv_file``), None for none."""
    for job in jobs:
        js = safe_slug(job)
        csv = job_csv_file(job, results, facts, _previous_csv(previous, js) if previous is not None else None)
        files.write_text(f"downloads/{js}.csv", csv.text)
        files.write_text(f"data/csv/{js}.json", json.dumps(csv.index, sort_keys=True, separators=(",", ":")) + "\n")
        df = stats.job_builds(builds, job)
        tests_chart, dur_chart = stats.stats_charts(df, job)
        files.write_text(f"svg/stats-{js}-tests.svg", svg.render_svg(tests_chart))
        files.write_text(f"svg/stats-{js}-duration.svg", svg.render_svg(dur_chart))
        rows = [dict(dataclasses.asdict(b), label=build_label(job, b.build), url=links.build(job, b.build))
                for b in stats.build_rows(df)]
        html = pages.render("stats.html", "../", f"Statistics of {job}", ["../static/pal.js"], job=job,
                            csv_name=f"{js}.csv", svg_tests=f"stats-{js}-tests.svg",
                            svg_duration=f"stats-{js}-duration.svg", svg_height=svg.total_height(tests_chart), rows=rows)
        files.write_text(f"stats/{js}.html", html)


def _previous_csv(previous: Path, slug: str) -> JobCsv | None:
    """A job's CSV in the site this run replaces, with its row index (None: either is missing or unreadable)."""
    try:
        index = json.loads((previous / "data" / "csv" / f"{slug}.json").read_text("utf-8"))
        with open(previous / "downloads" / f"{slug}.csv", encoding="utf-8", newline="") as f:
            text = f.read()  # (newline="": a "\r" in a quoted version is kept, as the offsets count it)
    except (OSError, ValueError):
        return None
    return JobCsv(text, index) if isinstance(index, dict) else None


def _write_index(files: SiteFiles, pages: Pages, results: list[SeriesResult], samples: pd.DataFrame, builds: pd.DataFrame,
                 report: RunReport, alerts: list[AlertView] | None, jobs: list[str], group_links: dict,
                 links: Links, spec: Spec) -> None:
    tables = dashboard.dashboard_tables(results, _thresholds(spec))
    failed = dashboard.failed_tests(samples, results)
    testbeds = sorted({t.testbed for t in tables} | {f.testbed for f in failed})
    failed_by: dict[str, list[dict]] = {}
    for f in failed:
        failed_by.setdefault(f.testbed, []).append(dict(dataclasses.asdict(f), url=links.build(f.job, f.last_build)))
    rows = [row for t in tables for row in t.rows]
    facets = {
        "nic": sorted({r.nic for r in rows if r.nic}),
        "fs": sorted({r.frame_size for r in rows if r.frame_size}),
        "cores": sorted({r.cores for r in rows if r.cores}),
    }
    by_key = {r.key: r for r in results}
    alert_rows = []
    # open regressions first, acknowledged last
    order = sorted(alerts or [], key=lambda a: (a.acked, a.kind != "regression", a.id))
    for a in order:
        r = by_key.get(a.key)
        alert_rows.append(dict(
            alert_context(a), slug=r.key.slug() if r else None,
            name=short_name(r.key, str(r.attrs.get("nic") or "")) if r else series_key_text(a.key),
        ))
    job_rows = []
    for job in jobs:
        df = stats.job_builds(builds, job)
        nums = sorted(set(df["build"].astype(int).tolist()) if not df.empty else
                      {int(b) for r in results if r.key.job == job for b in r.builds})
        last = nums[-1] if nums else None
        job_rows.append({
            "job": job, "builds": len(nums), "last_label": build_label(job, last) if last is not None else "",
            "last_url": links.build(job, last), "stats_href": f"stats/{safe_slug(job)}.html",
            "csv_href": f"downloads/{safe_slug(job)}.csv",
        })
    html = pages.render(
        "index.html", "", "Dashboard", ["static/pal.js"],
        summary=dashboard.summary(results, failed, report),
        testbeds=[(tb, [t for t in tables if t.testbed == tb]) for tb in testbeds],
        dash_rows={t.anchor: dash_rows(t) for t in tables},
        failed=failed_by, groups=group_links, facets=facets, alerts=alert_rows,
        missing=dashboard.missing_builds(report), jobs=job_rows,
        windows=dashboard.window_notes(spec.test_sets, results), columns=dashboard.COLUMNS,
    )
    files.write_text("index.html", html)


# --------------------------------------------------------------------------- helpers


def copy_static(files: SiteFiles, templates_dir: Path) -> None:
    """CSS/JS of the site, and plotly.js once, from the installed plotly package (no CDN)."""
    import plotly

    for src in sorted((templates_dir / "static").iterdir()):
        if src.is_file():
            files.write_bytes(f"static/{src.name}", src.read_bytes())
    files.write_bytes("static/plotly.min.js", (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes())


def _thresholds(spec: Spec) -> dict[str, float]:
    """Per test set, the smallest change the pages colour: what its alert filter alerts on."""
    return {ts.name: float(ts.alert_filters.min_change_pct) for ts in spec.test_sets}


def site_texts(spec: Spec) -> tuple[str, ...]:
    """What every drill-down shows from the spec (``page_digests``' ``site``): the site's title and
    what its build links are made of."""
    return (spec.outputs.title, spec.outputs.build_url or "", _jenkins(spec))


def _jenkins(spec: Spec) -> str:
    """The first Jenkins source's URL (the build links' ``{jenkins}``), or empty."""
    return next((s.url for s in spec.sources if s.type == "jenkins" and s.url), "") or ""


def _links(spec: Spec, report: RunReport) -> Links:
    jenkins = _jenkins(spec)
    links = Links(spec.outputs.build_url, jenkins)
    try:
        links.build("job", 1)
    except (KeyError, IndexError, ValueError) as exc:
        report.add("render", "outputs.build-url", f"build links left out: bad template {spec.outputs.build_url!r} "
                   f"({exc!r}); use {{jenkins}}, {{job}}, {{build}}", severity="warning")
        return Links(None, jenkins)
    return links


def _data_until(results: list[SeriesResult], builds: pd.DataFrame, generated_at: datetime | None) -> str:
    """The newest build time in the data (or the given time): never the wall clock."""
    if generated_at is not None:
        return pd.Timestamp(generated_at).strftime("%Y-%m-%d %H:%M UTC")
    stamps = []
    if builds is not None and not builds.empty and "build_time" in builds.columns:
        stamps.append(pd.to_datetime(builds["build_time"], utc=True).max())
    newest = None  # the newest of the series' (UTC, naive) newest times, one Timestamp at the end
    seen: set[int] = set()  # the series of a job share their times array (split_series): once each
    for r in results:
        if len(r.times) == 0 or id(r.times) in seen:
            continue
        seen.add(id(r.times))
        if getattr(r.times, "dtype", None) == np.dtype("datetime64[ns]"):
            m = r.times.max()  # NaT when the series has one: such a series is left out, as below
            if not np.isnat(m) and (newest is None or m > newest):
                newest = m
            continue
        t = pd.Timestamp(r.times.max())
        stamps.append(t.tz_localize("UTC") if t.tzinfo is None else t)
    if newest is not None:
        stamps.append(pd.Timestamp(newest).tz_localize("UTC"))
    stamps = [s for s in stamps if s is not None and not pd.isna(s)]
    return max(stamps).strftime("%Y-%m-%d %H:%M UTC") if stamps else ""




def _abandoned(out_dir: Path) -> list[Path]:
    """``.site-new-<pid>`` directories whose writer is gone (a run killed while rendering)."""
    out = []
    for d in out_dir.glob(f"{NEW_PREFIX}*"):
        pid = d.name[len(NEW_PREFIX):]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            out.append(d)
    return sorted(out)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def remove_in_background(paths: Sequence[Path]) -> None:
    """Delete old site trees in a detached ``rm -rf`` that outlives the run, as ``git gc --auto`` does.

    Unlinking the previous site's ~7,000 files took 1.0-1.8 s after the new one was written (each
    unlink waits on the file system's journal, busy with the run's own writes); the run's results
    do not wait for it. The remover is orphaned at once (its shell exits), so no zombie is left.
    Whatever it has not deleted when it is killed (Jenkins ends a build's processes) is an
    ``.site-old-*`` the next run deletes again (``render_site``); ``wait_for_cleanup`` waits for it.
    """
    if not paths:
        return
    subprocess.run(["sh", "-c", 'rm -rf -- "$@" </dev/null >/dev/null 2>&1 &', "pal-site-cleanup",
                    *map(str, paths)], check=False, close_fds=True, start_new_session=True)


def wait_for_cleanup(out_dir: Path, timeout: float = 60.0) -> None:
    """Wait until the old and abandoned sites of ``out_dir`` are gone (tests, long-lived callers)."""
    deadline = time.monotonic() + timeout
    while (any(Path(out_dir).glob(f"{OLD_PREFIX}*")) or _abandoned(Path(out_dir))) and time.monotonic() < deadline:
        time.sleep(0.02)
