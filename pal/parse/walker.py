"""The streaming walk over an output.xml: suites, suite setups and finished tests.

lxml's pull parser builds the tree in C; Python only sees the start and end of ``suite``
and ``test`` elements (a TRACE-level file has millions of ``kw``/``msg`` elements that
never reach Python). Each finished test is read, cleared and unlinked, so memory holds
one test's keyword tree at a time. A suite's setup keywords are complete when its first
child starts; they are read then (for DUT version and TG host) and dropped. Between chunks,
finished suite-level elements beyond a few are read and dropped the same way, so a suite with
a huge number of keywords outside its tests (or a gzip bomb of them) stays in bounded memory.

The parser never loads a DTD, resolves entities nor touches the network, and the prolog
check in ``pal.parse.archive`` has refused any DOCTYPE before the first byte gets here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from lxml import etree

from pal.errors import ParseError
from pal.parse.dialect import StatusTimes, is_setup, last_status, status_times, tags_and_status
from pal.parse.facts import SetupFacts
from pal.parse.unsafe import TailUnread
from pal.parse.tails import Run, read_tail


#: a test's own elements (``tags_and_status`` reads the first two), kept when its keywords are trimmed
_TEST_OWN = frozenset(("tag", "tags", "status", "doc", "timeout"))


class RawTest(NamedTuple):
    """One test as written in output.xml, before any CSIT interpretation (a named tuple: one is
    made per test, and a frozen dataclass costs several times as much to make)."""

    name: str
    long_name: str  # suite path + name, dot-joined, case as written
    suite: str  # the parent suite's long name
    suite_name: str  # the parent suite's own name
    tags: tuple[str, ...]
    status: str | None  # PASS | FAIL | SKIP | NOT RUN | None when the test has no <status>
    message: str


class Walk:
    """One pass over one file; ``tests()`` yields RawTest, the other attributes fill as it goes."""

    def __init__(self, file: str, build: int | str | None = None, tails: deque[bytes | Run] | None = None):
        """``tails``: what the byte filter took out of the stream (``strip_test_bodies``), one item
        per test element left in it: a test's tail, read with ``pal.parse.tails.read_tail`` instead
        of from the tree, or the tests it read whole where it left one ``<test/>`` mark."""
        self.file = file
        self.build = build
        self.tails = tails
        self.facts = SetupFacts()
        self.top: StatusTimes | None = None  # the top suite's times, once it has ended
        self.top_status: str | None = None
        self._suites: list[str] = []  # the names of the open suites, outermost first
        self._paths: list[str] = []  # their long names (dot-joined), made once per suite, not per test
        self._open: list[etree._Element] = []  # the open suite elements, outermost first
        self._test: etree._Element | None = None  # the open test element
        self._checked_root = False

    def tests(self, chunks: Iterable[bytes]) -> Iterator[RawTest]:
        """Feed the chunks to the parser and yield each test as it ends.

        Raises:
            ParseError: malformed or truncated XML (with the line), or not a Robot result.
        """
        parser = etree.XMLPullParser(
            events=("start", "end"), tag=("suite", "test"),
            resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
        )
        root = None
        try:
            for chunk in chunks:
                parser.feed(chunk)
                yield from self._handle(parser.read_events())
                self._trim()
            root = parser.close()
            yield from self._handle(parser.read_events())
        except etree.XMLSyntaxError as exc:
            line = exc.position[0] if exc.position else None
            reason = "truncated or malformed XML" if "Premature end" in str(exc) or "EndTag" in str(exc) \
                else "malformed XML"
            raise ParseError(self.file, f"{reason}: {exc.msg}", self.build, line) from None
        if root is not None and root.tag != "robot":
            raise ParseError(self.file, f"not a Robot Framework result (root element <{root.tag}>)", self.build)
        if self.top is None:
            raise ParseError(self.file, "no top-level suite: not a Robot Framework result", self.build)

    def _handle(self, events: Iterable[tuple[str, etree._Element]]) -> Iterator[RawTest]:
        for event, el in events:
            parent = el.getparent()
            if not self._checked_root:
                root = el.getroottree().getroot()
                if root.tag != "robot":
                    raise ParseError(self.file, f"not a Robot Framework result (root element <{root.tag}>)",
                                     self.build)
                self._checked_root = True
            if el.tag == "suite":
                if parent is None or parent.tag not in ("robot", "suite"):
                    continue  # <statistics><suite>: not a suite of tests
                if event == "start":
                    self._take_setup(el, parent)
                    name = el.get("name", "")
                    self._paths.append(f"{self._paths[-1]}.{name}" if self._paths else name)
                    self._suites.append(name)
                    self._open.append(el)
                else:
                    self._end_suite(el, parent)
            elif event == "start":
                self._take_setup(el, parent)
                self._test = el
            else:
                self._test = None
                if self.tails and type(self.tails[0]) is list:  # the mark of a run the filter read whole
                    yield from self._read_run(self.tails.popleft())  # type: ignore[arg-type]
                else:
                    yield self._read_test(el)
                _drop(el, parent)

    def _take_setup(self, el: etree._Element, parent: etree._Element | None) -> None:
        """Read the parent suite's setup keywords (finished by now), then unlink what precedes ``el``."""
        if parent is None or el.getprevious() is None or parent.tag != "suite":
            return  # nothing before it to read or unlink
        for sib in reversed(list(el.itersiblings(preceding=True))):
            self._harvest(sib)
        while el.getprevious() is not None:
            del parent[0]

    def _harvest(self, el: etree._Element) -> None:
        """Read the facts of a finished suite-level element (setup keywords only)."""
        if el.tag == "kw" and is_setup(el):
            for msg in el.iter("msg"):
                self.facts.read(msg.text)

    #: finished suite-level elements kept before :meth:`_trim` reads and drops them
    TRIM_AT = 256

    def _trim(self) -> None:
        """Read and drop the finished children of the innermost open suite, but the last one, and
        drop those of an open test that are none of its own elements (tags, status, doc, timeout).

        Called between chunks: every child but the last is complete (XML is in document order),
        and the last may still be growing. ``<status>`` is a suite's last child, never trimmed.
        A test's keywords are never read; a body the filter could not drop (elements after the
        tags, or a full parse) is held a chunk at a time, not whole.
        """
        test = self._test
        if test is not None and len(test) > self.TRIM_AT:
            for child in list(test)[:-1]:
                if child.tag not in _TEST_OWN:
                    test.remove(child)
        if not self._open:
            return
        suite = self._open[-1]
        if len(suite) <= self.TRIM_AT:
            return
        for child in list(suite)[:-1]:  # an open child suite/test can only be the last child
            if child.tag not in ("suite", "test"):  # those were read at their end events
                self._harvest(child)
            suite.remove(child)

    def _read_test(self, el: etree._Element) -> RawTest:
        if self.tails is not None:
            if not self.tails or len(el):  # (a test the filter did not see, or one it left whole)
                raise TailUnread("a test without its tail")
            tags, status, message = read_tail(self.tails.popleft())
        else:
            tags, element = tags_and_status(el)
            status = element.get("status") if element is not None else None
            message = (element.text or "") if element is not None else ""
        name = el.get("name", "")
        suite = self._paths[-1] if self._paths else ""
        return RawTest(name, f"{suite}.{name}" if suite else name, suite, self._suites[-1] if self._suites else "",
                       tags, status, message)  # (by position: a named tuple's keywords cost more)

    def _read_run(self, run: Run) -> Iterator[RawTest]:
        suite = self._paths[-1] if self._paths else ""
        suite_name = self._suites[-1] if self._suites else ""
        prefix = f"{suite}." if suite else ""
        for name, tags, status, message in run:
            yield RawTest(name, prefix + name, suite, suite_name, tags, status, message)

    def _end_suite(self, el: etree._Element, parent: etree._Element) -> None:
        if self._suites:
            self._suites.pop()
            self._paths.pop()
        if self._open:
            self._open.pop()
        if not self._suites:
            status = last_status(el)
            self.top = status_times(status)
            self.top_status = status.get("status") if status is not None else None
        _drop(el, parent)


def _drop(el: etree._Element, parent: etree._Element | None) -> None:
    """Free a finished element and its already-handled earlier siblings."""
    el.clear()
    if parent is not None:
        while el.getprevious() is not None:
            del parent[0]
