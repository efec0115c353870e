"""A test's tail (its tags and ``<status>``) read from its bytes, without the XML parser.

What the byte filter (``pal.parse.prefilter``) keeps of a test is its start tag and its tail:
``<doc>``, the ``<tag>``s (or RF 3's ``<tags>``), ``<timeout>`` and ``<status>``. Building those
20-odd elements as a tree and visiting them cost a third of a CSIT build's parse; a few
regular-expression matches over the tail's bytes give the same tags, status and message.

The reading is strict and gives up (``TailUnread``) wherever the XML parser might read the
bytes differently or refuse them: any element, attribute form, entity or character outside
what Robot Framework writes and plain XML 1.0 defines. The caller then parses the file again
with the tails left to the XML parser, which also reports a damaged file with its line.
What it does read it reads as the parser does: UTF-8, line ends normalised, the five
predefined entities and character references resolved, blanks in attribute values made spaces.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from pal.parse.unsafe import TailUnread


_WS = rb"[ \t\r\n]*"
# an attribute: its name, then its value in double or single quotes (three groups)
_ATTR = rb"""[ \t\r\n]+([A-Za-z_:][-\w.:]*)[ \t\r\n]*=[ \t\r\n]*(?:"([^"<]*)"|'([^'<]*)')"""
_ATTR_RX = re.compile(_ATTR)
_ATTRS = rb"(?P<attrs>(?:" + _ATTR + rb")*)"  # all of them (the groups inside are not read)
# an element of a test's tail: its name, raw attributes, and "/>" or ">"
_OPEN = re.compile(rb"[ \t\r\n]*<(?P<name>tag|tags|doc|status|timeout)" + _ATTRS + rb"[ \t\r\n]*(?P<end>/?>)")
_TEXT_AND_CLOSE = {name: re.compile(rb"([^<]*)</" + name + rb"[ \t\r\n]*>")
                   for name in (b"tag", b"doc", b"status", b"timeout")}
# consecutive plain <tag>s (RF 4+ writes a test's tags so): read together, memoised as a block
_TAG_RUN = re.compile(rb"(?:[ \t\r\n]*<tag>[^<]*</tag>)+")
_TAG_TEXT = re.compile(rb"<tag>([^<]*)</tag>")
_TAG_TEXT_STR = re.compile(r"<tag>([^<]*)</tag>")
# a tail as Robot Framework 4+ writes it: an optional <doc>, the tags, the status
_USUAL = re.compile(rb"(?:[ \t\r\n]*<doc>(?P<doc>[^<]*)</doc>)?(?P<tags>(?:[ \t\r\n]*<tag>[^<]*</tag>)*)[ \t\r\n]*"
                    rb"<status" + _ATTRS + rb"[ \t\r\n]*(?:/>|>(?P<text>[^<]*)</status>)[ \t\r\n]*")
# a tail's last element, its <status>, and the blanks after it
_STATUS_END = re.compile(rb"<status" + _ATTRS + rb"[ \t\r\n]*(?:/>|>(?P<text>[^<]*)</status>)[ \t\r\n]*")
# the inside of RF 3's <tags>: plain or empty <tag>s only
_WRAPPED = re.compile(rb"((?:[ \t\r\n]*<tag[ \t\r\n]*(?:/>|>[^<]*</tag[ \t\r\n]*>))*)[ \t\r\n]*</tags[ \t\r\n]*>")
_WRAPPED_TAG = re.compile(rb"<tag[ \t\r\n]*(?:/>|>([^<]*)</tag)")
_BLANK = re.compile(_WS)
# bytes XML 1.0 does not allow as characters (C0 controls but tab/LF/CR; U+FFFE, U+FFFF)
_NOT_CHARS = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]")
# printable ASCII but '&', and spaces: such bytes are their own text, in content and attribute values
_PLAIN = re.compile(rb"[ -%'-~]*+")
_PLAIN_TEXT = re.compile(rb"[\t\n -%'-~]*+")  # the same in content, where tabs and LFs are read as they are
_REF = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
# a <status>'s attributes as Robot Framework 4-7 write them, with values of plain characters only
# (nothing to decode, normalise or refuse): its status is read without ``_attributes``, a third of
# a CSIT tail's reading. Anything else (other attributes, blanks, characters) goes the general way.
_PLAIN_STATUS = re.compile(rb' status="([A-Z ]*)" (?:start="[-0-9T:.]*" elapsed="[0-9.]*"'
                           rb'|starttime="[0-9 :.]*" endtime="[0-9 :.]*")')
