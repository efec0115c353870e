"""A small, realistic site shared by the render tests (rendered once per session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pal.render import render_site
from pal.report import RunReport
from tests.render.factory import builds_for, make_alert, make_result, make_spec, samples_for

EVIL = "<script>alert(1)</script>"
NDR_JOB = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"
RANGE_URL = "https://git.example/vpp/log/?qt=range&q=88a9c0e02..5e5f2a3b1"
BISECT = "bisecttest-2n-icx 88a9c0e02 ndrpdrAND64bAND1cANDethip4-ip4base"
LATENCY_SNIPPET = ('# csit-vpp-perf-ndrpdr-weekly-master-2n-icx ... latency_pdr50_d1: regression +50.0 % from build 106\n'
                   'L-2: "reason, e.g. a ticket or change number"\n')


def site_inputs():
    """Three MRR series (one regression, one with a gap and a failure, one evil name), NDR, latency."""
    rng = np.random.default_rng(7)
    n = 40
    reg = np.r_[rng.normal(20e6, 1e5, 30), rng.normal(17e6, 1e5, 10)]
    gap = rng.normal(12e6, 5e4, n)
    gap[[12, 13, 25]] = np.nan
    prog = np.r_[rng.normal(8e6, 5e4, 35), rng.normal(9e6, 5e4, 5)]
    results = [
        make_result(reg, (30,), stdevs=np.full(n, 1e5), test_id="tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-"
                    "ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"),
        make_result(gap, test_id="tests.vpp.perf.l2.2n1l-25ge2p1xxv710-eth-l2bdbasemaclrn-mrr.64b-2t1c-eth-"
                    "l2bdbasemaclrn-mrr", attrs={"nic": "25ge2p1xxv710"}),
        make_result(prog, (35,), test_id=f"tests.vpp.perf.ip4.2n1l-10ge2p1x710-ethip4-ip4base-mrr.=1+{EVIL}",
                    attrs={"nic": "10ge2p1x710", "frame_size": "IMIX", "cores": "2C"}),
        make_result(rng.normal(15e6, 1e4, 10), job=NDR_JOB, metric="ndr", test_id="tests.vpp.perf.ip4.2n1l-"
                    "25ge2p1xxv710-ethip4-ip4base-ndrpdr.64b-2t1c-ethip4-ip4base-ndrpdr",
                    bands={"mm": np.full(10, 15e6), "tma": np.full(10, 15e6), "tma_lo": np.full(10, 14.9e6),
                           "tma_hi": np.full(10, 15.1e6)}),
        make_result([20.0] * 6 + [30.0] * 4, (6,), job=NDR_JOB, metric="latency_pdr50_d1", test_id="tests.vpp.perf."
                    "ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr.64b-2t1c-ethip4-ip4base-ndrpdr"),
    ]
    samples = samples_for(results, {(results[1].key.test_id, 125): f"=cmd|' /C calc'!A0 {EVIL}"})
    builds = builds_for(results)
    alerts = [
        make_alert("R-1", results[0].key, "regression", acked=True, ack_reason=f"known {EVIL}", change_pct=-15.0,
                   first_bad_build=130, suspect_verdict="infrastructure",
                   suspect_summary="infrastructure: same VPP 22.02-rc0~130, testbed tb-1 -> tb-0"),
        make_alert("L-2", results[4].key, "regression", change_pct=50.0, first_bad_build=106,
                   ack_snippet=LATENCY_SNIPPET, suspect_verdict="code",
                   suspect_summary=f"code: VPP 88a9c0e02..5e5f2a3b1, 12 commits {EVIL}", suspect_url=RANGE_URL,
                   bisect_comment=BISECT),
    ]
    return results, samples, builds, alerts


def render(out: Path, **kw):
    results, samples, builds, alerts = site_inputs()
    report = RunReport()
    report.add("download", "csit-vpp-perf-mrr-daily-master-2n-icx/99", "no source had it")
    index = render_site(out, results, samples, builds, report, make_spec(), alerts, **kw)
    return index, results, report


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("render")
    index, results, report = render(out)
    return index.parent, results, report


def long_inputs():
    """A dashboard with a long MRR table (60 rows), an NDR table and a latency table whose worst row
    is a +23.75 % rise (lower is better) from before the short-term window, and one open alert."""
    rng = np.random.default_rng(11)
    results = []
    for i in range(60):
        level = 5e6 + i * 1e5
        results.append(make_result(rng.normal(level, 1e3, 30), test_id=f"tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-"
                                   f"ethip4-ip4base-mrr.64b-2t1c-ethip4-case{i:02d}-mrr"))
    ndr_test = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr.64b-2t1c-ethip4-{}-ndrpdr"
    for i in range(8):
        results.append(make_result(rng.normal(9e6, 1e3, 30), job=NDR_JOB, metric="ndr",
                                   test_id=ndr_test.format(f"case{i}")))
    for name, after in (("flat0", 20.0), ("rise", 24.75), ("flat1", 20.0), ("small", 21.0)):
        results.append(make_result([20.0] * 20 + [after] * 20, (20,) if after != 20.0 else (), job=NDR_JOB,
                                   metric="latency_pdr50_d1", test_id=ndr_test.format(name)))
    alerts = [make_alert("L-9", results[-3].key, "regression", change_pct=23.75, first_bad_build=120,
                         ack_snippet=LATENCY_SNIPPET, suspect_verdict="code", suspect_summary="code: VPP a..b",
                         bisect_comment=BISECT)]
    return results, samples_for(results), builds_for(results), alerts


@pytest.fixture(scope="session")
def long_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("render-long")
    results, samples, builds, alerts = long_inputs()
    index = render_site(out, results, samples, builds, RunReport(), make_spec(), alerts)
    return index.parent, results
