"""The index's content: dashboard tables in CSIT's order, the failed-tests table, counts.

Pure functions from analysis results and the samples table to small dataclasses; the
template only lays them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from pal.model import SeriesResult, topo_arch_of
from pal.report import RunReport
from pal.render.naming import TYPE_ORDER, build_label, scale_of, short_name, test_type_of, topo_of


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

    @property
    def css(self) -> str:
        return "reg" if self.regressions else ("prog" if self.progressions else "")


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
    """CSIT: regressions desc, progressions desc, long-term change asc (unknown last), name."""
    ltc = row.long_term if math.isfinite(row.long_term) else math.inf
    return (-row.regressions, -row.progressions, ltc, row.name)


def dashboard_tables(results: list[SeriesResult]) -> list[DashTable]:
    """One table per testbed x test type x cores, each sorted CSIT's way."""
    tables: dict[tuple[str, str, str], DashTable] = {}
    for r in results:
        ttype = test_type_of(r)
        cores = str(r.attrs.get("cores") or "")
        topo = topo_of(r)
        sc = scale_of(r.key.metric)
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