# the same as Robot Framework 4-7 write it, with plain characters only (``_PLAIN_STATUS``; printable
# ASCII, tabs and LFs but '&' and '<' in the text): read as it is, with no reference to resolve
_PLAIN_STATUS_END = re.compile(rb'<status' + _PLAIN_STATUS.pattern + rb"(?:/>|>([\t\n -%'-;=-~]*)</status>)[ \t\r\n]*")


def _char(code: int) -> str:
    if code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF:
        return chr(code)
    raise TailUnread(f"character reference to U+{code:04X}, not an XML character")


def _ref(m: re.Match[str]) -> str:
    if m.group(1):
        return _ENTITIES[m.group(1)]
    return _char(int(m.group(2)) if m.group(2) else int(m.group(3), 16))


def _text(raw: bytes, attribute: bool = False) -> str:
    """Character data (or an attribute value) as the XML parser gives it."""
    if (_PLAIN.fullmatch(raw) if attribute else _PLAIN_TEXT.fullmatch(raw) and b"]]>" not in raw):
        return raw.decode("ascii")
    if (not attribute and b"]]>" in raw) or _NOT_CHARS.search(raw):
        raise TailUnread("characters XML does not allow in a test's tail")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TailUnread("a test's tail is not UTF-8") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if attribute and ("\n" in text or "\t" in text):
        text = text.replace("\n", " ").replace("\t", " ")
    if "&" in text:
        if text.count("&") != len(_REF.findall(text)):
            raise TailUnread("an entity reference XML does not predefine")
        text = _REF.sub(_ref, text)
    return text


def _attributes(raw: bytes) -> dict[bytes, str]:
    """An element's attributes, every value checked and read as the parser would."""
    plain = _PLAIN.fullmatch(raw) is not None  # (blanks between attributes are spaces then)
    found: dict[bytes, str] = {}
    for name, double, single in _ATTR_RX.findall(raw):
        if name in found:
            raise TailUnread("an attribute written twice")
        value = double or single
        found[name] = value.decode("ascii") if plain else _text(value, attribute=True)
    return found


def _tags(texts: list[bytes]) -> tuple[str, ...]:
    return tuple(filter(None, (_text(t).strip() for t in texts)))


# a run of plain <tag>s, blanks after it too (what a usual tail holds before its <status>)
_TAG_BLOCK = re.compile(rb"(?:[ \t\r\n]*<tag>[^<]*</tag>)*[ \t\r\n]*")


@functools.lru_cache(maxsize=1 << 14)
def _tag_run(block: bytes) -> tuple[str, ...] | None:
    """The tags of a run of ``<tag>`` elements (blanks around them), stripped, blank ones left out;
    None when the block is anything else. Memoised: a test has the same tags every build, and the
    tuple returned is the one the test's identity is cached by (``build._identity``), so the cache
    adds little but the block's bytes; the block is checked once, when first seen. A plain block
    (printable ASCII, no '&') is decoded once, not a tag at a time (a worker's first build of a job)."""
    if not _TAG_BLOCK.fullmatch(block):
        return None
    if _PLAIN_TEXT.fullmatch(block) and b"]]>" not in block:
        return tuple(filter(None, map(str.strip, _TAG_TEXT_STR.findall(block.decode("ascii")))))
    return _tags(_TAG_TEXT.findall(block))


def _status(m: re.Match[bytes]) -> tuple[str | None, str]:
    """The ``status`` attribute and the text of a ``<status>`` matched with groups ``attrs`` and ``text``."""
    attrs = m["attrs"]
    plain = _PLAIN_STATUS.fullmatch(attrs) if attrs else None
    status = plain[1].decode("ascii") if plain else (_attributes(attrs).get(b"status") if attrs else None)
    return status, (_text(m["text"]) if m["text"] else "")


def _usual(m: re.Match[bytes]) -> tuple[tuple[str, ...], str | None, str]:
    """The tags, status and message of a tail ``_USUAL`` matched."""
    if m["doc"] is not None:
        _text(m["doc"])  # (checked as the parser would, not read)
    return (_tag_run(m["tags"]) or ()) if m["tags"] else (), *_status(m)


class ReadTest(NamedTuple):
    """A test read whole from its bytes by ``read_usual_test`` (the walker adds its suite)."""

    name: str
    tags: tuple[str, ...]
    status: str | None
    message: str


#: the tests the byte filter read whole, one after another in one suite, in document order: the
#: filter puts one empty ``<test/>`` in the stream in their place, and the walker reads them there
Run = list[ReadTest]

