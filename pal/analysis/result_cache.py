"""The last run's analysis results, reused for the jobs whose series did not change.

A PT job's completion triggers a run for that job's one new build. The other jobs' windows do
not move, yet each of their series would be analysed again to the same result: 4,500 of the
benchmark's 6,000 series. A series' result is a function of its inputs only (builds, times,
values, stdevs, trials), of its test set's settings, of whether its job has one testbed, and of
pal's code (``analyse_one``). A job's results are kept under the digest of its series' inputs
(keys and arrays, in order); a run whose job has the same digest rebuilds them from the file
instead of analysing them. The unit is the job: a new build moves its window, and with it
nearly every series of the job.

One file per job (``<job>-<hash>.results`` in ``<outputs.dir>/cache/.analysis``, beside the
downloads; a job's own directory there never has that name), rewritten when its digest changed:
a magic line, a JSON header (the context: pal's code and the test sets; the job, its digest and
series count) and a JSON document of the series' derived fields as columns (groups, changes,
compliance, verdicts...), each after its length, then the float64 trends and bands, in the
series' order. The records are parsed only when the digest matches. The file is data only
(nothing is unpickled). A missing, stale or unreadable file is a miss (an unreadable one is
logged): the job's series are analysed.

A job is kept only when everything derived from its series is plain (Python ints, floats,
strings, bools, None, dicts of those by string; float64 arrays; no NumPy scalar, no tuple): what JSON
gives back is then exactly what the analysis gave.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import operator
import os
import pickle
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from pal.analysis.series import SeriesInput
from pal.atomic import is_temp, write_bytes_atomic
from pal.model import Change, Compliance, SeriesKey, SeriesResult, TrendGroup
from pal.spec import Spec

log = logging.getLogger("pal")

#: under the run's cache directory
CACHE_DIR = ".analysis"
MAGIC = b"pal analysis results 1\n"
SUFFIX = ".results"
_LENGTH = struct.Struct("<Q")
HEADER_MAX = 1 << 16  # a header is a few hundred bytes: a longer one is a damaged file
_PLAIN = frozenset({int, float, str, bool, type(None)})
_STR = frozenset({str})
_GROUP = operator.attrgetter(*(f.name for f in dataclasses.fields(TrendGroup)))
_CHANGE = operator.attrgetter(*(f.name for f in dataclasses.fields(Change)))
_COMPLIANCE = operator.attrgetter(*(f.name for f in dataclasses.fields(Compliance)))
_EVIDENCE = [f.name for f in dataclasses.fields(Change)].index("evidence")


def results_dir(out_dir: Path) -> Path:
    """Where a run's outputs under ``out_dir`` keep their jobs' results: beside the downloads."""
    return Path(out_dir) / "cache" / CACHE_DIR


def cache_context(spec: Spec) -> str:
    """What every kept result depends on beyond its series: pal's code and the test sets."""
    from pal.fingerprint import code_digest

    return hashlib.sha256(MAGIC + code_digest().encode() + repr(spec.test_sets).encode()).hexdigest()


def job_digest(series: list[SeriesInput], single_testbed: bool) -> str:
    """The digest of what ``analyse_one`` reads of one job's series (their test sets' settings
    aside), in their order."""
    texts = [f"{int(single_testbed)}"]
    h = hashlib.sha1()
    for s in series:
        b, t, v, e = s.builds, s.times, s.values, s.stdevs
        texts.append(f"{s.test_set}\0{s.key.job}\0{s.key.test_id}\0{s.key.metric}\0{s.trials is not None}\0"
                     f"{b.dtype.str}{len(b)} {t.dtype.str}{len(t)} {v.dtype.str}{len(v)} {e.dtype.str}{len(e)}")
        for a in (b, t, v, e):
            h.update(np.ascontiguousarray(a).view(np.uint8))
        if s.trials is not None:
            h.update(pickle.dumps(s.trials, protocol=5))
    h.update("\n".join(texts).encode())
    return h.hexdigest()


