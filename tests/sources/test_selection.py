"""Build selection rules, as a pure function."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pal.sources.base import BuildInfo
from pal.sources.selection import merge_listings, select_builds
from pal.spec import JobSpec

NOW = datetime(2024, 6, 30, tzinfo=timezone.utc)


def listing(n: int, **results) -> dict[int, BuildInfo]:
    """Builds 1..n, build k ran k days before NOW+1 day... i.e. build n is the newest (1 day old)."""
    out = {k: BuildInfo(k, "SUCCESS", NOW - timedelta(days=n - k + 1)) for k in range(1, n + 1)}
    for k, r in results.items():
        out[int(k[1:])] = BuildInfo(int(k[1:]), r, out[int(k[1:])].timestamp)
    return out


def test_range_status_period_and_max_builds_in_order():
    listed = listing(30, b28=None, b27="ABORTED", b26="FAILURE", b25="NOT_BUILT")
    job = JobSpec("j", start=5, period_days=20, max_builds=6)
    sel = select_builds(job, listed, end=29, now=NOW)
    # 5..29; skip 28 running, 27 aborted, 25 not built; older than 20 days: builds 1..10 (ages 30..21 days)
    assert sel.skipped == {25: "not built", 27: "aborted", 28: "still running"}
    assert sel.too_old == [5, 6, 7, 8, 9, 10]
    assert sel.builds == [21, 22, 23, 24, 26, 29]  # FAILURE builds are kept: they may hold results
    assert sel.over_max == list(range(11, 21))


def test_explicit_build_list_wins_over_range():
    sel = select_builds(JobSpec("j", builds=[9, 3, 3, 50], start=5, end=6), listing(10, b9=None), None, NOW)
    assert sel.builds == [3, 50] and sel.skipped == {9: "still running"}


def test_end_none_means_newest_listed_and_empty_listing_selects_nothing():
    assert select_builds(JobSpec("j", start=8), listing(10), None, NOW).builds == [8, 9, 10]
    assert select_builds(JobSpec("j"), {}, None, NOW).builds == []


def test_merge_prefers_listings_with_status():
    local = {1: BuildInfo(1, known=False), 2: BuildInfo(2, known=False)}
    jenkins = {2: BuildInfo(2, None), 3: BuildInfo(3, "SUCCESS")}
    merged = merge_listings([local, jenkins])
    assert merged == {1: local[1], 2: jenkins[2], 3: jenkins[3]}
