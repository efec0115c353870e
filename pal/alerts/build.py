"""From analysed series to alerts: what is alerted, new or ongoing, acked, recovered, grouped.

Rules (docs/alerts.md has the long form):

* What can be alerted is decided by the analysis, once (``SeriesResult.alertable``, from
  ``pal.analysis.filters.alertable_changes``: masking of transient runs, k-run confirmation,
  minimum magnitude, levels re-measured, state active / recovered / superseded, recency in the
  short-term window). This module does not filter or detect again and imports no analysis code.
* Which alertable changes become alerts of this run (a change can appear late or vanish,
  seed csit-trend-analysis-patterns): the recent ones (fresh or inside the short-term window)
  and those the previous run reported. Old changes nobody was told about are the dashboard's
  business, not the mail's.
* New or ongoing: ongoing when the previous run's ``alerts.json`` has the same id, or the same
  series and kind with a first bad build within ``MATCH_RUNS`` runs of this one (later data
  can move a group boundary by a run or two; the id follows the build, the match does not), or
  within ``LATE_MATCH_RUNS`` for a change found late (``Change.late``).
  Each previous alert continues one change only (its own id first, then the nearest), so a
  rerun on the same data gives the same alerts.
* Remembered: an alert that leaves the alerts (its change filtered out for a while, as later
  runs move levels) is kept in the saved state, marked ``gone``, while its first bad build is
  in the analysed window (``remembered``). When the change comes back it continues that alert
  (ongoing), so nobody is told the same change twice. In the daily replay of the honest set
  this halved the alerts sent twice (docs/accuracy.md).
* Acked: the id, or the id the previous run gave the same change, is in acks.yaml.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Container, Mapping

import numpy as np
import pandas as pd

from pal.alerts.links import Links
from pal.alerts.model import (
    ACTIVE, ALL_TESTBEDS, NEW, ONE_TESTBED, ONGOING, SOME_TESTBEDS,
    Alert, AlertGroup, Evidence, alert_id, group_id,
)
from pal.model import METRICS, Change, SeriesKey, SeriesResult, topo_arch_of
from pal.spec import Spec

MATCH_RUNS = 3  # a previous alert of the same series and kind this many runs away is the same change
LATE_MATCH_RUNS = 16  # ... this many for a change found late (``Change.late``: its start is older than the window)
WINDOW_HOURS = 36.0  # changes on several topo-archs starting this close together are "at the same time"

__all__ = ["build_alerts", "continued", "group_alerts", "BuildFacts", "short_test_name", "MATCH_RUNS", "LATE_MATCH_RUNS"]


class BuildFacts:
    """DUT version and testbed per (job, build), from the builds table (samples as fallback)."""

    def __init__(self, builds: pd.DataFrame | None, samples: pd.DataFrame | None = None):
        self._facts: dict[tuple[str, int], dict[str, Any]] = {}
        for table in (samples, builds):  # builds last: it wins
            if table is None or table.empty or "build" not in table.columns:
                continue
            cols = [c for c in ("job", "build", "dut", "dut_version", "testbed", "passed", "failed",
                                "duration_s", "build_time") if c in table.columns]
            sub = table[cols].drop_duplicates(subset=["job", "build"], keep="last")
            for rec in sub.to_dict("records"):
                key = (str(rec["job"]), int(rec["build"]))
                self._facts.setdefault(key, {}).update({k: _clean(v) for k, v in rec.items()})

    def get(self, job: str, build: int | None, field: str) -> Any:
        if build is None:
            return None
        return self._facts.get((job, int(build)), {}).get(field)

    def has(self, job: str, build: int) -> bool:
        return (job, int(build)) in self._facts


def _clean(v: Any) -> Any:
    if v is None:
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        return v
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def short_test_name(test_id: str, metric: str) -> str:
    """The name in mails: the test's own name without its frame-size prefix, plus the metric
    when the name does not say it (``2t1c-ethip4-ip4base-ndrpdr-pdr``)."""
    tail = test_id.rsplit(".", 1)[-1]
    parts = tail.split("-", 1)
    if len(parts) == 2 and (parts[0].lower() == "imix" or (parts[0][:-1].isdigit() and parts[0][-1:].lower() == "b")):
        tail = parts[1]
    if metric not in ("mrr", "cps") and not tail.endswith(metric):
        tail = f"{tail}-{metric}"
    return tail


class _Previous:
    """The previous run's alerts, looked up by id and by (series, kind)."""

    def __init__(self, previous: list[dict] | None):
        self.by_id: dict[str, dict] = {}
        self.by_series: dict[tuple[str, str, str, str], list[dict]] = {}
        for d in previous or []:
            if not isinstance(d, dict) or "id" not in d:
                continue
            self.by_id[str(d["id"])] = d
            key = (str(d.get("job")), str(d.get("test_id")), str(d.get("metric")), str(d.get("kind")))
            self.by_series.setdefault(key, []).append(d)

    def assign(self, key: SeriesKey, builds: np.ndarray, changes: list[Change]) -> dict[int, str]:
        """{anomaly index: the previous alert it continues}. A change keeps its own id when the
        previous run had it; the other previous alerts of the same series and kind go to the
        nearest unmatched change within MATCH_RUNS runs, then to the nearest change found late
        (``Change.late``) within LATE_MATCH_RUNS: a small change that the analysis placed again as
        more runs came is the one already told. One previous alert vouches for one change."""
        out: dict[int, str] = {}
        taken: set[str] = set()
        for a in changes:
            aid = alert_id(key, _first_bad(a), a.kind)
            if aid in self.by_id:
                out[a.index] = aid
                taken.add(aid)
        k = key
        pos = {int(b): i for i, b in enumerate(builds)}
        for late_only, runs in ((False, MATCH_RUNS), (True, LATE_MATCH_RUNS)):
            pairs = []
            for a in changes:
                if a.index in out or (late_only and not a.late):
                    continue
                for d in self.by_series.get((k.job, k.test_id, k.metric, a.kind), []):
                    fb = (d.get("evidence") or {}).get("first_bad_build")
                    i = pos.get(int(fb)) if fb is not None else None
                    if i is not None and abs(i - a.index) <= runs and str(d["id"]) not in taken:
                        pairs.append((abs(i - a.index), str(d["id"]), a.index))
            for _, did, index in sorted(pairs):
                if did not in taken and index not in out:
                    out[index] = did
                    taken.add(did)
        return out