def job_file(directory: Path, job: str) -> Path:
    """Where ``job``'s results are kept: its name made safe for a file, and a hash of it."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", job)[:80]
    return directory / f"{slug}-{hashlib.sha1(job.encode()).hexdigest()[:10]}{SUFFIX}"


@dataclass
class ResultCache:
    """Results kept under ``directory`` for the jobs of this run's window.

    ``sort`` takes each job's series as they are cut and returns those to analyse (a kept
    job's results are rebuilt from its file); ``merge`` puts the analysed ones back among them
    in the inputs' order; ``save`` rewrites the files of the jobs analysed.
    ``reuse`` False (``pal run --full``): every series is analysed, the files still written.
    """

    directory: Path
    context: str
    single_testbed: set[str]
    reuse: bool = True
    reused: int = 0
    _digests: dict[str, str] = field(default_factory=dict)  # job -> digest of the jobs analysed
    _hits: dict[SeriesKey, SeriesResult] = field(default_factory=dict)
    _pending: list[SeriesInput] = field(default_factory=list)

    @classmethod
    def open(cls, directory: Path, spec: Spec, single_testbed: set[str], reuse: bool = True) -> ResultCache:
        """The cache under ``directory`` for ``spec``'s test sets and this pal."""
        return cls(Path(directory), cache_context(spec), set(single_testbed), reuse)

    def sort(self, series: list[SeriesInput]) -> list[SeriesInput]:
        """The series of ``series`` to analyse: those of the jobs whose file does not hold
        results for the same inputs. ``series`` are one or more jobs' whole sets."""
        todo: list[SeriesInput] = []
        by_job: dict[str, list[SeriesInput]] = {}
        for s in series:
            by_job.setdefault(s.key.job, []).append(s)
        for job, items in by_job.items():
            digest = job_digest(items, job in self.single_testbed)
            kept = self._read(job, digest, items) if self.reuse else None
            if kept is None:
                self._digests[job] = digest
                todo += items
            else:
                self._hits.update((r.key, r) for r in kept)
                self.reused += len(kept)
        self._pending += todo
        return todo

    @property
    def pending(self) -> list[SeriesInput]:
        """Every series ``sort`` returned, in order: what the analysis is to give ``merge``."""
        return self._pending

    def merge(self, inputs: Iterable[SeriesInput], analysed: list[SeriesResult]) -> list[SeriesResult]:
        """One result per input, in order: the kept ones and, in their places, ``analysed``
        (the results of ``pending``, in its order)."""
        out: list[SeriesResult | None] = []
        fresh = iter(analysed)
        for s in inputs:
            hit = self._hits.pop(s.key, None)
            out.append(hit if hit is not None else next(fresh, None))
        if any(r is None for r in out) or next(fresh, None) is not None or self._hits:
            raise ValueError("analysis cache: the analysed series do not match the pending ones")
        self._pending = []
        return out  # type: ignore[return-value] - no None left

    def save(self, results: list[SeriesResult]) -> int:
        """Write the files of the jobs analysed and remove those of jobs not in this run;
        returns the files written. A job with a result JSON cannot hold exactly has no file; a
        file that cannot be written is logged: the next run analyses its job again."""
        by_job: dict[str, list[SeriesResult]] = {}
        for r in results:
            by_job.setdefault(r.key.job, []).append(r)
        written = 0
        for job, items in by_job.items():
            digest = self._digests.get(job)
            if digest is None:
                continue  # kept: its file stands
            path = job_file(self.directory, job)
            try:
                data = _encode(items, {"context": self.context, "job": job, "digest": digest, "series": len(items)})
                if data is not None:
                    write_bytes_atomic(path, data)
                    written += 1
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("analysis cache: %s not written (%s)", path, exc)
        self._digests.clear()
        keep = {job_file(self.directory, j).name for j in by_job}
        try:
            names = os.listdir(self.directory)
        except OSError:
            names = []
        for name in names:
            if name.endswith(SUFFIX) and name not in keep and not is_temp(Path(name)):
                (self.directory / name).unlink(missing_ok=True)
        return written

    def _read(self, job: str, digest: str, series: list[SeriesInput]) -> list[SeriesResult] | None:
        """The results of ``series`` (a job's, of inputs ``digest``) rebuilt from the job's file;
        None when it holds none for them. The header is read first: a job whose inputs changed
        costs it, not the file."""
        path = job_file(self.directory, job)
        try:
            with open(path, "rb") as f:
                head = f.read(len(MAGIC) + _LENGTH.size)
                if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _LENGTH.size:
                    raise ValueError("not a results file")
                (length,) = _LENGTH.unpack_from(head, len(MAGIC))
                header = json.loads(f.read(min(length, HEADER_MAX)))
                if not isinstance(header, dict):
                    raise ValueError("no header")
                if header.get("context") != self.context or header.get("job") != job or \
                        header.get("digest") != digest:
                    return None  # other code, test sets or inputs
                f.seek(0)
                data = bytearray(os.fstat(f.fileno()).st_size)  # the floats' views need it writable
                if f.readinto(data) != len(data):
                    raise ValueError("changed while read")
            records, end = _document(data, len(head) + length)
            begin = end + (-end % 8)
            floats = np.frombuffer(data, dtype="<f8", offset=begin, count=(len(data) - begin) // 8)
            return _rebuild(series, records, floats)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, StopIteration, RecursionError,
                struct.error) as exc:  # a file damaged in any way is a miss
            log.warning("analysis cache: %s unreadable (%s): its job is analysed again", path, exc)
            return None


