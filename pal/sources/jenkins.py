"""A Jenkins server (and the log servers or buckets beside it) over HTTP.

The build list and aliases come from the Jenkins JSON API. ``allBuilds`` is asked for, not
``builds``: Jenkins caps ``builds`` at the newest 100, which is less than a 180-run window.
Each build's file is then looked for at the spec's ordered artifact URL templates
(``{jenkins}``, ``{job}``, ``{build}``), first good one wins. Credentials come from the
environment (``JENKINS_USER``/``JENKINS_TOKEN``) into the session's basic auth only: they are
never part of a URL, a log line or the report.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from pal.model import BuildFile
from pal.sources.base import BuildInfo, Failed, ListingError, Missing
from pal.sources.cache import CacheEntry, CacheIndex
from pal.sources.http import FetchFailed, HttpOptions, download, get_text, make_session, redact

log = logging.getLogger("pal")

LIST_TREE = "allBuilds[number,result,timestamp,url]"


def job_path(job: str) -> str:
    """``/job/a/job/b`` for a job ``a/b`` inside a folder, ``/job/name`` otherwise."""
    return "".join(f"/job/{quote(part, safe='')}" for part in job.split("/"))


class JenkinsSource:
    """``Source`` over Jenkins; at most ``workers`` transfers at once through one pooled session."""

    def __init__(self, name: str, url: str, templates: list[str], opts: HttpOptions, cache: CacheIndex,
                 workers: int, auth: tuple[str, str] | None = None):
        self.name = name
        self.url = url.rstrip("/")
        self.templates = list(templates)
        self.opts = opts
        self.cache = cache
        self.session = make_session(opts, auth)
        self._slots = threading.BoundedSemaphore(max(1, workers))

    # -- listing -----------------------------------------------------------------------------
    def list_builds(self, job: str) -> dict[int, BuildInfo]:
        url = f"{self.url}{job_path(job)}/api/json?tree={quote(LIST_TREE, safe='')}"
        try:
            text = get_text(self.session, url, self.opts)
        except FetchFailed as exc:
            raise ListingError(f"build list unavailable: {exc.message}", redact(url)) from None
        try:
            data = json.loads(text)
            items = data.get("allBuilds", data.get("builds"))
            if not isinstance(items, list):
                raise ValueError("no 'allBuilds' or 'builds' list")
            out: dict[int, BuildInfo] = {}
            for item in items:
                n = int(item["number"])
                ts = item.get("timestamp")
                when = datetime.fromtimestamp(ts / 1000, tz=timezone.utc) if isinstance(ts, (int, float)) else None
                out[n] = BuildInfo(n, item.get("result"), when)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ListingError(f"build list is not valid Jenkins JSON ({type(exc).__name__}: {str(exc)[:120]})",
                               redact(url)) from None
        return out

    def resolve(self, job: str, alias: str, listed: dict[int, BuildInfo]) -> int | None:
        url = f"{self.url}{job_path(job)}/{alias}/buildNumber"
        try:
            text = get_text(self.session, url, self.opts, limit=64).strip()
            if text.isdigit():
                return int(text)
            log.warning("%s: %s did not answer a build number; using the build list", self.name, redact(url))
        except FetchFailed as exc:
            if not exc.missing:
                log.warning("%s: %s; using the build list", self.name, exc)
            else:
                return None  # Jenkins: no such build yet
        wanted = ("SUCCESS",) if alias == "lastSuccessfulBuild" else None
        done = [b.number for b in listed.values()
                if b.result is not None and (wanted is None or b.result in wanted)]
        return max(done) if done else None

    # -- fetching ----------------------------------------------------------------------------
    def urls(self, job: str, build: int) -> list[str]:
        return [t.format(jenkins=self.url, job=job, build=build) for t in self.templates]

    def fetch(self, job: str, build: int, info: BuildInfo | None) -> BuildFile:
        """Download the build's file into the cache from the first template that works."""
        ts_ms = _ms(info)
        dest = self.cache.build_dir(job, build)
        tried: list[str] = []
        errors: list[str] = []
        all_missing = True
        with self._slots:
            for url in self.urls(job, build):
                tried.append(redact(url))
                try:
                    got = download(self.session, url, dest, self.opts)
                except FetchFailed as exc:
                    errors.append(str(exc))
                    all_missing = all_missing and exc.missing
                    log.debug("%s: %s", self.name, exc)
                    continue
                entry = CacheEntry(file=str(got.path.relative_to(self.cache.dir)), source=self.name,
                                   url=redact(url), sha256=got.sha256, size=got.size, kind=got.kind,
                                   build_timestamp_ms=ts_ms, etag=got.etag, last_modified=got.last_modified)
                self.cache.put(job, build, entry)
                return BuildFile(job, build, got.path, self.name, redact(url), got.sha256)
        exc_type = Missing if all_missing else Failed
        raise exc_type(f"no artifact at {len(tried)} URLs", urls=tried, errors=errors)

    def cached(self, job: str, build: int, info: BuildInfo | None) -> BuildFile | None:
        """The build's file from an earlier run of this source, if still valid (see pal.sources.cache)."""
        entry = self.cache.lookup(job, build, _ms(info))
        if entry is None or entry.source != self.name:
            return None
        return BuildFile(job, build, Path(self.cache.dir / entry.file), self.name, entry.url, entry.sha256)

    def close(self) -> None:
        self.session.close()
        self.cache.save()


def _ms(info: BuildInfo | None) -> int | None:
    return int(info.timestamp.timestamp() * 1000) if info and info.timestamp else None
