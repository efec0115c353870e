"""The statistics page of a job: tests passed/failed and duration per build (builds table)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pal.render import svg
from pal.render.graphs import epoch_seconds


@dataclass(frozen=True)
class BuildRow:
    build: int
    time: str
    version: str
    testbed: str
    passed: int | None
    failed: int | None
    duration: str  # H:MM:SS


def _opt(v: object) -> object | None:
    return None if v is None or pd.isna(v) else v


def duration_text(seconds: float | None) -> str:
    if seconds is None or not np.isfinite(seconds):
        return ""
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def job_builds(builds: pd.DataFrame, job: str) -> pd.DataFrame:
    if builds is None or builds.empty:
        return pd.DataFrame(columns=["job", "build"])
    return builds[builds["job"] == job].sort_values("build", kind="stable")


def build_rows(df: pd.DataFrame) -> list[BuildRow]:
    """Newest build first, as a reader scans the table."""
    rows = []
    for rec in df.to_dict("records")[::-1]:
        t = _opt(rec.get("build_time"))
        passed, failed = _opt(rec.get("passed")), _opt(rec.get("failed"))
        rows.append(
            BuildRow(
                build=int(rec["build"]),
                time="" if t is None else pd.Timestamp(t).strftime("%Y-%m-%d %H:%M"),
                version=str(_opt(rec.get("dut_version")) or ""),
                testbed=str(_opt(rec.get("testbed")) or ""),
                passed=None if passed is None else int(passed),
                failed=None if failed is None else int(failed),
                duration=duration_text(_opt(rec.get("duration_s"))),  # type: ignore[arg-type]
            )
        )
    return rows


def stats_charts(df: pd.DataFrame, job: str) -> tuple[svg.Chart, svg.Chart]:
    """Tests per build (passed, failed) and duration per build [h]."""
    if df.empty or "build_time" not in df.columns:
        return (svg.Chart(f"{job}: tests per build", "Tests [#]"), svg.Chart(f"{job}: duration", "Duration [h]"))
    xs = epoch_seconds(pd.to_datetime(df["build_time"], utc=True).dt.tz_localize(None).to_numpy())
    passed = pd.to_numeric(df.get("passed"), errors="coerce").to_numpy(dtype=np.float64)
    failed = pd.to_numeric(df.get("failed"), errors="coerce").to_numpy(dtype=np.float64)
    dur = pd.to_numeric(df.get("duration_s"), errors="coerce").to_numpy(dtype=np.float64) / 3600.0
    tests = svg.Chart(
        f"{job}: tests per build",
        "Tests [#]",
        [svg.Line(xs, passed, svg.GREEN), svg.Dots(xs, passed, svg.GREEN),
         svg.Line(xs, failed, svg.RED), svg.Dots(xs, failed, svg.RED)],
        [("passed", svg.GREEN), ("failed", svg.RED)],
    )
    duration = svg.Chart(
        f"{job}: duration", "Duration [h]",
        [svg.Line(xs, dur, svg.PALETTE[0]), svg.Dots(xs, dur, svg.PALETTE[0])],
        [("duration", svg.PALETTE[0])],
    )
    return tests, duration
