"""The download stage: choose builds per job, try the ordered sources per build, in parallel.

Nothing is dropped silently: a build no source has, or whose file is damaged, becomes a
``download`` problem in the RunReport (with every URL tried and every error), a running or
aborted build a ``download`` warning; the run goes on with the rest. Counts go to
``report.counts``: ``download.source.<name>`` per source that delivered,
``download.cached``, ``download.fetched``, ``download.missing``, ``download.skipped``.

A job that ends with no build at all while a source was unusable (a local directory that does
not exist, a build list that could not be read) is a *fatal* problem (``RunReport.fatal``):
the run must fail rather than publish an empty, green result.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pal.errors import SpecError
from pal.model import BuildFile
from pal.progress import Progress
from pal.report import RunReport
from pal.sources.base import Attempts, BuildInfo, ListingError, Missing, Source
from pal.sources.cache import CacheIndex, HashCache
from pal.sources.http import HttpOptions
from pal.sources.jenkins import JenkinsSource
from pal.sources.local import LocalSource
from pal.sources.selection import merge_listings, select_builds
from pal.spec import BUILD_ALIASES, JobSpec, SourceSpec, Spec

log = logging.getLogger("pal")

STAGE = "download"


def default_cache_dir(spec: Spec) -> Path:
    """Where downloads are kept between runs (the same place ``pal run`` uses): ``<outputs.dir>/cache``."""
    return spec.out_dir / "cache"


def fetch_builds(spec: Spec, cache_dir: Path, report: RunReport, jobs: list[str] | None = None, *,
                 env: Mapping[str, str] | None = None, now: datetime | None = None,
                 backoff: float = 0.5) -> list[BuildFile]:
    """Fetch the output.xml of every selected build of the spec's jobs (or of ``jobs`` only).

    Args:
        spec: the loaded spec (jobs, ordered sources).
        cache_dir: where remote files are kept between runs (``<cache>/<job>/<build>/<file>``).
        report: problems and counts are added here.
        jobs: restrict to these job names (names not in the spec are reported).
        env: environment for ``${VARS}`` in source URLs and JENKINS_USER/JENKINS_TOKEN
            (default ``os.environ``).
        now: the reference time for ``period-days`` (default: the current UTC time).
        backoff: retry backoff factor in seconds (tests make it tiny).

    Returns:
        One BuildFile per build fetched, sorted by (job, build).

    Raises:
        SpecError: a source URL names an environment variable that is not set.
    """
    env = os.environ if env is None else env
    now = now or datetime.now(timezone.utc)
    cache_dir = Path(cache_dir).resolve()
    job_specs = _jobs(spec, jobs, report)
    sources = _open_sources(spec, cache_dir, env, backoff)
    try:
        plan: list[tuple[str, int, BuildInfo | None]] = []
        broken = _broken_sources(sources, report)
        listing_errors: dict[str, list[str]] = {}
        for job in job_specs:
            plan.extend(_plan_job(job, sources, report, now, listing_errors))
        workers = max([s.workers for s in spec.sources] + [1])
        progress = Progress("downloaded", len(plan), every=max(10, len(plan) // 10))
        safe = _LockedReport(report)
        log.info("download: %d builds of %d jobs from %d sources (%d workers)",
                 len(plan), len(job_specs), len(sources), workers)

        def one(item: tuple[str, int, BuildInfo | None]) -> BuildFile | None:
            try:
                return _fetch_one(item[0], item[1], item[2], sources, safe)  # type: ignore[arg-type]
            finally:
                with safe.lock:
                    progress.advance()

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pal-download") as pool:
            files = [f for f in pool.map(one, plan) if f is not None]
    finally:
        for src in sources:
            src.close()
    _fail_empty_jobs(job_specs, files, broken, listing_errors, report)
    return sorted(files, key=lambda f: (f.job, f.build))


def _broken_sources(sources: list[Source], report: RunReport) -> dict[str, str]:
    """Sources that cannot deliver anything at all (today: a local directory that is not there)."""
    broken: dict[str, str] = {}
    for src in sources:
        if isinstance(src, LocalSource) and not src.root.is_dir():
            broken[src.name] = f"source {src.name}: directory {src.root} does not exist"
            report.add(STAGE, src.name, broken[src.name], severity="warning", path=str(src.root))
            log.warning("download: %s", broken[src.name])
    return broken


def _fail_empty_jobs(jobs: list[JobSpec], files: list[BuildFile], broken: dict[str, str],
                     listing_errors: dict[str, list[str]], report: RunReport) -> None:
    """A job with no build from any source, because a source was unusable, fails the run."""
    have = {f.job for f in files}
    for job in jobs:
        why = list(broken.values()) + listing_errors.get(job.name, [])
        if job.name in have or not why:
            continue
        message = f"no build of this job from any source because a source is unusable: {'; '.join(why)}"
        report.add(STAGE, job.name, message, fatal=True, errors=why)
        log.error("error: download: %s: %s", job.name, message)


class _LockedReport:
    """RunReport's add/count for worker threads (its counters are not thread-safe on their own)."""

    def __init__(self, report: RunReport):
        self.report = report
        self.lock = threading.Lock()

    def add(self, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.report.add(*args, **kwargs)

    def count(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.report.count(name, n)


def _jobs(spec: Spec, names: list[str] | None, report: RunReport) -> list[JobSpec]:
    if names is None:
        return list(spec.jobs)
    known = {j.name: j for j in spec.jobs}
    for n in names:
        if n not in known:
            report.add(STAGE, n, "job is not in the spec; nothing fetched for it")
    return [known[n] for n in names if n in known]


def _open_sources(spec: Spec, cache_dir: Path, env: Mapping[str, str], backoff: float) -> list[Source]:
    cache = CacheIndex(cache_dir)
    hashes = HashCache(cache_dir)
    out: list[Source] = []
    for i, s in enumerate(spec.sources):
        if s.type == "local":
            root = spec.resolve(_expand(s.path or "", env, f"sources[{i}].path")).resolve()  # type: ignore[union-attr]
            out.append(LocalSource(s.name, root, hashes))  # type: ignore[arg-type]
        else:
            out.append(_jenkins(s, i, cache, env, backoff))
    return out


def _jenkins(s: SourceSpec, i: int, cache: CacheIndex, env: Mapping[str, str], backoff: float) -> JenkinsSource:
    url = _expand(s.url or "", env, f"sources[{i}].url")
    opts = HttpOptions(timeout=s.timeout, deadline=s.deadline, retries=s.retries, backoff=backoff, verify_tls=s.verify_tls,
                       max_bytes=s.max_size_mb << 20, pool=s.workers)
    user, token = env.get("JENKINS_USER"), env.get("JENKINS_TOKEN")
    auth = (user, token) if user and token else None
    if not s.verify_tls:
        log.warning("source %s: TLS verification is off (verify-tls: false)", s.name)
    return JenkinsSource(s.name, url, s.artifacts, opts, cache, s.workers, auth)


_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def _expand(text: str, env: Mapping[str, str], key: str) -> str:
    """``${VAR}``/``$VAR`` from ``env``; an unset variable is a spec error naming the key."""
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            raise SpecError(key, text, f"environment variable {m.group(1)} to be set")
        return env[m.group(1)]

    return _VAR.sub(sub, text)


def _plan_job(job: JobSpec, sources: list[Source], report: RunReport, now: datetime,
              listing_errors: dict[str, list[str]]) -> list[tuple[str, int, BuildInfo | None]]:
    listings: list[dict[int, BuildInfo]] = []
    listed_by: list[tuple[Source, dict[int, BuildInfo]]] = []
    errors: list[str] = []
    for src in sources:
        try:
            listing = src.list_builds(job.name)
        except ListingError as exc:
            errors.append(f"{src.name}: {exc}")
            listing_errors.setdefault(job.name, []).append(f"source {src.name}: {exc}")
            report.add(STAGE, job.name, f"source {src.name}: {exc}", severity="warning", urls=[exc.url])
            continue
        listings.append(listing)
        listed_by.append((src, listing))
    listed = merge_listings(listings)
    end: int | None = job.end if isinstance(job.end, int) else None
    if job.builds is None and isinstance(job.end, str) and job.end in BUILD_ALIASES:
        # Jenkins knows what "completed" means; a directory only knows its newest build: ask it last.
        with_status = sorted(listed_by, key=lambda sl: not any(i.known for i in sl[1].values()))
        for src, listing in with_status:
            end = src.resolve(job.name, job.end, listing)
            if end is not None:
                break
    if job.builds is None and not listed:
        report.add(STAGE, job.name, "no source lists any build of this job", errors=errors)
        return []
    sel = select_builds(job, listed, end, now)
    for n, why in sel.skipped.items():
        report.add(STAGE, f"{job.name}/{n}", f"skipped: build {why}", severity="warning")
    report.count(f"{STAGE}.skipped", len(sel.skipped))
    if sel.too_old:
        report.count(f"{STAGE}.older_than_period", len(sel.too_old))
    log.info("download: %s: %d builds (%s..%s), %d skipped, %d older than the period",
             job.name, len(sel.builds), sel.builds[0] if sel.builds else "-",
             sel.builds[-1] if sel.builds else "-", len(sel.skipped), len(sel.too_old))
    return [(job.name, n, listed.get(n)) for n in sel.builds]


def _fetch_one(job: str, build: int, info: BuildInfo | None, sources: list[Source],
               report: RunReport) -> BuildFile | None:
    item = f"{job}/{build}"
    for src in sources:
        cached = getattr(src, "cached", None)
        hit = cached(job, build, info) if cached else None
        if hit is not None:
            report.count(f"{STAGE}.cached")
            report.count(f"{STAGE}.source.{src.name}")
            return hit
    trail = Attempts()
    for src in sources:
        try:
            got = src.fetch(job, build, info)
        except Missing as exc:
            trail.add(src.name, exc)
            continue
        report.count(f"{STAGE}.source.{src.name}")
        if isinstance(src, JenkinsSource):
            report.count(f"{STAGE}.fetched")
        if trail.damaged:
            report.add(STAGE, item, f"earlier sources failed; taken from {src.name}", severity="warning",
                       urls=trail.urls, errors=trail.errors)
        return got
    report.count(f"{STAGE}.missing")
    what = "damaged or unreachable in every source" if trail.damaged else "no source has this build"
    report.add(STAGE, item, f"{what}; skipped", urls=trail.urls, errors=trail.errors)
    log.warning("download: %s: %s (%s)", item, what, "; ".join(trail.errors)[:300])
    return None
