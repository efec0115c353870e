"""CSV at CSIT scale: the exports' CSV writer on the whole series table, and the site's per-job
downloads, against pandas.

    python -m benchmarks.bench_exports                      # 4 jobs x 1,500 tests x 176 builds (1.05 M rows)
    python -m benchmarks.bench_exports --tests 300          # smaller
    python -m benchmarks.bench_exports --export out/exports   # a real run's exports (samples-parquet/, groups.parquet)

Times are CPU seconds of this process (user + system). References, measured in the same run
on the same data: ``DataFrame.to_csv`` of the neutralised
frame (what ``csv_bytes`` did before) and the per-job download written cell by cell with
``csv.writer``. Both outputs are checked byte for byte against their reference. Then the
downloads a day later: the window slid by one build, each job's file made from the day
before's (``job_csv_file``: its unchanged rows taken), against the same files made from
scratch (``job_csv``), the texts equal.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pal.alerts.export import _csv_bytes_pandas as pandas_csv  # the old path: the reference
from pal.alerts.export import csv_bytes, series_frame, write_csv
from pal.model import Change, SeriesKey, SeriesResult, TrendGroup
from pal.render.buildinfo import BuildIndex
from pal.render.downloads import job_csv, job_csv_file, measured
from tests.render.test_downloads import cell_by_cell  # the cell-by-cell reference

JOBS = ["csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-2n-spr",
        "csit-vpp-perf-mrr-daily-master-3n-alt", "csit-vpp-perf-mrr-daily-master-3n-icx"]


def synthetic(tests: int, builds: int, seed: int = 1) -> tuple[list[SeriesResult], pd.DataFrame]:
    """MRR series as a daily job has them: 3-decimal pps values, a level shift in 1 of 10, 2 % missing."""
    rng = np.random.default_rng(seed)
    results, rows = [], []
    t0 = np.datetime64("2026-01-01T04:00:00", "ns")
    for j, job in enumerate(JOBS):
        times = t0 + (np.arange(builds) * 86400 + rng.integers(0, 3600, builds)).astype("timedelta64[s]")
        for b in range(builds):
            rows.append({"job": job, "build": 100 + b, "testbed": f"10.30.51.{46 + b % 2}",
                         "dut_version": f"26.10-rc0~{b // 3}-g{b:09x}~b{4000 + b // 3}"})
        for t in range(tests):
            level = rng.uniform(1e6, 4e7)
            values = np.round(rng.normal(level, level * 0.005, builds), 3)
            cut = builds - int(rng.integers(3, 30)) if rng.random() < 0.1 else builds
            values[cut:] *= 0.9
            values[rng.random(builds) < 0.02] = np.nan
            groups = [TrendGroup(0, cut, float(np.nanmean(values[:cut])), 0.0, cut, "normal")]
            anomalies = []
            if cut < builds:
                groups.append(TrendGroup(cut, builds, float(np.nanmean(values[cut:])), 0.0, builds - cut, "regression"))
                anomalies.append(Change(cut, "regression", 1.0, 0.9, builds - cut, cut, first_bad_build=100 + cut,
                                        last_good_build=99 + cut))
            trend = np.empty(builds)
            for g in groups:
                trend[g.start:g.end] = g.avg
            trend[np.isnan(values)] = np.nan
            name = f"{[64, 1518, 9000][t % 3]}b-{1 + t % 4}t{1 + t % 4}c-test{t}-mrr"
            results.append(SeriesResult(
                key=SeriesKey(job, f"tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.{name}", "mrr"),
                builds=np.arange(100, 100 + builds, dtype=np.int64), times=times.copy(), values=values,
                stdevs=np.abs(rng.normal(level * 0.005, level * 0.001, builds)), trend=trend, groups=groups,
                changes=anomalies, compliance=None, verdict="normal", direction=1, detector="mdl",
                test_set="mrr", attrs={"topo_arch": job[-6:], "nic": "25ge2p1xxv710", "frame_size": "64B",
                                       "cores": f"{1 + t % 4}C"}))
    return results, pd.DataFrame(rows)


def from_export(exports: Path) -> tuple[list[SeriesResult], pd.DataFrame]:
    """Series rebuilt from a run's exports directory: the build files (``samples-parquet/``) and
    ``groups.parquet`` (values, trend, groups, changes, facts)."""
    df = pd.read_parquet(exports / "samples-parquet").sort_values(["job", "test_id", "metric", "build"], kind="stable")
    by_key: dict[tuple, list] = {}
    for row in pd.read_parquet(exports / "groups.parquet").itertuples(index=False):
        by_key.setdefault((row.job, row.test_id, row.metric), []).append(row)
    results = []
    for (job, test_id, metric), g in df.groupby(["job", "test_id", "metric"], sort=False):
        builds, values = g["build"].to_numpy(), g["value"].to_numpy()
        trend, groups, changes = np.full(len(g), np.nan), [], []
        for row in by_key.get((job, test_id, metric), []):
            lo = int(np.searchsorted(builds, row.first_build))
            hi = int(np.searchsorted(builds, row.last_build, side="right"))
            groups.append(TrendGroup(lo, hi, float(row.trend), float(row.stdev), int(row.valid), row.label))
            trend[lo:hi] = np.where(np.isfinite(values[lo:hi]), row.trend, np.nan)
            if isinstance(row.anomaly, str):
                i = int(np.searchsorted(builds, row.anomaly_build))
                changes.append(Change(i, row.anomaly, 0.0, 0.0, 1, i))
        first = g.iloc[0]
        results.append(SeriesResult(
            key=SeriesKey(job, test_id, metric), builds=builds,
            times=g["build_time"].dt.tz_localize(None).to_numpy(), values=values,
            stdevs=g["stdev"].to_numpy(), trend=trend, groups=groups, changes=changes,
            compliance=None, verdict="normal", direction=1, detector="mdl", test_set=first["test_set"],
            attrs={k: first[k] for k in ("topo_arch", "nic", "frame_size", "cores")}))
    builds = df.drop_duplicates(["job", "build"])[["job", "build", "testbed", "dut_version"]]
    return results, builds.astype({"job": object, "testbed": object, "dut_version": object})


def timed(fn, *args):
    """Result and CPU seconds of the process (user + system: on a shared machine wall time is noise)."""
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=1500, help="tests per job (4 jobs)")
    ap.add_argument("--builds", type=int, default=176)
    ap.add_argument("--export", type=Path, help="rebuild the series from this exports directory instead")
    args = ap.parse_args()
    results, builds = from_export(args.export) if args.export else synthetic(args.tests, args.builds)
    frame, t_frame = timed(series_frame, results, builds)
    print(f"{len(results)} series, {len(frame):,} rows; series_frame {t_frame:.2f} s")
    csv_bytes(frame.iloc[:1000])  # first-use costs of Arrow compute out of the figures
    ref, t_ref = timed(pandas_csv, frame)
    new, t_new = timed(csv_bytes, frame)
    assert new == ref, "csv_bytes differs from pandas to_csv"
    with tempfile.TemporaryDirectory() as tmp:
        _, t_stream = timed(write_csv, frame, Path(tmp) / "series.csv")
        assert (Path(tmp) / "series.csv").read_bytes() == ref
    print(f"series.csv {len(new) / 1e6:.0f} MB: pandas to_csv {t_ref:.2f} s, csv_bytes {t_new:.2f} s "
          f"({t_ref / t_new:.1f}x), write_csv to a file {t_stream:.2f} s")
    facts = BuildIndex(builds, None)
    jobs = sorted({r.key.job for r in results})
    # downloads keep 12 significant digits (pal.render.downloads.measured); the reference writes
    # repr() of each value, so both get values already at that precision
    results = [dataclasses.replace(r, values=measured(np.asarray(r.values, dtype=np.float64))) for r in results]
    refs, t_ref = timed(lambda: [cell_by_cell(j, results, facts) for j in jobs])
    news, t_new = timed(lambda: [job_csv(j, results, facts) for j in jobs])
    assert news == refs, "job_csv differs from the cell-by-cell download"
    print(f"downloads, {len(jobs)} jobs: cell by cell {t_ref:.2f} s, job_csv {t_new:.2f} s ({t_ref / t_new:.1f}x)")
    yesterday, today = day_pair(results)
    last = [job_csv_file(j, yesterday, facts) for j in jobs]
    full, t_full = timed(lambda: [job_csv(j, today, facts) for j in jobs])
    slid, t_slid = timed(lambda: [job_csv_file(j, today, facts, f) for j, f in zip(jobs, last)])
    assert [f.text for f in slid] == full, "a slid download differs from the one made from scratch"
    print(f"downloads a day later (the window slid by one build), {len(jobs)} jobs: from scratch {t_full:.2f} s, "
          f"from the day before's files {t_slid:.2f} s ({t_slid / t_full:.2f} of it)")


def day_pair(results: list[SeriesResult]) -> tuple[list[SeriesResult], list[SeriesResult]]:
    """Each series without its last run (the day before) and without its first (today), the
    series of a job sharing their builds and times arrays as a run's do (``series.shared_axis``)."""
    days: tuple[list[SeriesResult], list[SeriesResult]] = ([], [])
    axes: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    for r in results:
        n = len(r.builds)
        for day, cut in enumerate((slice(0, n - 1), slice(1, n))):
            builds, times = axes.setdefault((r.key.job, day), (r.builds[cut].copy(), r.times[cut].copy()))
            days[day].append(dataclasses.replace(r, builds=builds, times=times, values=r.values[cut],
                                                 stdevs=r.stdevs[cut], trend=r.trend[cut]))
    return days


if __name__ == "__main__":
    main()
