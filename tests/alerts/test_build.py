"""build_alerts: which changes are alerted, their evidence, ids, acks, new vs ongoing, recovery, groups."""

from __future__ import annotations

import hashlib
import math

import pytest

from pal.alerts import alert_id, build_alerts, group_alerts
from pal.alerts.model import ACTIVE, ALL_TESTBEDS, NEW, ONE_TESTBED, ONGOING, RECOVERED
from pal.model import SeriesKey
from tests.alerts.factory import ALT, ICX, builds_for, decide, flat, make_result, make_spec, samples_for, tid, version_of
from tests.alerts.scenario import L2_SUITE, by_name, run_results

ACKED_KEY = SeriesKey(ICX, f"{L2_SUITE}.64b-4t2c-avf-eth-l2bdbasemaclrn-mrr", "mrr")


def _run(results, spec=None, previous=None, acks=None):
    spec = spec or make_spec()
    results = decide(results, spec)
    return build_alerts(results, builds_for(results), samples_for(results), spec, previous, acks)


def test_alert_id_is_the_documented_sha1():
    key = SeriesKey(ICX, tid("64b-2t1c-ethip4-ip4base-mrr"), "mrr")
    text = f"{ICX}|{key.test_id}|mrr|120|regression"
    assert alert_id(key, 120, "regression") == hashlib.sha1(text.encode()).hexdigest()[:12]
    assert alert_id(key, 120, "progression") != alert_id(key, 120, "regression")


def test_run1_alerts_and_evidence():
    alerts = _run(run_results())
    reg = by_name(alerts, "64b-2t1c-ethip4-ip4base-mrr")
    assert len(reg) == 1
    a = reg[0]
    assert (a.kind, a.state, a.status, a.fresh, a.acked) == ("regression", ACTIVE, NEW, True, False)
    assert a.id == alert_id(a.key, 120, "regression")
    ev = a.evidence
    assert ev.before_avg == pytest.approx(30e6) and ev.before_stdev == pytest.approx(0.1e6)
    assert ev.after_avg == 27e6 and ev.runs == 1
    assert ev.change_pct == pytest.approx(-10.0)
    assert ev.long_term_change_pct == pytest.approx(-10.0)
    assert (ev.last_good_build, ev.first_bad_build) == (119, 120)
    assert ev.first_bad_url == f"https://jenkins.fd.io/job/{ICX}/120"
    assert ev.last_good_url == f"https://jenkins.fd.io/job/{ICX}/119"
    assert (ev.dut_version_before, ev.dut_version_after) == (version_of(119), version_of(120))
    assert (ev.testbed_before, ev.testbed_after) == ("2n-icx-tb2", "2n-icx-tb1")
    assert ev.first_bad_time == "2022-01-21T03:00:00Z"
    assert a.test_name == "2t1c-ethip4-ip4base-mrr" and a.frame_size == "64B" and a.nic == "25ge2p1xxv710"
    # Series without any change (and failed-at-last ones) give no alert.
    assert not by_name(alerts, "64b-1c-ethip6-ip6base-mrr")


def test_recovered_dip_in_window_and_its_way_back_says_what_it_restores():
    alerts = _run(run_results())
    rec = by_name(alerts, "64b-2t1c-ethip4-ip4scale20k-mrr")
    assert [(a.kind, a.state, a.evidence.first_bad_build) for a in rec] == [
        ("regression", RECOVERED, 114), ("progression", ACTIVE, 117)]
    assert not rec[0].alerting and not rec[0].fails("any-regression")
    assert rec[1].restores_build == 114


def test_old_change_outside_window_is_not_alerted_on_first_run():
    # A regression 15 runs ago, still current: the dashboard shows it, the mail does not.
    r = make_result(flat(30e6, 20, 0.1e6) + flat(25e6, 16, 0.1e6), (20,))
    assert _run([r]) == []
    # ...but when the previous run had reported it, it stays (ongoing) until acked or recovered.
    prev = [{"id": alert_id(r.key, 120, "regression"), "job": ICX, "test_id": r.key.test_id, "metric": "mrr",
             "kind": "regression", "evidence": {"first_bad_build": 120}}]
    (a,) = _run([r], previous=prev)
    assert (a.status, a.state, a.fresh) == (ONGOING, ACTIVE, False)
    assert a.fails("any-regression") and not a.fails("new-regression")


