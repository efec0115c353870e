"""The differences between Robot Framework output.xml generations (CSIT-FORMATS.md §2).

| aspect  | RF 3.x                    | RF 4-6            | RF 7                    |
|---------|---------------------------|-------------------|-------------------------|
| keyword | ``type="setup"``          | ``type="SETUP"``  | ``type="SETUP"``        |
| message | ``<msg timestamp>``       | same              | ``<msg time>``          |
| status  | ``starttime``/``endtime`` | same              | ``start`` + ``elapsed`` |
| tags    | ``<tags><tag>``           | ``<tag>`` in test | same                    |

Every function here accepts all three, so the walker never asks which generation it reads.
Timestamps carry no zone in output.xml; CSIT runs in UTC, so they are read as UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from lxml import etree


@dataclass(frozen=True)
class StatusTimes:
    """Start, end and duration of a suite/test/keyword status, whatever the dialect."""

    start: datetime | None
    end: datetime | None
    elapsed_s: float | None


# A timestamp exactly as RF 7 writes it: ISO, microseconds, no zone.
_RF7_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", re.ASCII)


def parse_time(text: str | None) -> datetime | None:
    """``20220124 03:09:00.123`` (RF < 7) or ISO ``2022-01-24T03:09:00.123456`` (RF 7), as UTC.

    RF 7's own form is read with its zone appended, as the same UTC datetime that
    ``replace(tzinfo=...)`` gives, which costs twice the parse."""
    if not text or text == "N/A":
        return None
    try:
        if _RF7_TIME.fullmatch(text):
            return datetime.fromisoformat(text + "+00:00")
        if "T" in text or "-" in text[:8]:
            dt = datetime.fromisoformat(text)
        else:
            dt = datetime.strptime(text, "%Y%m%d %H:%M:%S.%f" if "." in text else "%Y%m%d %H:%M:%S")
    except ValueError:
        return None
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def status_times(status: etree._Element | None) -> StatusTimes:
    """Times of a ``<status>`` element: RF 7 ``start``+``elapsed``, older ``starttime``+``endtime``."""
    if status is None:
        return StatusTimes(None, None, None)
    elapsed_attr = status.get("elapsed")
    if elapsed_attr is not None or status.get("start") is not None:
        start = parse_time(status.get("start"))
        elapsed = end = None
        try:
            if elapsed_attr is not None:
                span = timedelta(seconds=float(elapsed_attr))  # raises for nan, inf and beyond ~2.7 M years
                elapsed = float(elapsed_attr)
                end = start + span if start is not None else None
        except (ValueError, OverflowError):  # not a duration, or no datetime after start: unknown, as if missing
            pass
        return StatusTimes(start, end, elapsed)
    start = parse_time(status.get("starttime"))
    end = parse_time(status.get("endtime"))
    elapsed = (end - start).total_seconds() if start is not None and end is not None else None
    return StatusTimes(start, end, elapsed)


def is_setup(kw: etree._Element) -> bool:
    """A setup keyword: ``type="setup"`` (RF 3) or ``type="SETUP"`` (RF 4+)."""
    return kw.get("type", "").lower() == "setup"


def tags_and_status(test: etree._Element) -> tuple[tuple[str, ...], etree._Element | None]:
    """The test's own tags (not keyword tags) and its ``<status>`` (``last_status``), in one pass
    over its children: ``<tag>`` children, then those inside ``<tags>`` (RF 3), blank ones left out.

    One pass because a test's tail is mostly tags and every child visited costs a proxy object.
    """
    tags: list[str] = []
    wrapped: list[str] = []
    status = None
    for child in test:
        name = child.tag
        if name == "tag":
            tags.append(child.text or "")
        elif name == "status":
            status = child
        elif name == "tags":
            wrapped.extend(t.text or "" for t in child.iterchildren("tag"))
    if wrapped:
        tags += wrapped
    return tuple(filter(None, map(str.strip, tags))), status


def last_status(el: etree._Element) -> etree._Element | None:
    """The element's own ``<status>`` (its last such child; keywords keep theirs inside themselves)."""
    found = None
    for found in el.iterchildren("status", reversed=True):
        break
    return found