def continued(key: SeriesKey, builds: np.ndarray, changes: list[Change], previous: list[dict] | None) -> dict[int, str]:
    """{change index: id of the previous run's alert it continues} for one series (new when absent).

    The rule ``build_alerts`` applies; public so that the accuracy harness replays a daily job
    with the very same decision.
    """
    return _Previous(previous).assign(key, builds, changes)


def remembered(previous: list[dict] | None, alerts: list[dict], window: Mapping[str, Container[int]]) -> list[dict]:
    """What a run saves as the alerts the next run continues: this run's ``alerts`` (dicts), then
    the previous entries no alert of this run continues, marked ``"gone": True``, while their
    first bad build is one of their job's builds in ``window`` ({job: builds}); a change whose
    first bad build left the window can no longer be matched, so its entry goes.

    ``pal run`` and the accuracy harness's daily replay both save this, so that a change that
    vanishes for a few runs and comes back is ongoing in both.
    """
    out = [dict(a, gone=False) for a in alerts]
    continued_ids = {str(a["previous_id"]) for a in alerts if a.get("previous_id")}
    continued_ids |= {str(a["id"]) for a in alerts}
    for d in previous or []:
        if not isinstance(d, dict) or "id" not in d or str(d["id"]) in continued_ids:
            continue
        fb = (d.get("evidence") or {}).get("first_bad_build")
        if fb is not None and int(fb) in window.get(str(d.get("job")), ()):
            out.append(dict(d, gone=True))
            continued_ids.add(str(d["id"]))
    return out


