"""DUT version strings: every form VPP's version script writes, DPDK releases, unknown strings."""

from __future__ import annotations

import pytest

from pal.culprit.versions import commits_between, parse_version


@pytest.mark.parametrize("raw, kind, tag, count, commit, build, ref", [
    # master between tags (CSIT-FORMATS §2 example)
    ("22.02-rc0~508-g88a9c0e02~b851", "vpp-describe", "v22.02-rc0", 508, "88a9c0e02", 851, "88a9c0e02"),
    # a local build: no ~b part; a 7-digit hash of 2017
    ("17.10-rc0~243-g0b1f5b3", "vpp-describe", "v17.10-rc0", 243, "0b1f5b3", None, "0b1f5b3"),
    # after a later rc tag on a release branch
    ("22.02-rc2~3-gabcdef012~b12", "vpp-describe", "v22.02-rc2", 3, "abcdef012", 12, "abcdef012"),
    # a dirty tree (the version script turns "dirty" into X)
    ("22.02-rc0~508-g88a9c0e02-X~b851", "vpp-describe", "v22.02-rc0", 508, "88a9c0e02", 851, "88a9c0e02"),
    # exactly at an rc tag: git describe is the tag, no count, no hash
    ("22.02-rc2~b3", "vpp-rc-tag", "v22.02-rc2", 0, None, 3, "v22.02-rc2"),
    ("22.02-rc1", "vpp-rc-tag", "v22.02-rc1", 0, None, None, "v22.02-rc1"),
    # commits after a point release on a stable branch
    ("22.02.1-5~g1a2b3c4d5~b35", "vpp-stable", "v22.02.1", 5, "1a2b3c4d5", 35, "1a2b3c4d5"),
    # releases
    ("22.02-release", "vpp-release", "v22.02", 0, None, None, "v22.02"),
    ("21.10.1-release", "vpp-release", "v21.10.1", 0, None, None, "v21.10.1"),
])
def test_vpp_forms(raw, kind, tag, count, commit, build, ref):
    v = parse_version(raw)
    assert (v.kind, v.tag, v.count, v.commit, v.build, v.ref) == (kind, tag, count, commit, build, ref)
    assert v.known and v.raw == raw and v.dut == "vpp"


@pytest.mark.parametrize("raw, tag", [
    ("21.11.0", "v21.11"), ("21.11.2", "v21.11.2"), ("22.03.0-rc1", "v22.03-rc1"), ("DPDK 23.11.0", "v23.11"),
])
def test_dpdk_releases(raw, tag):
    v = parse_version(raw, "DPDK")
    assert (v.kind, v.tag, v.ref, v.commit, v.count) == ("dpdk-release", tag, tag, None, 0)


@pytest.mark.parametrize("raw, dut", [
    ("", "vpp"), ("master", "vpp"), ("22.02-rc0~508~b851", "vpp"), ("22.02-rc0~508-gZZZZZZZZZ", "vpp"),
    ("v22.02-rc0-508-g88a9c0e02", "vpp"), ("21.11", "dpdk"), ("22.02-rc0~508-g88a9c0e02~b851", "dpdk"),
])
def test_unknown_formats_keep_the_raw_string(raw, dut):
    v = parse_version(raw, dut)
    assert (v.kind, v.ref, v.known, v.raw) == ("unknown", None, False, raw)


def test_commits_between_same_tag_only():
    a = parse_version("22.02-rc0~500-g1111111aa~b850")
    b = parse_version("22.02-rc0~508-g88a9c0e02~b851")
    assert commits_between(a, b) == 8
    assert commits_between(b, a) == -8
    # a release branched in between: counts from different tags say nothing
    assert commits_between(parse_version("22.02-rc0~900-g1111111aa"), parse_version("22.06-rc0~3-g2222222bb")) is None
    # at the tag itself the count is 0
    assert commits_between(parse_version("22.02-rc2~b1"), parse_version("22.02-rc2~4-gabcdef012~b2")) == 4
    assert commits_between(parse_version("odd"), b) is None
