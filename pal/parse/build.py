"""One build's output.xml -> the samples table (Arrow), the BuildMeta and the per-test problems.

Decisions (summarised in the package docstring, pal/parse/__init__.py):
- A file that cannot be read to its end raises ParseError, including a truncated XML
  whose earlier tests are complete: a partial build would silently look like missing tests.
- A PASS test whose message no parser understands gives NaN rows and a warning.
- A test with two ``NTNC`` tags, or without a ``<status>``, is treated as FAIL (NaN rows).
- SKIP / NOT RUN tests give no rows and are not counted as passed or failed.
- Tests with no performance type (no MRR/NDRPDR/SOAK/CPS tag, no result message) give no
  rows but count as passed/failed like every other test.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from pal.errors import ParseError
from pal.model import BuildMeta, topo_arch_of
from pal.parse.archive import DEFAULT_MAX_BYTES, read_chunks
from pal.parse.identity import (
    METRICS_OF_TYPE, TYPE_OF_KIND, TestAttrs, TestId, apply_rename_ignore, attrs_of, normalise_id,
)
from pal.parse.messages import MessageParser, parse_message
from pal.parse.prefilter import FilterUnsafe, TailUnread, strip_test_bodies
from pal.parse.rows import Rows
from pal.parse.tails import Run
from pal.parse.walker import RawTest, Walk
from pal.report import Problem


@dataclass
class ParseResult:
    """What one build's file holds: the samples as an Arrow table of ``STORED_SCHEMA`` (what the
    store writes: a row's tags joined), build facts and per-test problems; ``samples`` is the same
    table as pandas (``SAMPLE_COLUMNS``, the tags as tuples)."""

    table: pa.Table
    meta: BuildMeta
    problems: list[Problem] = field(default_factory=list)

    @functools.cached_property
    def samples(self) -> pd.DataFrame:
        """The samples (``pal.model.SAMPLE_COLUMNS`` and dtypes), converted when first asked for:
        a parse worker writes the table and never needs them."""
        from pal.store.schema import arrow_to_samples, from_stored

        return arrow_to_samples(from_stored(self.table, joined=False))


@dataclass
class _Context:
    job: str
    build: int
    file: str
    rename: Mapping[str, str]
    ignore: list[re.Pattern[str]]
    parsers: list[MessageParser] | None
    problems: list[Problem] = field(default_factory=list)
    passed: int = 0
    failed: int = 0

    def warn(self, test: RawTest, message: str) -> None:
        self.problems.append(Problem(
            "parse", f"{self.job}/{self.build}",
            f"{self.file}: build {self.build}: test {test.long_name}: {message}", "warning",
            {"file": self.file, "job": self.job, "build": self.build, "test": test.long_name},
        ))


def parse_build(path: str | Path, job: str, build: int, *, testbeds: Mapping[str, str] | None = None,
                rename: Mapping[str, str] | None = None, ignore: Sequence[str] = (), dut: str = "vpp",
                max_bytes: int = DEFAULT_MAX_BYTES, parsers: list[MessageParser] | None = None,
                fast: bool = True) -> ParseResult:
    """Parse one build's output.xml (plain, .gz, .xz or .zip) into samples and build facts.

    Args:
        path: the file; its container is detected from its magic bytes.
        job, build: the Jenkins job and build number the file belongs to.
        testbeds: TG IP -> testbed name (an unmapped IP is kept as the name).
        rename: old normalised test id -> new id.
        ignore: regexes searched in the (renamed) id; matching tests are left out.
        dut: which DUT's version to report ("vpp" or "dpdk").
        max_bytes: cap on the decompressed size.
        parsers: message parsers to use (default: all of ``pal.parse.messages.PARSERS``).
        fast: skip test bodies at the byte level (falls back to a full parse on comments/CDATA
            and on XML errors, so that an error names its true line).

    Raises:
        ParseError: the file cannot be read as a complete Robot Framework result.
    """
    file = str(path)
    try:
        patterns = [re.compile(p) for p in ignore]
    except re.error as exc:
        raise ParseError(file, f"invalid ignore pattern: {exc}", build) from None
    # The fastest reading first: the filter with the tests' tails read from their bytes; a tail it
    # does not vouch for: the filter alone; what the filter cannot skip (comments, CDATA) or an
    # XML error seen through it (for the true line number): the whole file through the parser.
    mode = TAILS if fast else FULL
    while True:
        try:
            ctx, walk, rows = _walk(path, job, build, rename, patterns, parsers, max_bytes, mode)
            break
        except TailUnread:
            mode = FILTER if mode == TAILS else FULL
        except FilterUnsafe:
            if mode == FULL:
                raise
            mode = FULL
        except ParseError as exc:
            if exc.line is None or mode == FULL:
                raise
            mode = FULL

    top = walk.top
    version = walk.facts.versions.get(dut.lower())
    tg_ip = walk.facts.tg_ip
    testbed = (testbeds or {}).get(tg_ip, tg_ip) if tg_ip else None
    meta = BuildMeta(
        job=job, build=int(build), build_time=top.end if top else None, start_time=top.start if top else None,
        dut=dut, dut_version=version, testbed=testbed, passed=ctx.passed, failed=ctx.failed,
        duration_s=top.elapsed_s if top else None, source_file=file,
    )
    cols = rows.cols
    _report_duplicates(cols, ctx)
    return ParseResult(samples_table(cols, meta), meta, ctx.problems)


def samples_table(rows: list[dict[str, Any]] | dict[str, list[Any]], meta: BuildMeta) -> pa.Table:
    """The samples table of one build as the store writes it (``STORED_SCHEMA``: a row's tags
    joined): per-test rows (records, or columns of equal length) plus the build-wide columns
    from ``meta``.

    Made column by column straight into Arrow, in the types the store keeps (the same table as
    ``to_stored(samples_to_arrow(...))`` of the rows through pandas, a test checks): the DataFrame
    and its conversion were a third of a CSIT build's parse time. A build-wide value is converted
    once and repeated, and each test's tags are joined once per process (``joined_tags``), not
    converted as 30 strings a row and joined again by the store.
    """
    from pal.store.schema import STORED_SCHEMA, column_array, stored_tags  # (the store package: imported when a build has rows)

    n = len(rows) if isinstance(rows, list) else len(next(iter(rows.values()), []))
    if n == 0:
        return STORED_SCHEMA.empty_table()
    build_wide = {
        "job": meta.job, "build": int(meta.build), "build_time": meta.build_time, "topo_arch": topo_arch_of(meta.job),
        "testbed": meta.testbed, "dut": meta.dut, "dut_version": meta.dut_version, "source_file": meta.source_file,
    }
    every_row = pa.array(np.zeros(n, dtype=np.int32))  # (takes the one converted cell n times)
    arrays = []
    for col in STORED_SCHEMA.names:
        typ = STORED_SCHEMA.field(col).type
        if col in build_wide:
            arrays.append(column_array([build_wide[col]], typ).take(every_row))
            continue
        values = rows.get(col, [None] * n) if isinstance(rows, dict) else [r.get(col) for r in rows]
        arrays.append(stored_tags(values) if col == "tags" else column_array(values, typ))
    return pa.Table.from_arrays(arrays, schema=STORED_SCHEMA)


def _report_duplicates(cols: dict[str, list[Any]], ctx: _Context) -> None:
    """A test id with two results of one metric in one build: the analysis keeps the last one
    (pal.analysis.series), so say so instead of dropping the others silently."""
    counts = Counter(zip(cols["test_id"], cols["metric"]))
    for (test_id, metric), n in sorted((k, v) for k, v in counts.items() if v > 1):
        ctx.problems.append(Problem(
            "parse", f"{ctx.job}/{ctx.build}",
            f"{ctx.file}: build {ctx.build}: test id {test_id} has {n} {metric} results in this build; "
            "the analysis keeps the last one", "warning",
            {"file": ctx.file, "job": ctx.job, "build": ctx.build, "test": str(test_id), "metric": str(metric),
             "count": int(n)},
        ))


_METRIC_SETS = {t: frozenset(m) for t, m in METRICS_OF_TYPE.items()}


#: how ``_walk`` reads a file: the filter with the tests' tails read from their bytes, the
#: filter alone (the XML parser reads the tails), the XML parser alone
TAILS, FILTER, FULL = "tails", "filter", "full"


def _walk(path: str | Path, job: str, build: int, rename: Mapping[str, str] | None,
          patterns: list[re.Pattern[str]], parsers: list[MessageParser] | None, max_bytes: int,
          mode: str) -> tuple[_Context, Walk, Rows]:
    """One pass over the file, read as ``mode`` says (``TAILS``, ``FILTER``, ``FULL``): the byte
    filter drops test bodies (pal.parse.prefilter), and with ``TAILS`` takes out the tests' tails,
    which ``pal.parse.tails`` reads."""
    file = str(path)
    ctx = _Context(job, int(build), file, dict(rename or {}), patterns, parsers)
    tails: deque[bytes | Run] | None = deque() if mode == TAILS else None
    walk = Walk(file, build, tails)
    chunks = read_chunks(path, build, max_bytes=max_bytes)
    rows = Rows()
    for test in walk.tests(chunks if mode == FULL else strip_test_bodies(chunks, tails)):
        _rows_of(test, ctx, rows)
    return ctx, walk, rows


@functools.lru_cache(maxsize=1 << 14)
def _identity(long_name: str, name: str, suite: str, suite_name: str,
              tags: tuple[str, ...]) -> tuple[TestId, TestAttrs, tuple]:
    """A test's id, attributes and its rows' columns but the id and status (``TEST_COLUMNS[1:-1]``):
    pure functions of its names and tags, memoised because a parse worker meets the same ~1,500
    tests build after build (a fifth of the per-test parse time)."""
    attrs = attrs_of(name, suite_name, tags)
    columns = (name, suite.lower(), attrs.nic, attrs.frame_size, attrs.cores, attrs.threads_cores, attrs.driver,
               attrs.topology, tuple(t.upper() for t in tags))
    return normalise_id(long_name, tags), attrs, columns


def _rows_of(test: RawTest, ctx: _Context, out: Rows) -> None:
    tid, attrs, columns = _identity(test.long_name, test.name, test.suite, test.suite_name, test.tags)
    test_id = apply_rename_ignore(tid.value, ctx.rename, ctx.ignore)
    if test_id is None:
        return
    status, message = test.status, test.message
    if status is None:
        ctx.warn(test, "test has no <status>: treated as FAIL")
        status, message = "FAIL", "no status in output.xml"
    elif status not in ("PASS", "FAIL"):
        return  # SKIP / NOT RUN: the test did not run
    if tid.problem:
        ctx.warn(test, tid.problem + ": treated as FAIL")
        status, message = "FAIL", f"{tid.problem}; {test.status}: {test.message}".strip()
    if status == "PASS":
        ctx.passed += 1
    else:
        ctx.failed += 1

    base = (test_id, *columns, status)
    if status == "FAIL":
        if attrs.test_type is not None:
            for m in METRICS_OF_TYPE[attrs.test_type]:
                out.add(base, attrs.test_type, m, math.nan, message=message)
        return

    measured, _ = parse_message(message, ctx.parsers)
    if measured is None:
        if attrs.test_type is None:
            return  # not a performance test
        ctx.warn(test, f"unparsable {attrs.test_type} message: {message.strip()[:120]!r}")
        for m in METRICS_OF_TYPE[attrs.test_type]:
            out.add(base, attrs.test_type, m, math.nan, message=message)
        return
    if measured.problem:
        ctx.warn(test, measured.problem)
    test_type = attrs.test_type
    if test_type is None or not measured.values.keys() <= _METRIC_SETS[test_type]:
        test_type = TYPE_OF_KIND[measured.kind]
    # A NaN from a known invalid marker (latency -1) needs no message; a doubtful number says why.
    stdev = measured.stdev if measured.trials is not None else math.nan
    for metric, value in measured.values.items():
        out.add(base, test_type, metric, value, stdev=stdev, trials=measured.trials,
                message=(measured.problem or "") if math.isnan(value) else "", unit=measured.units.get(metric))
