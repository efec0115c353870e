"""Reading the bytes of an output.xml, whatever it was archived as.

Builds archive ``output.xml`` plain, gzipped, xz-compressed or inside the Jenkins
robot-plugin zip. The container is recognised by its magic bytes (a ``.gz`` name on a
plain file, or no suffix at all, is common in artifact caches). Everything is streamed in
chunks, never extracted to disk, and the decompressed size is capped so that a
decompression bomb stops with a ParseError instead of filling memory or disk.

The XML prolog is checked before any byte reaches the XML parser: a document type
declaration (the carrier of billion-laughs and external-entity attacks) has no place in
a Robot Framework result file, so it is rejected outright.
"""

from __future__ import annotations

import gzip
import lzma
import re
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

from pal.errors import ParseError

#: Default cap on the decompressed size of one output.xml (CSIT TRACE files reach ~2 GiB).
DEFAULT_MAX_BYTES = 4 * 1024**3
#: Chunk fed to the XML parser; large enough that per-chunk Python work is negligible.
CHUNK = 1 << 20
#: How far into the document the prolog (declaration, comments, DOCTYPE) may reach.
MAX_PROLOG = 1 << 20

_GZIP = b"\x1f\x8b"
_XZ = b"\xfd7zXZ\x00"
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_BZ2 = b"BZh"
_ZIP_MEMBER = re.compile(r"output[^/]*\.xml$", re.IGNORECASE)
_PREFERRED_MEMBER = "robot-plugin/output.xml"

# Errors the decompressors raise on damaged input; all become ParseError.
_DECOMPRESS_ERRORS = (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile, zlib.error)


def container_of(head: bytes) -> str:
    """Name the container format from the first bytes of a file: gzip, xz, zip or plain."""
    if head.startswith(_GZIP):
        return "gzip"
    if head.startswith(_XZ):
        return "xz"
    if head.startswith(_ZIP):
        return "zip"
    if head.startswith(_BZ2):
        return "bzip2"
    return "plain"


def select_zip_member(names: list[str]) -> str | None:
    """The zip member holding the Robot result: ``robot-plugin/output.xml``, else a single ``*output*.xml``."""
    if _PREFERRED_MEMBER in names:
        return _PREFERRED_MEMBER
    hits = [n for n in names if not n.endswith("/") and _ZIP_MEMBER.search(n.rsplit("/", 1)[-1])]
    if len(hits) == 1:
        return hits[0]
    exact = [n for n in hits if n.rsplit("/", 1)[-1].lower() == "output.xml"]
    return exact[0] if len(exact) == 1 else None


def read_chunks(path: str | Path, build: int | str | None = None, *,
                max_bytes: int = DEFAULT_MAX_BYTES, chunk: int = CHUNK) -> Iterator[bytes]:
    """Yield the decompressed XML of ``path`` in chunks, the first one with its prolog checked.

    Raises:
        ParseError: unreadable file, damaged archive, zip without an output.xml, more than
            ``max_bytes`` decompressed, not XML, or an XML prolog with a DOCTYPE.
    """
    name = str(path)
    with ExitStack() as stack:
        stream = _open(path, name, build, max_bytes, stack)
        total = 0
        first = True
        pending = b""
        while True:
            try:
                data = stream.read(chunk)
            except _DECOMPRESS_ERRORS as exc:
                raise ParseError(name, f"damaged archive or unreadable file: {exc}", build) from None
            if data:
                total += len(data)
                if total > max_bytes:
                    raise ParseError(name, f"decompressed size exceeds the cap of {max_bytes} bytes", build)
            if first:
                pending += data
                verdict = check_prolog(pending)
                if verdict is None and data and len(pending) < MAX_PROLOG:
                    continue  # the prolog goes on past this chunk
                if verdict is None:
                    verdict = "empty file" if not pending.strip() else "XML prolog too long or unterminated"
                if verdict != "ok":
                    raise ParseError(name, verdict, build)
                first = False
                data, pending = pending, b""
            if not data:
                return
            yield data


def _open(path: str | Path, name: str, build: int | str | None, max_bytes: int, stack: ExitStack) -> BinaryIO:
    try:
        raw = stack.enter_context(open(path, "rb"))
        head = raw.read(8)
        raw.seek(0)
    except OSError as exc:
        raise ParseError(name, f"cannot open: {exc.strerror or exc}", build) from None
    kind = container_of(head)
    if kind == "gzip":
        return stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
    if kind == "xz":
        return stack.enter_context(lzma.LZMAFile(raw, mode="rb"))
    if kind == "bzip2":
        import bz2

        return stack.enter_context(bz2.BZ2File(raw, mode="rb"))
    if kind == "zip":
        try:
            zf = stack.enter_context(zipfile.ZipFile(raw))
            member = select_zip_member(zf.namelist())
            if member is None:
                raise ParseError(name, "zip archive holds no robot-plugin/output.xml nor a single *output*.xml "
                                 f"(members: {', '.join(zf.namelist()[:10]) or 'none'})", build)
            info = zf.getinfo(member)
            if info.file_size > max_bytes:
                raise ParseError(name, f"zip member {member} declares {info.file_size} bytes, "
                                 f"over the cap of {max_bytes}", build)
            return stack.enter_context(zf.open(info))
        except _DECOMPRESS_ERRORS as exc:
            raise ParseError(name, f"damaged zip archive: {exc}", build) from None
    return raw


