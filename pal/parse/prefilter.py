"""Drop test bodies (keyword trees) from the byte stream before the XML parser sees them.

A TRACE-level output.xml is mostly keyword trees inside tests, and pal needs none of
them: a test's results are in its own ``<status>``, and its tags come after its body.
Building those trees (in C) is most of the parse time, so this filter cuts them out with
``bytes.find``/``rfind`` alone: for each ``<test ...>...</test>`` it keeps the start tag
and the tail after the last closing tag of a body element (``</kw>``, ``</for>``, ...),
that is ``<doc>``, the tags, ``<timeout>`` and ``<status>``. Nested closings always come
before their parent's, so the last body closing tag ends a top-level body element and
the kept tail is balanced XML. Everything outside tests (suite setups) passes unchanged.

This relies on what Robot Framework writes: ``<`` and ``>`` escaped in text and attribute
values, no comments, no CDATA. A chunk with ``<!--`` or ``<![CDATA[`` raises
``FilterUnsafe`` and the caller parses the file again without the filter.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator

from pal.parse.archive import declared_encoding
from pal.parse.tails import Run, read_usual_test
from pal.parse.unsafe import FilterUnsafe, TailUnread

__all__ = ["FilterUnsafe", "TailUnread", "body_end", "strip_test_bodies"]

_TEST_START = re.compile(rb"<test(?=[\s>/])")
# The end of a start tag: the first '>' outside quoted attribute values. Runs of plain bytes are
# taken at once, and possessively: the scan has one way through, so backtracking finds nothing
# more (and cannot blow up on an unterminated quote at a chunk's end).
_START_TAG_END = re.compile(rb"""[^>"']*+(?:(?:"[^"]*+"|'[^']*+')[^>"']*+)*+>""")
_TEST_END = b"</test>"
_TEST_END_RX = re.compile(re.escape(_TEST_END))  # sre's literal search beats bytes.find on '<'-dense XML
_CLOSING_NAME = re.compile(rb"</([A-Za-z_][\w.-]*)\s*>")
# A test's own elements after its body (RF 3-7); any other closing tag ends a body element.
_TAIL = frozenset((b"status", b"tag", b"tags", b"doc", b"timeout"))
# The same closings as Robot Framework writes them (no blank before '>'), the commonest first: a
# test's tail is mostly ``</tag>``s, and ``startswith`` passes over one faster than the regex.
_TAIL_CLOSINGS = (b"</tag>", b"</status>", b"</tags>", b"</doc>", b"</timeout>")
# The last "</" that begins none of those ('.*' backs off from the end to it).
_LAST_OTHER_CLOSING = re.compile(rb"(?s:.*)</(?!(?:tag|status|tags|doc|timeout)>)")
_TAIL_WINDOW = 8192  # bytes at the end of a span searched by that regex
# The elements a test body is made of (RF 3-7). A closing tag of any other name where a body
# should end means a damaged file: the filter would cut good tail elements (the tags) with
# it, so it gives up and the full parse reports the damage with its line.
_BODY = frozenset((b"kw", b"for", b"iter", b"if", b"branch", b"try", b"while", b"group", b"return",
                   b"continue", b"break", b"error", b"variable", b"var", b"msg"))
_UNSAFE = re.compile(rb"<!(?:--|\[CDATA\[)")
# what stands in the stream for a run of tests read whole (``pal.parse.tails.read_usual_test``)
_RUN_MARK = b"<test/>"
_BLANKS = re.compile(rb"[ \t\r\n]*")
#: the longest test tail ``strip_test_bodies`` hands to ``pal.parse.tails`` (CSIT's are 1-10 KB); a
#: longer one goes to the XML parser, whose limits (10 MB a text node) then apply as they always did
MAX_TAIL = 1 << 20
_FEED = 1 << 20  # bytes handed to the parser at a time when the end of a file is held
_LONGEST_CLOSING = 256  # bytes of a closing tag a streaming cut waits for across chunks


def _no_nested_test(buf: bytes, lo: int, hi: int) -> None:
    """Tests never nest in Robot Framework: a ``<test`` start inside a body being dropped means a
    damaged file (say, a span written twice), which the full parse must see and report."""
    p = buf.find(b"<test", lo, hi)
    while p >= 0:
        if _TEST_START.match(buf, p):
            raise FilterUnsafe("a <test> start inside a test's body")
        p = buf.find(b"<test", p + 5, hi)


def _after_last_other_closing(buf: bytes, start: int, end: int) -> int:
    """Where ``body_end``'s backward scan may start: just after the last ``</`` in the span's last
    ``_TAIL_WINDOW`` bytes that begins none of ``_TAIL_CLOSINGS`` (the scan would skip those after it
    one by one), else at the window's start.

    The regex runs to the window's end and backs off to that ``</`` in C: a test's ~20 tail
    closings cost one call, and never more than the window's bytes.
    """
    lo = max(start, end - _TAIL_WINDOW)
    m = _LAST_OTHER_CLOSING.match(buf, lo, end)
    return m.end() if m else min(lo + 2, end)


def body_end(buf: bytes, start: int, end: int, strict: bool = True) -> int:
    """Where the body of the test spanning ``buf[start:end]`` ends: after its last body closing tag.

    ``strict``: ``end`` is the test's ``</test>``, so that tag must close a top-level body
    element; False while a huge test is still streaming (it may close a nested element).
    """
    p = _after_last_other_closing(buf, start, end)
    while True:
        p = buf.rfind(b"</", start, p)
        if p < 0:
            return start
        if buf.startswith(_TAIL_CLOSINGS, p, end):
            continue  # what the regex below says of these closings too
        m = _CLOSING_NAME.match(buf, p, end)
        if m is None:
            if buf.find(b">", p, end) < 0:
                continue  # a closing tag cut at the end of the buffer
            if not strict:
                return buf.find(b">", p, end) + 1
            raise FilterUnsafe(f"malformed closing tag {buf[p:p + 20]!r} in a test")
        if m.group(1) not in _TAIL:
            if strict and m.group(1) not in _BODY:
                raise FilterUnsafe(f"unexpected </{m.group(1).decode(errors='replace')}> in a test")
            return m.end()


def _utf8_prolog(first: bytes) -> bool:
    """The document is UTF-8: no byte order mark but UTF-8's, and no other encoding declared."""
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    if not first.startswith(b"<?xml"):
        return first[:1] == b"<" or first[:1].isspace()  # no declaration: UTF-8 (or UTF-16's 0 bytes: refused)
    if b"?>" not in first:
        return False  # a declaration cut at the chunk's end: not vouched for
    declared = declared_encoding(first[:first.index(b"?>") + 2].decode("latin-1"))  # (the declaration is ASCII)
    return declared is None or declared.lower() in ("utf-8", "utf8")


