"""Parse stage: Robot Framework output.xml (RF 3.x, 4-6, 7; every CSIT message generation) and
CSIT's UTI JSON results (``*.info.json``, model 1.x) -> samples.

Entry point: ``parse_build(path, job, build, *, testbeds, rename, ignore, dut)`` (``inputs``:
it picks the reader from the bytes) returns
``ParseResult(table, meta, problems)``: the samples as an Arrow table of the store's schema
(``pal.store.schema.STORED_SCHEMA``, a row's tags joined; ``.samples`` gives them as pandas,
``pal.model.SAMPLE_COLUMNS``),
the ``BuildMeta`` and the per-test warnings (``Problem``, stage "parse").

Modules, in the order the bytes flow:
- ``archive``: plain/gzip/xz/zip (by magic bytes), decompressed-size cap, DOCTYPE refusal.
- ``prefilter``: drops test bodies (keyword trees) at the byte level; the fast path.
- ``tails``: a test's tags and status read from its bytes (what the filter hands over); where it
  gives up, the file is read again with the tails left to the XML parser.
- ``walker``: lxml pull parser over suites and tests, clearing as it goes; suite-setup facts.
- ``rows``: a build's rows as tuples, columns at the end (both readers).
- ``dialect``: the RF 3 / 4-6 / 7 differences (times, setup type, tag wrapper).
- ``messages``: one parser per CSIT status-message generation (registry ``PARSERS``).
- ``identity``: test id (tcNN-, NTNC tag, rename, ignore) and attributes from tags and names.
- ``facts``: DUT version and TG host from suite-setup messages.
- ``build``: the output.xml reader: tests -> rows, BuildMeta.
- ``uti_archive``: the ``*.info.json`` members of a directory, tar(.gz), zip or single file, bounded.
- ``uti``: the UTI JSON reader: strict JSON, schema check (``schemas/``), result -> the same rows.
- ``inputs``: which reader a path needs; ``parse_build``.

Decisions:
- A file that cannot be read to its end raises ``ParseError`` naming file and build (and the
  line for XML errors), including a truncated XML whose earlier tests are complete: a
  partial build would silently look like missing tests. Callers record it and go on.
- Any DOCTYPE is refused (billion laughs, XXE); the parser also never resolves entities,
  loads DTDs or touches the network.
- A PASS test whose message no parser reads: NaN rows of its type, the message kept, and a
  warning. Two ``NTNC`` tags or no ``<status>``: FAIL rows (NaN) and a warning.
- SKIP / NOT RUN tests give no rows and are not counted; tests without a performance type
  give no rows but count in passed/failed. Ignored tests are neither rows nor counted.
- NDRPDR latency rows exist only when the message has ``Latency at 50% PDR`` (CSIT 2020-);
  invalid latency markers (-1, 0, 4294967295) are NaN without a warning.
- Timestamps in output.xml have no zone; they are read as UTC (CSIT runs in UTC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pal.lazy import lazy_names

if TYPE_CHECKING:
    from pal.parse.build import ParseResult
    from pal.parse.inputs import parse_build
    from pal.parse.paths import job_build_from_path

#: each name's module, imported at the name's first use: the download's integrity check reads
#: ``pal.parse.archive`` without importing the parse's lxml and pandas (a run with nothing new)
_HOME = {"ParseResult": "build", "parse_build": "inputs", "job_build_from_path": "paths"}

__all__ = list(_HOME)

__getattr__ = lazy_names(__name__, _HOME)
