"""The alert texts Jenkins mails, in CSIT's layout (CSIT-FORMATS.md section 6).

Files (under ``<out>/alerts/``):

* ``trending-regressions.txt`` / ``trending-progressions.txt``: the legend line, then per
  (test set, job) a header ``<set>, CSIT build: <url>, <DUT> version: <v>`` for the job's last
  build and one aligned line per current, unacked change; new changes first, those reported
  by an earlier run after a ``Reported before:`` line; ``No regressions`` when there is none.
  After the blocks: changes seen on every topo-arch at about the same time (DUT or
  infrastructure), recovered changes that had been reported, and the acked ones (not alerted).
* ``regressions-<job>.txt`` / ``progressions-<job>.txt``: the same layout with the *new*
  unacked changes of one job only; empty (0 bytes) when there is none, so Jenkins mails the
  non-empty ones.
* ``trending-failed-tests.txt``: per (test set, job) a header ``<set>, <F> tests failed, <P>
  tests passed, duration: HH:MM, CSIT build: <url>, <DUT> version: <v>``, the tests that
  failed in the last build with the number of their message, and the numbered messages.
  Messages are grouped after masking what varies (IPv4 addresses, hex, numbers); IPv4
  addresses never leave in a message (``10.30.51.45`` -> ``x.x.x.x``).

Columns are aligned over the whole file: text left, numbers right, three spaces apart.
Trend is in millions (Mpps, Mcps) for rate metrics and in microseconds for latency.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from pal.alerts.build import BuildFacts, short_test_name
from pal.alerts.links import Links
from pal.alerts.model import ACTIVE, ALL_TESTBEDS, NEW, ONGOING, RECOVERED, Alert, AlertGroup
from pal.model import SeriesResult

LEGEND = "Test-name  NIC  Frame-size  Trend[Mpps]  Runs[#]  Long-Term change[%]"
SEP = "   "
MESSAGE_CHARS = 200

_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_MAC = re.compile(r"\b[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUM = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s+")


# Bidi controls reorder the rest of a line as a reader sees it (a test name with U+202E can
# make "-50" read as "05-"); control characters can rewrite a terminal. In a plain-text mail
# each becomes U+FFFD: one visible character for one, so the column alignment holds.
_UNSAFE_CHARS = {c: "\ufffd" for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F,
                                        *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


def plain(text: str) -> str:
    """``text`` without bidi overrides/isolates and control characters (newlines and tabs kept)."""
    return text.translate(_UNSAFE_CHARS)


_FIELD_UNSAFE = {**_UNSAFE_CHARS, 0x09: "\ufffd", 0x0A: "\ufffd", 0x0D: "\ufffd", 0x2028: "\ufffd", 0x2029: "\ufffd"}


def field(text: str) -> str:
    """One value from the data (a test name, a NIC, a header part) for a line of text: also a
    TAB, CR or line break inside it becomes U+FFFD, so it cannot shift columns, overwrite the
    line (CR) or start a line that looks like pal wrote it."""
    return str(text).translate(_FIELD_UNSAFE)


def mask_ipv4(message: str) -> str:
    """Every IPv4 address as ``x.x.x.x`` (testbed addresses do not go out by mail)."""
    return _IPV4.sub("x.x.x.x", message)


def normalise_message(message: str) -> str:
    """The grouping key of a failure message: addresses, hex values and numbers masked."""
    text = _MAC.sub("<mac>", mask_ipv4(message))
    text = _HEX.sub("<hex>", text)
    text = _NUM.sub("#", text)
    return _SPACE.sub(" ", text).strip()[:500]


def _num(x: float, digits: int) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    s = f"{x:.{digits}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _scaled(x: float, unit: str) -> float:
    return x if unit == "us" else x / 1e6


def _row(a: Alert) -> list[str]:
    ev = a.evidence
    return [field(a.test_name), field(a.nic), field(a.frame_size), _num(_scaled(ev.trend, a.unit), 2), str(ev.runs),
            _num(ev.long_term_change_pct, 1)]


_RIGHT = (False, False, False, True, True, True)


def _align(rows: list[list[str]], right: tuple[bool, ...]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if rt else c.ljust(w) for c, w, rt in zip(r, widths, right)]
        out.append(SEP.join(cells).rstrip())
    return out


@dataclass(frozen=True)
class JobBlock:
    """One (test set, job) section: its header facts."""

    test_set: str
    job: str
    build: int | None
    header_tail: str  # "CSIT build: <url>, <DUT> version: <v>"


def job_blocks(results: list[SeriesResult], facts: BuildFacts, builds: pd.DataFrame | None, links: Links) -> list[JobBlock]:
    """The (test set, job) pairs of the results, sorted, with their last build's header facts."""
    pairs = sorted({(r.test_set, r.key.job) for r in results})
    last_build: dict[str, int] = {}
    for r in results:
        if len(r.builds):
            last_build[r.key.job] = max(last_build.get(r.key.job, 0), int(max(r.builds)))
    if builds is not None and not builds.empty:
        for job, b in builds.groupby("job")["build"].max().items():
            if str(job) in last_build:
                last_build[str(job)] = max(last_build[str(job)], int(b))
    out = []
    for ts, job in pairs:
        b = last_build.get(job)
        dut = str(facts.get(job, b, "dut") or "dut").upper()
        version = facts.get(job, b, "dut_version") or "unknown"
        out.append(JobBlock(ts, job, b, f"CSIT build: {links.job_build(job, b)}, {dut} version: {version}"))
    return out


