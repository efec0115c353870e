"""The three output.xml dialects pal reads (CSIT-FORMATS §2), written as text.

Each dialect knows how Robot Framework of its era spells timestamps, statuses, keywords,
messages and tags; the layout of a build is assembled in ``pal.demo.build``. Times are
integer microseconds since the epoch (UTC), formatted without ``datetime`` objects in the
hot path.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import lru_cache

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
DAY_US = 86_400_000_000


def esc(text: str) -> str:
    """XML-escape element text (``&``, ``<``, ``>``); the common case has none of them."""
    if "&" in text or "<" in text or ">" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


def attr(text: str) -> str:
    """XML-escape an attribute value written inside double quotes."""
    return esc(text).replace('"', "&quot;").replace("\n", "&#10;")


@lru_cache(maxsize=4096)
def _day(day: int) -> tuple[str, str]:
    d = (_EPOCH + timedelta(days=day)).date()
    return d.isoformat(), d.strftime("%Y%m%d")


def us_of(dt: datetime) -> int:
    """Microseconds since the epoch of an aware datetime."""
    return (dt - _EPOCH) // timedelta(microseconds=1)


def iso(t: int) -> str:
    """RF 7 style: ``2026-11-20T03:09:00.123456`` (no fraction when it is zero, like isoformat)."""
    day, rem = divmod(t, DAY_US)
    secs, us = divmod(rem, 1_000_000)
    h, rem_s = divmod(secs, 3600)
    m, s = divmod(rem_s, 60)
    if us:
        return f"{_day(day)[0]}T{h:02d}:{m:02d}:{s:02d}.{us:06d}"
    return f"{_day(day)[0]}T{h:02d}:{m:02d}:{s:02d}"


def legacy(t: int) -> str:
    """RF 3-6 style: ``20261120 03:09:00.123``."""
    day, rem = divmod(t, DAY_US)
    secs, us = divmod(rem, 1_000_000)
    h, rem_s = divmod(secs, 3600)
    m, s = divmod(rem_s, 60)
    return f"{_day(day)[1]} {h:02d}:{m:02d}:{s:02d}.{us // 1000:03d}"


class Dialect:
    """RF 7 (schema 5); the subclasses change what older versions spelled differently."""

    name = "rf7"
    generator = "Robot 7.0.1 (Python 3.11.9 on linux)"
    owner_attr = "owner"
    setup_type = "SETUP"
    critical = ""

    def root(self, generated: int) -> str:
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="{self.generator}" '
                f'generated="{iso(generated)}" rpa="false" schemaversion="5">\n')

    def status(self, status: str, start: int, end: int, text: str = "") -> str:
        times = f'start="{iso(start)}" elapsed="{(end - start) / 1e6:f}"'
        if text:
            return f'<status status="{status}"{self.critical} {times}>{esc(text)}</status>\n'
        return f'<status status="{status}"{self.critical} {times}/>\n'

    def suite_status(self, status: str, start: int, end: int) -> str:
        return f'<status status="{status}" start="{iso(start)}" elapsed="{(end - start) / 1e6:f}"/>\n'

    def kw_open(self, name: str, owner: str, setup: bool = False) -> str:
        kind = f' type="{self.setup_type}"' if setup else ""
        return f'<kw name="{attr(name)}" {self.owner_attr}="{attr(owner)}"{kind}>\n'

    def kw_args(self, args: tuple[str, ...]) -> str:
        return "".join(f"<arg>{esc(a)}</arg>\n" for a in args)

    def msg(self, t: int, level: str, text: str) -> str:
        return f'<msg time="{iso(t)}" level="{level}">{esc(text)}</msg>\n'

    def time_placeholder_msg(self, level: str, text: str, placeholder: str) -> str:
        """A message whose timestamp is filled in later by replacing ``placeholder``."""
        return f'<msg time="{placeholder}" level="{level}">{esc(text)}</msg>\n'

    def placeholder_status(self, placeholder: str) -> str:
        return f'<status status="PASS" start="{placeholder}" elapsed="0.000100"/>\n'

    def stamp(self, t: int) -> str:
        """What replaces a placeholder written by the two methods above."""
        return iso(t)

    def tags(self, tags: tuple[str, ...]) -> str:
        return "".join(f"<tag>{esc(t)}</tag>\n" for t in tags)

    def args_before_body(self) -> bool:
        """RF 3 wrote a keyword's arguments before its messages, later versions after."""
        return False

    def statistics(self, passed: int, failed: int, suites: list[tuple[str, str, str, int, int]]) -> str:
        rows = "".join(
            f'<stat name="{attr(n)}" id="{i}" pass="{p}" fail="{f}" skip="0">{esc(ln)}</stat>\n'
            for i, n, ln, p, f in suites
        )
        return (f'<statistics>\n<total>\n<stat pass="{passed}" fail="{failed}" skip="0">All Tests</stat>\n'
                f"</total>\n<tag>\n</tag>\n<suite>\n{rows}</suite>\n</statistics>\n<errors>\n</errors>\n</robot>\n")


