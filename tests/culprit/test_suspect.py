"""Suspect ranges: code (with count and link), infrastructure (what else changed), unknown."""

from __future__ import annotations

import textwrap

import pytest

from pal.culprit.suspect import CODE, INFRASTRUCTURE, UNKNOWN, check_url_template, suspect_range
from pal.errors import SpecError
from pal.spec import load_spec

GERRIT_LOG = {"vpp": "https://gerrit.fd.io/r/gitweb?p=vpp.git;a=log;h={bad};hp={good}"}


def test_code_range_same_tag():
    sr = suspect_range("22.02-rc0~500-g1111111aa~b850", "22.02-rc0~508-g88a9c0e02~b851", url_templates=GERRIT_LOG,
                       testbed_before="tb-1", testbed_after="tb-2")
    assert (sr.verdict, sr.good, sr.bad, sr.commits) == (CODE, "1111111aa", "88a9c0e02", 8)
    assert sr.url == "https://gerrit.fd.io/r/gitweb?p=vpp.git;a=log;h=88a9c0e02;hp=1111111aa"
    assert sr.summary == "code: VPP 1111111aa..88a9c0e02, 8 commits"
    assert sr.bisectable
    assert sr.to_dict()["commits"] == 8


def test_code_range_one_commit_and_different_tags():
    one = suspect_range("22.02-rc0~507-g1111111aa", "22.02-rc0~508-g88a9c0e02")
    assert (one.commits, one.summary) == (1, "code: VPP 1111111aa..88a9c0e02, 1 commit")
    cross = suspect_range("22.02-rc0~900-g1111111aa~b1", "22.06-rc0~3-g2222222bb~b2")
    assert (cross.verdict, cross.commits, cross.good, cross.bad) == (CODE, None, "1111111aa", "2222222bb")
    assert cross.summary.endswith("commit count unknown (different tags)")
    assert cross.url is None and cross.bisectable  # no template: no link, still a range to bisect


def test_code_range_from_tags_and_a_downgrade():
    sr = suspect_range("22.02-rc2~b1", "22.02-rc2~4-gabcdef012~b2", url_templates=GERRIT_LOG)
    assert (sr.good, sr.bad, sr.commits) == ("v22.02-rc2", "abcdef012", 4)
    down = suspect_range("22.02-rc0~508-g88a9c0e02", "22.02-rc0~500-g1111111aa")
    assert down.commits == -8 and not down.bisectable and "downgrade" in down.summary


def test_unknown_format_that_differs_is_code_without_range():
    sr = suspect_range("build-17", "build-18", dut="trex")
    assert (sr.verdict, sr.good, sr.bad, sr.commits, sr.url) == (CODE, None, None, None, None)
    assert sr.summary == "code: TREX build-17 -> build-18 (version format not understood)"
    assert not sr.bisectable


def test_dpdk_range_uses_the_dpdk_template_only():
    templates = {"dpdk": "https://git.dpdk.org/dpdk/log/?qt=range&q={good}..{bad}", **GERRIT_LOG}
    sr = suspect_range("21.11.0", "22.03.0", dut="dpdk", url_templates=templates)
    assert (sr.good, sr.bad, sr.commits) == ("v21.11", "v22.03", None)
    assert sr.url == "https://git.dpdk.org/dpdk/log/?qt=range&q=v21.11..v22.03"
    assert suspect_range("21.11.0", "22.03.0", dut="dpdk", url_templates=GERRIT_LOG).url is None


def test_infrastructure_says_what_changed():
    v = "22.02-rc0~508-g88a9c0e02~b851"
    sr = suspect_range(v, v, testbed_before="2n-icx-tb-1", testbed_after="2n-icx-tb-2",
                       tg_version_before="3.02", tg_version_after="3.03", job_before="j", job_after="j")
    assert sr.verdict == INFRASTRUCTURE
    assert sr.changed == ("testbed 2n-icx-tb-1 -> 2n-icx-tb-2", "TG version 3.02 -> 3.03")
    assert sr.summary == ("infrastructure: same VPP 22.02-rc0~508-g88a9c0e02~b851; "
                          "testbed 2n-icx-tb-1 -> 2n-icx-tb-2; TG version 3.02 -> 3.03")
    assert not sr.bisectable and sr.good is None


def test_infrastructure_when_only_the_package_build_differs():
    sr = suspect_range("22.02-rc0~508-g88a9c0e02~b851", "22.02-rc0~508-g88a9c0e02~b852",
                       job_before="csit-a", job_after="csit-b")
    assert sr.verdict == INFRASTRUCTURE
    assert sr.changed == ("VPP package rebuilt (22.02-rc0~508-g88a9c0e02~b851 -> 22.02-rc0~508-g88a9c0e02~b852)",
                          "job csit-a -> csit-b")


def test_infrastructure_with_nothing_else_known():
    sr = suspect_range("x", "x", testbed_before=None, testbed_after="tb")
    assert sr.changed == () and sr.summary == "infrastructure: same VPP x; nothing else known changed"


@pytest.mark.parametrize("before, after, missing", [
    (None, "22.02-rc0~508-g88a9c0e02", "last good"),
    ("22.02-rc0~508-g88a9c0e02", "", "first bad"),
    ("  ", None, "last good and first bad"),
])
def test_missing_versions_are_unknown(before, after, missing):
    sr = suspect_range(before, after, testbed_before="a", testbed_after="b")
    assert sr.verdict == UNKNOWN and not sr.bisectable
    assert sr.summary == f"unknown: no VPP version for the {missing} build"


def test_url_template_check():
    assert check_url_template("https://x/{good}..{bad}?d={dut}") is None
    assert "unknown placeholder(s) {commit}" in check_url_template("https://x/{commit}")
    assert "not a valid template" in check_url_template("https://x/{good")


def _spec(tmp_path, outputs: str):
    p = tmp_path / "spec.yaml"
    p.write_text(textwrap.dedent("""\
        name: t
        jobs: [{name: csit-vpp-perf-mrr-daily-master-2n-icx}]
        sources: [{name: local, type: local, path: data}]
        test-sets: [{name: all, metrics: [mrr]}]
        """) + outputs)
    return p


def test_spec_key(tmp_path):
    spec = load_spec(_spec(tmp_path, 'outputs:\n  commit-range-url:\n    vpp: "https://g/log/{good}..{bad}"\n'))
    assert spec.outputs.commit_range_url == {"vpp": "https://g/log/{good}..{bad}"}
    assert load_spec(_spec(tmp_path, "")).outputs.commit_range_url == {}
    with pytest.raises(SpecError, match=r"outputs.commit-range-url.vpp.*\{hash\}"):
        load_spec(_spec(tmp_path, 'outputs:\n  commit-range-url:\n    vpp: "https://g/{hash}"\n'))