def _sort_key(a: Alert) -> tuple:
    return (a.test_name, a.nic, a.frame_size, a.key.test_id, a.key.metric, a.id)


def changes_text(alerts: list[Alert], blocks: list[JobBlock], kind: str, *, only_new: bool = False,
                 job: str | None = None, groups: list[AlertGroup] | None = None) -> str:
    """``trending-<kind>s.txt`` (all jobs) or, with ``job`` and ``only_new``, the per-job file.

    The per-job text is empty when the job has no new unacked change of ``kind``.
    """
    word = "regressions" if kind == "regression" else "progressions"
    current = [a for a in alerts if a.kind == kind and a.state == ACTIVE and not a.acked
               and (job is None or a.key.job == job) and (not only_new or a.status == NEW)]
    if job is not None and only_new and not current:
        return ""
    sections: list[tuple[str, list]] = []  # (header or marker, rows)
    all_rows: list[list[str]] = []
    for blk in blocks:
        if job is not None and blk.job != job:
            continue
        mine = [a for a in current if a.key.job == blk.job and a.test_set == blk.test_set]
        if job is not None and not mine:
            continue
        new = [_row(a) for a in sorted((a for a in mine if a.status == NEW), key=_sort_key)]
        old = [_row(a) for a in sorted((a for a in mine if a.status == ONGOING), key=_sort_key)]
        all_rows += new + old
        sections.append((field(f"{blk.test_set}, {blk.header_tail}"), [("rows", new), ("before", old)]))
    aligned = iter(_align(all_rows, _RIGHT))
    lines = [LEGEND, ""]
    for header, parts in sections:
        lines.append(header)
        if not any(rows for _, rows in parts):
            lines.append(f"No {word}")
        for what, rows in parts:
            if rows and what == "before":
                lines.append("Reported before:")
            lines += [next(aligned) for _ in rows]
        lines.append("")
    if not sections:
        lines += [f"No {word}", ""]
    if job is None:
        lines += _footer(alerts, kind, groups or [])
    return plain("\n".join(lines).rstrip("\n") + "\n")


def _footer(alerts: list[Alert], kind: str, groups: list[AlertGroup]) -> list[str]:
    lines: list[str] = []
    alerting = {a.id for a in alerts if a.kind == kind and a.alerting}
    wide = [g for g in groups if g.kind == kind and g.scope == ALL_TESTBEDS and alerting.intersection(g.alerts)]
    if wide:
        lines.append("Seen on every testbed at about the same time (points at the DUT or the infrastructure):")
        for g in sorted(wide, key=lambda g: (g.topo_arch, g.job, g.first_bad_build)):
            n = len(alerting.intersection(g.alerts))
            lines.append(f"{g.topo_arch}: {n} test{'s' if n != 1 else ''} from build {g.first_bad_build} "
                         f"(last good {g.last_good_build}), {g.dut_version_before} -> {g.dut_version_after}")
        lines.append("")
    back = sorted((a for a in alerts if a.kind == kind and a.state == RECOVERED and a.previous_state == ACTIVE), key=_sort_key)
    if back:
        lines.append("Recovered since reported (back within the noise of the old level):")
        lines += [f"{a.key.job}{SEP}{line}" for a, line in zip(back, _align([_row(a) for a in back], _RIGHT))]
        lines.append("")
    acked = sorted((a for a in alerts if a.kind == kind and a.state == ACTIVE and a.acked), key=_sort_key)
    if acked:
        lines.append("Acknowledged in acks.yaml (not alerted):")
        lines += [f"{a.id}{SEP}{a.key.job}{SEP}{a.test_name}{SEP}{a.nic}{SEP}{a.frame_size}: {a.ack_reason}" for a in acked]
        lines.append("")
    return lines


