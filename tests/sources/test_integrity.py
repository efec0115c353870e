"""Container checks: whole files pass, cut or foreign ones are named for what they are."""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import zipfile

import pytest

from pal.sources.integrity import IntegrityError, check_file, sniff
from tests.sources.conftest import output_xml

XML = output_xml("job", 1)


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def zipped(member: str = "robot-plugin/output.xml") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo(member, date_time=(2024, 1, 1, 0, 0, 0))  # fixed: parameter ids must not vary
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, XML)
    return buf.getvalue()


@pytest.mark.parametrize("data,kind", [
    (gzip.compress(XML, mtime=0), "gzip"),
    (gzip.compress(XML[:50], mtime=0) + gzip.compress(XML[50:], mtime=0), "gzip"),  # concatenated members
    (lzma.compress(XML), "xz"),
    (zipped(), "zip"),
    (XML, "xml"),
    (b"\xef\xbb\xbf" + XML, "xml"),
], ids=["gzip", "gzip-members", "xz", "zip", "xml", "xml-bom"])
def test_whole_files_pass_with_their_hash(tmp_path, data, kind):
    sha, got = check_file(write(tmp_path, "f", data), chunk_size=7)  # tiny chunks: the streaming path
    assert (sha, got) == (hashlib.sha256(data).hexdigest(), kind)


@pytest.mark.parametrize("data,message", [
    (gzip.compress(XML, mtime=0)[:-9], "truncated gzip data"),
    (gzip.compress(XML, mtime=0)[:30], "truncated gzip data"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\xff" * 40, "corrupt gzip data"),
    (lzma.compress(XML)[:-20], "truncated xz data"),
    (zipped()[:-30], "damaged zip archive"),
    (zipped("report.html"), r"holds no output\*\.xml"),
    (XML[:-20], "truncated XML"),
    (b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "an HTML page"),
    (b"BZh91AY&SY", "unknown magic bytes"),
    (b"", "empty file"),
], ids=["gzip-cut-tail", "gzip-cut-30", "gzip-corrupt", "xz-cut", "zip-cut", "zip-no-output", "xml-cut", "html",
        "bzip2", "empty"])
def test_damaged_or_foreign_files_are_named(tmp_path, data, message):
    with pytest.raises(IntegrityError, match=message):
        check_file(write(tmp_path, "f", data))


def test_sniff():
    assert [sniff(b) for b in (b"\x1f\x8b\x08", b"\xfd7zXZ\x00\x00", b"PK\x03\x04", b"  <?xml", b"%PDF")] == [
        "gzip", "xz", "zip", "xml", "unknown"]
