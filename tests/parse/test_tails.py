"""A test's tail read from its bytes (``pal.parse.tails``) gives what the XML parser gives, or
gives up; the files read that way give the samples the other two readings give."""

from __future__ import annotations

import io
from collections import deque
from pathlib import Path

import pytest
import robot
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from pal.errors import ParseError
from pal.parse import build as parse_module
from pal.parse import parse_build
from pal.parse.dialect import tags_and_status
from pal.parse.prefilter import FilterUnsafe, TailUnread, strip_test_bodies
from pal.parse.tails import ReadTest, read_tail, read_usual_test
from pal.parse.walker import Walk
from tests.parse.conftest import MRR_JOB
from tests.reliability.record import fuzz_examples


def _by_parser(tail: bytes) -> tuple[tuple[str, ...], str | None, str] | str:
    """What the walker reads from the same tail through lxml (with the walker's parser options)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        el = etree.fromstring(b"<test>" + tail + b"</test>", parser)
    except etree.XMLSyntaxError:
        return "error"
    tags, status = tags_and_status(el)
    return tags, (status.get("status") if status is not None else None), \
        ((status.text or "") if status is not None else "")


USUAL = (b'\n<doc>Run MRR.</doc>\n<tag>1C</tag>\n<tag>2T1C</tag>\n<tag>MRR</tag>\n'
         b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.810237">Maximum Receive Rate '
         b'trial results in packets per second: [3174754.55, 3166583.04]</status>\n')


@pytest.mark.parametrize(("tail", "want"), [
    (USUAL, (("1C", "2T1C", "MRR"), "PASS",
             "Maximum Receive Rate trial results in packets per second: [3174754.55, 3166583.04]")),
    # entities and character references, in text and attribute values
    (b'<tag>a&amp;b</tag><tag>&lt;x&gt;</tag><status status="F&#65;IL">&quot;&apos;&#x42;&#10;</status>',
     (("a&b", "<x>"), "FAIL", "\"'B\n")),
    # line ends: CR LF and CR are LF in text; blanks in an attribute value are spaces, a reference stays
    (b'<status status="PA\tSS" x="a\r\nb&#10;">one\r\ntwo\rthree</status>', ((), "PA SS", "one\ntwo\nthree")),
    # RF 3: tags wrapped in <tags>, read after the test's own <tag>s; blank tags left out, others stripped
    (b'<doc/><tags><tag> B </tag><tag/><tag>  </tag></tags><tag>A</tag><timeout value="1 min"/>'
     b"<status status='PASS' starttime='20240101 10:00:00.000'/>", (("A", "B"), "PASS", "")),
    # no status; two statuses (the last one counts); a status without its attribute; UTF-8 text
    (b"<tag>x</tag>", (("x",), None, "")),
    (b'<status status="FAIL">a</status><status status="PASS">b</status>', ((), "PASS", "b")),
    (b"<status>m</status>", ((), None, "m")),
    ("<tag>Grüße</tag><status status='PASS'>€ ok</status >".encode(), (("Grüße",), "PASS", "€ ok")),
    (b"", ((), None, "")),
    # Robot Framework 4-6's status attributes; a status of two words
    (b'<tag>A</tag>\n<status status="FAIL" starttime="20240101 10:00:00.000" endtime="20240101 10:01:00.000">'
     b'Test timeout 1 minute exceeded.</status>\n', (("A",), "FAIL", "Test timeout 1 minute exceeded.")),
    (b'<status status="NOT RUN" start="2026-11-06T05:19:38.400000" elapsed="0.000000"/>', ((), "NOT RUN", "")),
    (b'<tag a="1">x</tag ><tag/><doc a="&amp;">d</doc><status status="PASS"/>', (("x",), "PASS", "")),
])
def test_tails_read_as_the_parser_reads_them(tail, want):
    assert read_tail(tail) == want
    assert _by_parser(tail) == want  # the expected values are what lxml gives too


@pytest.mark.parametrize(("tail", "parser_refuses"), [
    (b"<tag>&nbsp;</tag>", True),  # an entity XML does not predefine
    (b"<tag>&#0;</tag>", True),  # a reference to a character XML forbids
    (b"<tag>a ]]> b</tag>", True),
    (b"<tag>a\x01b</tag>", True),
    (b"<tag>\xff</tag>", True),  # not UTF-8
    (b'<status status="PASS" status="FAIL"/>', True),
    (b"<tag>x</tags>", True),
    (b"<tag>x</tag>text<status/>", False),  # legal XML, but nothing Robot writes: left to the parser
    (b"<kw name='k'/><status status='PASS'/>", False),
    (b"<tag>a<b/></tag>", False),
    (b"<tags><kw/></tags>", False),
    (b"<?pi x?><tag>x</tag>", False),
])
def test_what_the_reader_leaves_to_the_parser(tail, parser_refuses):
    with pytest.raises(TailUnread):
        read_tail(tail)
    assert (_by_parser(tail) == "error") == parser_refuses


_PIECES = [
    b"<tag>A</tag>", b"<tag>b c</tag>", b"<tag/>", b"<tag> </tag>", b"<tag>x&amp;y</tag>", b"<tag>&#x263A;</tag>",
    b"<doc>d</doc>", b"<doc/>", b"<timeout value='1m'/>", b"<tags><tag>W</tag></tags>", b"<tags/>",
    b'<status status="PASS">ok</status>', b"<status status='FAIL'>e&lt;1</status>", b'<status status="SKIP"/>',
    b"<status>no attribute</status>", b'<status status="NOT RUN" start="x">a\r\nb</status>',
    # a status as Robot Framework 7 and 4-6 write it (read without the general attribute reader)
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.810237">ok</status>',
    b'<status status="FAIL" starttime="20240101 10:00:00.000" endtime="20240101 10:00:01.000"/>',
    # hostile or unusual: the reader must give up on these or agree with the parser
    b"<tag>&bogus;</tag>", b"<tag>]]></tag>", b"<tag>\x0b</tag>", b"<tag>\xc3</tag>", b"<kw/>", b"zz",
    b'<status status="A" status="B"/>', b"<tag>a</tag", b"<status status=PASS/>", b"<tag>&#xD800;</tag>",
    b"<tag>&#13;</tag>", b"<status status='a\tb'>&#9;</status>", b"<tags><tag>x</tag>y</tags>", b"</tag>",
    b"<tag >v</tag>", b"<tag\n>v</tag\n>", b"&amp;", b"<status status='&lt;'/>", b"<doc><b/></doc>",
    # near misses of the plain status: a repeated attribute, two blanks, a reference, a tab, an extra one
    b'<status status="PASS" start="1" elapsed="2" start="3"/>', b'<status status="PASS"  start="1" elapsed="2"/>',
    b'<status status="PA&#83;S" start="1" elapsed="2"/>', b'<status status="FAIL" start="1"\telapsed="2"/>',
    b'<status status="PASS" starttime="1" endtime="2" critical="yes"/>', b'<status status="PASS" start="1" elapsed="2"',
]


@pytest.mark.fuzz
@settings(max_examples=fuzz_examples(400), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"", b"\n", b" ", b"\r\n", b"\t"]), st.sampled_from(_PIECES)),
                max_size=8))
def test_any_tail_is_read_as_the_parser_reads_it_or_left_to_it(parts):
    tail = b"".join(blank + piece for blank, piece in parts)
    want = _by_parser(tail)
    try:
        got = read_tail(tail)
    except TailUnread:
        return  # the file is read again with the parser
    assert want != "error", f"the parser refuses {tail!r}, the reader read {got!r}"
    assert got == want


@pytest.mark.fuzz
@settings(max_examples=fuzz_examples(200), deadline=None)
@given(st.lists(st.sampled_from(_PIECES[:18]), max_size=8), st.sampled_from([b"\n", b"", b"  "]))
def test_what_robot_writes_is_never_left_to_the_parser(parts, blank):
    tail = blank.join(parts)
    assert read_tail(tail) == _by_parser(tail)


_PLAIN_STATUSES = [
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.8">a ]]> b</status>',
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.8">tab\tand\nLF, [1.0, 2.0]</status>',
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.8">CR\r\nLF</status>',
    b'<status status="FAIL" start="2026-11-06T05:19:38.400000" elapsed="74.8">x &amp; &#65; &gt;</status>',
    b'<status status="NOT RUN" starttime="20240101 10:00:00.000" endtime="20240101 10:00:01.000">\xc3\xa9</status>',
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.8"></status>',
    b'<status status="PASS" start="2026-11-06T05:19:38.400000" elapsed="74.8" />',
]


@pytest.mark.fuzz
@settings(max_examples=fuzz_examples(400), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"", b"\n", b" ", b"\r\n", b"\t"]), st.sampled_from(_PIECES + _PLAIN_STATUSES)),
                max_size=8), st.sampled_from([b"<kw>k</kw>", b"<kw/>", b"<kw><kw/></kw>", b"<for/>"]))
def test_a_test_read_whole_is_read_as_the_parser_reads_it_or_taken_apart(parts, body):
    """``read_usual_test`` reads what the parser reads, or says None (the filter takes the test apart)
    or gives up (the file is read again)."""
    tail = b"".join(blank + piece for blank, piece in parts)
    doc = b'<test id="s1-t1" name="A b-c_1.2" line="7">' + body + tail
    want = _by_parser(tail)
    try:
        got = read_usual_test(doc, 0, len(doc), 1 << 20)
    except TailUnread:
        return
    if got is not None:
        assert want != "error", f"the parser refuses {tail!r}, the reader read {got!r}"
        assert got == (doc.rindex(b"</kw>") + 5, ReadTest("A b-c_1.2", *want))


@pytest.mark.parametrize("status", _PLAIN_STATUSES)
def test_the_plain_status_is_read_as_the_parser_reads_it(status):
    tail = b"\n<tag>MRR</tag>\n" + status + b"\n"
    doc = b'<test id="s1-t1" name="n"><kw>k</kw>' + tail
    want = _by_parser(tail)
    try:
        got = read_usual_test(doc, 0, len(doc), 1 << 20)
    except TailUnread:
        assert want == "error" or b"\xc3" in status or b"&" in status or b"\r" in status
        return
    assert want != "error" and got is not None and got[1] == ReadTest("n", *want)


def _modes(path: Path) -> dict[str, list]:
    """The rows of each reading of one file (``build._walk``'s three modes)."""
    out = {}
    for mode in (parse_module.TAILS, parse_module.FILTER, parse_module.FULL):
        ctx, walk, rows = parse_module._walk(path, MRR_JOB, 1, {}, [], None, 1 << 30, mode)
        out[mode] = [rows.rows, ctx.problems, ctx.passed, ctx.failed, walk.facts, walk.top]
    return out


@pytest.mark.parametrize("name", ["rf3_output.xml", "rf6_output.xml"])
def test_the_three_readings_agree_on_fixtures(data_dir, name):
    got = _modes(data_dir / name)
    assert got[parse_module.TAILS] == got[parse_module.FILTER] == got[parse_module.FULL]
    assert got[parse_module.TAILS][0]  # (rows were read)


def test_the_three_readings_agree_on_rf7_trace(rf7_history):
    for path in rf7_history.values():
        got = _modes(path)
        assert got[parse_module.TAILS] == got[parse_module.FILTER] == got[parse_module.FULL]


ODD = """*** Test Cases ***
Odd & <Names> "quoted"
    [Documentation]    A doc with & and <, and "quotes".
    [Tags]    a&b    <x>    "q"    Grüße    MRR
    Fail    Maximum Receive Rate trial results in packets per second: [1.0, 2.0]\\n& more <lines>\\r\\n\\tend

Passing
    [Tags]    MRR    ${EMPTY}
    Pass Execution    Maximum Receive Rate trial results in packets per second: [3.0, 4.0]

Skipped
    [Tags]    MRR
    Skip    not today
"""


def test_robot_output_with_odd_characters(tmp_path):
    """Genuine Robot Framework output with escaped names, tags and multi-line messages."""
    suite = tmp_path / "odd.robot"
    suite.write_text(ODD)
    out = tmp_path / "output.xml"
    robot.run(str(suite), output=str(out), log=None, report=None, stdout=io.StringIO(), stderr=io.StringIO())
    tails: deque = deque()
    b"".join(strip_test_bodies([out.read_bytes()], tails))
    # the odd test's tail goes to the tail reader (its name is not plain); the other two are read whole
    assert len(tails) == 2 and b"&amp;" in tails[0] and b"&lt;" in tails[0]
    assert [t.name for t in tails[1]] == ["Passing", "Skipped"]
    got = _modes(out)
    assert got[parse_module.TAILS] == got[parse_module.FILTER] == got[parse_module.FULL]
    rows = got[parse_module.TAILS][0]
    odd = next(r for r in rows if r[1] == 'Odd & <Names> "quoted"')
    assert odd[9] == ('"Q"', "<X>", "A&B", "GRÜSSE", "MRR") and odd[10] == "FAIL"  # as Robot sorts them
    # Robot writes the CR as it is, and XML reads CR LF as LF
    assert odd[-1] == "Maximum Receive Rate trial results in packets per second: [1.0, 2.0]\n& more <lines>\n\tend"


def test_an_odd_tail_reads_the_file_again_with_the_parser(tmp_path, data_dir, monkeypatch):
    """One tail the reader gives up on: the file is read again by the filter alone, with the same rows."""
    src = (data_dir / "rf6_output.xml").read_bytes()
    at = src.index(b"<status", src.index(b"<tag>"))
    odd = tmp_path / "output.xml"
    odd.write_bytes(src[:at] + b"<kw name='x'/>" + src[at:])
    modes = []
    walk = parse_module._walk
    monkeypatch.setattr(parse_module, "_walk", lambda *a: modes.append(a[-1]) or walk(*a))
    got = parse_build(odd, MRR_JOB, 1)
    assert modes == [parse_module.TAILS, parse_module.FILTER]
    modes.clear()
    full = parse_build(odd, MRR_JOB, 1, fast=False)
    assert modes == [parse_module.FULL]
    assert repr(got.samples.to_dict("records")) == repr(full.samples.to_dict("records")) and got.meta == full.meta
    # what the filter cannot skip goes straight to the full parse (not through the filter alone)
    odd.write_bytes(src.replace(b'<suite id="s1-s1" ', b'<!-- c --><suite id="s1-s1" ', 1))
    modes.clear()
    parse_build(odd, MRR_JOB, 1)
    assert modes == [parse_module.TAILS, parse_module.FULL]
    modes.clear()
    odd.write_bytes(src[:len(src) // 2])  # truncated: the error is read again by the full parse, for its line
    with pytest.raises(ParseError) as err:
        parse_build(odd, MRR_JOB, 1)
    assert modes == [parse_module.TAILS, parse_module.FULL] and err.value.line is not None


def test_the_filter_hands_over_tails(monkeypatch):
    tails: deque[bytes] = deque()
    doc = b'<robot><suite><test name="a"/><test name="b"><kw>k</kw><tag>T</tag><status status="PASS"/></test></suite></robot>'
    assert b"".join(strip_test_bodies([doc], tails)) == \
        b'<robot><suite><test name="a"/><test name="b"></test></suite></robot>'
    assert list(tails) == [b"", b'<tag>T</tag><status status="PASS"/>']
    monkeypatch.setattr("pal.parse.prefilter.MAX_TAIL", 10)  # a longer tail is left to the parser's limits
    with pytest.raises(TailUnread):
        b"".join(strip_test_bodies([doc], deque()))


@pytest.mark.parametrize(("declaration", "tails"), [
    (b'<?xml version="1.0" encoding="UTF-8"?>', True), (b"<?xml version='1.0' encoding='utf8'?>", True),
    (b'<?xml version="1.0"?>', True), (b"", True), (b"\xef\xbb\xbf<?xml version='1.0'?>", True),
    (b'<?xml version="1.0" encoding="ISO-8859-1"?>', False), (b"\xff\xfe<\x00", False),
    (b'<?xml version="1.0" encoding="latin-1"', False),  # (the first chunk ends inside the declaration)
])
def test_tails_only_from_utf8_documents(declaration, tails):
    doc = declaration + b'<robot><suite><test name="a"><status status="PASS"/></test></suite></robot>'
    if declaration.startswith(b"<?xml") and b"?>" not in declaration:
        doc = [declaration, b' ?>' + doc[len(declaration):]]  # two chunks
    else:
        doc = [doc]
    if tails:
        b"".join(strip_test_bodies(doc, deque()))
    else:
        with pytest.raises(TailUnread):
            b"".join(strip_test_bodies(doc, deque()))


def _test(name: bytes, body: bytes = b'<kw name="k"><msg time="t" level="INFO">x</msg><status status="PASS"/></kw>',
          tail: bytes = b"<tag>MRR</tag>\n<tag>1C</tag>\n") -> bytes:
    return (b'<test id="t" name="' + name + b'" line="3">\n' + body + b"\n" + tail +
            b'<status status="PASS" start="2026-01-01T00:00:00.000000" elapsed="1.0">Maximum Receive Rate trial '
            b"results in packets per second: [1.0, 2.0]</status>\n</test>\n")


RUNS = b"".join([
    b'<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="Robot 7.0.1">\n<suite id="s1" name="Top">\n',
    b'<suite id="s1-s1" name="A">\n<kw name="Setup" type="SETUP">\n',
    b'<msg time="t" level="INFO">VPP version: 26.02-rc0</msg>\n<status status="PASS"/>\n</kw>\n',
    _test(b"t1"),
    _test(b"t2 &amp; more"),  # a name with a reference: its tail to the tail reader, the test to the parser
    _test(b"t3", body=b"<for flavor='IN'><iter><kw/></iter></for>"),  # a body that ends otherwise
    _test(b"t4"),
    _test(b"t5", tail=b"<doc>D</doc>\n<tag>NDRPDR</tag>\n"),  # a doc: read whole by the usual tail's regex
    b'<test id="t" name="t6"/>\n',
    b'<kw name="Teardown" type="TEARDOWN"><status status="PASS"/></kw>\n',
    b'<status status="PASS" start="2026-01-01T00:00:00.000000" elapsed="9.0"/>\n</suite>\n',
    b'<suite id="s1-s2" name="B">\n', _test(b"t7"), _test(b"t8", tail=b""),
    b'<status status="FAIL" start="2026-01-01T00:00:00.000000" elapsed="9.0"/>\n</suite>\n',
    b'<status status="FAIL" start="2026-01-01T00:00:00.000000" elapsed="20.0"/>\n</suite>\n',
    b"<statistics/>\n</robot>\n",
])


def test_usual_tests_are_read_whole_in_runs():
    """The filter reads CSIT's tests whole; the tests so read one after another in a suite are one
    run with one mark in the stream; the others are taken apart as before, in their places."""
    tails: deque = deque()
    stream = b"".join(strip_test_bodies([RUNS], tails))
    assert stream.count(b"<test/>") == 3 and stream.count(b"<test ") == 3  # three marks; t2, t3, t6 as they were
    kinds = [[t.name for t in item] if isinstance(item, list) else item.rstrip()[-9:] for item in tails]
    assert kinds == [["t1"], b"</status>", b"</status>", ["t4", "t5"], b"", ["t7", "t8"]]
    assert tails[3][1] == ("t5", ("NDRPDR",), "PASS", "Maximum Receive Rate trial results in packets per second: "
                                                         "[1.0, 2.0]")
    assert tails[5][1].tags == ()


@pytest.mark.parametrize("size", [1, 7, 64, 333, 1 << 20])
def test_tests_read_whole_are_walked_as_the_parser_walks_them(size):
    """Whatever the chunking (a run is closed at each chunk's end), the walk gives the tests, their
    suites, the setup's facts and the top suite's times that the XML parser alone gives."""
    def walk(fast: bool) -> tuple:
        head = RUNS.index(b"?>") + 2  # (a first chunk that ends inside the declaration gives up: above)
        chunks = [RUNS[:head]] + [RUNS[i:i + size] for i in range(head, len(RUNS), size)]
        tails: deque | None = deque() if fast else None
        w = Walk("f", 1, tails)
        tests = list(w.tests(strip_test_bodies(chunks, tails) if fast else chunks))
        return tests, w.facts, w.top, w.top_status

    fast, full = walk(True), walk(False)
    assert fast == full
    assert [(t.name, t.suite) for t in fast[0]] == [
        ("t1", "Top.A"), ("t2 & more", "Top.A"), ("t3", "Top.A"), ("t4", "Top.A"), ("t5", "Top.A"),
        ("t6", "Top.A"), ("t7", "Top.B"), ("t8", "Top.B")]
    assert "26.02-rc0" in fast[1].versions.values() and fast[3] == "FAIL"


def test_a_test_start_inside_a_body_read_whole_is_left_to_the_parser():
    doc = RUNS.replace(b'<msg time="t" level="INFO">x</msg>', b'<msg time="t" level="INFO">x</msg><test id="u">', 1)
    with pytest.raises(FilterUnsafe):
        b"".join(strip_test_bodies([doc], deque()))


def test_the_rf7_trace_is_read_whole(rf7_history):
    """Robot Framework 7's own output of CSIT-like tests is read whole, every test (the three
    readings agree on it above)."""
    for path in rf7_history.values():
        tails: deque = deque()
        stream = b"".join(strip_test_bodies([path.read_bytes()], tails))
        tests = [t for item in tails for t in item]
        assert tests and all(isinstance(item, list) for item in tails)
        assert len(tests) == sum(1 for _ in Walk("f", 1).tests([path.read_bytes()]))
        assert stream.count(b"<test/>") == len(tails) < len(tests)