def _duration(seconds: object) -> str:
    try:
        s = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "n/a"
    if not math.isfinite(s):
        return "n/a"
    minutes = int(round(s / 60.0))
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def failed_tests_text(results: list[SeriesResult], samples: pd.DataFrame | None, blocks: list[JobBlock],
                      facts: BuildFacts, links: Links) -> str:
    """``trending-failed-tests.txt``: the last build's failed tests per (test set, job)."""
    sets_of: dict[tuple[str, str], str] = {}
    attrs_of: dict[tuple[str, str], dict] = {}
    for r in results:
        sets_of.setdefault((r.key.job, r.key.test_id), r.test_set)
        attrs_of.setdefault((r.key.job, r.key.test_id), r.attrs)
    fails = pd.DataFrame()
    if samples is not None and not samples.empty:
        fails = samples[samples["status"].astype("string") == "FAIL"]
    lines: list[str] = []
    for blk in blocks:
        rows = []
        if not fails.empty and blk.build is not None:
            mine = fails[(fails["job"].astype("string") == blk.job) & (fails["build"] == blk.build)]
            mine = mine.sort_values(["test_id", "metric"], kind="stable").drop_duplicates("test_id")
            for rec in mine.to_dict("records"):
                tid = str(rec["test_id"])
                if sets_of.get((blk.job, tid)) != blk.test_set:
                    continue
                attrs = attrs_of.get((blk.job, tid), {})
                msg = "" if rec.get("message") is None or pd.isna(rec.get("message")) else str(rec["message"])
                rows.append((field(short_test_name(tid, "mrr")), field(_pick(rec, attrs, "nic")),
                             field(_pick(rec, attrs, "frame_size")), msg))
        failed = facts.get(blk.job, blk.build, "failed")
        passed = facts.get(blk.job, blk.build, "passed")
        failed = len(rows) if failed is None else int(failed)
        passed = "n/a" if passed is None else int(passed)
        duration = _duration(facts.get(blk.job, blk.build, "duration_s"))
        head_tail = field(blk.header_tail)
        lines.append(f"{field(blk.test_set)}, {failed} tests failed, {passed} tests passed, duration: {duration}, {head_tail}")
        lines += _failure_lines(rows)
        lines.append("")
    return plain("\n".join(lines).rstrip("\n") + "\n") if lines else "No failed tests\n"


def _pick(rec: dict, attrs: dict, key: str) -> str:
    v = rec.get(key)
    if v is None or (not isinstance(v, str) and pd.isna(v)) or v == "":
        v = attrs.get(key) or ""
    return v


def _failure_lines(rows: list[tuple[str, str, str, str]]) -> list[str]:
    """The failed tests with their message number, then the numbered messages (masked)."""
    if not rows:
        return ["No failed tests"]
    groups: dict[str, list[tuple[str, str, str, str]]] = {}
    for row in rows:
        groups.setdefault(normalise_message(row[3]), []).append(row)
    order = sorted(groups, key=lambda k: (-len(groups[k]), k))
    table = []
    for n, k in enumerate(order, 1):
        for name, nic, fs, _ in sorted(groups[k]):
            table.append([name, nic, fs, f"[{n}]"])
    out = _align(table, (False, False, False, False))
    out.append("Failure messages:")
    for n, k in enumerate(order, 1):
        shown = min(mask_ipv4(r[3]) for r in groups[k])
        first = _SPACE.sub(" ", shown).strip()
        if len(first) > MESSAGE_CHARS:
            first = first[: MESSAGE_CHARS - 3] + "..."
        out.append(f"[{n}] {len(groups[k])} test{'s' if len(groups[k]) != 1 else ''}: {first or '(no message)'}")
    return out
