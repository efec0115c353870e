"""parse_build on each Robot Framework dialect: RF 3.x, RF 4-6 (hand-written) and RF 7 (generated)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from pal.model import SAMPLE_COLUMNS
from pal.parse import parse_build
from tests.parse import robot_suite as rs
from tests.parse.conftest import MRR_JOB


def _by(df, test_end: str, metric: str):
    rows = df[df.test_id.str.endswith(test_end) & (df.metric == metric)]
    assert len(rows) == 1, (test_end, metric, len(rows))
    return rows.iloc[0]


def test_rf3(data_dir):
    r = parse_build(data_dir / "rf3_output.xml", "csit-vpp-perf-ndrpdr-weekly-master-3n-hsw", 12,
                    testbeds={"10.30.51.16": "3n-hsw-t1"})
    df = r.samples
    assert list(df.columns) == list(SAMPLE_COLUMNS)
    ndr = _by(df, ".64b-1t1c-ethip4-ip4base-ndrpdr", "ndr")
    assert ndr.test_id == "tests.vpp.perf.10ge2p1x520-ethip4-ip4base-ndrpdr.64b-1t1c-ethip4-ip4base-ndrpdr"
    assert (ndr.value, ndr.status, ndr.unit, ndr.test_type) == (12345678.5, "PASS", "pps", "NDRPDR")
    assert (ndr.nic, ndr.frame_size, ndr.cores, ndr.threads_cores, ndr.topology) == \
        ("10ge2p1x520", "64B", "1C", "1T1C", "3_NODE_SINGLE_LINK_TOPO")
    assert ndr.tags == ("1C", "1T1C", "3_NODE_SINGLE_LINK_TOPO", "64B", "NDRPDR", "NIC_INTEL-X520-DA2", "PERFTEST")
    assert ndr.topo_arch == "3n-hsw" and ndr.testbed == "3n-hsw-t1"
    assert ndr.suite == "tests.vpp.perf.10ge2p1x520-ethip4-ip4base-ndrpdr"
    assert ndr.test_name == "tc01-64B-1c-ethip4-ip4base-ndrpdr"
    assert _by(df, "64b-1t1c-ethip4-ip4base-ndrpdr", "pdr").value == 13000000.0
    # the 2018 generation has no load-latency lines: no latency rows for that PASS test
    assert not ((df.metric == "latency_pdr50_d1") & (df.status == "PASS")).any()
    failed = df[df.status == "FAIL"]
    assert sorted(failed.metric) == ["latency_pdr50_d1", "latency_pdr50_d2", "ndr", "pdr"]
    assert failed.value.isna().all()
    assert set(failed.message) == {"Traffic generator failed: Setup failed"}
    mrr = _by(df, "64b-1t1c-eth-l2xcbase-mrr", "mrr")
    assert mrr.value == pytest.approx(12000000.5) and mrr.trials == [12000000.5]
    assert _by(df, "64b-1t1c-ethip4-ip4base-soak", "soak").value == 10500000.25
    m = r.meta
    assert m.dut_version == "18.07-rc0~244-g9d6dc5c"  # the 'return STDOUT Version:' form; test-body msgs ignored
    assert m.testbed == "3n-hsw-t1"
    assert (m.passed, m.failed) == (3, 1)
    assert m.build_time == datetime(2018, 6, 12, 4, 31, 4, 500000, tzinfo=timezone.utc)
    assert m.start_time == datetime(2018, 6, 12, 2, 11, 5, 300000, tzinfo=timezone.utc)
    assert m.duration_s == pytest.approx(2 * 3600 + 19 * 60 + 59.2)
    assert (df.build_time == m.build_time).all()
    assert r.problems == []


def test_rf6(data_dir):
    r = parse_build(data_dir / "rf6_output.xml", MRR_JOB, 40)
    df = r.samples
    mrr = _by(df, "64b-2t1c-avf-ethip4-ip4base-mrr", "mrr")
    assert mrr.value == 22500000.0
    assert mrr.stdev == pytest.approx(1118033.988749895)
    assert (mrr.nic, mrr.driver, mrr.testbed, mrr.dut_version) == \
        ("25ge2p1xxv710", "avf", "10.30.51.45", "21.01-release")
    cps = _by(df, "cps-mrr", "cps")
    assert (cps.value, cps.stdev, cps.unit, cps.test_type, cps.driver, cps.nic) == \
        (105000.0, 5000.0, "cps", "CPS", "rdma-core", "100ge2p1cx556a")
    assert _by(df, "ndrpdr", "latency_pdr50_d1").value == 8.0 + 4.0  # '8/12/25/..' -> avg 12
    d2 = _by(df, "ndrpdr", "latency_pdr50_d2")
    assert math.isnan(d2.value) and d2.status == "PASS" and d2.message == ""  # '-1/-1/-1/' is invalid
    # two NTNC tags: FAIL, NaN, with the reason; the SKIP test gives nothing
    amb = _by(df, "64b-2c-avf-ethip4-ip4base-mrr", "mrr")
    assert amb.status == "FAIL" and math.isnan(amb.value)
    assert amb.message.startswith("ambiguous test id: 2 thread/core tags (4T2C, 8T4C)")
    assert not df.test_name.str.startswith("9000B").any()
    unparsable = _by(df, "1518b-2t1c-avf-ethip4-ip4base-mrr", "mrr")
    assert unparsable.status == "PASS" and math.isnan(unparsable.value)
    assert unparsable.message == "Traffic looked fine, see the log"
    assert (r.meta.passed, r.meta.failed) == (4, 1)
    assert r.meta.build_time == datetime(2022, 1, 24, 3, 20, 4, 250000, tzinfo=timezone.utc)
    msgs = [p.message for p in r.problems]
    assert len(msgs) == 2
    assert all(p.stage == "parse" and p.severity == "warning" and p.details["build"] == 40 for p in r.problems)
    assert "rf6_output.xml: build 40: test Tests.Vpp.Perf.2N1L-25Ge2P1Xxv710-Avf-Ethip4-Ip4Base-Mrr." \
           "1518B-1c-avf-ethip4-ip4base-mrr: unparsable MRR message" in msgs[1]


def test_rf7_generated_by_robot(rf7_history):
    path = rf7_history[3]
    r = parse_build(path, MRR_JOB, 3, testbeds={"10.30.51.45": "2n-icx-t1"})
    df = r.samples
    mrr = _by(df, "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr", "mrr")
    assert mrr.test_id == "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"
    assert mrr.value == pytest.approx(3.1e6)
    assert mrr.trials == rs.mrr_trials(3)
    assert mrr.stdev == pytest.approx((2e10 / 3) ** 0.5)  # pstdev of 3.0e6, 3.1e6, 3.2e6
    assert (mrr.nic, mrr.driver, mrr.topology) == ("25ge2p1xxv710", "vfio-pci", "2_NODE_SINGLE_LINK_TOPO")
    failed = _by(df, "64b-4t2c-ethip4-ip4base-mrr", "mrr")  # build 3 is odd: Fail
    assert failed.status == "FAIL" and failed.message == "Traffic generator did not start"
    assert _by(df, "ip4base-ndrpdr", "ndr").value == rs.ndr(3)
    assert _by(df, "ip4base-ndrpdr", "pdr").value == rs.pdr(3)
    assert _by(df, "ip4base-ndrpdr", "latency_pdr50_d1").value == 13.0
    assert math.isnan(_by(df, "ip4base-ndrpdr", "latency_pdr50_d2").value)  # 4294967295
    assert _by(df, "ip4base-soak", "soak").value == 9e6 + 3
    cps = _by(df, "cps-mrr", "cps")
    assert (cps.value, cps.test_type, cps.trials) == (3100.0, "CPS", [3000.0, 3200.0])
    m = r.meta
    assert (m.dut_version, m.testbed, m.passed, m.failed) == (rs.version(3), "2n-icx-t1", 4, 1)
    assert m.build_time is not None and m.duration_s is not None
    assert m.build_time == m.start_time + __import__("datetime").timedelta(seconds=m.duration_s)
    assert r.problems == []


def test_rename_and_ignore_in_parse_build(rf7_history):
    old = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"
    r = parse_build(rf7_history[2], MRR_JOB, 2, rename={old: "renamed.mrr-test"}, ignore=[r"ndrpdr$", "soak"])
    ids = set(r.samples.test_id)
    assert "renamed.mrr-test" in ids and old not in ids
    assert not any(i.endswith(("ndrpdr", "soak")) for i in ids)
    assert any(i.endswith("cps-mrr") for i in ids)
    assert (r.meta.passed, r.meta.failed) == (3, 0)  # the ignored tests are not counted


def test_dpdk_version_and_unmapped_testbed(tmp_path):
    xml = (tmp_path / "o.xml")
    xml.write_text(
        '<robot generator="Robot 6.1" generated="20230101 00:00:00.000" schemaversion="4">'
        '<suite id="s1" name="Tests"><kw name="Install Dpdk Framework On All Duts" type="SETUP">'
        '<msg timestamp="20230101 00:00:01.000" level="INFO">DPDK version: 22.11.1</msg>'
        '<msg timestamp="20230101 00:00:01.000" level="INFO">Setup of node TG host 10.32.8.10, port 22 done.</msg>'
        '<status status="PASS" starttime="20230101 00:00:00.000" endtime="20230101 00:00:02.000"/></kw>'
        '<test id="s1-t1" name="64B-1c-eth-l2xcbase-testpmd-mrr"><tag>MRR</tag><tag>1T1C</tag>'
        '<status status="PASS" starttime="20230101 00:00:03.000" endtime="20230101 00:00:04.000">'
        'Maximum Receive Rate trial results in packets per second: [5.0, 7.0]</status></test>'
        '<status status="PASS" starttime="20230101 00:00:00.000" endtime="20230101 00:01:00.000"/></suite></robot>')
    r = parse_build(xml, "csit-dpdk-perf-mrr-weekly-master-2n-skx", 5, dut="dpdk", testbeds={"1.2.3.4": "x"})
    assert (r.meta.dut, r.meta.dut_version, r.meta.testbed) == ("dpdk", "22.11.1", "10.32.8.10")
    assert r.samples.test_id.tolist() == ["tests.64b-1t1c-eth-l2xcbase-testpmd-mrr"]
    assert r.samples.value.tolist() == [6.0] and r.samples.dut.tolist() == ["dpdk"]
    assert r.meta.duration_s == 60.0


@pytest.mark.parametrize("children", [
    b"<tag>B</tag><tag> A </tag><status status='PASS'>ok</status>",
    b"<tags><tag>x</tag><tag/></tags><status status='FAIL'>e</status>",  # RF 3
    b"<tag>1</tag><tags><tag>2</tag></tags><tag>3</tag><tags><tag>4</tag></tags>",  # both, interleaved; no status
    b"<kw><tag>KW</tag><status status='FAIL'/></kw><tag>\t</tag><tag></tag><!-- c --><?pi x?>"
    b"<status status='FAIL'>first</status><tag>T</tag><status status='PASS'>last</status>",
    b"<x:tag xmlns:x='u'>NS</x:tag><x:status xmlns:x='u'/><tags xmlns='v'><tag>W</tag></tags><tag>a<b/>c</tag>",
])
def test_tags_and_status_in_one_pass(children):
    """The one-pass read of a test's tail gives the tags and status the separate reads gave:
    ``<tag>`` children in order then the RF 3 ``<tags>`` ones, blanks dropped, the last ``<status>``."""
    from lxml import etree

    from pal.parse.dialect import last_status, tags_and_status

    test = etree.fromstring(b"<test>" + children + b"</test>")
    direct = [t.text or "" for t in test.iterchildren("tag")]
    for wrapper in test.iterchildren("tags"):
        direct.extend(t.text or "" for t in wrapper.iterchildren("tag"))
    tags, status = tags_and_status(test)
    assert tags == tuple(t.strip() for t in direct if t and t.strip())
    assert status is last_status(test)


def _parse_time_by_replace(text):
    """``parse_time`` as it was: every ISO text parsed alone, then given the UTC zone."""
    if not text or text == "N/A":
        return None
    try:
        if "T" in text or "-" in text[:8]:
            dt = datetime.fromisoformat(text)
        else:
            dt = datetime.strptime(text, "%Y%m%d %H:%M:%S.%f" if "." in text else "%Y%m%d %H:%M:%S")
    except ValueError:
        return None
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


@pytest.mark.parametrize("text", [
    "2026-07-31T05:50:59.400000", "2024-02-29T23:59:59.999999", "2023-02-29T00:00:00.000000",  # no such day
    "2026-13-01T00:00:00.000000", "2026-07-31T24:00:00.000000", "2026-07-31T05:50:60.000000",
    "0000-01-01T00:00:00.000000", "2026-07-31T05:50:59.4000000", "2026-07-31T05:50:59.400000Z",
    "2026-07-31T05:50:59.400000+02:00", "2026-07-31T05:50:59", "2026-07-31 05:50:59.400000", "2026-07-31",
    "2026-07-31T05:50:59.40000\n", "\u0662026-07-31T05:50:59.400000", "20220124 03:09:00.123", "N/A", "", None,
])
def test_rf7_timestamps_read_as_with_replace(text):
    """RF 7's timestamps, read with the zone appended, are the datetimes (and the failures) of
    parsing them alone and setting the zone after; other forms take the old path."""
    from pal.parse.dialect import parse_time

    got, want = parse_time(text), _parse_time_by_replace(text)
    assert got == want
    if got is not None:
        assert got.tzinfo is want.tzinfo and got.fold == want.fold and got.utcoffset() == want.utcoffset()


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e20", "9e13", "x"])
def test_an_elapsed_that_is_no_duration_is_unknown_not_a_crash(rf7_history, tmp_path, bad):
    """``elapsed`` of nan, inf or beyond what a timedelta holds: the status' end and duration are
    unknown, as when it is missing, and the build's samples are those of the intact file (it
    raised ValueError / OverflowError out of the parse worker)."""
    import re

    from lxml import etree

    from pal.parse.dialect import status_times

    text = rf7_history[3].read_text()
    broken = tmp_path / "output.xml"
    broken.write_text(re.sub(r'elapsed="[^"]*"', f'elapsed="{bad}"', text))
    got, want = parse_build(broken, MRR_JOB, 3).samples, parse_build(rf7_history[3], MRR_JOB, 3).samples
    assert len(got) == len(want) > 0
    assert got["value"].equals(want["value"]) and (got["test_id"] == want["test_id"]).all()
    el = etree.fromstring(f'<status status="PASS" start="2026-01-01T00:00:00.000000" elapsed="{bad}"/>')
    times = status_times(el)
    assert times.start == datetime(2026, 1, 1, tzinfo=timezone.utc) and (times.end, times.elapsed_s) == (None, None)
