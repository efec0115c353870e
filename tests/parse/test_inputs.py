"""Containers, damaged files and hostile XML: each either parses to the same samples or raises
a ParseError that names the file and the build."""

from __future__ import annotations

import gzip
import lzma
import math
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from pal.errors import ParseError
from pal.parse import parse_build
from pal.parse.archive import check_prolog, container_of, select_zip_member
from pal.parse.walker import Walk
from tests.parse.conftest import MRR_JOB

JOB = MRR_JOB


@pytest.fixture(scope="module")
def rf6_bytes(data_dir) -> bytes:
    return (data_dir / "rf6_output.xml").read_bytes()


@pytest.fixture(scope="module")
def expected(data_dir):
    return parse_build(data_dir / "rf6_output.xml", JOB, 7).samples.drop(columns="source_file")


def _same(path: Path, expected) -> None:
    got = parse_build(path, JOB, 7).samples.drop(columns="source_file")
    assert got.to_dict("records").__repr__() == expected.to_dict("records").__repr__()


def test_gzip_detected_by_magic_not_name(tmp_path, rf6_bytes, expected):
    p = tmp_path / "output.xml"  # gzip content under a plain name
    p.write_bytes(gzip.compress(rf6_bytes))
    _same(p, expected)


def test_xz(tmp_path, rf6_bytes, expected):
    p = tmp_path / "output.xml.xz"
    p.write_bytes(lzma.compress(rf6_bytes))
    _same(p, expected)


@pytest.mark.parametrize("member", ["robot-plugin/output.xml", "archives/output_info.xml"])
def test_zip_members(tmp_path, rf6_bytes, expected, member):
    p = tmp_path / "robot-plugin.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("robot-plugin/log.html", "<html></html>")
        zf.writestr(member, rf6_bytes)
    _same(p, expected)


def test_zip_member_choice():
    assert select_zip_member(["a/log.html", "robot-plugin/output.xml", "x/output.xml"]) == "robot-plugin/output.xml"
    assert select_zip_member(["a/output_info.xml"]) == "a/output_info.xml"
    assert select_zip_member(["a/output.xml", "b/output_info.xml"]) == "a/output.xml"
    assert select_zip_member(["a/output.xml", "b/output.xml"]) is None
    assert select_zip_member(["report.html"]) is None


def test_zip_without_output_xml(tmp_path):
    p = tmp_path / "robot-plugin.zip"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("robot-plugin/log.html", "<html></html>")
    with pytest.raises(ParseError, match=r"robot-plugin\.zip \(build 7\): zip archive holds no") as ei:
        parse_build(p, JOB, 7)
    assert ei.value.file == str(p) and ei.value.build == 7


def test_container_magic():
    assert container_of(b"\x1f\x8b\x08\x00") == "gzip"
    assert container_of(b"\xfd7zXZ\x00\x00") == "xz"
    assert container_of(b"PK\x03\x04") == "zip"
    assert container_of(b"<?xml ") == "plain"


def test_truncated_gzip(tmp_path, rf6_bytes):
    data = gzip.compress(rf6_bytes)
    p = tmp_path / "output.xml.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match=r"output\.xml\.gz \(build 7\): damaged archive"):
        parse_build(p, JOB, 7)


def test_bad_gzip(tmp_path):
    p = tmp_path / "output.xml.gz"
    p.write_bytes(b"\x1f\x8b" + b"\x00garbage" * 20)
    with pytest.raises(ParseError, match="damaged archive"):
        parse_build(p, JOB, 7)


def test_truncated_xml_is_refused_with_its_line(tmp_path, rf6_bytes):
    """Decision: a file cut after complete tests still fails; a partial build would look like missing tests."""
    cut = rf6_bytes[: rf6_bytes.index(b"<suite id=\"s1-s1-s1-s3\"")]
    p = tmp_path / "output.xml"
    p.write_bytes(cut)
    with pytest.raises(ParseError, match=r"output\.xml:\d+ \(build 7\): truncated or malformed XML") as ei:
        parse_build(p, JOB, 7)
    assert ei.value.line == cut.count(b"\n") + 1 or ei.value.line == cut.count(b"\n")


@pytest.mark.parametrize("content, reason", [
    (b"", "empty file"),
    (b"   \n", "empty file"),
    (b"\x89PNG\r\n\x1a\n....", "not an XML document"),
    (b"<html><body>404 Not Found", "truncated or malformed XML"),
    (b'<?xml version="1.0"?>\n<robot generator="Robot 7"></robot>', "no top-level suite"),
])
def test_unreadable_content(tmp_path, content, reason):
    p = tmp_path / "output.xml"
    p.write_bytes(content)
    with pytest.raises(ParseError, match=reason):
        parse_build(p, JOB, 9)


def test_not_robot_xml(data_dir):
    with pytest.raises(ParseError, match=r"not_robot\.xml \(build 3\): not a Robot Framework result \(root element "
                                         r"<testsuites>\)"):
        parse_build(data_dir / "not_robot.xml", JOB, 3)


def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match=r"nope\.xml \(build 3\): no such file"):
        parse_build(tmp_path / "nope.xml", JOB, 3)


def test_decompressed_size_cap(tmp_path, rf6_bytes):
    p = tmp_path / "output.xml.gz"
    p.write_bytes(gzip.compress(rf6_bytes))
    with pytest.raises(ParseError, match="exceeds the cap of 2000 bytes"):
        parse_build(p, JOB, 7, max_bytes=2000)
    z = tmp_path / "r.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("robot-plugin/output.xml", rf6_bytes)
    with pytest.raises(ParseError, match="declares .* bytes, over the cap of 2000"):
        parse_build(z, JOB, 7, max_bytes=2000)