def test_a_previous_alert_vouches_for_one_change_only():
    """Two regressions 2 runs apart, both old: the previous run reported the later one. Only that
    one stays (ongoing); the earlier one may not borrow its record by the MATCH_RUNS match (it did,
    and a rerun on the same data grew an alert)."""
    r = make_result(flat(30e6, 20, 0.1e6) + flat(27e6, 2, 0.1e6) + flat(24e6, 16, 0.1e6), (20, 22))
    assert [a.first_bad_build for a in r.changes] == [120, 122]
    later = alert_id(r.key, 122, "regression")
    prev = [{"id": later, "job": ICX, "test_id": r.key.test_id, "metric": "mrr", "kind": "regression",
             "evidence": {"first_bad_build": 122}}]
    alerts = _run([r], previous=prev)
    assert [(a.id, a.status) for a in alerts] == [(later, ONGOING)]
    # without its own id among the changes, the nearest change of the same kind continues it
    moved = [{**prev[0], "id": "0123456789ab", "evidence": {"first_bad_build": 123}}]
    assert [(a.evidence.first_bad_build, a.status, a.previous_id) for a in _run([r], previous=moved)] == \
        [(122, ONGOING, "0123456789ab")]


def test_late_change_inside_window_is_new_but_not_fresh():
    r = make_result(flat(30e6, 20, 0.1e6) + [26e6] * 4, (20,))  # detected only after 4 runs
    (a,) = _run([r])
    assert (a.status, a.fresh, a.evidence.runs) == (NEW, False, 4)
    assert a.fails("new-regression")


def test_new_then_ongoing_across_two_runs():
    first = _run(run_results())
    previous = [a.to_dict() for a in first]
    second = _run(run_results(extra=True), previous=previous)
    (a,) = by_name(second, "64b-2t1c-ethip4-ip4base-mrr")
    assert a.id == by_name(first, "64b-2t1c-ethip4-ip4base-mrr")[0].id
    assert (a.status, a.state, a.fresh, a.evidence.runs) == (ONGOING, ACTIVE, False, 2)
    alt, back = by_name(second, "64b-2t1c-ethip4-ip4base-mrr", job=ALT)
    assert (alt.status, alt.state) == (ONGOING, RECOVERED)
    assert (back.kind, back.status, back.restores_build, back.evidence.first_bad_build) == ("progression", NEW, 120, 121)
    (p,) = by_name(second, "1518b-2t1c-ethip4-ip4base-mrr")
    assert (p.status, p.kind) == (ONGOING, "progression")


def test_moved_boundary_is_still_the_same_change_and_keeps_its_ack():
    r1 = make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,))
    old = _run([r1])[0]
    # Later data moves the boundary one run earlier (build 119): a new id, matched to the old one.
    r2 = make_result(flat(30e6, 19, 0.1e6) + [27e6] * 3, (19,))
    (a,) = _run([r2], previous=[old.to_dict()], acks={old.id: "VPP-2051"})
    assert a.id != old.id and a.previous_id == old.id
    assert (a.status, a.acked, a.ack_reason) == (ONGOING, True, "VPP-2051")
    # A previous alert far from this change is another change.
    far = dict(old.to_dict(), id="0123456789ab", evidence={"first_bad_build": 105})
    (b,) = _run([r2], previous=[far])
    assert b.status == NEW and b.previous_id is None


