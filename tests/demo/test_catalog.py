"""Names, ids and message formats follow CSIT (worked examples from CSIT-FORMATS)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pal.demo.catalog import build_catalog, normalise_test_id, profile_for, suite_display_name
from pal.demo.messages import gbps, mrr_message, ndrpdr_message


def test_normalised_id_examples():
    long = "Tests.Vpp.Perf.Ip4.2N1L-25Ge2P1Xxv710-Ethip4-Ip4Base-Mrr.64B-1c-ethip4-ip4base-mrr"
    assert normalise_test_id(long, ("1C", "2T1C", "64B")) == (
        "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr")
    assert normalise_test_id("Tests.Vpp.Perf.L2.Suite.tc01-64B-1c-eth-l2xcbase-mrr", ("2T1C",)) == (
        "tests.vpp.perf.l2.suite.64b-2t1c-eth-l2xcbase-mrr")
    # Two thread/core tags: left as it is (the parser treats such a test as FAIL).
    assert normalise_test_id("A.64B-1c-x", ("2T1C", "4T2C")) == "a.64b-1c-x"


def test_suite_display_name_is_what_robot_shows():
    assert suite_display_name("2n1l-25ge2p1xxv710-ethip4-ip4base-mrr") == "2N1L-25Ge2P1Xxv710-Ethip4-Ip4Base-Mrr"
    assert suite_display_name("ip4_tunnels") == "Ip4 Tunnels"


def test_gbps_formula_hand_computed():
    assert gbps(10e6, "64B") == pytest.approx(10e6 * 84 * 8 / 1e9)  # 6.72
    assert gbps(1e6, "1518B") == pytest.approx(12.304)
    assert gbps(2e6, "IMIX") == pytest.approx(2e6 * 373.83 * 8 / 1e9)  # 5.98128


def test_mrr_message_text():
    assert mrr_message([21752588.294, 21712091.77]) == (
        "Maximum Receive Rate trial results in packets per second: [21752588.29, 21712091.77]")


def test_ndrpdr_message_layout_and_values():
    msg = ndrpdr_message(ndr=18123456.5, pdr=18500000.0, lat50_d1=20.0, lat50_d2=21.4, frame="64B", key=3)
    assert msg.startswith("\n")
    lines = msg[1:].split("\n")
    assert all(line.endswith(" ") for line in lines[:-1]) and not lines[-1].endswith(" ")
    heads = ["NDR_LOWER: ", "LATENCY [min/avg/max/hdrh] per stream: ['", "NDR_UPPER: ", "PDR_LOWER: ",
             "LATENCY [min/avg/max/hdrh] per stream: ['", "PDR_UPPER: ", "Latency at 90% PDR: ['",
             "Latency at 50% PDR: ['", "Latency at 10% PDR: ['", "Latency at 0% PDR: ['"]
    assert len(lines) == len(heads) and all(line.startswith(h) for line, h in zip(lines, heads))
    assert lines[0] == "NDR_LOWER: 18123456.5 pps, 12.18 Gbps (initial) "
    assert lines[3] == "PDR_LOWER: 18500000.0 pps, 12.43 Gbps (initial) "
    lat50 = re.findall(r"'(\d+)/(\d+)/(\d+)/(HISTF[A-Za-z0-9+/=]+)'", lines[7])
    assert [int(avg) for _, avg, _, _ in lat50] == [20, 21]
    assert all(int(lo) <= int(avg) <= int(hi) for lo, avg, hi, _ in lat50)


def test_catalog_covers_nics_frames_cores_drivers():
    icx = build_catalog(profile_for("csit-vpp-perf-mrr-daily-master-2n-icx"), 120, np.random.default_rng(1))
    assert len(icx) == 120
    assert len({(t.suite_file, t.name) for t in icx}) == 120
    assert {t.frame for t in icx} == {"64B", "1518B", "IMIX"}
    assert {t.threads_cores for t in icx} == {"2T1C", "4T2C", "8T4C"}
    assert {t.driver for t in icx} == {"DRV_AVF", "DRV_VFIO_PCI", "DRV_RDMA_CORE"}
    assert {"25ge2p1xxv710", "100ge2p1e810cq", "10ge2p1x710"} <= {t.nic for t in icx}
    assert all(1.5e6 <= t.base <= 2.3e7 and 0.005 <= t.noise <= 0.05 for t in icx)
    avf = next(t for t in icx if t.driver == "DRV_AVF")
    assert "-avf-" in avf.name and "-avf-" in avf.suite_file and "2_NODE_SINGLE_LINK_TOPO" in avf.tags
    alt = build_catalog(profile_for("csit-vpp-perf-mrr-daily-master-3n-alt"), 12, np.random.default_rng(1), 3)
    assert {t.threads_cores for t in alt} == {"1T1C", "2T2C", "4T4C"}  # no SMT on Altra
    assert all(re.match(r"^(64B|1518B|IMIX)-\d+c-", t.name) for t in alt)  # old-style names, CSIT's case
    assert all(not t.suite_file.startswith("2n1l-") for t in alt)


def test_big_catalogue_has_unique_tests_and_features_on_several_nics():
    big = build_catalog(profile_for("csit-vpp-perf-mrr-daily-master-2n-icx"), 1500, np.random.default_rng(2))
    assert len({(t.suite_file, t.name) for t in big}) == 1500
    assert len({t.name for t in big}) < 1500  # as in CSIT, one test name in several NICs' suites
    ip4base = {t.nic for t in big if t.feature.slug == "ethip4-ip4base"}
    assert len(ip4base) >= 4