_PI_OR_COMMENT = re.compile(r"\s*(?:<\?.*?\?>|<!--.*?-->)", re.DOTALL)
_DECL_ENCODING = re.compile(r"""^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})["']""")


def declared_encoding(text: str) -> str | None:
    """The ``encoding=`` of the XML declaration ``text`` starts with, as written (None: none)."""
    m = _DECL_ENCODING.match(text)
    return m.group(1) if m else None


#: Byte order marks and the first bytes of "<?" / "<" in the encodings XML 1.0 allows
#: (its appendix F): the prolog is read in the encoding the parser would use.
_BOMS = ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xef\xbb\xbf", "utf-8"),
         (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
_SIGNATURES = ((b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"), (b"\x00<\x00?", "utf-16-be"),
               (b"<\x00?\x00", "utf-16-le"), (b"\x00\x00<\x00", None), (b"\x00<\x00\x00", None),
               (b"Lo\xa7\x94", None))  # None: UCS-4 in unusual byte orders, EBCDIC: no Python codec


def _prolog_text(data: bytes) -> tuple[str | None, str]:
    """The start of ``data`` as text, in the encoding a conforming parser would read it in.

    Returns (text, "") or (None, reason to refuse). The family comes from the BOM or the first
    four bytes; an ``encoding=`` in the declaration then picks the codec within it.
    """
    codec, skip = "utf-8", 0
    for bom, name in _BOMS:
        if data.startswith(bom):
            codec, skip = name, len(bom)
            break
    else:
        for sig, name in _SIGNATURES:
            if data.startswith(sig):
                if name is None:
                    return None, f"XML in an encoding pal does not read (starts with {data[:4]!r})"
                codec = name
                break
        else:  # no declaration: "<!" or blanks as UTF-16 units (libxml2 guesses from more bytes too)
            if len(data) >= 4 and data[1] == data[3] == 0 and data[0] and data[2]:
                codec = "utf-16-le"
            elif len(data) >= 4 and data[0] == data[2] == 0 and data[1] and data[3]:
                codec = "utf-16-be"
    text = data[skip:].decode(codec, errors="replace")
    declared = declared_encoding(text)
    if declared and not skip and codec == "utf-8":  # an ASCII-compatible start: the declaration decides
        if re.match(r"(?i)(utf-?(16|32)|ucs-?[24])", declared):
            return text, ""  # contradicts the bytes: the parser fails on it as malformed XML
        try:
            text = data.decode(declared, errors="replace")
        except LookupError:
            return None, f"XML declares an encoding pal does not read ({declared!r})"
    return text, ""


#: bytes of a document's start judged first: a verdict on them stands for the whole (the text they
#: decode to is the whole's start), and a prolog that goes on past them is judged on all the bytes
#: at hand. Decoding all of a first chunk (1 MB, twice with a declared encoding) cost 3 ms a build.
_PROLOG_PREFIX = 1 << 12


def check_prolog(data: bytes) -> str | None:
    """Judge the XML prolog at the start of ``data``.

    Returns "ok" when the root element starts without a DOCTYPE, a reason string when the
    document must be rejected, and None when ``data`` ends before the prolog does. The prolog
    is decoded first (UTF-8, UTF-16 and UTF-32 with or without a BOM, or the declared
    encoding), so a DOCTYPE is found in every encoding the parser would accept.
    """
    if len(data) > _PROLOG_PREFIX:
        verdict = _judge_prolog(data[:_PROLOG_PREFIX])
        if verdict is not None:
            return verdict
    return _judge_prolog(data)


def _judge_prolog(data: bytes) -> str | None:
    text, refused = _prolog_text(data)
    if text is None:
        return refused
    pos = 0
    while True:
        m = _PI_OR_COMMENT.match(text, pos)
        if not m:
            break
        pos = m.end()
    rest = text[pos:].lstrip()
    if not rest or rest == "\ufffd":
        return None
    if rest.startswith("<!DOCTYPE") or rest.startswith("<!ENTITY"):
        return "XML with a DOCTYPE/entity declarations is refused (entity expansion and external entities)"
    if rest.startswith(("<?", "<!--")):
        return None  # an unterminated PI or comment: need more bytes
    if rest[:1] == "<" and len(rest) > 1 and rest[1:2] not in ("!", "?"):
        return "ok"
    if rest[:1] == "<" and len(rest) == 1:
        return None
    return f"not an XML document (starts with {rest[:16]!r})"
