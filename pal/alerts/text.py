"""The alert texts Jenkins mails, in CSIT's layout (CSIT-FORMATS.md section 6).

Files (under ``<out>/alerts/``):

* ``trending-regressions.txt`` / ``trending-progressions.txt``: the legend line, then per
  (test set, job) a header ``<set>, CSIT build: <url>, <DUT> version: <v>`` for the job's last
  build and one aligned line per current, unacked change; new changes first, those reported
  by an earlier run after a ``Reported before:`` line; ``No regressions`` when there is none.
  Rows whose trend is not in Mpps (Mcps, latency in µs) follow a ``Trend[<unit>]:`` line.
  Under each row, indented: the first bad and last good build, the DUT version and testbed
  change at that point, the suspect range (code / infrastructure), the series' page (with
  ``outputs.site-url``) and, for a code range, CSIT's bisect trigger.
  After the blocks: the same test changing on every topo-arch at about the same time (DUT or
  infrastructure), recovered changes that had been reported, and the acked ones (not alerted).
* ``regressions-<job>.txt`` / ``progressions-<job>.txt``: the same layout with the *new*
  unacked changes of one job only; empty (0 bytes) when there is none, so Jenkins mails the
  non-empty ones.
* ``trending-failed-tests.txt``: per (test set, job) a header ``<set>, <F> tests failed, <P>
  tests passed, duration: <h> h <m> min, CSIT build: <url>, <DUT> version: <v>`` (counts of the
  set's own tests in the job's last build), the tests that failed in it with the number of
  their message, and the numbered messages.
  Messages are grouped after masking what varies (IPv4 addresses, hex, numbers); IPv4
  addresses never leave in a message (``10.30.51.45`` -> ``x.x.x.x``).

Columns are aligned over the whole file: text left, numbers right, three spaces apart.
Trend is in millions (Mpps, Mcps, two decimals) for rate metrics and in microseconds (one
decimal) for latency; changes in percent with one decimal.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
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
    """Fixed ``digits`` decimals (the same in every row of a column); n/a when unknown."""
    if x is None or not math.isfinite(x):
        return "n/a"
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


#: pal unit -> (shown unit, divisor, decimals)
DISPLAY = {"pps": ("Mpps", 1e6, 2), "cps": ("Mcps", 1e6, 2), "us": ("us", 1.0, 1)}


def _display(unit: str) -> tuple[str, float, int]:
    return DISPLAY.get(unit, (unit or "?", 1.0, 2))


def _row(a: Alert) -> list[str]:
    ev = a.evidence
    _, div, digits = _display(a.unit)
    return [field(a.test_name), field(a.nic), field(a.frame_size), _num(ev.trend / div, digits), str(ev.runs),
            _num(ev.long_term_change_pct, 1)]


def plural(n: int, word: str) -> str:
    """``1 test``, ``2 tests``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _details(a: Alert, links: Links | None) -> list[str]:
    """The indented lines under a row: where it changed, what changed with it, where to look."""
    ev = a.evidence
    dut = (a.suspect.dut if a.suspect else "dut").upper()
    where = f"build {ev.first_bad_build}" + (f" (last good {ev.last_good_build})" if ev.last_good_build is not None else "")
    what = [where]
    vb, va = ev.dut_version_before, ev.dut_version_after
    if vb and va and vb != va:
        what.append(f"{dut} {vb} -> {va}")
    elif va:
        what.append(f"same {dut} {va}")
    if ev.testbed_before and ev.testbed_after and ev.testbed_before != ev.testbed_after:
        what.append(f"testbed {ev.testbed_before} -> {ev.testbed_after}")
    if ev.restores_build is not None:
        what.append(f"back to the level before build {ev.restores_build}")
    out = ["    " + ", ".join(what)]
    sr = a.suspect
    if sr is not None and sr.verdict != "unknown":
        line = f"    suspect: {sr.summary}"
        if sr.url:
            line += f" {sr.url}"
        out.append(line)
    page = links.series(a.key) if links is not None else None
    if page:
        out.append(f"    graph: {page}")
    if a.bisect is not None:
        out.append(f"    bisect: {a.bisect.comment}")
    return out


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
            last_build[r.key.job] = max(last_build.get(r.key.job, 0), int(np.max(r.builds)))  # (not a Python loop)
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
                 job: str | None = None, groups: list[AlertGroup] | None = None, links: Links | None = None) -> str:
    """``trending-<kind>s.txt`` (all jobs) or, with ``job`` and ``only_new``, the per-job file.

    The per-job text is empty when the job has no new unacked change of ``kind``.
    """
    word = "regressions" if kind == "regression" else "progressions"
    current = [a for a in alerts if a.kind == kind and a.state == ACTIVE and not a.acked
               and (job is None or a.key.job == job) and (not only_new or a.status == NEW)]
    if job is not None and only_new and not current:
        return ""
    sections: list[tuple[str, list[tuple[list[str], list[Alert]]]]] = []
    for blk in blocks:
        if job is not None and blk.job != job:
            continue
        mine = [a for a in current if a.key.job == blk.job and a.test_set == blk.test_set]
        if job is not None and not mine:
            continue
        parts: list[tuple[list[str], list[Alert]]] = []
        for status, marker in ((NEW, None), (ONGOING, "Reported before:")):
            group = sorted((a for a in mine if a.status == status), key=_sort_key)
            units = sorted({_display(a.unit)[0] for a in group}, key=lambda u: (u != "Mpps", u))
            for i, unit in enumerate(units):
                head = [marker] if marker and i == 0 else []
                if unit != "Mpps":
                    head.append(f"Trend[{unit}]:")
                parts.append((head, [a for a in group if _display(a.unit)[0] == unit]))
        sections.append((field(f"{blk.test_set}, {blk.header_tail}"), parts))
    all_rows = [_row(a) for _, parts in sections for _, rows in parts for a in rows]
    aligned = iter(_align(all_rows, _RIGHT))
    lines = [LEGEND, ""]
    for header, parts in sections:
        lines.append(header)
        if not any(rows for _, rows in parts):
            lines.append(f"No {word}")
        for head, rows in parts:
            lines += head
            for a in rows:
                lines.append(next(aligned))
                lines += _details(a, links)
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
        lines.append("The same tests changed on every testbed at about the same time "
                     "(points at the DUT or the infrastructure):")
        for g in sorted(wide, key=lambda g: (g.topo_arch, g.job, g.first_bad_build)):
            n = len(alerting.intersection(g.alerts))
            dut = "version"
            if g.dut_version_before and g.dut_version_after and g.dut_version_before != g.dut_version_after:
                dut = f"{g.dut_version_before} -> {g.dut_version_after}"
            elif g.dut_version_after:
                dut = f"same version {g.dut_version_after}"
            else:
                dut = "version unknown"
            last_good = f" (last good {g.last_good_build})" if g.last_good_build is not None else ""
            lines.append(f"{g.topo_arch}: {plural(n, 'test')} from build {g.first_bad_build}{last_good}, {dut}")
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
    return f"{minutes // 60} h {minutes % 60:02d} min"