@pytest.mark.parametrize("name", ["billion_laughs.xml", "xxe_file.xml", "xxe_http.xml"])
def test_doctype_is_refused(data_dir, name):
    with pytest.raises(ParseError, match=rf"{name} \(build 1\): XML with a DOCTYPE"):
        parse_build(data_dir / name, JOB, 1)


def test_gzipped_billion_laughs_is_refused(tmp_path, data_dir):
    p = tmp_path / "output.xml.gz"
    p.write_bytes(gzip.compress((data_dir / "billion_laughs.xml").read_bytes()))
    with pytest.raises(ParseError, match="DOCTYPE"):
        parse_build(p, JOB, 1)


def test_external_dtd_never_fetched(tmp_path):
    """A listening socket sees no connection while a file pointing at it is parsed."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    hits = []

    def accept():
        try:
            hits.append(srv.accept())
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    p = tmp_path / "output.xml"
    p.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "http://127.0.0.1:{port}/x.dtd">\n'
                 '<robot><suite name="a"><status status="PASS"/></suite></robot>')
    with pytest.raises(ParseError, match="DOCTYPE"):
        parse_build(p, JOB, 1)
    t.join()
    srv.close()
    assert hits == []


def test_parser_itself_does_not_expand_entities(data_dir):
    """Second line of defence: fed straight to the walker (no prolog check), nothing expands."""
    data = (data_dir / "billion_laughs.xml").read_bytes()
    with pytest.raises(ParseError, match=r"bl\.xml:\d+ \(build 1\): malformed XML: Maximum entity amplification"):
        list(Walk("bl.xml", 1).tests([data]))
    data = (data_dir / "xxe_file.xml").read_bytes()
    tests = list(Walk("xxe.xml", 1).tests([data]))
    assert len(tests) == 1 and tests[0].status == "PASS"
    assert "root:" not in tests[0].message and tests[0].message == ""


def test_prolog_check():
    assert check_prolog(b'<?xml version="1.0"?>\n<!-- c -->\n<robot>') == "ok"
    assert check_prolog(b"\xef\xbb\xbf<robot>") == "ok"
    assert check_prolog(b'<?xml version="1.0"?>\n<!-- unterminated') is None
    assert "DOCTYPE" in check_prolog(b'<?xml version="1.0"?><!DOCTYPE r>')
    assert check_prolog(b"{json: 1}").startswith("not an XML document")


def test_test_without_status_is_fail_with_warning(tmp_path):
    p = tmp_path / "output.xml"
    p.write_text('<robot generator="Robot 7.0" generated="2024-01-01T00:00:00" schemaversion="5">'
                 '<suite id="s1" name="Tests"><test id="s1-t1" name="64B-1c-eth-mrr"><tag>MRR</tag><tag>2T1C</tag>'
                 '</test><test id="s1-t2" name="64B-2c-eth-mrr"><tag>MRR</tag><tag>4T2C</tag>'
                 '<status status="PASS" start="2024-01-01T00:00:01" elapsed="1.0">'
                 'Maximum Receive Rate trial results in packets per second: [4.0]</status></test>'
                 '<status status="PASS" start="2024-01-01T00:00:00" elapsed="90.5"/></suite></robot>')
    r = parse_build(p, JOB, 11)
    first = r.samples.iloc[0]
    assert (first.test_id, first.status, first.message) == ("tests.64b-2t1c-eth-mrr", "FAIL", "no status in output.xml")
    assert math.isnan(first.value)
    assert r.samples.iloc[1].value == 4.0
    assert len(r.problems) == 1
    assert "output.xml: build 11: test Tests.64B-1c-eth-mrr: test has no <status>" in r.problems[0].message
    assert r.meta.duration_s == 90.5 and (r.meta.passed, r.meta.failed) == (1, 1)


def test_suite_level_keywords_are_read_and_dropped_between_chunks():
    """Setup facts are read even when the walker trims a suite's finished keywords between chunks,
    and the suite never holds more than TRIM_AT + 1 of them at a chunk boundary."""
    setup = (b'<kw name="Show Vpp Version On All Duts" type="SETUP"><msg level="INFO">VPP Version: '
             b'25.02-rc0~123</msg><msg level="INFO">Setup of node TG host 10.30.51.45, port 22 done</msg>'
             b'<status status="PASS"/></kw>')
    noise = b'<kw name="Log" type="TEARDOWN"><msg level="INFO">x</msg><status status="PASS"/></kw>' * 2000
    doc = (b'<?xml version="1.0"?>\n<robot><suite name="Tests">' + setup + noise
           + b'<test name="t"><tag>MRR</tag><status status="PASS">ok</status></test>' + noise
           + b'<status status="PASS" endtime="20240101 10:00:00.000"/></suite></robot>')
    walk = Walk("t.xml", 1)
    sizes = []
    original = walk._trim

    def spy():
        original()
        if walk._open:
            sizes.append(len(walk._open[-1]))

    walk._trim = spy
    chunks = [doc[i:i + 4096] for i in range(0, len(doc), 4096)]
    tests = list(walk.tests(chunks))
    assert [t.name for t in tests] == ["t"] and tests[0].tags == ("MRR",)
    assert walk.facts.versions.get("vpp") == "25.02-rc0~123" and walk.facts.tg_ip == "10.30.51.45"
    assert walk.top_status == "PASS"
    assert sizes and max(sizes) <= Walk.TRIM_AT + 1 + 4096 // 60  # one chunk's worth of keywords at most
