"""The plan of a demo history: builds, dates, testbeds, DUT versions and planted patterns.

Everything is drawn from seeded numpy generators, one stream per purpose and job, so the
same seed gives the same history and changing one job's size leaves the others alone.
Values are computed for a whole job at once (arrays of runs × tests) to keep per-test cost low.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

import numpy as np

from pal.demo.catalog import JobProfile, TestDef

END_DAY = date(2026, 11, 20)  # the last build's day: fixed, never "now"
MRR_TRIALS = 10
ALL_TESTBEDS_FEATURE = "eth-l2xcbase"  # the tests a DUT-version change slows on every job
ALL_TESTBEDS_CHANGE = -0.12
RENAMED_FEATURE = "ethip4udp-nat44ed-h1024-p63-s64512"


def rng_for(seed: int, *purpose: str) -> np.random.Generator:
    """An independent, reproducible stream for one purpose (e.g. ``("values", job)``)."""
    words = [zlib.crc32(p.encode()) for p in purpose]
    return np.random.default_rng([seed, *words])


@dataclass
class Planted:
    """A pattern planted on one test of a job (run indices count every build number)."""

    kind: str
    slot: int
    start: int  # run index of the first affected build
    change: float
    metrics: list[str]
    runs: list[int] = field(default_factory=list)  # failed/reverted: every affected run
    note: str = ""


@dataclass
class JobPlan:
    """One job's history before it is written: per run (build number) and per test."""

    profile: JobProfile
    tests: list[TestDef]
    builds: list[int]
    days: list[date]
    starts: list[datetime]  # build (top suite) start, UTC
    tg_ips: list[str]
    versions: list[str]
    missing: set[int]  # run indices without a directory
    corrupt: set[int]  # run indices whose archive gets truncated
    rename_from: int | None  # run index from which renamed tests carry their new names
    level: np.ndarray  # (runs, tests) throughput factor from planted patterns
    lat_level: np.ndarray  # (runs, tests) latency factor
    fail: np.ndarray  # (runs, tests) int8: -1 pass, else the failure message index
    planted: list[Planted]

    @property
    def readable(self) -> list[int]:
        return [i for i in range(len(self.builds)) if i not in self.missing and i not in self.corrupt]


def master_version(day: date) -> tuple[str, date]:
    """The VPP master version prefix on ``day`` and the day its rc0 counting started.

    VPP branches a release around the 20th of January, May and September; after that
    master counts commits towards the next release (YY.02, YY.06, YY.10).
    """
    y = day.year
    points = [(date(y - 1, 9, 20), f"{y % 100:02d}.02"), (date(y, 1, 20), f"{y % 100:02d}.06"),
              (date(y, 5, 20), f"{y % 100:02d}.10"), (date(y, 9, 20), f"{(y + 1) % 100:02d}.02")]
    since, rel = max((p for p in points if p[0] <= day), key=lambda p: p[0])
    return rel, since


#: on the last day a new VPP build lands at this UTC hour: jobs that start later test it, earlier
#: ones the day before's (the demo's last-run regressions: one on a new commit range, one not)
LATE_BUILD_HOUR = 4


def version_timeline(seed: int, first: date, last: date, forced: set[date]) -> dict[date, str]:
    """VPP build per day: a new one every 1-4 days and on every ``forced`` day; the last day
    keeps the day before's build (its new one lands late: ``late_version``)."""
    rng = rng_for(seed, "versions")
    out: dict[date, str] = {}
    commits: dict[str, int] = {}
    vpp_build = 4100
    day, current = first, ""
    next_change = first
    while day <= last:
        rel, since = master_version(day)
        if day < last and (day >= next_change or day in forced or not current.startswith(rel)):
            if rel not in commits:  # ~3.5 commits a day since the branch point
                commits[rel] = 40 + 7 * (day - since).days // 2 if day > since else 1
            commits[rel] += int(rng.integers(3, 25))
            vpp_build += int(rng.integers(4, 30))
            current = f"{rel}-rc0~{commits[rel]}-g{int(rng.integers(0, 16 ** 9)):09x}~b{vpp_build}"
            next_change = day + timedelta(days=int(rng.integers(1, 5)))
        out[day] = current
        day += timedelta(days=1)
    return out


def late_version(seed: int, version: str) -> str:
    """The build that lands on the last day at LATE_BUILD_HOUR: a few commits after ``version``."""
    rng = rng_for(seed, "late-version")
    head, _, rest = version.partition("~")
    count, _, tail = rest.partition("-g")
    build = tail.partition("~b")[2]
    n = int(rng.integers(3, 12))
    return f"{head}~{int(count) + n}-g{int(rng.integers(0, 16 ** 9)):09x}~b{int(build or 0) + 7}"


def run_days(profile: JobProfile, n: int) -> list[date]:
    step = profile.period_days
    return [END_DAY - timedelta(days=step * (n - 1 - i)) for i in range(n)]


