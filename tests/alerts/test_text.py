"""Alert texts in CSIT's layout, pinned by golden files (tests/alerts/golden/).

Regenerate after an intended layout change with ``PAL_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

import pytest

from pal.alerts import alert_id, build_alerts, write_alert_outputs
from pal.alerts.text import LEGEND, mask_ipv4, normalise_message
from pal.report import RunReport
from pal.spec import AlertFilters, TestSet
from tests.alerts.factory import ALT, ICX, builds_for, decide, flat, make_result, make_spec, samples_for, version_of
from tests.alerts.scenario import IP6_SUITE, MESSAGES, run_results
from tests.alerts.test_build import ACKED_KEY

GOLDEN = Path(__file__).parent / "golden"
ACKS = {alert_id(ACKED_KEY, 120, "regression"): "known: NIC firmware, CSIT-1234"}


def _write(out: Path, extra: bool = False, previous=None):
    results = run_results(extra)
    builds = builds_for(results, {(ICX, 120): 3})
    samples = samples_for(results, MESSAGES)
    spec = make_spec()
    alerts = build_alerts(results, builds, samples, spec, previous, ACKS)
    paths = write_alert_outputs(out, alerts, results, builds, samples, spec, RunReport())
    return alerts, paths


def _check(path: Path, golden: str) -> None:
    target = GOLDEN / golden
    text = path.read_text(encoding="utf-8")
    if os.environ.get("PAL_UPDATE_GOLDEN"):
        target.write_text(text, encoding="utf-8")
    assert text == target.read_text(encoding="utf-8"), f"{path.name} differs from {target}"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    out1 = tmp_path_factory.mktemp("run1")
    alerts1, paths1 = _write(out1)
    out2 = tmp_path_factory.mktemp("run2")
    alerts2, paths2 = _write(out2, extra=True, previous=[a.to_dict() for a in alerts1])
    return paths1, paths2


@pytest.mark.parametrize("name,golden", [
    ("trending-regressions", "run1-trending-regressions.txt"),
    ("trending-progressions", "run1-trending-progressions.txt"),
    ("trending-failed-tests", "run1-trending-failed-tests.txt"),
    (f"regressions-{ICX}", "run1-regressions-2n-icx.txt"),
])
def test_run1_golden(two_runs, name, golden):
    _check(two_runs[0][name], golden)


@pytest.mark.parametrize("name,golden", [
    ("trending-regressions", "run2-trending-regressions.txt"),
    ("trending-progressions", "run2-trending-progressions.txt"),
])
def test_run2_golden(two_runs, name, golden):
    _check(two_runs[1][name], golden)


def test_per_job_files_hold_only_new_changes(two_runs):
    run1, run2 = two_runs
    icx = run1[f"regressions-{ICX}"].read_text()
    assert icx.startswith(LEGEND + "\n\n")
    assert "2t1c-ethip4-ip4base-mrr" in icx and "l2bdbasemaclrn" not in icx  # acked: not mailed
    assert run1[f"progressions-{ALT}"].read_bytes() == b""
    # Run 2: the only new change is ALT's way back (a progression); every other file is empty.
    per_job = {n: p for n, p in run2.items() if n.startswith(("regressions-", "progressions-"))}
    assert len(per_job) == 4
    assert all(p.read_bytes() == b"" for n, p in per_job.items() if n != f"progressions-{ALT}")
    back = per_job[f"progressions-{ALT}"].read_text()
    assert "2t1c-ethip4-ip4base-mrr" in back and "1518B" not in back


def test_stale_per_job_file_is_removed(tmp_path):
    stale = tmp_path / "alerts" / "regressions-csit-vpp-perf-mrr-daily-master-2n-old.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("old\n")
    _write(tmp_path)
    assert not stale.exists()


def test_no_regressions_line_for_quiet_job(two_runs):
    text = two_runs[0]["trending-progressions"].read_text()
    block = text.split(f"{ALT}/120, VPP version: {version_of(120)}\n", 1)[1]
    assert block.splitlines()[0] == "No progressions"


def test_mask_ipv4():
    assert mask_ipv4("Setup of node TG host 10.30.51.45, port 22 done.") == "Setup of node TG host x.x.x.x, port 22 done."
    assert mask_ipv4("ssh 192.168.0.1:22 and 10.0.0.255") == "ssh x.x.x.x:22 and x.x.x.x"
    # Versions and numbers with fewer or more parts are not addresses.
    assert mask_ipv4("VPP 22.02.1 build 1.2.3.4.5") == "VPP 22.02.1 build 1.2.3.4.5"


def test_normalise_groups_alike_messages():
    a = normalise_message("Traffic generator on 10.30.51.45 timed out after 120 s")
    b = normalise_message("Traffic generator on 10.30.51.46 timed out after  95 s")
    assert a == b == "Traffic generator on x.x.x.x timed out after # s"
    assert normalise_message("mac 3c:fd:fe:aa:bb:01 at 0x7f00dead") == "mac <mac> at <hex>"
    assert normalise_message("Setup of node DUT1 failed") != a


def test_failed_tests_text_masks_every_address(two_runs):
    text = two_runs[0]["trending-failed-tests"].read_text()
    assert "10.30.51" not in text
    assert "[1] 2 tests: Traffic generator on x.x.x.x timed out after 120 s" in text


def _shared_job_run(out: Path, site_url: str | None = "https://jenkins.fd.io/job/pal-pa/lastSuccessfulBuild/artifact/site"):
    """Two test sets share the ICX job: "ip4" (an MRR regression, a latency regression and a
    test that fails in the last build) and "l2" (nothing wrong), plus an unrelated L2 regression
    on ALT: a different test, so not "every testbed"."""
    ndr_suite = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr"
    l2_suite = "tests.vpp.perf.l2.2n1l-25ge2p1xxv710-eth-l2xcbase-mrr"
    results = [
        make_result(flat(30e6, 20, 0.1e6) + [27e6, 27e6], (20,), test_set="ip4"),
        make_result(flat(10.0, 20, 0.2) + [14.0, 14.0], (20,), metric="latency_pdr50_d1", test_set="ip4",
                    name="64b-2t1c-ethip4-ip4base-ndrpdr", suite=ndr_suite),
        make_result(flat(20e6, 21, 0.1e6) + [math.nan], (), test_set="ip4", name="64b-1c-ethip6-ip6base-mrr",
                    suite=IP6_SUITE),
        make_result(flat(12e6, 22, 0.1e6), (), test_set="l2", name="64b-2t1c-eth-l2xcbase-mrr", suite=l2_suite),
        make_result(flat(12e6, 20, 0.1e6) + [10e6, 10e6], (20,), job=ALT, test_set="l2",
                    name="64b-2t1c-eth-l2xcbase-mrr", suite=l2_suite, nic="100ge2p1cx6"),
    ]
    spec = make_spec()
    spec = replace(spec, test_sets=[TestSet("ip4", alert_filters=AlertFilters(0.0, 1)),
                                    TestSet("l2", alert_filters=AlertFilters(0.0, 1))],
                   outputs=replace(spec.outputs, site_url=site_url))
    results = decide(results, spec)
    builds = builds_for(results, {(ICX, 121): 1})
    samples = samples_for(results, {("64b-1c-ethip6-ip6base-mrr", 121): "Traffic generator on 10.30.51.45 timed out"})
    alerts = build_alerts(results, builds, samples, spec)
    return alerts, write_alert_outputs(out, alerts, results, builds, samples, spec, RunReport())


@pytest.mark.parametrize("name,golden", [
    ("trending-regressions", "shared-trending-regressions.txt"),
    ("trending-failed-tests", "shared-trending-failed-tests.txt"),
])
def test_two_test_sets_sharing_a_job_and_latency_golden(tmp_path, name, golden):
    _check(_shared_job_run(tmp_path)[1][name], golden)


def test_two_test_sets_sharing_a_job_count_their_own_tests(tmp_path):
    text = _shared_job_run(tmp_path)[1]["trending-failed-tests"].read_text()
    heads = [line for line in text.splitlines() if "tests passed" in line or "test passed" in line]
    # ip4 holds 3 tests (1 failed), l2 on ICX 1 test, l2 on ALT 1 test: never "1 tests", never a
    # header that says a test failed above "No failed tests"
    assert [h.split(", duration")[0] for h in heads] == [
        "ip4, 1 test failed, 2 tests passed", "l2, 0 tests failed, 1 test passed", "l2, 0 tests failed, 1 test passed"]
    assert "1 tests" not in text


def test_latency_rows_are_in_their_own_unit_with_details_and_a_link(tmp_path):
    alerts, paths = _shared_job_run(tmp_path)
    text = paths["trending-regressions"].read_text()
    assert "Trend[us]:" in text
    lat = next(line for line in text.splitlines() if line.startswith("2t1c-ethip4-ip4base-ndrpdr-latency_pdr50_d1"))
    assert lat.split()[-3:] == ["14.0", "2", "40.0"]  # µs with one decimal, +40 %
    mrr = next(line for line in text.splitlines() if line.startswith("2t1c-ethip4-ip4base-mrr "))
    assert mrr.split()[-3] == "27.00"
    key = next(a.key for a in alerts if a.key.metric == "mrr" and a.key.job == ICX)
    assert f"    graph: https://jenkins.fd.io/job/pal-pa/lastSuccessfulBuild/artifact/site/s/{key.slug()}.html" in text
    # two different tests on two testbeds: no "every testbed" claim
    assert "every testbed" not in text


def test_every_testbed_only_for_the_same_test_and_not_once_acked(tmp_path):
    """The same test regressing on ICX and ALT at the same build is "every testbed"; once the
    ALT one is acknowledged it is not, and equal versions are printed as such."""
    same = [make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,)),
            make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,), job=ALT, nic="10ge2p1x710")]
    spec = make_spec()
    builds = builds_for(same)
    builds["dut_version"] = "22.02-rc0~508-g88a9c0e02~b851"
    alerts = build_alerts(same, builds, samples_for(same), spec)
    text = write_alert_outputs(tmp_path / "a", alerts, same, builds, None, spec, RunReport())["trending-regressions"]
    body = text.read_text()
    assert "The same tests changed on every testbed" in body
    assert "same version 22.02-rc0~508-g88a9c0e02~b851" in body and "-> 22.02" not in body
    alt = next(a for a in alerts if a.key.job == ALT)
    acked = build_alerts(same, builds, samples_for(same), spec, None, {alt.id: "known"})
    body = write_alert_outputs(tmp_path / "b", acked, same, builds, None, spec, RunReport())["trending-regressions"]
    assert "every testbed" not in body.read_text()


def test_cps_ndrpdr_rows_are_in_mcps(tmp_path):
    """An NDR series of a CPS test has unit cps (the samples' unit), not the metric's default pps."""
    r = make_result(flat(3e6, 20, 0.02e6) + [2.4e6, 2.4e6], (20,), metric="ndr", name="64b-2t1c-ethip4udp-cps-ndrpdr")
    r = replace(r, attrs=dict(r.attrs, unit="cps"))
    spec = make_spec()
    alerts = build_alerts([r], builds_for([r]), None, spec)
    assert [a.unit for a in alerts] == ["cps"]
    text = write_alert_outputs(tmp_path, alerts, [r], builds_for([r]), None, spec, RunReport())["trending-regressions"]
    lines = text.read_text().splitlines()
    row = lines[lines.index("Trend[Mcps]:") + 1]
    assert row.split()[-3:] == ["2.40", "2", "-20.0"]