def test_a_change_that_vanishes_for_a_run_is_ongoing_when_it_comes_back():
    """Day 1 alerts a regression at build 120; on day 2 the change is not alertable (filtered),
    so no alert continues it; on day 3 it is back: ongoing, not told again, with its ack."""
    from pal.alerts.build import remembered

    r = make_result(flat(30e6, 20, 0.1e6) + [27e6] * 3, (20,))
    (day1,) = _run([r])
    assert (day1.status, day1.evidence.first_bad_build) == (NEW, 120)
    window = {ICX: set(range(100, 124))}
    saved = remembered(None, [day1.to_dict()], window)
    assert [(d["id"], d["gone"]) for d in saved] == [(day1.id, False)]
    saved = remembered(saved, [], window)  # day 2: no alert of this series
    assert [(d["id"], d["gone"]) for d in saved] == [(day1.id, True)]
    (day3,) = _run([r], previous=saved, acks={day1.id: "VPP-2051"})
    assert (day3.id, day3.status, day3.acked) == (day1.id, ONGOING, True)
    # without the memory the same change would be new again
    assert _run([r], previous=[])[0].status == NEW
    # a gone alert continued by this run is saved once, as this run's alert
    assert [(d["id"], d["gone"]) for d in remembered(saved, [day3.to_dict()], window)] == [(day1.id, False)]
    # once its first bad build has left the window, it is forgotten
    assert remembered(saved, [], {ICX: set(range(121, 130))}) == []


def test_acks_mark_alert_and_it_never_fails():
    ack_id = alert_id(ACKED_KEY, 120, "regression")
    alerts = _run(run_results(), acks={ack_id: "known: NIC firmware, CSIT-1234"})
    (a,) = by_name(alerts, "64b-4t2c-avf-eth-l2bdbasemaclrn-mrr")
    assert a.id == ack_id and a.acked and a.ack_reason == "known: NIC firmware, CSIT-1234"
    assert not any(a.fails(p) for p in ("new-regression", "any-regression", "never"))
    assert a.ack_snippet.splitlines()[1] == f'{ack_id}: "reason, e.g. a ticket or change number"'
    assert a.ack_snippet.startswith(f"# {ICX} {ACKED_KEY.test_id} mrr: regression -12.5 % from build 120")


def test_confirm_runs_waits_for_the_second_run():
    spec = make_spec(confirm_runs=2)
    r1 = make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,))
    assert _run([r1], spec) == []
    r2 = make_result(flat(30e6, 20, 0.1e6) + [27e6, 27e6], (20,))
    (a,) = _run([r2], spec)
    assert (a.fresh, a.status, a.evidence.first_bad_build) == (True, NEW, 120)


def test_min_change_filters_small_changes():
    r = make_result(flat(30e6, 20, 0.1e6) + [29.4e6], (20,))  # -2 %
    assert _run([r], make_spec(min_change_pct=3.0)) == []
    assert len(_run([r], make_spec(min_change_pct=1.0))) == 1


def test_latency_rise_is_a_regression():
    r = make_result(flat(10.0, 20, 0.2) + [14.0], (20,), metric="latency_pdr50_d1", name="64b-2t1c-ethip4-ip4base-ndrpdr")
    (a,) = _run([r])
    assert a.kind == "regression" and a.unit == "us" and a.evidence.change_pct == pytest.approx(40.0)
    assert a.test_name == "2t1c-ethip4-ip4base-ndrpdr-latency_pdr50_d1"


def test_groups_per_job_and_build_with_scope():
    results = run_results()
    alerts = _run(results)
    groups = {(g.job, g.kind, g.first_bad_build): g for g in group_alerts(alerts, results)}
    icx = groups[(ICX, "regression", 120)]
    assert icx.tests == tuple(sorted([tid("64b-2t1c-ethip4-ip4base-mrr"), ACKED_KEY.test_id]))
    assert icx.scope == ALL_TESTBEDS and icx.seen_on == ("2n-icx", "3n-alt")
    assert icx.testbeds == ("2n-icx-tb1",) and icx.last_good_build == 119
    assert (icx.dut_version_before, icx.dut_version_after) == (version_of(119), version_of(120))
    assert groups[(ICX, "progression", 120)].scope == ONE_TESTBED
    assert groups[(ICX, "regression", 114)].scope == ONE_TESTBED  # the recovered dip, 2n-icx only
    by_id = {a.id: a.group for a in alerts}
    assert all(by_id[aid] == icx.id for aid in icx.alerts)