def history_span(n_daily: int) -> tuple[date, date]:
    """(day of the all-testbeds step, day of the rename), shared by every job."""
    return END_DAY - timedelta(days=round(0.45 * n_daily)), END_DAY - timedelta(days=round(0.6 * n_daily))


def first_run_on_or_after(days: list[date], day: date) -> int | None:
    return next((i for i, d in enumerate(days) if d >= day), None)


def plan_job(seed: int, profile: JobProfile, tests: list[TestDef], n_runs: int, n_daily: int,
             with_corrupt: bool, versions: dict[date, str]) -> JobPlan:
    """Choose dates, testbeds, missing/corrupt builds and the planted patterns of one job."""
    rng = rng_for(seed, "plan", profile.name)
    n, t = n_runs, len(tests)
    days = run_days(profile, n)
    starts = [
        datetime(d.year, d.month, d.day, profile.start_hour, tzinfo=timezone.utc)
        + timedelta(seconds=int(rng.integers(0, 3000)))
        for d in days
    ]
    tg_ips: list[str] = []
    for _ in range(n):  # Jenkins takes a free testbed: rarely the same one twice in a row
        choices = [ip for ip in profile.tg_ips if not tg_ips or ip != tg_ips[-1]] or list(profile.tg_ips)
        tg_ips.append(choices[int(rng.integers(0, len(choices)))])
    step_day, rename_day = history_span(n_daily)
    step_run = first_run_on_or_after(days, step_day)
    rename_run = first_run_on_or_after(days, rename_day)

    level = np.ones((n, t))
    lat_level = np.ones((n, t))
    fail = np.full((n, t), -1, dtype=np.int8)
    planted: list[Planted] = []
    metrics = profile.metrics
    thr_metrics = [m for m in metrics if not m.startswith("latency")]
    lat_metrics = [m for m in metrics if m.startswith("latency")]

    by_feature = {tst.feature.slug for tst in tests}
    shared = {tst.slot for tst in tests if tst.feature.slug in (ALL_TESTBEDS_FEATURE, RENAMED_FEATURE)}
    free = [int(s) for s in rng.permutation([tst.slot for tst in tests if tst.slot not in shared])]

    def take() -> int | None:
        return free.pop(0) if free else None

    def at(frac: float) -> int:
        return min(n - 1, max(2, round(frac * (n - 1))))

    if step_run and ALL_TESTBEDS_FEATURE in by_feature:
        for tst in tests:
            if tst.feature.slug == ALL_TESTBEDS_FEATURE:
                level[step_run:, tst.slot] *= 1 + ALL_TESTBEDS_CHANGE
                planted.append(Planted("all-testbeds", tst.slot, step_run, ALL_TESTBEDS_CHANGE, thr_metrics,
                                       note=f"VPP {versions[days[step_run]]} on every testbed from {step_day}"))
    if rename_run and RENAMED_FEATURE in by_feature:
        for tst in tests:
            if tst.feature.slug == RENAMED_FEATURE:
                planted.append(Planted("renamed", tst.slot, rename_run, 0.0, metrics,
                                       note=f"suite renamed on {rename_day}"))

    def step(kind: str, frac: float, lo: float, hi: float, sign: int, ms: list[str], lat: bool = False) -> None:
        slot = take()
        if slot is None:
            return
        start = at(frac)
        change = sign * float(rng.uniform(lo, hi))
        (lat_level if lat else level)[start:, slot] *= 1 + change
        planted.append(Planted(kind, slot, start, change, ms))

    if profile.test_type == "MRR":
        step("progression", 0.3, 0.10, 0.30, +1, thr_metrics)
        step("regression", 0.6, 0.10, 0.30, -1, thr_metrics)
        step("small", 0.42, 0.02, 0.04, -1, thr_metrics)
        slot = take()
        if slot is not None:  # one low run, then back
            r = at(0.75)
            change = -float(rng.uniform(0.15, 0.30))
            level[r, slot] *= 1 + change
            planted.append(Planted("reverted", slot, r, change, thr_metrics, runs=[r]))
        slot = take()
        if slot is not None:  # a fresh regression on the very last run: a new commit range when the
            change = -float(rng.uniform(0.15, 0.25))  # job runs after the late build, else a testbed swap
            level[n - 1, slot] *= 1 + change
            code = days[-1] == END_DAY and profile.start_hour >= LATE_BUILD_HOUR
            planted.append(Planted("regression", slot, n - 1, change, thr_metrics,
                                   note="last run, " + ("code: a new VPP build" if code
                                                        else "infrastructure: same VPP build, another testbed")))
    else:
        step("progression", 0.3, 0.10, 0.25, +1, thr_metrics)
        step("regression", 0.6, 0.10, 0.25, -1, thr_metrics)
        step("regression", 0.45, 0.20, 0.35, +1, lat_metrics, lat=True)

    slot = take()
    if slot is not None:  # fails now and then
        runs = sorted({at(0.2), at(0.5)})
        for r in runs:
            fail[r, slot] = int(rng.integers(0, 4))
        planted.append(Planted("failed", slot, runs[0], 0.0, metrics, runs=runs, note="intermittent"))
    slot = take()
    if slot is not None and n >= 6:  # failing in the last two runs
        runs = [n - 2, n - 1]
        fail[runs, slot] = int(rng.integers(0, 4))
        planted.append(Planted("failed", slot, n - 2, 0.0, metrics, runs=runs, note="failing now"))

    protected = {0, 1, n - 3, n - 2, n - 1}
    for p in planted:
        protected.update({p.start - 1, p.start, p.start + 1, *p.runs})
    for r in (step_run, rename_run):
        if r is not None:
            protected.update({r - 1, r, r + 1})
    candidates = [i for i in range(2, n - 3) if i not in protected]
    n_missing = max(1, round(n / 50))
    missing = {int(i) for i in rng.choice(candidates, size=min(n_missing, len(candidates)), replace=False)}
    corrupt: set[int] = set()
    late = [i for i in candidates if i not in missing and i >= 0.8 * n]
    if with_corrupt and late:
        corrupt = {int(rng.choice(late))}
    return JobPlan(
        profile=profile, tests=tests, builds=[profile.first_build + i for i in range(n)], days=days,
        starts=starts, tg_ips=tg_ips, versions=_versions_of(seed, profile, days, versions), missing=missing,
        corrupt=corrupt, rename_from=rename_run, level=level, lat_level=lat_level, fail=fail,
        planted=planted,
    )


