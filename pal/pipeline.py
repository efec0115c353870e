"""The PA job: download, parse into the store, analyse, alert, render — one function per stage.

``run(spec, options)`` is what ``pal run`` calls. Only builds not yet in the store are
parsed; every series of the window is analysed again (the compiled MDL search makes that
cheaper than keeping states); only pages of changed series are rendered again. The result
equals a from-scratch run on the same inputs (``--full``). A run whose inputs did not change
since the last one (``pal.fingerprint``) stops after ingest and keeps that run's outputs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from pal.fingerprint import (RunRecord, apply_delta, output_files, report_delta, run_fingerprint, save_record,
                             unchanged_run)
from pal.atomic import write_text_atomic
from pal.model import BuildFile, SeriesResult
from pal.options import RunOptions
from pal.memory import frozen_gc, release_memory, sparse_gc
from pal.progress import Steps
from pal.report import RunReport
from pal.spec import Spec

if TYPE_CHECKING:  # the later stages are imported where they run: a run with nothing new, which stops
    import pandas as pd  # after the download check and the fingerprint, imports none of them (0.5 s)

    from pal.analysis.result_cache import ResultCache
    from pal.analysis.series import AnalysisAhead, SeriesInput
    from pal.history import History

log = logging.getLogger("pal")

#: the MDL states earlier versions saved; removed from a store on its next run
MDL_STATE = "mdl"
DIGEST_STATE = "digests"
#: the download problems of the last run with a download, shown again by ``pal render``
DOWNLOAD_STATE = "download-problems"
#: the previous alerts the last run with a download matched against (``pal render`` decides again with them)
ALERTS_INPUT_STATE = "alerts-input"
#: the analyse stage maps chunks of series over the run's executor only with this many workers
#: or a remote Dask cluster: with 2 local workers on 2 shared cores it measured 1.1x the inline
#: time (docs/scaling.md), the pickling of inputs, states and results eating the gain
ANALYSE_MIN_WORKERS = 3


@dataclass
class RunOutcome:
    exit_code: int
    report: RunReport
    out_dir: Path
    results: list[SeriesResult] = field(default_factory=list)
    alerts: list = field(default_factory=list)
    summary: str = ""


# ---------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------


def download(spec: Spec, cache_dir: Path, report: RunReport) -> list[BuildFile]:
    from pal.sources import fetch_builds

    files = fetch_builds(spec, cache_dir, report)
    report.count("builds.fetched", len(files))
    return files


def _ingest(item: tuple[BuildFile, str, dict[str, Any]]) -> Any:
    """Worker side: parse one archive and stage its Parquet fragment (everything by path)."""
    from pal.store.ingest import parse_to_fragment

    build_file, staging, options = item
    return parse_to_fragment(build_file, staging, options)


def ingest(spec: Spec, store: Any, files: list[BuildFile], report: RunReport, executor: Any,
           full: bool = False, starting: Callable[[], object] | None = None) -> int:
    """Parse the builds the store does not hold yet (or whose archive changed); return how many.

    ``starting`` is called once there is something to parse, before the parse: a run that parses
    goes on to analyse, so the caller may start what that needs.
    """
    todo = [f for f in files if full or not store.has_build(f.job, f.build, f.sha256 or None)]
    report.count("builds.parsed", len(todo))
    if not todo:
        return 0
    if starting is not None:
        starting()
    staging = str(store.staging_dir())
    # Renames, the ignore list and the testbed map are applied when reading the history
    # (``load_history``), so changing them in the spec never needs a re-parse.
    items = [(f, staging, {"dut": (spec.job(f.job).dut if spec.job(f.job) else "vpp")}) for f in todo]
    # A job with a run of the store's auto-compaction to parse (``store.auto_compact`` builds) is
    # committed as soon as the last of them is parsed, while the workers parse the next job's: its
    # compaction (5 ms a build in a cold run) no longer waits for the whole parse on one core. The
    # other jobs are committed together at the end: a commit rewrites the manifest (85 ms for a
    # year of 12 jobs), which a daily run's build a job would pay once per job. The store is the
    # one a single commit makes either way: the compaction's runs never span two jobs
    # (``Store._runs``).
    early = store.auto_compact or len(todo) + 1  # (no auto-compaction: one commit at the end)
    left = Counter(f.job for f in todo)
    arrived: dict[str, list[tuple[int, Any]]] = {}
    stored = 0

    def commit(parts: list[tuple[int, Any]]) -> None:
        nonlocal stored
        result = store.commit_fragments([fr for _, fr in sorted(parts, key=lambda x: x[0]) if _parsed_well(fr)],
                                        replace=full)
        stored += len(result.added) + len(result.replaced)

    def parsed(i: int, frag: Any) -> None:
        job = todo[i].job
        arrived.setdefault(job, []).append((i, frag))
        left[job] -= 1
        if not left[job] and len(arrived[job]) >= early:
            commit(arrived.pop(job))

    fragments = executor.map(_ingest, items, label="parsed", done=parsed)
    if arrived:
        commit([part for parts in arrived.values() for part in parts])
    good = 0
    for f, frag in zip(todo, fragments):
        if not _parsed_well(frag):
            error = getattr(frag, "error", None) if not _is_failure(frag) else str(frag)
            report.add("parse", f"{f.job}/{f.build}", error, file=str(f.path), source=f.source)
            continue
        report.problems.extend(frag.problems)
        good += 1
    report.count("builds.stored", stored)
    return good


def _parsed_well(frag: Any) -> bool:
    """A fragment the store can take: neither a failed call nor a build the parse refused."""
    return not _is_failure(frag) and not getattr(frag, "error", None)


def _is_failure(obj: Any) -> bool:
    from pal.executor import Failed

    return isinstance(obj, Failed)


def window_series(spec: Spec, store: Any, builds: pd.DataFrame, report: RunReport,
                  each_job: Callable[[list[SeriesInput]], object] | None = None,
                  cache: ResultCache | None = None) -> tuple[History, list[SeriesInput]]:
    """The window's series (``split_series``) and the history later stages read: its builds and
    the rows of its samples that ``alert_samples`` keeps.

    One job at a time: a job's samples are read, cut into series and dropped before the next
    job's are read, so the run holds one job's rows at a time, not the whole window's (a year of
    12 jobs: 13 M rows). A series never spans jobs, and the jobs come in the order of one read of
    every job, so the series and rows are those of ``split_series(load_history(...).samples)``.
    ``builds`` are the window's (``window_builds``); ``each_job`` gets each job's series to
    analyse as they are cut (``AnalysisAhead.add``). ``cache``: a job whose window the last run
    read the same way is not read (``ResultCache.unread``: its results and history rows are kept;
    it has no series here); each job read leaves its history rows with the cache (``read_job``)
    and its series are sorted (``ResultCache.sort``): ``each_job`` gets only those to analyse.
    A job whose window moved by a few builds is slid from the last run's (``ResultCache.moved``,
    ``pal.window.slide``): only the new builds' rows are read.
    """
    from pal.history import History, concat_samples, read_samples, window_jobs
    from pal.window import JobWindow, read_window, slide

    inputs: list[SeriesInput] = []
    kept: list[pd.DataFrame] = []
    rows = unread_jobs = slid_jobs = 0
    for job in window_jobs(builds):
        unread = cache.unread(job) if cache is not None else None
        if unread is not None:  # the job's window as the last run read it
            unread_jobs += 1
            rows += unread.rows
            kept.append(unread.samples)
            continue
        of_job = builds[(builds["job"] == job).to_numpy(dtype=bool)]
        entries = cache.slides.builds.get(job, {}) if cache is not None and cache.slides is not None else {}
        moved = cache.moved(job) if cache is not None else None
        window: JobWindow | None = None
        if moved is not None:  # the last run's window, the builds that left it dropped, the new ones read
            last, steps = moved
            added = of_job[of_job["build"].isin(steps.added).to_numpy(dtype=bool)]
            window = slide(last, steps, read_samples(spec, store, added) if len(added) else None, spec,
                           entries)
            slid_jobs += window is not None
            del last, moved
        if window is None:
            window = read_window(read_samples(spec, store, of_job), spec, entries)
        rows += window.rows
        series = window.series
        inputs.extend(series)
        if cache is not None:
            series = cache.sort(series)  # a job whose series did not change: its last results
        if each_job is not None:
            each_job(series)
        kept.append(window.samples)
        if cache is not None:
            cache.read_job(job, window.samples, window.rows, window)
        del window
        release_memory()  # this job's rows, before the next job's are read
    samples = concat_samples(kept) if kept else read_samples(spec, store, builds)
    report.count("history.builds", len(builds))
    report.count("history.samples", rows)
    if unread_jobs:
        report.count("history.jobs_unread", unread_jobs)
    if slid_jobs:
        report.count("history.jobs_slid", slid_jobs)
    return History(samples, builds), inputs


def analyse_series(spec: Spec, inputs: list[SeriesInput], builds: pd.DataFrame, report: RunReport,
                   executor: Any = None, ahead: AnalysisAhead | None = None,
                   cache: ResultCache | None = None) -> list[SeriesResult]:
    """The series cut from the history (``split_series``), analysed; counted in ``report``.
    ``cache``: the series were sorted as they were cut (``ResultCache.sort``); only its pending
    ones are analysed. ``ahead``: the series to analyse, already handed to a pool as they were cut."""
    from pal.analysis.series import analyse_all, single_testbed_jobs

    todo, single = (cache.pending, cache.single_testbed) if cache is not None else \
        (inputs, single_testbed_jobs(builds, spec))  # (the cache's digests hold its flags)
    results = ahead.results() if ahead is not None else analyse_all(todo, spec, single, executor=executor)
    if cache is not None:
        results = cache.merge(inputs, results)
        report.count("series.reused", cache.reused)
        if cache.resumed:
            report.count("series.resumed", cache.resumed)
        if cache.resumed_masked:
            report.count("series.resumed_masked", cache.resumed_masked)
    report.count("series", len(results))
    report.count("series.regressions", sum(r.compliance.regressions > 0 for r in results))
    return results


def decide_alerts(spec: Spec, store: Any, results: list[SeriesResult], history: History,
                  again: bool = False) -> tuple[list, int, list[dict]]:
    """This run's alerts (previous alerts and acks applied), the exit code they give, and the
    previous alerts they were matched against.

    ``pal run``, ``pal render`` and ``pal analyse`` all decide with this one function, under the
    spec's ``alerts.fail-on`` policy. ``again`` (render, analyse): decide as the last run did,
    against the alerts *it* started from, so that looking again never turns new into ongoing.
    """
    from pal.alerts import build_alerts, exit_code_for, load_acks

    acks = load_acks(spec.resolve(spec.alerts.acks)) if spec.alerts.acks else {}
    previous = store.load_alerts()
    if again:
        kept = store.load_state(ALERTS_INPUT_STATE)
        if isinstance(kept.get("alerts"), list):
            previous = kept["alerts"]
    alerts = build_alerts(results, history.builds, history.samples, spec, previous, acks)
    return alerts, exit_code_for(alerts, spec.alerts.fail_on), previous


# ---------------------------------------------------------------------------
# The whole run
# ---------------------------------------------------------------------------


def run(spec: Spec, options: RunOptions = RunOptions()) -> RunOutcome:
    """All stages; problems with single builds or tests are in the report, not exceptions."""
    from pal.executor import make_executor, stop_forkserver
    from pal.store import Store

    report = RunReport()
    now = options.now or datetime.now(timezone.utc)
    out_dir = Path(options.out_dir) if options.out_dir else spec.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    steps = Steps(6)
    log.info("pal run: spec %s, trigger %s, output %s", spec.name, options.trigger, out_dir)

    store = Store(spec.store_dir)
    kind, workers, scheduler = options.executor_of(spec)
    # The lock first: a second run fails at once instead of after downloading everything, and
    # two runs never write the same cache files.
    with store.lock(), sparse_gc(), frozen_gc() as freeze_alive, contextlib.ExitStack() as at_end:
        with make_executor(kind, workers=workers, scheduler=scheduler) as executor:
            steps.start("download", f"{len(spec.jobs)} jobs from {len(spec.sources)} sources")
            files: list[BuildFile] = []
            if options.download:
                executor.prepare()  # the parse's workers get ready while the builds download
                files = download(spec, out_dir / "cache", report)
            missing = len(report.errors("download"))
            steps.done(f"{len(files)} builds available, {missing} missing")

            steps.start("parse", f"{len(files)} builds, executor {kind}")
            old_digests = {} if options.full else store.load_state(DIGEST_STATE)
            pool: Any = None

            def start_render_pool(series: int) -> None:
                """A large site to draw (``series`` pages, about): the render's pool starts up (0.6 s
                of CPU) while this process parses or reads, and its worker analyses ahead
                (``AnalysisAhead``)."""
                from pal.render.site import POOL_MIN_SERIES, render_pool

                nonlocal pool
                if pool is None and series >= POOL_MIN_SERIES:
                    pool = render_pool()
                    if pool is not None:  # forked by the forkserver, which ends after its pool
                        at_end.callback(stop_forkserver)
                        at_end.callback(pool.shutdown, cancel_futures=True)

            on_executor = workers >= ANALYSE_MIN_WORKERS or (kind == "dask" and bool(scheduler))

            def starting() -> None:
                """Builds to parse, so an analysis follows: the render's pool starts while the
                workers parse."""
                start_render_pool(len(old_digests))

            parsed = ingest(spec, store, files, report, executor, full=options.full, starting=starting)
            site = 0  # a first run's pages, about: as many as the jobs' widest builds have rows
            if parsed and not old_digests:
                widest = store.widest_builds()
                site = sum(widest.get(j.name, 0) for j in spec.jobs)
            if not on_executor:  # the parse workers' memory is not the later stages' to carry
                executor.close(keep_forkserver=True)  # (ended first: the render's worker forks next)
            start_render_pool(site)
            if not on_executor and pool is None:
                stop_forkserver()
            steps.done(f"{parsed} builds parsed, {len(files) - parsed} already stored, "
                       f"{len(report.errors('parse'))} unreadable")
            fp = run_fingerprint(spec, store, now, report, options.upstream, again=not options.download)
            kept = None if options.full or not options.download else unchanged_run(out_dir, fp, _not_outputs(spec, out_dir))
            if kept is not None:  # nothing the results depend on changed: the outputs stand
                return _kept(spec, kept, report, out_dir, steps)
            at_ingest = report.to_dict()
            from pal.alerts import write_alert_outputs
            from pal.alerts.build import remembered
            from pal.analysis.result_cache import ResultCache, results_dir, window_inputs
            from pal.analysis.series import AnalysisAhead, single_testbed_jobs
            from pal.history import growing_jobs, window_builds
            from pal.render import page_content, page_digests, render_site, site_texts

            steps.start("analyse", "history from the store")
            builds = window_builds(spec, store, now)
            start_render_pool(len(old_digests))  # (nothing parsed) the window's read holds one job: room for it
            single = single_testbed_jobs(builds, spec)
            windows, slides = window_inputs(spec, store, builds)
            cache = ResultCache.open(results_dir(out_dir), spec, single, reuse=not options.full, windows=windows,
                                     slides=slides, growing=growing_jobs(spec, store, builds))
            ahead = None
            if pool is not None and not on_executor:  # its worker analyses while the next jobs are read
                ahead = AnalysisAhead(pool, spec, single, then=page_content)
            history, inputs = window_series(spec, store, builds, report, ahead.add if ahead else None, cache)
            _check_upstream(options.upstream, history, report)
            freeze_alive()
            results = analyse_series(spec, inputs, history.builds, report, executor if on_executor else None, ahead,
                                     cache)
            if ahead is not None:
                report.count("series.analysed_by_render_worker", ahead.by_worker)
                if ahead.broken:
                    pool = None  # the render makes its own
            del inputs
            freeze_alive()
            release_memory()  # the series inputs and the split's transients
            reused = f", {cache.reused} of unchanged jobs as the last run left them" if cache.reused else ""
            reused += f", {cache.resumed} searched from where the last run left them" if cache.resumed else ""
            steps.done(f"{len(results)} series from {len(history.builds)} builds{reused}")
            executor.close(keep_forkserver=pool is not None)  # (the render's worker may be its child)

        steps.start("alerts")
        alerts, code, previous = decide_alerts(spec, store, results, history, again=not options.download)
        release_memory()  # the per-build facts' transients (40 MB at 6,000 series)
        code = 1 if options.download and report.fatal() else code  # a job got no build: a source is unusable
        if not options.download:
            _restore_download_problems(store, report)
        views = [a.view() for a in alerts]
        digests = page_digests(results, views, site=site_texts(spec), contents=ahead.contents if ahead else None)
        changed = {r.key for r in results if old_digests.get(_page_key(r)) != digests[_page_key(r)]}
        site_ok = (out_dir / "site" / "index.html").exists()

        def alert_outputs() -> None:  # while the render's pool draws drill-downs (render_site)
            paths = write_alert_outputs(out_dir, alerts, results, history.builds, history.samples, spec, report,
                                        pool=pool)
            # the analyses kept for the next run: here, not where the analysis ends, where the
            # render's worker waited for it (0.4 s of a daily run); a run killed before leaves the
            # last run's files, whose keys no longer match, and the next analyses those jobs again
            cache.save(results)
            release_memory()  # the exports' frames
            new_regressions = sum(1 for a in alerts if a.kind == "regression" and a.status == "new")
            steps.done(f"{len(alerts)} alerts ({new_regressions} new regressions), {len(paths)} files")
            steps.start("render", f"{len(results)} series")

        index = render_site(out_dir, results, history.samples, history.builds, report, spec, views,
                            changed=changed if (old_digests and site_ok) else None, meanwhile=alert_outputs,
                            pool=pool)
        steps.done(f"{len(changed)} series pages rendered again, index {index}")
        # every output is written (the run's own records, report.json included, are not listed):
        # the record's listing of them is taken while the states are saved, not after
        lister = ThreadPoolExecutor(1, thread_name_prefix="pal-outputs")
        at_end.callback(lister.shutdown)
        listing = lister.submit(output_files, out_dir, _not_outputs(spec, out_dir))

        steps.start("save", "store states and the run report")
        store.drop_state(MDL_STATE)
        store.save_state(DIGEST_STATE, digests)
        if options.download:  # a re-render (pal render) never changes alert state: new stays new
            store.save_state(ALERTS_INPUT_STATE, {"alerts": previous})
            store.save_alerts(remembered(previous, [a.to_dict() for a in alerts], _window_builds(history)))
            store.save_state(DOWNLOAD_STATE, {"problems": [dataclasses.asdict(p) for p in report.problems
                                                           if p.stage == "download"]})
    write_text_atomic(out_dir / "report.json", report.to_json())
    figures = {"builds": len(history.builds), "series": len(results), "regressions": _count(alerts, "regression"),
               "progressions": _count(alerts, "progression")}
    save_record(out_dir, RunRecord(fp, code, figures, report_delta(at_ingest, report)), listing.result())
    summary = _summary(spec, figures, parsed, report, code)
    steps.done(summary)
    return RunOutcome(code, report, out_dir, results, alerts, summary)


def _summary(spec: Spec, figures: dict[str, int], parsed: int, report: RunReport, code: int) -> str:
    return (f"pal: {len(spec.jobs)} jobs, {figures['builds']} builds ({parsed} new), {figures['series']} series, "
            f"{figures['regressions']} regressions, {figures['progressions']} progressions, "
            f"{len(report.errors())} problems; exit {code}")


def _not_outputs(spec: Spec, out_dir: Path) -> tuple[Path, ...]:
    """Directories under the output dir that hold no results: the download cache, the store."""
    return (out_dir / "cache", spec.store_dir)


def _kept(spec: Spec, kept: RunRecord, report: RunReport, out_dir: Path, steps: Steps) -> RunOutcome:
    """The outcome of a run whose fingerprint matched: the last run's outputs stand; its report
    gets the findings of the stages it skipped, as that run recorded them."""
    apply_delta(report, kept.report_after_ingest)
    report.count("run.unchanged")
    write_text_atomic(out_dir / "report.json", report.to_json())
    summary = _summary(spec, kept.figures, 0, report, kept.exit_code)
    log.info("pal run: nothing changed since the last run (fingerprint %s): outputs kept", kept.fingerprint[:12])
    steps.done(summary)
    return RunOutcome(kept.exit_code, report, out_dir, [], [], summary)


def _check_upstream(upstream: tuple[str, int] | None, history: History, report: RunReport) -> None:
    """A run triggered by a PT build must analyse that build; say so loudly when it cannot."""
    if upstream is None:
        return
    job, build = upstream
    b = history.builds
    if b.empty or not ((b["job"] == job) & (b["build"] == build)).any():
        report.add("analyse", f"{job}/{build}", "the upstream build that triggered this run is not in the analysed "
                   "history (not in the spec's jobs, outside its window, or not downloadable)", severity="warning")
    else:
        report.count("upstream.analysed")


def _window_builds(history: History) -> dict[str, set[int]]:
    """{job: its builds in the analysed window}: how long a gone alert is remembered."""
    out: dict[str, set[int]] = {}
    for job, build in zip(history.builds["job"].astype(str), history.builds["build"].astype(int)):
        out.setdefault(job, set()).add(int(build))
    return out


def _page_key(r: SeriesResult) -> str:
    return f"{r.key.job}|{r.key.test_id}|{r.key.metric}"


def _restore_download_problems(store: Any, report: RunReport) -> None:
    """A re-render without download keeps showing what the last download met (marked as such)."""
    from pal.report import Problem

    for p in store.load_state(DOWNLOAD_STATE).get("problems", []) or []:
        if isinstance(p, dict) and {"stage", "item", "message"} <= set(p):
            details = dict(p.get("details") or {}, from_last_download=True)
            report.problems.append(Problem(str(p["stage"]), str(p["item"]), str(p["message"]),
                                           str(p.get("severity") or "error"), details))


def _count(alerts: list, kind: str) -> int:
    return sum(1 for a in alerts if a.kind == kind)