def test_change_on_one_topo_arch_only():
    a = make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,))
    b = make_result(flat(30e6, 21, 0.1e6), (), job=ALT)
    (g,) = group_alerts(_run([a, b]), [a, b])
    assert g.scope == ONE_TESTBED and g.seen_on == ("2n-icx",)


def test_missing_runs_never_alert_and_nan_safe():
    r = make_result(flat(30e6, 20, 0.1e6) + [math.nan, math.nan], ())
    assert _run([r]) == []


def test_suspect_range_and_bisect_request_ride_on_the_alert():
    """A code change (new VPP commit at the first bad build) gets a range and CSIT's bisect
    trigger; the same change on a testbed swap with the same version is infrastructure."""
    r = make_result(flat(30e6, 20, 0.1e6) + [27e6, 27e6], (20,))
    spec = make_spec()
    results = decide([r], spec)
    builds = builds_for(results)
    ver = {119: "22.02-rc0~500-g1111111aa~b850", 120: "22.02-rc0~508-g88a9c0e02~b851"}
    builds["dut_version"] = [ver.get(b, f"22.02-rc0~400-g0000000{b}~b1") for b in builds["build"]]
    (a,) = build_alerts(results, builds, samples_for(results), spec)
    assert (a.suspect.verdict, a.suspect.good, a.suspect.bad, a.suspect.commits) == ("code", "1111111aa", "88a9c0e02", 8)
    assert a.bisect.comment.startswith("bisecttest-2n-icx 1111111aa ")
    d = a.to_dict()
    assert d["suspect"]["verdict"] == "code" and d["bisect"]["comment"] == a.bisect.comment
    builds["dut_version"] = "22.02-rc0~508-g88a9c0e02~b851"
    builds["testbed"] = ["2n-icx-tb3" if b < 120 else "2n-icx-tb1" for b in builds["build"]]
    (a,) = build_alerts(results, builds, samples_for(results), spec)
    assert a.suspect.verdict == "infrastructure" and a.bisect is None
    assert "2n-icx-tb3 -> 2n-icx-tb1" in a.suspect.summary


def test_a_change_found_late_continues_an_alert_of_its_kind_up_to_late_match_runs_away():
    """A change the analysis found late (``Change.late``: recent because its evidence became
    strong in the window, its start older) is the change already told when a previous alert of
    the same series and kind starts within LATE_MATCH_RUNS = 16 runs: a small step placed again
    as more runs came. Any other change keeps the MATCH_RUNS = 3 rule."""
    from dataclasses import replace

    import numpy as np

    from pal.alerts.build import LATE_MATCH_RUNS, MATCH_RUNS, continued
    from pal.model import Change

    assert (MATCH_RUNS, LATE_MATCH_RUNS) == (3, 16)
    key = SeriesKey(ICX, tid("64b-2t1c-ethip4-ip4base-mrr"), "mrr")
    builds = np.arange(100, 200)
    prev = [{"id": "0123456789ab", "job": ICX, "test_id": key.test_id, "metric": "mrr", "kind": "regression",
             "evidence": {"first_bad_build": 140}}]
    late = Change(50, "regression", 30e6, 29.5e6, 40, 60, first_bad_build=150, recent=True, late=True)
    assert continued(key, builds, [late], prev) == {50: "0123456789ab"}  # 10 runs from build 140
    assert continued(key, builds, [replace(late, late=False)], prev) == {}
    assert continued(key, builds, [replace(late, index=57, first_bad_build=157)], prev) == {}  # 17 runs
    assert continued(key, builds, [replace(late, kind="progression")], prev) == {}
    # an alert continued by a change of its own within MATCH_RUNS is not lent to a late one
    near = Change(41, "regression", 30e6, 29.5e6, 5, 42, first_bad_build=141, recent=True)
    assert continued(key, builds, [near, late], prev) == {41: "0123456789ab"}
