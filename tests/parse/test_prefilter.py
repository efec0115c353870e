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


def _one_test(body: bytes) -> bytes:
    return (b'<robot><suite><test id="t" name="x">' + body +
            b'<tag>MRR</tag><status status="PASS">ok</status></test><test name="y"/></suite></robot>')


@pytest.mark.parametrize(("body", "kept"), [
    (b'<kw name="s">' + b" " * 5000 + b"</kw>", b""),  # blanks in an open keyword, then its closing
    (b'<kw name="s">' + b"<kw/>" * 1000 + b"</kw>", b""),  # empty elements: no closing tag to cut at
    # what follows the last closing tag is kept: blanks, empty elements
    (b"<kw>" + b"<msg>x</msg>" * 500 + b"</kw>" + b" " * 3000, b" " * 3000),
    (b"<kw>a</kw" + b" " * 700 + b">" + b"<kw/>" * 200, b"<kw/>" * 200),  # a closing longer than a cut waits for
    (b"<kw>a</kw" + b" " * 100 + b">" + b"<kw/>" * 200, b"<kw/>" * 200),  # one shorter, cut across chunks
])
@pytest.mark.parametrize("size", [1, 7, 64, 300, 1 << 20])
def test_long_bodies_across_chunks(body, kept, size):
    """A test body spread over many chunks: the bytes kept are those of the single-chunk reading:
    the test's tail after its last body closing tag."""
    data = _one_test(body)
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    assert b"".join(strip_test_bodies(chunks)) == b"".join(strip_test_bodies([data])) == (
        b'<robot><suite><test id="t" name="x">' + kept + b'<tag>MRR</tag><status status="PASS">ok</status></test>'
        b'<test name="y"/></suite></robot>')


@pytest.mark.parametrize("filler", [b" ", b"<kw/>", b"<msg>x</msg>", b"</kw" + b" " * 300 + b">"])
def test_a_long_test_body_is_searched_once(monkeypatch, filler):
    """The backward search for a cut covers each byte of a streaming test about once, not once per
    chunk: a 4 MB body of blanks or empty elements in 1 KB chunks was searched 2,000 times over
    (minutes for the 128 MB bodies of the hostile inputs). Counted, not timed."""
    import pal.parse.prefilter as prefilter

    searched = []
    real = prefilter.body_end

    def counting(buf, start, end, strict=True):
        searched.append(end - start)
        return real(buf, start, end, strict)

    monkeypatch.setattr(prefilter, "body_end", counting)
    body = b'<kw name="s">' + filler * ((4 << 20) // len(filler)) + b"</kw>"
    data = _one_test(body)
    size = 1024
    out = b"".join(strip_test_bodies(data[i:i + size] for i in range(0, len(data), size)))
    assert out.endswith(b'<tag>MRR</tag><status status="PASS">ok</status></test><test name="y"/></suite></robot>')
    assert len(searched) > 4000  # one search a chunk
    assert sum(searched) < 2 * len(data) + len(searched) * (size + 512)


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


def _body_end_by_regex(buf: bytes, start: int, end: int, strict: bool = True) -> int:
    """``body_end`` as it was before its ``startswith`` fast path: every closing tag read by the regex."""
    from pal.parse.prefilter import _BODY, _CLOSING_NAME, _TAIL

    p = end
    while True:
        p = buf.rfind(b"</", start, p)
        if p < 0:
            return start
        m = _CLOSING_NAME.match(buf, p, end)
        if m is None:
            if buf.find(b">", p, end) < 0:
                continue
            if not strict:
                return buf.find(b">", p, end) + 1
            raise FilterUnsafe("malformed")
        if m.group(1) not in _TAIL:
            if strict and m.group(1) not in _BODY:
                raise FilterUnsafe("unexpected")
            return m.end()


@pytest.mark.parametrize("tail", [
    b"<tag>A</tag><tag>B</tag><status status='PASS'>ok</status>",
    b"<doc>d</doc><tags><tag>A</tag></tags><timeout value='1m'/><status status='PASS'/>",
    b"<tag>A</tag ><tag>B</tag\n><status status='PASS'>ok</status\t>",  # blanks: the regex's closings
    b"<tagging>A</tagging><status status='PASS'/>",  # a name that starts like a tail one: damage
    b"<tag>A</tag><tag>B</tag.x><status status='PASS'/>",
    b"<tag>A</tag><foo>B</foo><status status='PASS'/>",
    b"<tag>A</tag><status status='PASS'>ok</status",  # cut short
])
@pytest.mark.parametrize("window", [8192, 1, 2, 3, 7, 16])
def test_tail_closings_fast_path_agrees_with_the_regex(tail, window, monkeypatch):
    """The skips of common tail closings (one regex over the span's last ``window`` bytes, then
    ``startswith``) end the body where the closing-tag regex alone did, fail alike, and agree on
    every prefix of a test still streaming (strict=False), whatever the window cuts."""
    monkeypatch.setattr("pal.parse.prefilter._TAIL_WINDOW", window)
    buf = b'<test name="x"><kw name="a"><tag>KW</tag><status status="PASS"/></kw>' + tail

    def outcome(fn, *args):
        try:
            return fn(*args)
        except FilterUnsafe:
            return "unsafe"

    start = len(b'<test name="x">')
    for end in range(start, len(buf) + 1):
        assert outcome(body_end, buf, start, end, False) == outcome(_body_end_by_regex, buf, start, end, False)
    assert outcome(body_end, buf, start, len(buf)) == outcome(_body_end_by_regex, buf, start, len(buf))
    assert body_end(buf, start, len(buf), strict=False) >= start


def test_start_tag_end_as_the_token_by_token_regex():
    """The start tag's end is found where the byte-by-byte regex found it (or not at all), on
    random attribute texts with quotes and '>' inside and outside them, cut anywhere."""
    import random
    import re

    from pal.parse.prefilter import _START_TAG_END

    by_token = re.compile(rb"""(?:[^>"']|"[^"]*"|'[^']*')*>""")
    rng = random.Random(7)
    for _ in range(3000):
        text = bytes(rng.choice(b"""ab ="'>\n""") for _ in range(rng.randint(0, 24)))
        for pos in range(len(text) + 1):
            a, b = _START_TAG_END.match(text, pos), by_token.match(text, pos)
            assert (a and a.end()) == (b and b.end()), (text, pos)


@pytest.mark.parametrize("window", [8192, 100, 5])
def test_long_tails_beyond_the_window(window, monkeypatch):
    """More tail closings than the window holds, or a body closing just before them: the scan
    goes on before the window and ends the body where the regex-only loop does."""
    monkeypatch.setattr("pal.parse.prefilter._TAIL_WINDOW", window)
    tags = b"".join(b"<tag>T%d</tag>\n" % i for i in range(2000))
    for body in (b"<kw/>", b"<kw></kw>", b"<kw><tag>K</tag></kw>\n<msg>m</msg>", b"<x>y</x>"):
        buf = b'<test name="x">' + body + tags + b'<status status="PASS">ok</status>'
        for end in (len(buf), len(buf) - 3, len(buf) - 9000, 20, 16):
            for strict in (True, False):
                try:
                    want = _body_end_by_regex(buf, 15, end, strict)
                except FilterUnsafe:
                    with pytest.raises(FilterUnsafe):
                        body_end(buf, 15, end, strict)
                    continue
                assert body_end(buf, 15, end, strict) == want
