"""The MDL search states of a job's series, kept between runs (``<job>-<hash>.states``).

Why: MDL's search costs O(N^2) a series of N runs. A job whose window only grows (no
``max-builds`` reached, no ``period-days``: every stored build in it) gets one run a day appended
to each series, and the search can go on from where the last run left it (``MdlState.resume``),
O(N) for the new run. A year's window (365 runs) costs about 1 ms a series to search again and
0.2 ms to resume (``benchmarks``: see docs/scaling.md); a window that slides gains nothing (its
first run changed), so the pipeline keeps states only for jobs whose window grows
(``pal.history.growing_jobs``).

One file per job, beside its results file (``pal.analysis.result_cache``), rewritten when the job
is analysed: a magic line; a JSON header line (the cache context, the job, one entry per series:
test id, metric, run count, maximum, unit, unit and sbps arguments, digest of the runs; and the
CRC-32 and length of the body); the body: every series' winning starts (int32), then their open
candidates' averages and stdevs (float64), series after series. Data only (nothing unpickled). A
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
from pal.model import SeriesKey

log = logging.getLogger("pal")

MAGIC = b"pal mdl states 1\n"
#: a series' entry in the header is about 120 bytes; a longer header is a damaged file
HEADER_MAX = 1 << 26


def encode(context: str, job: str, states: list[tuple[SeriesKey, MdlSaved]]) -> bytes:
    """The file's bytes for ``states`` (a job's series, any order)."""
    entries = [[k.test_id, k.metric, s.count, s.max_value, s.unit, s.unit_arg, s.sbps_arg, s.digest.hex()]
               for k, s in states]
    parts = [np.concatenate([s.win for _, s in states]).astype("<i4", copy=False).tobytes(),
             np.concatenate([s.c_avg for _, s in states]).astype("<f8", copy=False).tobytes(),
             np.concatenate([s.c_sd for _, s in states]).astype("<f8", copy=False).tobytes()] if states else []
    body = b"".join(parts)
    header = {"context": context, "job": job, "series": entries, "crc32": zlib.crc32(body), "length": len(body)}
    return MAGIC + json.dumps(header, separators=(",", ":")).encode() + b"\n" + body


def write(path: Path, context: str, job: str, states: list[tuple[SeriesKey, MdlSaved]]) -> None:
    write_bytes_atomic(path, encode(context, job, states))


def read(path: Path, context: str, job: str) -> dict[SeriesKey, MdlSaved]:
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


def _decode(data: bytes, context: str, job: str) -> dict[SeriesKey, MdlSaved]:
    if not data.startswith(MAGIC):
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
    counts = np.array([int(e[2]) for e in entries], dtype=np.int64)
    total = int(counts.sum())
    if (counts < 1).any() or len(body) != total * 20:
        raise ValueError("run counts do not match the body")
    win = np.frombuffer(body, dtype="<i4", count=total)
    c_avg = np.frombuffer(body, dtype="<f8", count=total, offset=4 * total)
    c_sd = np.frombuffer(body, dtype="<f8", count=total, offset=12 * total)
    out: dict[SeriesKey, MdlSaved] = {}
    at = 0
    for e, n in zip(entries, counts.tolist()):
        test_id, metric, _, max_value, unit, unit_arg, sbps_arg, digest = e
        out[SeriesKey(job, str(test_id), str(metric))] = MdlSaved(
            n, bytes.fromhex(digest), float(max_value), float(unit), None if unit_arg is None else float(unit_arg),
            None if sbps_arg is None else float(sbps_arg), win[at:at + n], c_avg[at:at + n], c_sd[at:at + n])
        at += n
    return out