def strip_test_bodies(chunks: Iterable[bytes], tails: deque[bytes | Run] | None = None) -> Iterator[bytes]:
    """Yield the stream with every test's body elements removed (see the module docstring).

    ``tails``: each test's tail is appended to it, in document order, and left out of the stream
    (a test is yielded as its start and end tags), for ``pal.parse.tails.read_tail`` to read;
    a self-closed ``<test/>`` gets an empty tail. Only for UTF-8 documents (``TailUnread``
    otherwise), whose bytes that reader decodes.

    With ``tails``, a test as CSIT's are written (``pal.parse.tails.read_usual_test``) is read
    whole and leaves nothing in the stream: the tests so read one after another (blanks between
    them, within one chunk) make a ``Run``, appended to ``tails`` where one empty ``<test/>`` takes
    their place in the stream. The XML parser then sees a suite, its setup and a mark, not 1,500
    tests of three elements each, and the walker takes the run's tests at the mark.

    Each chunk costs time in its own size, also inside a test that spans many chunks with no
    closing tag to cut at (a body of blanks or ``<kw/>``): the buffer grows in place and a
    streaming cut searches only what came since the last one (``floor``).
    """
    buf = bytearray()  # appended in place: a bytes buffer was copied whole for every chunk
    inside = False  # True: buf[pos:] starts just after a <test ...> start tag
    scanned = 0  # inside: how far buf has been searched for </test>
    floor = 0  # inside: buf[:floor] was searched for a body closing tag to cut at, none was left
    first = True
    run: Run | None = None  # the tests read whole since the last mark, when only blanks came between them
    for chunk in chunks:
        if first and tails is not None and not _utf8_prolog(chunk):
            raise TailUnread("not declared as UTF-8: the tails are left to the XML parser")
        first = False
        if b"!" in chunk or b"!" in buf[-8:]:  # memchr-fast; '!' is rare in output.xml
            m = _UNSAFE.search(bytes(buf[-8:]) + chunk)
            if m:
                raise FilterUnsafe(f"{m.group(0).decode()} in the document")
        buf += chunk
        pos = 0
        out: list[bytes] = []
        while True:
            if inside:
                found = _TEST_END_RX.search(buf, max(pos, scanned - len(_TEST_END)))
                end = found.start() if found else -1
                if end < 0:
                    # keep memory flat in huge tests: what precedes a body closing tag is never kept
                    lo = max(pos, floor)
                    cut = body_end(buf, lo, len(buf), strict=False)
                    cut = pos if cut == lo else cut  # lo: none after what earlier chunks left
                    _no_nested_test(buf, pos, cut)
                    pos = cut
                    scanned = len(buf)
                    # a closing tag cut at the buffer's end is searched again with the next chunk
                    # (one longer than _LONGEST_CLOSING only delays the cut: the test's end is
                    # found by the full search below all the same)
                    floor = max(pos, len(buf) - _LONGEST_CLOSING)
                    break
                cut = body_end(buf, pos, end)
                _no_nested_test(buf, pos, cut)
                if tails is None:
                    out.append(buf[cut:end + len(_TEST_END)])
                elif end - cut > MAX_TAIL:
                    raise TailUnread(f"a test's tail of {end - cut} bytes: left to the XML parser and its limits")
                else:
                    tails.append(bytes(buf[cut:end]))
                    out.append(_TEST_END)
                pos = end + len(_TEST_END)
                inside, scanned, floor = False, 0, 0
            else:
                m = _TEST_START.search(buf, pos)
                if m is None:
                    keep = buf.rfind(b"<", pos)  # a start tag may be cut at the chunk's end
                    keep = keep if keep >= 0 and buf.find(b">", keep) < 0 else len(buf)
                    out.append(buf[pos:keep])
                    pos = keep
                    break
                if tails is not None:
                    found = _TEST_END_RX.search(buf, m.end())
                    whole = read_usual_test(buf, m.start(), found.start(), MAX_TAIL) if found else None
                    if whole is not None:
                        cut, test = whole
                        _no_nested_test(buf, m.end(), cut)
                        if run is None or _BLANKS.fullmatch(buf, pos, m.start()) is None:
                            out.append(buf[pos:m.start()])
                            out.append(_RUN_MARK)
                            run = []
                            tails.append(run)
                        run.append(test)
                        pos = found.end()
                        continue
                    run = None  # a test element comes next in the stream: the next run gets its own mark
                t = _START_TAG_END.match(buf, m.end())
                if t is None:  # the start tag continues in the next chunk
                    out.append(buf[pos:m.start()])
                    pos = m.start()
                    break
                out.append(buf[pos:t.end()])
                inside = buf[t.end() - 2:t.end()] != b"/>"
                if not inside and tails is not None:
                    tails.append(b"")
                pos = t.end()
        run = None  # the walker reads a run when its mark reaches it, after this chunk is yielded
        del buf[:pos]
        scanned = max(0, scanned - pos)
        floor = max(0, floor - pos)
        if out:
            kept = b"".join(out)
            if len(kept) <= _FEED:
                yield kept
            else:  # the parser's caller trims between pieces (a huge kept tail is not one tree)
                yield from (kept[i:i + _FEED] for i in range(0, len(kept), _FEED))
    for i in range(0, len(buf), _FEED):  # a truncated file: let the XML parser see (and report) the
        yield bytes(buf[i:i + _FEED])  # break, a piece at a time (a bomb's tail stops it at its limit early)
