"""The CSIT bisect trigger: testbed type, earliest commit and the tag expression of one test."""

from __future__ import annotations

import pytest

from pal.culprit.trigger import bisect_request, parts_from_tags, parts_from_test_id, suite_tag_of

MRR_ID = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"
AVF_ID = "tests.vpp.perf.ip4.2n1l-10ge2p1x710-avf-ethip4-ip4base-mrr.64b-2t1c-avf-ethip4-ip4base-mrr"
NDR_ID = ("tests.vpp.perf.ip4.100ge2p1e810cq-af-xdp-ethip4-ip4base-adlalwlistbase-ndrpdr."
          "1518b-4c-af-xdp-ethip4-ip4base-adlalwlistbase-ndrpdr")


@pytest.mark.parametrize("test_id, expression", [
    (MRR_ID, "mrrANDnic_intel-xxv710ANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base"),
    (AVF_ID, "mrrANDnic_intel-x710ANDdrv_avfAND1cAND64bANDethip4-ip4base"),
    (NDR_ID, "ndrpdrANDnic_intel-e810cqANDdrv_af_xdpAND4cAND1518bANDethip4-ip4base-adlalwlistbase"),
    ("tests.vpp.perf.l2.2n1l-100ge2p1cx556a-rdma-eth-l2xcbase-mrr.imix-1t1c-rdma-eth-l2xcbase-mrr",
     "mrrANDnic_mellanox-cx556aANDdrv_rdma_coreAND1cANDimixANDeth-l2xcbase"),
])
def test_expression_from_test_id(test_id, expression):
    assert parts_from_test_id(test_id).expression() == expression


def test_request_from_test_id():
    r = bisect_request("2n-icx", "1111111aa", MRR_ID, latest="88a9c0e02")
    assert r.comment == ("bisecttest-2n-icx 1111111aa "
                         "mrrANDnic_intel-xxv710ANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base")
    assert (r.testbed_type, r.earliest, r.latest, r.tags_from, r.warnings) == (
        "2n-icx", "1111111aa", "88a9c0e02", "test id", ())
    gha = bisect_request("2n-icx", "1111111aa", MRR_ID, style="gha")
    assert gha.comment == ("gha-run csit-vpp-2n-icx bisecttest 1111111aa "
                           "mrrANDnic_intel-xxv710ANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base")
    with pytest.raises(ValueError):
        bisect_request("2n-icx", "1", MRR_ID, style="mail")


def test_request_from_tags_prefers_tags():
    # CSIT's Force Tags of the suite plus the test's own [Tags] (pal keeps them upper-cased)
    tags = ["2_NODE_SINGLE_LINK_TOPO", "PERFTEST", "HW_ENV", "MRR", "NIC_INTEL-XXV710", "ETH", "IP4FWD", "BASE",
            "IP4BASE", "DRV_AVF", "RXQ_SIZE_0", "TXQ_SIZE_0", "ETHIP4-IP4BASE", "64B", "1C", "2T1C"]
    parts = parts_from_tags(tags, MRR_ID)
    assert parts.expression() == "mrrANDnic_intel-xxv710ANDdrv_avfAND1cAND64bANDethip4-ip4base"
    r = bisect_request("3n-icx", "v22.02-rc2", MRR_ID, tags=tags)
    assert r.tags_from == "tags" and r.comment.endswith("drv_avfAND1cAND64bANDethip4-ip4base")


def test_tags_lacking_a_part_are_completed_from_the_id():
    r = bisect_request("2n-icx", "abc1234", MRR_ID, tags=["MRR", "64B", "1C"])
    assert r.tag_expression == "mrrANDnic_intel-xxv710ANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base"


def test_unknown_nic_is_a_warning_and_the_alert_nic_helps():
    tid = "tests.vpp.perf.ip4.2n1l-10ge2p1zz99-ethip4-ip4base-mrr.64b-1c-ethip4-ip4base-mrr"
    r = bisect_request("2n-zz", "abc1234", tid)
    assert r.tag_expression == "mrrANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base"
    assert len(r.warnings) == 1 and "no NIC" in r.warnings[0] and "default NIC" in r.warnings[0]
    short = "tests.vpp.perf.ip4.ethip4-ip4base-mrr.64b-1c-ethip4-ip4base-mrr"
    with_nic = bisect_request("2n-icx", "abc1234", short, nic="25ge2p1xxv710")
    assert with_nic.tag_expression == "mrrANDnic_intel-xxv710AND1cAND64bANDethip4-ip4base"
    assert "no driver" in with_nic.warnings[0]


def test_odd_testbed_type_is_a_warning():
    r = bisect_request("icx", "abc1234", MRR_ID)
    assert "does not look like" in r.warnings[0]


def test_suite_tag():
    assert suite_tag_of(MRR_ID) == "ethip4-ip4base"
    assert suite_tag_of("x") is None
