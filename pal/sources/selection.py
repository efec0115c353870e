"""Which builds of a job to fetch: a pure function of the job spec and what the sources list.

Order of the rules: an explicit ``builds`` list wins over the range; else ``start``..``end``
(end resolved from an alias by the caller); builds that are running, aborted or not built are
skipped with their reason; builds older than ``period-days`` (by their known timestamp) are
dropped; then the newest ``max-builds`` are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pal.sources.base import SKIP_RESULTS, BuildInfo
from pal.spec import JobSpec


@dataclass
class Selection:
    """The chosen build numbers (ascending) and those left out, with why."""

    builds: list[int] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)  # reported: running / aborted / not built
    too_old: list[int] = field(default_factory=list)  # outside period-days (counted, not an error)
    over_max: list[int] = field(default_factory=list)  # beyond max-builds (counted)


def select_builds(job: JobSpec, listed: dict[int, BuildInfo], end: int | None, now: datetime) -> Selection:
    """Apply the job's build range, status, period and max-builds rules to ``listed``."""
    sel = Selection()
    if job.builds is not None:
        numbers = sorted(set(job.builds))
    else:
        top = end if end is not None else (max(listed) if listed else job.start - 1)
        numbers = sorted(n for n in listed if job.start <= n <= top)
    keep: list[int] = []
    for n in numbers:
        info = listed.get(n)
        if info is not None and info.known and info.result in SKIP_RESULTS:
            sel.skipped[n] = SKIP_RESULTS[info.result]
            continue
        if (job.period_days is not None and info is not None and info.timestamp is not None
                and info.timestamp < now - timedelta(days=job.period_days)):
            sel.too_old.append(n)
            continue
        keep.append(n)
    if job.max_builds is not None and len(keep) > job.max_builds:
        sel.over_max = keep[: len(keep) - job.max_builds]
        keep = keep[len(keep) - job.max_builds:]
    sel.builds = keep
    return sel


def merge_listings(listings: list[dict[int, BuildInfo]]) -> dict[int, BuildInfo]:
    """One view of a job's builds: the union, where a listing with status (Jenkins) wins."""
    merged: dict[int, BuildInfo] = {}
    for listing in listings:
        for n, info in listing.items():
            old = merged.get(n)
            if old is None or (info.known and not old.known):
                merged[n] = info
    return merged