def _versions_of(seed: int, profile: JobProfile, days: list[date], versions: dict[date, str]) -> list[str]:
    """The VPP build each run tested: a job starting after the last day's late build tests it."""
    out = [versions[d] for d in days]
    if days and days[-1] == END_DAY and profile.start_hour >= LATE_BUILD_HOUR:
        out[-1] = late_version(seed, versions[END_DAY])
    return out


def quiet_planted_noise(plan: JobPlan) -> np.ndarray:
    """Per-test relative noise, lowered on planted tests so their truth is unambiguous."""
    noise = np.array([tst.noise for tst in plan.tests])
    caps = {"small": 0.004, "regression": 0.015, "progression": 0.015, "reverted": 0.015, "all-testbeds": 0.02}
    for p in plan.planted:
        if p.kind in caps:
            noise[p.slot] = min(noise[p.slot], caps[p.kind])
    return noise


@dataclass
class JobValues:
    """The measured numbers of every (run, test); NaN where the test failed."""

    trials: np.ndarray | None  # (runs, tests, MRR_TRIALS) for MRR
    ndr: np.ndarray | None  # (runs, tests) for NDRPDR
    pdr: np.ndarray | None
    lat_d1: np.ndarray | None  # avg latency at 50 % PDR, µs
    lat_d2: np.ndarray | None


def job_values(seed: int, plan: JobPlan) -> JobValues:
    """Stationary noise around the planted levels; small per-testbed offsets."""
    rng = rng_for(seed, "values", plan.profile.name)
    n, t = plan.level.shape
    base = np.array([tst.base for tst in plan.tests])
    noise = quiet_planted_noise(plan)
    tb_offset = {ip: 1.0 + 0.002 * ((k % 3) - 1) for k, ip in enumerate(plan.profile.tg_ips)}
    tb = np.array([tb_offset[ip] for ip in plan.tg_ips])[:, None]
    failed = plan.fail >= 0
    if plan.profile.test_type == "MRR":
        run = base * plan.level * tb * (1 + rng.standard_normal((n, t)) * noise)
        trials = run[:, :, None] * (1 + rng.standard_normal((n, t, MRR_TRIALS)) * (0.6 * noise)[None, :, None])
        trials[failed] = np.nan
        return JobValues(trials=trials, ndr=None, pdr=None, lat_d1=None, lat_d2=None)
    pdr = base * plan.level * tb * (1 + rng.standard_normal((n, t)) * noise * 0.5)
    ratio = rng.uniform(0.86, 0.97, size=t)
    ndr = pdr * ratio * (1 + rng.standard_normal((n, t)) * 0.003)
    lat = np.array([tst.latency for tst in plan.tests])
    d2_ratio = rng.uniform(0.95, 1.08, size=t)
    lat_d1 = lat * plan.lat_level * (1 + rng.standard_normal((n, t)) * 0.03)
    lat_d2 = lat * d2_ratio * plan.lat_level * (1 + rng.standard_normal((n, t)) * 0.03)
    for arr in (pdr, ndr, lat_d1, lat_d2):
        arr[failed] = np.nan
    return JobValues(trials=None, ndr=ndr, pdr=pdr, lat_d1=lat_d1, lat_d2=lat_d2)
