"""The byte-level test-body filter: same samples as a full parse, whatever the chunking."""

from __future__ import annotations

import pytest

from pal.parse import parse_build
from pal.parse.prefilter import FilterUnsafe, body_end, strip_test_bodies
from tests.parse.conftest import MRR_JOB


def _records(r):
    return repr(r.samples.to_dict("records")), r.meta, r.problems


@pytest.mark.parametrize("name", ["rf3_output.xml", "rf6_output.xml"])
def test_fast_equals_full_parse_on_fixtures(data_dir, name):
    p = data_dir / name
    assert _records(parse_build(p, MRR_JOB, 1, fast=True)) == _records(parse_build(p, MRR_JOB, 1, fast=False))


def test_fast_equals_full_parse_on_rf7_trace(rf7_history):
    for build, p in rf7_history.items():
        assert _records(parse_build(p, MRR_JOB, build)) == _records(parse_build(p, MRR_JOB, build, fast=False))


@pytest.mark.parametrize("size", [1, 5, 17, 256])
def test_any_chunking_gives_the_same_bytes(rf7_history, size):
    data = rf7_history[1].read_bytes()
    whole = b"".join(strip_test_bodies([data]))
    assert len(whole) < len(data) * 0.7  # the keyword trees of the tests are gone
    assert b"Arguments: [ 'measuring' ]" in data and b"Arguments: [ 'measuring' ]" not in whole
    assert b"VPP version: 22.02" in whole  # suite setups stay
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    assert b"".join(strip_test_bodies(chunks)) == whole


def test_kept_tail_of_a_test():
    test = (b'<test id="t" name="x"><kw name="a"><msg>m</msg><tag>KWTAG</tag><status status="FAIL">e</status></kw>'
            b'<for flavor="IN"><iter><kw name="b"/></iter></for><kw name="c"/>'
            b"<doc>d</doc><tag>MRR</tag><status status=\"PASS\">ok</status></test>")
    out = b"".join(strip_test_bodies([b"<robot><suite>" + test + b"</suite></robot>"]))
    assert out == (b'<robot><suite><test id="t" name="x"><kw name="c"/><doc>d</doc><tag>MRR</tag>'
                   b'<status status="PASS">ok</status></test></suite></robot>')
    assert body_end(b"<doc>x</doc>", 0, 12) == 0


def test_self_closing_test_and_truncation():
    assert b"".join(strip_test_bodies([b'<suite><test name="a"/><test name="b"><kw/>'])) == \
        b'<suite><test name="a"/><test name="b"><kw/>'


def test_comments_or_cdata_fall_back_to_the_full_parse(tmp_path, data_dir):
    src = (data_dir / "rf6_output.xml").read_text()
    p = tmp_path / "output.xml"
    p.write_text(src.replace('<suite id="s1-s1" ', '<!-- </test> <test> --><suite id="s1-s1" ', 1))
    with pytest.raises(FilterUnsafe):
        list(strip_test_bodies([p.read_bytes()]))
    full = parse_build(data_dir / "rf6_output.xml", MRR_JOB, 1)
    got = parse_build(p, MRR_JOB, 1)
    assert repr(got.samples.drop(columns="source_file").to_dict("records")) == \
        repr(full.samples.drop(columns="source_file").to_dict("records"))
