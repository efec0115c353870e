"""The MDL search states of a job's series, kept between runs (``<job>-<hash>.states``).

Why: MDL's search costs O(N^2) a series of N runs. A job whose window only grows (no
``max-builds`` reached, no ``period-days``: every stored build in it) gets one run a day appended
to each series, and the search can go on from where the last run left it (``MdlState.resume``),
O(N) for the new run. A year's window (365 runs) costs about 1 ms a series to search again and
0.2 ms to resume (``benchmarks``: see docs/scaling.md); a window that slides gains nothing (its
first run changed), so the pipeline keeps states only for jobs whose window grows
(``pal.history.growing_jobs``).

A series has up to two: its own search's and that of the series with its transient runs masked
(the alert filters' second search, ``pal.analysis.filters.MaskedSearch``; ``SearchStates``).

One file per job, beside its results file (``pal.analysis.result_cache``), rewritten when the job
is analysed: a magic line; a JSON header line (the cache context, the job, one entry per state:
test id, metric, which search (0 the series', 1 the masked series'), run count, maximum, unit,
unit and sbps arguments, digest of the runs; and the CRC-32 and length of the body); the body:
every state's winning starts (int32), then their open candidates' averages and stdevs
(float64), state after state. Data only (nothing unpickled). A
state is only ever a shortcut: ``MdlState.resume`` checks that it was saved from the very runs the
series begins with and gives, bit for bit, what a full search gives; a missing, stale or damaged
file (logged) costs its job a full search, never a wrong result.
"""

from __future__ import annotations

import json
import logging
import zlib
from pathlib import Path

import numpy as np

from pal.analysis.mdl import MdlSaved
from pal.atomic import write_bytes_atomic
from pal.model import SearchStates, SeriesKey

log = logging.getLogger("pal")

MAGIC = b"pal mdl states 2\n"
#: what every version's magic line begins with (an older version's file is no damage: not read)
FAMILY = b"pal mdl states "
#: a series' entry in the header is about 120 bytes; a longer header is a damaged file
HEADER_MAX = 1 << 26


def encode(context: str, job: str, states: list[tuple[SeriesKey, SearchStates]]) -> bytes:
    """The file's bytes for ``states`` (a job's series, any order); what is not an MDL state
    (another detector's) is left out."""
    held = [(k, role, s) for k, both in states for role, s in enumerate((both.detector, both.masked))
            if isinstance(s, MdlSaved)]
    entries = [[k.test_id, k.metric, role, s.count, s.max_value, s.unit, s.unit_arg, s.sbps_arg, s.digest.hex()]
               for k, role, s in held]
    parts = [np.concatenate([s.win for *_, s in held]).astype("<i4", copy=False).tobytes(),
             np.concatenate([s.c_avg for *_, s in held]).astype("<f8", copy=False).tobytes(),
             np.concatenate([s.c_sd for *_, s in held]).astype("<f8", copy=False).tobytes()] if held else []
    body = b"".join(parts)
    header = {"context": context, "job": job, "series": entries, "crc32": zlib.crc32(body), "length": len(body)}
    return MAGIC + json.dumps(header, separators=(",", ":")).encode() + b"\n" + body


def write(path: Path, context: str, job: str, states: list[tuple[SeriesKey, SearchStates]]) -> None:
    write_bytes_atomic(path, encode(context, job, states))


def read(path: Path, context: str, job: str) -> dict[SeriesKey, SearchStates]:
    """The states ``write`` kept for ``job`` under ``context``; empty when there is no such file,
    it was written for another context or job, or it is damaged (logged)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning("mdl states: %s not read (%s): its series are searched in full", path, exc)
        return {}
    try:
        return _decode(data, context, job)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        log.warning("mdl states: %s is damaged (%s): its series are searched in full", path, exc)
        return {}


def _decode(data: bytes, context: str, job: str) -> dict[SeriesKey, SearchStates]:
    if not data.startswith(MAGIC):
        if data.startswith(FAMILY) and data.find(b"\n", len(FAMILY), len(FAMILY) + 16) > 0:
            log.info("mdl states: another version's file, not read: its series are searched in full")
            return {}
        raise ValueError("not a states file of this version")
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + HEADER_MAX)
    if end < 0:
        raise ValueError("no header")
    header = json.loads(data[len(MAGIC):end])
    if header.get("context") != context or header.get("job") != job:
        return {}  # another pal or other test sets: not this run's to use
    body = memoryview(data)[end + 1:]
    if len(body) != header["length"] or zlib.crc32(body) != header["crc32"]:
        raise ValueError("its body does not match its header (length or CRC-32)")
    entries = header["series"]
    counts = np.array([int(e[3]) for e in entries], dtype=np.int64)
    total = int(counts.sum())
    if (counts < 1).any() or len(body) != total * 20:
        raise ValueError("run counts do not match the body")
    win = np.frombuffer(body, dtype="<i4", count=total)
    c_avg = np.frombuffer(body, dtype="<f8", count=total, offset=4 * total)
    c_sd = np.frombuffer(body, dtype="<f8", count=total, offset=12 * total)
    found: dict[SeriesKey, list[MdlSaved | None]] = {}
    at = 0
    for e, n in zip(entries, counts.tolist()):
        test_id, metric, role, _, max_value, unit, unit_arg, sbps_arg, digest = e
        if role not in (0, 1):
            raise ValueError(f"a state of search {role!r}: 0 or 1 only")
        found.setdefault(SeriesKey(job, str(test_id), str(metric)), [None, None])[role] = MdlSaved(
            n, bytes.fromhex(digest), float(max_value), float(unit), None if unit_arg is None else float(unit_arg),
            None if sbps_arg is None else float(sbps_arg), win[at:at + n], c_avg[at:at + n], c_sd[at:at + n])
        at += n
    return {k: SearchStates(*both) for k, both in found.items()}