def _encode(results: list[SeriesResult], header: dict[str, Any]) -> bytes | None:
    """A job's file (the magic line, the header and the records, each after its length, then the
    floats), or None when JSON cannot hold its results exactly: a field that is not one of
    Python's plain types (a NumPy scalar, which JSON would write as another type or refuse; a
    tuple, which comes back a list), an array that is not float64.

    The records are columns (one list per field, of every series in order), so the checks and
    the JSON are a few C-level passes over lists, not Python code per series."""
    groups = [_GROUP(g) for r in results for g in r.groups]
    changes = [_CHANGE(c) for r in results for c in r.changes]
    alertable = [_CHANGE(c) for r in results for c in r.alertable]
    bands = [[[name, len(a)] for name, a in r.bands.items()] for r in results]
    records = {
        "trend": [len(r.trend) for r in results], "bands": bands,
        "groups": [len(r.groups) for r in results], "group_fields": [list(c) for c in zip(*groups)],
        "changes": [len(r.changes) for r in results], "change_fields": [list(c) for c in zip(*changes)],
        "alertable": [len(r.alertable) for r in results], "alertable_fields": [list(c) for c in zip(*alertable)],
        "compliance": [list(c) for c in zip(*(_COMPLIANCE(r.compliance) for r in results))],
        "verdict": [r.verdict for r in results], "direction": [r.direction for r in results],
        "detector": [r.detector for r in results],
    }
    arrays = [a for r in results for a in (r.trend, *r.bands.values())]
    if any(a.dtype != np.float64 for a in arrays):
        return None
    scalars = [*records["group_fields"], *records["compliance"], records["verdict"], records["direction"],
               records["detector"], [name for b in bands for name, _ in b]]
    for fields in (records["change_fields"], records["alertable_fields"]):
        for i, column in enumerate(fields):
            if i == _EVIDENCE:  # JSON keys are strings: another key would come back one
                if not all(type(d) is dict and _STR.issuperset(map(type, d)) and
                           _PLAIN.issuperset(map(type, d.values())) for d in column):
                    return None
            else:
                scalars.append(column)
    if not all(_PLAIN.issuperset(map(type, column)) for column in scalars):
        return None
    parts = [MAGIC]
    for doc in (header, records):
        text = json.dumps(doc, separators=(",", ":")).encode()
        parts += [_LENGTH.pack(len(text)), text]
    parts.append(b"\0" * (-sum(map(len, parts)) % 8))
    if arrays:
        parts.append(np.concatenate(arrays).astype("<f8", copy=False).tobytes())
    return b"".join(parts)


def _document(data: bytearray, at: int) -> tuple[Any, int]:
    """The JSON document whose length is at ``at``, and where it ends."""
    (length,) = _LENGTH.unpack_from(data, at)
    start = at + _LENGTH.size
    if start + length > len(data):
        raise ValueError("truncated")
    return json.loads(bytes(data[start:start + length])), start + length


def _rebuild(series: list[SeriesInput], records: dict[str, Any], floats: np.ndarray) -> list[SeriesResult]:
    """``analyse_one``'s results for a job's ``series`` from its records (``_encode``)."""
    n = len(series)
    if any(len(records[k]) != n for k in ("trend", "bands", "groups", "changes", "alertable", "verdict", "direction",
                                          "detector")) or any(len(c) != n for c in records["compliance"]):
        raise ValueError(f"records for another number of series than {n}")
    groups = iter(zip(*records["group_fields"]))
    changes = iter(zip(*records["change_fields"]))
    alertable = iter(zip(*records["alertable_fields"]))
    compliance = zip(*records["compliance"])
    out = []
    at = 0
    for i, (s, comp) in enumerate(zip(series, compliance)):
        length = records["trend"][i]
        trend = floats[at:at + length]
        at += length
        kept_bands = {}
        for name, length in records["bands"][i]:
            kept_bands[name] = floats[at:at + length]
            at += length
        if at > len(floats):
            raise IndexError("floats out of range")
        out.append(SeriesResult(
            key=s.key, builds=s.builds, times=s.times, values=s.values, stdevs=s.stdevs, trend=trend,
            groups=[TrendGroup(*next(groups)) for _ in range(records["groups"][i])],
            changes=[Change(*next(changes)) for _ in range(records["changes"][i])],
            compliance=Compliance(*comp), verdict=records["verdict"][i], direction=records["direction"][i],
            detector=records["detector"][i], test_set=s.test_set, attrs=dict(s.attrs), bands=kept_bands,
            alertable=[Change(*next(alertable)) for _ in range(records["alertable"][i])],
        ))
    if next(groups, None) is not None or next(changes, None) is not None or next(alertable, None) is not None:
        raise ValueError("records left over")
    return out
