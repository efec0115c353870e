"""The index's content: dashboard tables in CSIT's order, the failed-tests table, counts.

Pure functions from analysis results and the samples table to small dataclasses; the
template only lays them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pal.model import SeriesResult, topo_arch_of
from pal.report import RunReport
from pal.render.naming import TYPE_ORDER, build_label, scale_for, short_name, test_type_of, topo_of


@dataclass(frozen=True)
class DashRow:
    name: str
    slug: str
    nic: str
    frame_size: str
    cores: str
    trend: float  # display units, NaN if unknown
    runs: int
    short_term: float  # percent
    long_term: float  # percent
    regressions: int
    progressions: int
    direction: int = +1  # +1 higher is better (throughput), -1 lower is better (latency)
    threshold: float = 0.0  # percent: smaller changes are not coloured (the test set's min-change-pct)

    @property
    def css(self) -> str:
        return "reg" if self.regressions else ("prog" if self.progressions else "")

    @property
    def badness(self) -> float:
        """Long-term change signed so that worse is negative whatever the direction; NaN if unknown."""
        return self.long_term * self.direction

    @property
    def short_css(self) -> str:
        return change_css(self.short_term, self.direction, self.threshold)

    @property
    def long_css(self) -> str:
        return change_css(self.long_term, self.direction, self.threshold)


def change_css(pct: float, direction: int, threshold: float) -> str:
    """``worse`` / ``better`` for a change of ``pct`` % given the metric's direction, else ``""``.

    Only changes of at least ``threshold`` % (and non-zero at the 2 decimals shown) are coloured.
    """
    if not math.isfinite(pct) or round(pct, 2) == 0 or abs(pct) < threshold:
        return ""
    return "worse" if pct * direction < 0 else "better"


@dataclass
class DashTable:
    testbed: str
    test_type: str
    cores: str
    unit: str
    rows: list[DashRow] = field(default_factory=list)

    @property
    def title(self) -> str:
        return " ".join(p for p in (self.testbed, self.test_type, self.cores) if p)

    @property
    def anchor(self) -> str:
        return "t-" + "-".join(p for p in (self.testbed, self.test_type, self.cores) if p)


@dataclass(frozen=True)
class FailedRow:
    testbed: str
    name: str
    slug: str | None  # drill-down of one of the test's series, if analysed
    failures: int
    last_time: str
    last_version: str
    last_build_label: str
    job: str
    last_build: int
    message: str


@dataclass(frozen=True)
class Summary:
    tests: int
    series: int
    regressions: int
    progressions: int
    failed: int
    builds_missing: int


def row_sort_key(row: DashRow) -> tuple:
    """CSIT: regressions desc, progressions desc, then the worst long-term change first, name.

    CSIT sorts by the raw long-term change ascending, which puts a latency rise (lower is
    better) last; here the change is signed by the metric's direction first (unknown last).
    """
    bad = row.badness if math.isfinite(row.badness) else math.inf
    return (-row.regressions, -row.progressions, bad, row.name)


def dashboard_tables(results: list[SeriesResult], thresholds: dict[str, float] | None = None) -> list[DashTable]:
    """One table per testbed x test type x cores, each sorted CSIT's way (worst first).

    ``thresholds``: per test set, the smallest change in percent that is coloured (its alert
    filter's min-change-pct); 0 for test sets not named.
    """
    thresholds = thresholds or {}
    tables: dict[tuple[str, str, str], DashTable] = {}
    for r in results:
        ttype = test_type_of(r)
        cores = str(r.attrs.get("cores") or "")
        topo = topo_of(r)
        sc = scale_for(r)
        tab = tables.setdefault((topo, ttype, cores), DashTable(topo, ttype, cores, sc.unit))
        c = r.compliance
        nic = str(r.attrs.get("nic") or "")
        tab.rows.append(
            DashRow(
                name=short_name(r.key, nic),
                slug=r.key.slug(),
                nic=nic,
                frame_size=str(r.attrs.get("frame_size") or ""),
                cores=cores,
                trend=c.trend / sc.divisor if c.trend is not None else math.nan,
                runs=int(c.runs),
                short_term=c.short_term_change,
                long_term=c.long_term_change,
                regressions=int(c.regressions),
                progressions=int(c.progressions),
                direction=-1 if r.direction < 0 else +1,
                threshold=float(thresholds.get(r.test_set, 0.0)),
            )
        )
    order = {t: i for i, t in enumerate(TYPE_ORDER)}
    out = sorted(tables.values(), key=lambda t: (t.testbed, order.get(t.test_type, 99), t.test_type, t.cores))
    for t in out:
        t.rows.sort(key=row_sort_key)
    return out


def failed_tests(samples: pd.DataFrame, results: list[SeriesResult]) -> list[FailedRow]:
    """Tests that failed at least once: count of failed builds and the last failure's facts."""
    if samples is None or samples.empty or "status" not in samples.columns:
        return []
    fails = samples[samples["status"] == "FAIL"]
    if fails.empty:
        return []
    slugs: dict[tuple[str, str], str] = {}
    for r in sorted(results, key=lambda r: r.key.metric):
        slugs.setdefault((r.key.job, r.key.test_id), r.key.slug())
    fails = fails.sort_values(["job", "test_id", "build"], kind="stable")
    rows = []
    for (job, test_id), grp in fails.groupby(["job", "test_id"], sort=True):
        last = grp.iloc[-1]
        t = last.get("build_time")
        topo = str(last.get("topo_arch") or "") or topo_arch_of(str(job))
        nic = str(last.get("nic") or "") if pd.notna(last.get("nic")) else ""
        tail = str(test_id).rsplit(".", 1)[-1]
        rows.append(
            FailedRow(
                testbed=topo,
                name=f"{nic}-{tail}" if nic and not tail.startswith(nic) else tail,
                slug=slugs.get((str(job), str(test_id))),
                failures=int(grp["build"].nunique()),
                last_time="" if t is None or pd.isna(t) else pd.Timestamp(t).strftime("%Y-%m-%d %H:%M"),
                last_version="" if pd.isna(last.get("dut_version")) else str(last.get("dut_version")),
                last_build_label=build_label(str(job), int(last["build"])),
                job=str(job),
                last_build=int(last["build"]),
                message="" if pd.isna(last.get("message")) else str(last.get("message")),
            )
        )
    rows.sort(key=lambda f: (f.testbed, -f.failures, f.name))
    return rows


def missing_builds(report: RunReport) -> list:
    """Problems that cost us a build's data (download or parse), for the index."""
    return [p for p in report.problems if p.stage in ("download", "parse") and p.severity == "error"]


def summary(results: list[SeriesResult], failed: list[FailedRow], report: RunReport) -> Summary:
    return Summary(
        tests=len({(r.key.job, r.key.test_id) for r in results}),
        series=len(results),
        regressions=sum(1 for r in results if r.compliance.regressions > 0),
        progressions=sum(1 for r in results if r.compliance.progressions > 0),
        failed=len(failed),
        builds_missing=len(missing_builds(report)),
    )


@dataclass(frozen=True)
class WindowNote:
    """The compliance windows of one test set, as the index's legend states them."""

    test_set: str
    short_runs: int
    short_runs_single_testbed: int
    long_runs: int
    long_days: int
    run_days: float | None  # median days between runs of its series (None: fewer than 2 runs)

    @property
    def text(self) -> str:
        pace = ""
        if self.run_days is not None:
            pace = f" (about {_days(self.short_runs * self.run_days)} at a run every {_days(self.run_days)})"
        return (f"short-term window = the last {_plural(self.short_runs, 'run')}{pace}, "
                f"{_plural(self.short_runs_single_testbed, 'run')} on a testbed type with one testbed; "
                f"long-term reference = the best trend from {_plural(self.long_runs, 'run')} or "
                f"{_plural(self.long_days, 'day')} back (whichever is shorter) to the start of the short-term window")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _days(d: float) -> str:
    return _plural(max(1, round(d * 24)), "hour") if d < 1 else _plural(round(d), "day")


def window_notes(test_sets: list, results: list[SeriesResult]) -> list[WindowNote]:
    """One note per test set that has series on the site, in the spec's order."""
    spacing: dict[str, list[float]] = {}
    median_of: dict[bytes, float] = {}  # the series of a job mostly share their run times
    for r in results:
        t = np.asarray(r.times, dtype="datetime64[ns]")
        t = t[~np.isnat(t)]
        if len(t) >= 2:
            key = t.tobytes()
            days = median_of.get(key)
            if days is None:
                days = median_of[key] = float(np.median(np.diff(t).astype(np.int64))) / 86400e9
            spacing.setdefault(r.test_set, []).append(days)
    shown = {r.test_set for r in results}
    notes = []
    for ts in test_sets:
        if ts.name not in shown:
            continue
        w = ts.windows
        days = spacing.get(ts.name)
        notes.append(WindowNote(ts.name, w.short_term_runs, w.short_term_runs_single_testbed, w.long_term_runs,
                                w.long_term_days, float(np.median(days)) if days else None))
    return notes


#: the dashboard's columns: header, unit ("unit": the table's unit) and what the number is
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("Test Case", "", "NIC, frame size, threads and cores, and the test; latency rows end in the traffic "
                      "direction [d1] or [d2]."),
    ("Trend", "unit", "The level of the last trend group: the average of the runs since the last change."),
    ("Runs", "#", "Runs in the last trend group (since the last change)."),
    ("Short-Term Change", "%", "Trend now against the trend at the start of the short-term window."),
    ("Long-Term Change", "%", "Trend now against the best trend of the long-term reference (highest "
                              "throughput, lowest latency)."),
    ("Regressions", "#", "Changes to a worse level whose first run is in the short-term window."),
    ("Progressions", "#", "Changes to a better level whose first run is in the short-term window."),
)
