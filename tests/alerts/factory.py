"""Analysed series made by hand: groups given as break indices, everything else computed.

Group averages and stdevs come from the values; changes from
``pal.analysis.mdl_detector.changes_from_groups``, the dashboard metrics from
``pal.analysis.compliance.compliance`` and the alertable changes from the analysis' own
``pal.analysis.filters.alertable_changes`` (with a detector that calls the given breaks), so
every number an alert shows can be checked by hand and comes from the code path that runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dataclasses import replace

from pal.analysis.compliance import compliance, week_runs
from pal.analysis.detector import Detection, as_values, levels_from_changes, labels_from_changes, verdict_of
from pal.analysis.filters import alertable_changes
from pal.analysis.mdl_detector import changes_from_groups
from pal.model import METRICS, SeriesKey, SeriesResult, TrendGroup, coerce_samples, topo_arch_of
from pal.spec import AlertFilters, AlertsSpec, JobSpec, OutputsSpec, SourceSpec, Spec, TestSet, Windows

ICX = "csit-vpp-perf-mrr-daily-master-2n-icx"
ALT = "csit-vpp-perf-mrr-daily-master-3n-alt"
SUITE = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr"
T0 = np.datetime64("2022-01-01T03:00:00", "ns")
DAY = np.timedelta64(86400, "s")


def tid(name: str, suite: str = SUITE) -> str:
    return f"{suite}.{name}"


def make_result(values, breaks=(), *, job: str = ICX, name: str = "64b-2t1c-ethip4-ip4base-mrr",
                suite: str = SUITE, metric: str = "mrr", first_build: int = 100, test_set: str = "mrr-daily",
                nic: str = "25ge2p1xxv710", frame_size: str = "64B", t0: np.datetime64 = T0) -> SeriesResult:
    """A series whose groups start at 0 and at each index in ``breaks`` (NaN = missing run)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    direction = METRICS[metric][1]
    builds = np.arange(first_build, first_build + n, dtype=np.int64)
    times = (t0 + np.arange(n) * DAY).astype("datetime64[ns]")
    bounds = [0, *breaks, n]
    groups: list[TrendGroup] = []
    trend = np.full(n, np.nan)
    for a, b in zip(bounds, bounds[1:]):
        idx = [i for i in range(a, b) if math.isfinite(values[i])]
        seg = values[idx]
        avg, sd = float(seg.mean()), float(seg.std())
        label = "normal"
        if groups:
            label = "progression" if (avg - groups[-1].avg) * direction > 0 else "regression"
        groups.append(TrendGroup(idx[0], idx[-1] + 1, avg, sd, len(idx), label))
        trend[idx] = avg
    changes = [replace(c, first_bad_build=int(builds[c.index]),
                       last_good_build=int(builds[max(i for i in range(c.index) if math.isfinite(values[i]))]))
               for c in changes_from_groups(groups)]
    comp = compliance(trend, times, changes, Windows(), False, direction, groups)
    last_valid = int(np.flatnonzero(np.isfinite(values))[-1])
    verdict = ("missing" if not math.isfinite(values[-1])
               else groups[-1].label if groups[-1].start == last_valid else "normal")
    key = SeriesKey(job, tid(name, suite), metric)
    attrs = {"topo_arch": topo_arch_of(job), "nic": nic, "frame_size": frame_size, "cores": "1C",
             "test_type": "MRR", "test_name": name}
    result = SeriesResult(key=key, builds=builds, times=times, values=values, stdevs=np.full(n, np.nan), trend=trend,
                        groups=groups, changes=changes, compliance=comp, verdict=verdict, direction=direction,
                        detector="mdl", test_set=test_set, attrs=attrs)
    return decide([result], make_spec(test_set=test_set))[0]


class GivenBreaks:
    """A detector that calls the changes a hand-made result was given (masking cannot move them)."""

    name = "mdl"
    uses_trials = False
    params: dict = {}

    def __init__(self, result: SeriesResult):
        self.result = result

    def detect(self, series, direction: int = 1) -> Detection:
        values = as_values(series)
        changes = self.result.changes
        groups, trend = levels_from_changes(values, changes)
        return Detection("mdl", labels_from_changes(values, changes), trend, list(changes), {},
                         verdict_of(values, changes), {}, groups)