def build_alerts(results: list[SeriesResult], builds: pd.DataFrame, samples: pd.DataFrame | None, spec: Spec,
                 previous: list[dict] | None = None, acks: dict[str, str] | None = None) -> list[Alert]:
    """The alerts of this run, sorted by (job, test id, metric, first bad build, kind).

    Args:
        results: the analysed series.
        builds: the builds table (``pal.model.BUILD_COLUMNS``): DUT versions and testbeds.
        samples: the samples table (fallback for per-build facts; may be None).
        spec: the spec (test sets' alert filters and windows, build link template).
        previous: the ``alerts`` list of the previous run's alerts.json, or None.
        acks: {alert id: reason} from acks.yaml (``load_acks``), or None.
    """
    facts = BuildFacts(builds, samples)
    links = Links.from_spec(spec)
    prev = _Previous(previous)
    acks = acks or {}
    out: list[Alert] = []
    for r in sorted(results, key=lambda r: (r.key.job, r.key.test_id, r.key.metric)):
        if not r.alertable:
            continue
        continues = prev.assign(r.key, r.builds, r.alertable)
        for c in r.alertable:
            prev_id = continues.get(c.index)
            if not (c.recent or prev_id is not None):
                continue
            aid = alert_id(r.key, _first_bad(c), c.kind)
            ack_key = aid if aid in acks else (prev_id if prev_id in acks else None)
            out.append(Alert(
                id=aid, key=r.key, kind=c.kind, state=c.state, status=ONGOING if prev_id else NEW,
                acked=ack_key is not None, ack_reason=acks.get(ack_key) if ack_key else None, fresh=c.fresh,
                test_set=r.test_set, topo_arch=str(r.attrs.get("topo_arch") or topo_arch_of(r.key.job)),
                test_name=short_test_name(r.key.test_id, r.key.metric), nic=str(r.attrs.get("nic") or ""),
                frame_size=str(r.attrs.get("frame_size") or ""),
                unit=str(r.attrs.get("unit") or METRICS.get(r.key.metric, ("", 1))[0]),
                evidence=_evidence(r, c, facts, links), testbeds=_testbeds(r, c, facts),
                previous_id=prev_id if prev_id != aid else None,
                previous_state=str(prev.by_id[prev_id].get("state") or ACTIVE) if prev_id else None,
            ))
    groups = group_alerts(out, results)
    member = {aid: g.id for g in groups for aid in g.alerts}
    templates = spec.outputs.commit_range_url
    return [replace(a, group=member[a.id], **_culprit(a, facts, templates)) for a in out]


def _culprit(a: Alert, facts: BuildFacts, templates: dict[str, str]) -> dict[str, Any]:
    """The suspect range of the change and, for a bisectable VPP code range, CSIT's bisect trigger."""
    from pal.culprit.request import request_for_alert

    d = a.to_dict()
    d["dut"] = facts.get(a.key.job, a.evidence.first_bad_build, "dut") or None
    req = request_for_alert(d, url_templates=templates)
    return {"suspect": req.suspect, "bisect": req.request}


def _iso(t: Any) -> str:
    ts = pd.Timestamp(t)
    if ts is pd.NaT:
        return ""
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def _first_bad(c: Change) -> int:
    return int(c.first_bad_build if c.first_bad_build is not None else c.index)


def _evidence(r: SeriesResult, a: Change, facts: BuildFacts, links: Links) -> Evidence:
    """The numbers of the change as the analysis measured them (levels between the kept levels)."""
    job = r.key.job
    c = r.compliance
    first_bad = _first_bad(a)
    return Evidence(
        before_avg=float(a.before), before_stdev=float(a.before_stdev), after_avg=float(a.after),
        after_stdev=float(a.after_stdev), change_pct=float(a.change) * 100.0, runs=int(a.runs),
        last_good_build=a.last_good_build, first_bad_build=first_bad, first_bad_time=_iso(r.times[a.index]),
        last_good_url=links.build(job, a.last_good_build), first_bad_url=links.build(job, first_bad),
        dut_version_before=facts.get(job, a.last_good_build, "dut_version"),
        dut_version_after=facts.get(job, first_bad, "dut_version"),
        testbed_before=facts.get(job, a.last_good_build, "testbed"), testbed_after=facts.get(job, first_bad, "testbed"),
        trend=float(c.trend), long_term_change_pct=float(c.long_term_change),
        short_term_change_pct=float(c.short_term_change),
        restores_build=a.evidence.get("restores_build"),
        reported_at_build=int(r.builds[a.reported_at]) if 0 <= a.reported_at < len(r.builds) else None,
    )