class Rf4Dialect(Dialect):
    """RF 4-6 (schema 4): ``starttime``/``endtime``, ``library=``, ``<msg timestamp=>``."""

    name = "rf4"
    generator = "Robot 6.1.1 (Python 3.10.12 on linux)"
    owner_attr = "library"

    def root(self, generated: int) -> str:
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="{self.generator}" '
                f'generated="{legacy(generated)}" rpa="false" schemaversion="4">\n')

    def status(self, status: str, start: int, end: int, text: str = "") -> str:
        times = f'starttime="{legacy(start)}" endtime="{legacy(end)}"'
        if text:
            return f'<status status="{status}"{self.critical} {times}>{esc(text)}</status>\n'
        return f'<status status="{status}"{self.critical} {times}/>\n'

    def suite_status(self, status: str, start: int, end: int) -> str:
        return f'<status status="{status}" starttime="{legacy(start)}" endtime="{legacy(end)}"/>\n'

    def msg(self, t: int, level: str, text: str) -> str:
        return f'<msg timestamp="{legacy(t)}" level="{level}">{esc(text)}</msg>\n'

    def time_placeholder_msg(self, level: str, text: str, placeholder: str) -> str:
        return f'<msg timestamp="{placeholder}" level="{level}">{esc(text)}</msg>\n'

    def placeholder_status(self, placeholder: str) -> str:
        return f'<status status="PASS" starttime="{placeholder}" endtime="{placeholder}"/>\n'

    def stamp(self, t: int) -> str:
        return legacy(t)

    def statistics(self, passed: int, failed: int, suites: list[tuple[str, str, str, int, int]]) -> str:
        rows = "".join(
            f'<stat pass="{p}" fail="{f}" skip="0" id="{i}" name="{attr(n)}">{esc(ln)}</stat>\n'
            for i, n, ln, p, f in suites
        )
        return (f'<statistics>\n<total>\n<stat pass="{passed}" fail="{failed}" skip="0">All Tests</stat>\n'
                f"</total>\n<tag>\n</tag>\n<suite>\n{rows}</suite>\n</statistics>\n<errors>\n</errors>\n</robot>\n")


class Rf3Dialect(Rf4Dialect):
    """RF 3.x: no schema version, ``type="setup"``, ``<arguments>``, ``<tags>`` wrapper, ``critical``."""

    name = "rf3"
    generator = "Robot 3.2.2 (Python 3.8.10 on linux)"
    setup_type = "setup"
    critical = ' critical="yes"'

    def root(self, generated: int) -> str:
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="{self.generator}" '
                f'generated="{legacy(generated)}" rpa="false">\n')

    def suite_status(self, status: str, start: int, end: int) -> str:
        return f'<status status="{status}" starttime="{legacy(start)}" endtime="{legacy(end)}"></status>\n'

    def kw_args(self, args: tuple[str, ...]) -> str:
        if not args:
            return ""
        return "<arguments>\n" + "".join(f"<arg>{esc(a)}</arg>\n" for a in args) + "</arguments>\n"

    def args_before_body(self) -> bool:
        return True

    def tags(self, tags: tuple[str, ...]) -> str:
        return "<tags>\n" + "".join(f"<tag>{esc(t)}</tag>\n" for t in tags) + "</tags>\n"

    def statistics(self, passed: int, failed: int, suites: list[tuple[str, str, str, int, int]]) -> str:
        rows = "".join(f'<stat pass="{p}" fail="{f}" id="{i}" name="{attr(n)}">{esc(ln)}</stat>\n'
                       for i, n, ln, p, f in suites)
        return (f'<statistics>\n<total>\n<stat pass="{passed}" fail="{failed}">Critical Tests</stat>\n'
                f'<stat pass="{passed}" fail="{failed}">All Tests</stat>\n</total>\n<tag>\n</tag>\n'
                f"<suite>\n{rows}</suite>\n</statistics>\n<errors>\n</errors>\n</robot>\n")


DIALECTS: dict[str, Dialect] = {d.name: d for d in (Dialect(), Rf4Dialect(), Rf3Dialect())}


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown output.xml dialect {name!r}; expected one of {', '.join(DIALECTS)}") from None