def decide(results: list[SeriesResult], spec: Spec) -> list[SeriesResult]:
    """The results with ``alertable`` decided by the analysis under the spec's test set filters."""
    sets = {ts.name: ts for ts in spec.test_sets}
    out = []
    for r in results:
        ts = sets.get(r.test_set) or TestSet(r.test_set)
        f = ts.alert_filters
        alertable = alertable_changes(GivenBreaks(r), r.values, r.direction, r.builds, min_change_pct=f.min_change_pct,
                                      confirm_runs=f.confirm_runs, window_runs=week_runs(ts.windows, False),
                                      changes=r.changes)
        out.append(replace(r, alertable=alertable))
    return out


def version_of(build: int) -> str:
    """The VPP version of a build: one new commit per build (``git describe`` with its own hash)."""
    return f"22.02-rc0~{build}-g{build * 7919 % 16**9:09x}~b{build + 700}"


def builds_for(results: list[SeriesResult], failed: dict[tuple[str, int], int] | None = None) -> pd.DataFrame:
    """One row per (job, build): version ``22.02-rc0~<build>-g<job letter>``, testbed by parity."""
    seen: dict[tuple[str, int], np.datetime64] = {}
    for r in results:
        for b, t in zip(r.builds, r.times):
            seen[(r.key.job, int(b))] = t
    rows = []
    for (job, b), t in sorted(seen.items()):
        topo = topo_arch_of(job)
        rows.append({"job": job, "build": b, "build_time": pd.Timestamp(t, tz="UTC"),
                     "start_time": pd.Timestamp(t, tz="UTC") - pd.Timedelta(hours=5), "dut": "vpp",
                     "dut_version": version_of(b), "testbed": f"{topo}-tb{b % 2 + 1}",
                     "passed": 40 - (failed or {}).get((job, b), 0), "failed": (failed or {}).get((job, b), 0),
                     "duration_s": 5 * 3600.0 + 61 * 60 + 29.0, "source_file": "", "sha256": ""})
    return pd.DataFrame(rows)


def samples_for(results: list[SeriesResult], messages: dict[tuple[str, int], str] | None = None) -> pd.DataFrame:
    """The samples table behind ``results``: NaN values are FAIL rows with a message."""
    rows = []
    for r in results:
        for b, t, v in zip(r.builds, r.times, r.values):
            failed = not math.isfinite(v)
            rows.append({
                "job": r.key.job, "build": int(b), "build_time": pd.Timestamp(t, tz="UTC"),
                "topo_arch": r.attrs["topo_arch"], "testbed": f"{r.attrs['topo_arch']}-tb{int(b) % 2 + 1}",
                "dut": "vpp", "dut_version": version_of(int(b)),
                "test_id": r.key.test_id, "test_name": r.attrs["test_name"], "metric": r.key.metric,
                "value": v, "status": "FAIL" if failed else "PASS",
                "message": (messages or {}).get((r.attrs["test_name"], int(b)), "Test failed") if failed else "",
                "nic": r.attrs["nic"], "frame_size": r.attrs["frame_size"], "cores": r.attrs["cores"],
            })
    return coerce_samples(pd.DataFrame(rows))


def make_spec(jobs=(ICX, ALT), *, fail_on: str = "new-regression", confirm_runs: int = 1, min_change_pct: float = 0.0,
              exports=("csv", "parquet"), build_url: str | None = "{jenkins}/job/{job}/{build}",
              test_set: str = "mrr-daily") -> Spec:
    return Spec(
        name="alerts-test",
        jobs=[JobSpec(j) for j in jobs],
        sources=[SourceSpec("jenkins", "jenkins", url="https://jenkins.fd.io/", artifacts=["{jenkins}/{job}/{build}"])],
        test_sets=[TestSet(test_set, alert_filters=AlertFilters(min_change_pct, confirm_runs))],
        outputs=OutputsSpec(title="CSIT trending", build_url=build_url, exports=list(exports)),
        alerts=AlertsSpec(fail_on=fail_on),
    )


def flat(level: float, n: int, wiggle: float = 0.0) -> list[float]:
    """``n`` runs alternating level - wiggle, level + wiggle (average ``level``, stdev ``wiggle`` for even n)."""
    return [level + (wiggle if i % 2 else -wiggle) for i in range(n)]