# A test's start tag as Robot Framework 3-7 writes it, with values of plain characters only (printable
# ASCII but '"', '&' and '<': nothing to decode or normalise): the name is read without ``_attributes``
_PLAIN_START = re.compile(rb'<test id="[ !#-%\'-;=-~]*" name="([ !#-%\'-;=-~]*)"(?: line="[0-9]*")?>')
# the closing tag of the keyword a test's body ends with (CSIT's tests end with their teardown)
_KW_CLOSE = b"</kw>"
_KW_CLOSE_LEN = len(_KW_CLOSE)


def read_usual_test(buf: bytes | bytearray, start: int, end: int, longest: int) -> tuple[int, ReadTest] | None:
    """The test at ``buf[start:end]`` (from its ``<test`` to just before its ``</test>``) read whole
    when it is as Robot Framework 4+ writes CSIT's tests: a plain start tag, a body that ends with
    a ``</kw>``, then a usual tail (``_USUAL``) no longer than ``longest``. Returns where its body
    ends and the test; None for any other test, which the filter then takes apart as before.

    The body ends where ``prefilter.body_end`` says it does: the tail matched holds no closing tag
    but its own elements', so the last ``</kw>`` is the body's last closing tag.

    Raises:
        TailUnread: as ``read_tail`` does, for a usual tail whose text the parser might read otherwise.
    """
    head = _PLAIN_START.match(buf, start, end)
    if head is None:
        return None
    cut = buf.rfind(_KW_CLOSE, head.end(), end)
    if cut < 0:
        return None
    cut += _KW_CLOSE_LEN
    if end - cut > longest:
        return None
    # The tags and the status apart: the tags are the same bytes every build, checked and read
    # once (``_tag_run``); only the status is matched each time. '<' is escaped in text and
    # attribute values, so the last "<status" begins the last element.
    at = buf.rfind(b"<status", cut, end)
    tags = _tag_run(bytes(buf[cut:at])) if at >= 0 else None
    if tags is not None:
        m = _PLAIN_STATUS_END.fullmatch(buf, at, end)
        if m is not None and (m[2] is None or b"]]>" not in m[2]):
            return cut, ReadTest(head[1].decode("ascii"), tags, m[1].decode("ascii"),
                                 m[2].decode("ascii") if m[2] else "")
        m = _STATUS_END.fullmatch(buf, at, end)
        if m is None:
            return None
        return cut, ReadTest(head[1].decode("ascii"), tags, *_status(m))
    m = _USUAL.fullmatch(buf, cut, end)  # (a <doc>, say)
    if m is None:
        return None
    return cut, ReadTest(head[1].decode("ascii"), *_usual(m))


def read_tail(tail: bytes) -> tuple[tuple[str, ...], str | None, str]:
    """The test's tags (stripped, blank ones left out; RF 3's wrapped ones after the others, as
    ``dialect.tags_and_status`` reads them), its last ``<status>``'s ``status`` attribute (None:
    no ``<status>``, or none on it) and that element's text.

    Raises:
        TailUnread: the tail holds something else, or XML this reader does not vouch for.
    """
    m = _USUAL.fullmatch(tail)
    if m:
        return _usual(m)
    runs: list[tuple[str, ...]] = []  # the test's own tags, a tuple per run of elements
    wrapped: list[bytes] = []
    status: str | None = None
    message = ""
    pos, end = 0, len(tail)
    while True:
        run = _TAG_RUN.match(tail, pos)
        if run:
            runs.append(_tag_run(run.group()) or ())
            pos = run.end()
            continue
        m = _OPEN.match(tail, pos)
        if m is None:
            if _BLANK.match(tail, pos).end() == end:  # type: ignore[union-attr]
                break
            raise TailUnread("a test's tail holds other than tags, doc, timeout and status")
        name, attrs, closed = m["name"], m["attrs"], m["end"] == b"/>"
        pos = m.end()
        values = _attributes(attrs) if attrs else {}
        if name == b"tags":
            if not closed:
                inner = _WRAPPED.match(tail, pos)
                if inner is None:
                    raise TailUnread("<tags> holds other than <tag>s")
                wrapped.extend(t for t in _WRAPPED_TAG.findall(inner.group(1)) if t)
                pos = inner.end()
            continue
        text = ""
        if not closed:
            body = _TEXT_AND_CLOSE[name].match(tail, pos)
            if body is None:
                raise TailUnread(f"<{name.decode()}> holds an element or is not closed")
            text = _text(body.group(1))
            pos = body.end()
        if name == b"tag":
            runs.append(tuple(filter(None, (text.strip(),))))
        elif name == b"status":
            status, message = values.get(b"status"), text
    if wrapped:
        runs.append(_tags(wrapped))
    if len(runs) == 1:
        return runs[0], status, message
    return tuple(t for run in runs for t in run), status, message
