"""The text of ``pal bisect request``: trigger first, then what it rests on."""

from __future__ import annotations

from pal.culprit.request import request_for_alert
from pal.culprit.show import request_text

ALERT = {"id": "abcdefabcdef", "kind": "regression", "metric": "mrr", "job": "csit-vpp-perf-mrr-daily-master-3n-icx",
         "test_id": "tests.vpp.perf.ip4.2n1l-10ge2p1x710-avf-ethip4-ip4base-mrr.64b-2t1c-avf-ethip4-ip4base-mrr",
         "evidence": {"dut_version_before": "22.02-rc0~507-g1111111aa~b1",
                      "dut_version_after": "22.02-rc0~508-g88a9c0e02~b2"}}


def test_one_commit_range_names_its_suspect():
    ar = request_for_alert(ALERT, url_templates={"vpp": "https://g/{good}..{bad}"})
    assert request_text(ar).splitlines() == [
        "bisecttest-3n-icx 1111111aa mrrANDnic_intel-x710ANDdrv_avfAND1cAND64bANDethip4-ip4base",
        "alert:   abcdefabcdef regression " + ALERT["test_id"] + " (mrr, job " + ALERT["job"] + ")",
        "range:   code: VPP 1111111aa..88a9c0e02, 1 commit",
        "log:     https://g/1111111aa..88a9c0e02",
        "suspect: 88a9c0e02, the only commit in the range (a bisect would only confirm it)",
        "post on: the change of commit 88a9c0e02 (the first bad build's)",
        "tags:    mrrANDnic_intel-x710ANDdrv_avfAND1cAND64bANDethip4-ip4base (from the test id)",
    ]


def test_dpdk_alert_has_no_request():
    alert = dict(ALERT, job="csit-dpdk-perf-mrr-weekly-master-2n-icx",
                 evidence={"dut_version_before": "21.11.0", "dut_version_after": "22.03.0"})
    ar = request_for_alert(alert)
    assert ar.request is None and ar.why_not == "CSIT bisects VPP only; this alert's DUT is dpdk"
    assert ar.suspect.summary == "code: DPDK v21.11..v22.03, commit count unknown (different tags)"