def _level_end(r: SeriesResult, a: Change) -> int:
    """The run after the new level: the next alertable change's first run, or the series' end."""
    later = [c.index for c in r.alertable if c.index > a.index]
    return min(later) if later else len(r.values)


def _testbeds(r: SeriesResult, a: Change, facts: BuildFacts) -> tuple[str, ...]:
    found = set()
    for i in range(a.index, _level_end(r, a)):
        if not math.isnan(float(r.values[i])):
            tb = facts.get(r.key.job, int(r.builds[i]), "testbed")
            if tb:
                found.add(str(tb))
    return tuple(sorted(found))


def _same_test(a: Alert) -> tuple[str, str, str]:
    """What makes two alerts on different topo-archs the same test: name, frame size, metric
    (the NIC differs from testbed to testbed)."""
    return (a.test_name, a.frame_size, a.key.metric)


def group_alerts(alerts: list[Alert], results: list[SeriesResult], window_hours: float = WINDOW_HOURS) -> list[AlertGroup]:
    """One group per (job, kind, first bad build), with where else the same tests changed.

    ``seen_on``: the topo-archs where an alerting (active, unacknowledged) change of the same
    kind, of one of the group's alerting tests, starts within ``window_hours``. Two unrelated
    tests changing on two testbeds are not "every testbed"; an acknowledged change counts no more.
    """
    topo_all = {str(r.attrs.get("topo_arch") or topo_arch_of(r.key.job)) for r in results}
    members: dict[tuple[str, str, int], list[Alert]] = {}
    for a in alerts:
        members.setdefault((a.key.job, a.kind, a.evidence.first_bad_build), []).append(a)
    stamp = {a.id: (pd.Timestamp(a.evidence.first_bad_time) if a.evidence.first_bad_time else None) for a in alerts}
    window = pd.Timedelta(hours=window_hours)
    alerting = [a for a in alerts if a.alerting]
    out = []
    for (job, kind, fbb), mem in sorted(members.items()):
        mem = sorted(mem, key=lambda m: m.id)
        topo = mem[0].topo_arch
        seen = {topo}
        for m in (m for m in mem if m.alerting and stamp[m.id] is not None):
            for other in alerting:
                t2 = stamp[other.id]
                if other.kind == kind and _same_test(other) == _same_test(m) and t2 is not None \
                        and abs(t2 - stamp[m.id]) <= window:
                    seen.add(other.topo_arch)
        scope = ALL_TESTBEDS if len(topo_all) >= 2 and seen >= topo_all else (ONE_TESTBED if seen == {topo} else SOME_TESTBEDS)
        lg = [m.evidence.last_good_build for m in mem if m.evidence.last_good_build is not None]
        first = min(mem, key=lambda m: (m.evidence.last_good_build is None, m.evidence.last_good_build or 0))
        out.append(AlertGroup(
            id=group_id(job, kind, fbb), job=job, topo_arch=topo, kind=kind, first_bad_build=fbb,
            last_good_build=min(lg) if lg else None, first_bad_url=mem[0].evidence.first_bad_url,
            last_good_url=first.evidence.last_good_url, dut_version_before=first.evidence.dut_version_before,
            dut_version_after=mem[0].evidence.dut_version_after, alerts=tuple(m.id for m in mem),
            tests=tuple(sorted({m.key.test_id for m in mem})),
            testbeds=tuple(sorted({tb for m in mem for tb in m.testbeds})), seen_on=tuple(sorted(seen)), scope=scope,
        ))
    return out