def failed_tests_text(results: list[SeriesResult], samples: pd.DataFrame | None, blocks: list[JobBlock],
                      facts: BuildFacts, links: Links) -> str:
    """``trending-failed-tests.txt``: the last build's failed tests per (test set, job).

    The counts in a header are those of the set's own tests in that build (a job whose tests
    two sets share gets two consistent headers); without samples, the build's totals.
    """
    sets_of: dict[tuple[str, str], str] = {}
    attrs_of: dict[tuple[str, str], dict] = {}
    for r in results:
        sets_of.setdefault((r.key.job, r.key.test_id), r.test_set)
        attrs_of.setdefault((r.key.job, r.key.test_id), r.attrs)
    have = samples is not None and not samples.empty
    build_of_row = samples["build"].to_numpy() if have else None
    # the columns read below, taken with the build's rows: not all 24 (75-120 -> 65-70 ms for
    # the four jobs of 1,500 tests of the pipeline benchmark, timed in one process)
    used = [i for i, c in enumerate(samples.columns) if c in _FAILED_COLUMNS] if have else []
    lines: list[str] = []
    for blk in blocks:
        rows = []
        counted = False
        passed_n = 0
        if have and blk.build is not None:
            mine = samples.iloc[np.flatnonzero(build_of_row == blk.build), used]  # the build's rows, then the job's
            mine = mine[(mine["job"].astype(str) == blk.job).to_numpy(dtype=bool)]
            mine = mine[[sets_of.get((blk.job, str(t))) == blk.test_set for t in mine["test_id"]]]
            # a test failed in the build when any of its rows did; the others passed
            ids = mine["test_id"].astype(str).to_numpy(dtype=object)
            failed_row = (mine["status"].astype(str) == "FAIL").to_numpy(dtype=bool)
            tests = set(ids.tolist())
            counted = bool(tests)
            passed_n = len(tests - set(ids[failed_row].tolist()))
            fails = mine[failed_row]
            fails = fails.sort_values(["test_id", "metric"], kind="stable").drop_duplicates("test_id")
            for rec in fails.to_dict("records"):
                tid = str(rec["test_id"])
                attrs = attrs_of.get((blk.job, tid), {})
                msg = "" if rec.get("message") is None or pd.isna(rec.get("message")) else str(rec["message"])
                rows.append((field(short_test_name(tid, "mrr")), field(_pick(rec, attrs, "nic")),
                             field(_pick(rec, attrs, "frame_size")), msg))
        if counted:
            failed, passed = len(rows), passed_n
        else:
            f, p = facts.get(blk.job, blk.build, "failed"), facts.get(blk.job, blk.build, "passed")
            failed, passed = (len(rows) if f is None else int(f)), (None if p is None else int(p))
        passed_text = "n/a tests passed" if passed is None else f"{plural(passed, 'test')} passed"
        duration = _duration(facts.get(blk.job, blk.build, "duration_s"))
        lines.append(f"{field(blk.test_set)}, {plural(failed, 'test')} failed, {passed_text}, duration: {duration}, "
                     f"{field(blk.header_tail)}")
        lines += _failure_lines(rows)
        lines.append("")
    return plain("\n".join(lines).rstrip("\n") + "\n") if lines else "No failed tests\n"


#: the samples' columns ``failed_tests_text`` reads
_FAILED_COLUMNS = frozenset({"job", "test_id", "metric", "status", "message", "nic", "frame_size"})


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
        out.append(f"[{n}] {plural(len(groups[k]), 'test')}: {first or '(no message)'}")
    return out
