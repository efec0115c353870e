"""Test ids and attributes as CSIT made them (CSIT-FORMATS.md §3)."""

from __future__ import annotations

import re

from pal.parse.identity import apply_rename_ignore, attrs_of, normalise_id, type_from_tags

LONG = "Tests.Vpp.Perf.Ip4.2N1L-25Ge2P1Xxv710-Ethip4-Ip4Base-Mrr.tc01-64B-1c-ethip4-ip4base-mrr"


def test_formats_doc_example():
    tid = normalise_id(LONG, ["1C", "2T1C", "64B", "MRR"])
    assert tid.value == "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"
    assert tid.problem is None


def test_without_ntnc_tag_only_lowercase_and_tc_prefix():
    assert normalise_id(LONG, ["64B"]).value == \
        "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-1c-ethip4-ip4base-mrr"


def test_tc_prefix_only_at_a_name_start():
    assert normalise_id("S.tc12-x-etc34-y", []).value == "s.x-etc34-y"


def test_only_first_cores_part_is_replaced():
    assert normalise_id("S.64B-1c-x-2c-y", ["2T1C"]).value == "s.64b-2t1c-x-2c-y"


def test_two_ntnc_tags_make_the_test_fail():
    tid = normalise_id(LONG, ["2T1C", "4T2C"])
    assert tid.problem == "ambiguous test id: 2 thread/core tags (2T1C, 4T2C)"
    assert tid.value.endswith("64b-1c-ethip4-ip4base-mrr")


def test_rename_then_ignore():
    rename = {"s.old-mrr": "s.new-mrr"}
    assert apply_rename_ignore("s.old-mrr", rename, []) == "s.new-mrr"
    assert apply_rename_ignore("s.other", rename, []) == "s.other"
    ignore = [re.compile(r"new-mrr$")]
    assert apply_rename_ignore("s.old-mrr", rename, ignore) is None  # ignore sees the renamed id
    assert apply_rename_ignore("s.new-ndrpdr", rename, ignore) == "s.new-ndrpdr"


def test_test_types():
    assert type_from_tags(["MRR", "64B"]) == "MRR"
    assert type_from_tags(["BMRR"]) == "BMRR"
    assert type_from_tags(["NDRPDR"]) == "NDRPDR"
    assert type_from_tags(["SOAK", "NDRPDR"]) == "SOAK"
    assert type_from_tags(["MRR", "TCP_CPS"]) == "CPS"
    assert type_from_tags(["udp_cps", "mrr"]) == "CPS"
    assert type_from_tags(["NDRPDR", "UDP_CPS"]) == "NDRPDR"
    assert type_from_tags(["DEVICETEST"]) is None


def test_attributes_from_tags_and_suite_name():
    a = attrs_of("64B-1c-avf-ethip4-ip4base-mrr", "2N1L-25Ge2P1Xxv710-Avf-Ethip4-Ip4Base-Mrr",
                 ["1C", "2T1C", "64B", "MRR", "DRV_AVF", "NIC_Intel-XXV710", "2_NODE_SINGLE_LINK_TOPO"])
    assert (a.test_type, a.frame_size, a.cores, a.threads_cores, a.nic, a.driver, a.topology) == \
        ("MRR", "64B", "1C", "2T1C", "25ge2p1xxv710", "avf", "2_NODE_SINGLE_LINK_TOPO")


def test_attribute_fallbacks():
    a = attrs_of("tc03-IMIX-2c-eth-l2xcbase-ndrpdr", "Eth-L2Xcbase-Ndrpdr", ["NDRPDR", "NIC_Intel-X710", "DRV_VFIO_PCI"])
    assert (a.frame_size, a.nic, a.driver, a.cores) == ("IMIX", "NIC_Intel-X710", "vfio-pci", None)
    assert attrs_of("x", "s", ["DRV_RDMA_CORE"]).driver == "rdma-core"
    assert attrs_of("x", "2N1L-100Ge2P1Cx556A-Rdma-Ethip4-Ip4Base-Mrr", []).nic == "100ge2p1cx556a"
