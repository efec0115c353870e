"""Realistic SeriesResults, samples and builds tables made by hand (until analysis lands).

Groups are given as break indices; group averages, anomalies and their evidence follow from
the values, so every number a page shows can be recomputed in a test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pal.model import AlertView, Change, Compliance, SeriesKey, SeriesResult, TrendGroup, coerce_samples, topo_arch_of
from pal.spec import JobSpec, OutputsSpec, SourceSpec, Spec, TestSet

T0 = np.datetime64("2022-01-01T03:00:00", "ns")
DAY = np.timedelta64(86400, "s")


def times_for(n: int, start: np.datetime64 = T0) -> np.ndarray:
    return (start + np.arange(n) * DAY).astype("datetime64[ns]")


def make_result(
    values: list[float] | np.ndarray,
    breaks: tuple[int, ...] = (),
    *,
    job: str = "csit-vpp-perf-mrr-daily-master-2n-icx",
    test_id: str = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr",
    metric: str = "mrr",
    first_build: int = 100,
    stdevs: np.ndarray | None = None,
    attrs: dict | None = None,
    bands: dict | None = None,
    short_term_runs: int = 10,
) -> SeriesResult:
    """A result whose groups start at 0 and at each index in ``breaks`` (NaN values = missing runs)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    direction = -1 if metric.startswith("latency") else +1
    builds = np.arange(first_build, first_build + n, dtype=np.int64)
    bounds = [0, *breaks, n]
    groups, anomalies = [], []
    trend = np.full(n, np.nan)
    prev = None
    for a, b in zip(bounds, bounds[1:]):
        seg = values[a:b]
        ok = seg[np.isfinite(seg)]
        avg, sd = float(ok.mean()), float(ok.std())
        label = "normal"
        if prev is not None:
            label = "progression" if (avg - prev.avg) * direction > 0 else "regression"
            first = a + int(np.flatnonzero(np.isfinite(seg))[0])
            anomalies.append(Change(
                index=first, kind=label, first_bad_build=int(builds[first]), last_good_build=int(builds[prev.end - 1]),
                before=prev.avg, before_stdev=prev.stdev, after=avg, after_stdev=sd, reported_at=first,
                runs=len(ok), detector="mdl", evidence={"bits_saved": 12.5},
            ))
        g = TrendGroup(a, b, avg, sd, len(ok), label)
        groups.append(g)
        trend[a:b] = np.where(np.isfinite(seg), avg, np.nan)
        prev = g
    window = set(range(max(0, n - short_term_runs), n))
    regs = sum(1 for x in anomalies if x.kind == "regression" and x.index in window)
    progs = sum(1 for x in anomalies if x.kind == "progression" and x.index in window)
    last_ok = np.flatnonzero(np.isfinite(trend))
    t_last = trend[last_ok[-1]]
    past = trend[max(0, n - 1 - short_term_runs)]
    stc = (t_last - past) / past * 100 if math.isfinite(past) else math.nan
    lt = trend[: max(0, n - short_term_runs)]
    lt = lt[np.isfinite(lt)]
    best = (lt.max() if direction > 0 else lt.min()) if lt.size else math.nan  # best level of the reference
    ltc = (t_last - best) / best * 100 if lt.size else math.nan
    comp = Compliance(float(t_last), groups[-1].size, stc, ltc, regs, progs)
    key = SeriesKey(job, test_id, metric)
    base_attrs = {"topo_arch": topo_arch_of(job), "nic": "25ge2p1xxv710", "frame_size": "64B", "cores": "1C",
                  "test_type": "MRR" if metric == "mrr" else "NDRPDR"}
    base_attrs.update(attrs or {})
    verdict = "missing" if not math.isfinite(values[-1]) else groups[-1].label if groups[-1].start == n - 1 or (
        anomalies and anomalies[-1].index == n - 1) else "normal"
    return SeriesResult(
        key=key, builds=builds, times=times_for(n), values=values,
        stdevs=np.full(n, np.nan) if stdevs is None else np.asarray(stdevs, dtype=np.float64),
        trend=trend, groups=groups, changes=anomalies, compliance=comp, verdict=verdict,
        direction=direction, detector="mdl", test_set="mrr-daily", attrs=base_attrs, bands=bands or {},
    )


def samples_for(results: list[SeriesResult], messages: dict[tuple[str, int], str] | None = None) -> pd.DataFrame:
    """The samples table the results were analysed from: NaN values are FAIL rows with a message."""
    rows = []
    for r in results:
        for b, t, v, sd in zip(r.builds, r.times, r.values, r.stdevs):
            failed = not math.isfinite(v)
            rows.append({
                "job": r.key.job, "build": int(b), "build_time": pd.Timestamp(t, tz="UTC"),
                "topo_arch": r.attrs.get("topo_arch"), "testbed": f"tb-{int(b) % 2}", "dut": "vpp",
                "dut_version": f"22.02-rc0~{int(b)}-g88a9c0e02", "test_id": r.key.test_id,
                "test_name": r.key.test_id.rsplit(".", 1)[-1], "metric": r.key.metric, "value": v, "stdev": sd,
                "status": "FAIL" if failed else "PASS",
                "message": (messages or {}).get((r.key.test_id, int(b)), "Traffic generator timed out") if failed else "",
                "nic": r.attrs.get("nic"), "frame_size": r.attrs.get("frame_size"), "cores": r.attrs.get("cores"),
            })
    return coerce_samples(pd.DataFrame(rows))


def builds_for(results: list[SeriesResult]) -> pd.DataFrame:
    seen = {}
    for r in results:
        for b, t in zip(r.builds, r.times):
            seen[(r.key.job, int(b))] = t
    rows = [{"job": j, "build": b, "build_time": pd.Timestamp(t, tz="UTC"),
             "start_time": pd.Timestamp(t, tz="UTC") - pd.Timedelta(hours=5), "dut": "vpp",
             "dut_version": f"22.02-rc0~{b}-g88a9c0e02", "testbed": f"tb-{b % 2}", "passed": 40 - b % 3,
             "failed": b % 3, "duration_s": 5 * 3600.0 + b, "source_file": "", "sha256": ""}
            for (j, b), t in sorted(seen.items())]
    return pd.DataFrame(rows)


def make_spec(build_url: str | None = "{jenkins}/job/{job}/{build}") -> Spec:
    return Spec(
        name="test",
        jobs=[JobSpec("csit-vpp-perf-mrr-daily-master-2n-icx")],
        sources=[SourceSpec("jenkins", "jenkins", url="https://jenkins.example", artifacts=["{jenkins}/{job}/{build}"])],
        test_sets=[TestSet("mrr-daily")],
        outputs=OutputsSpec(title="CSIT trending", build_url=build_url),
    )


def make_alert(id: str, key: SeriesKey, kind: str, *, acked: bool = False, ack_reason: str | None = None,
               ack_snippet: str = "", change_pct: float = -10.0, first_bad_build: int = 100, state: str = "active",
               **suspect) -> AlertView:
    """An alert as the render stage receives it (``suspect``: the suspect_* and bisect_comment fields)."""
    return AlertView(id=id, key=key, kind=kind, state=state, status="new", acked=acked, ack_reason=ack_reason,
                     ack_snippet=ack_snippet, change_pct=change_pct, first_bad_build=first_bad_build, **suspect)
