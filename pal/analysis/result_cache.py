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

A job whose window did not move need not even be read. The file also holds the job's series
inputs (their keys, test sets, texts and arrays), the rows of its history that the later stages
read (``alert_samples``, as Arrow IPC) and its row count, under the job's window key
(``window_inputs``: pal's code, what of the spec a window depends on (``pal.window.window_spec``),
the rename file and the manifest entries of the job's window builds, fragment included). A run
whose job has the same window key takes all of it from the file (``unread``) and reads nothing of
the job from the store: a run triggered by one PT job reads that job's window only. A job whose
window moved by a few builds is slid from the file's (``moved``, ``pal.window``): the header also
holds its window's builds, each with the digest of its manifest entry (placement aside) and its
row count.
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
import pandas as pd
import pyarrow as pa

from pal.analysis.series import SeriesInput
from pal.atomic import is_temp, write_bytes_atomic
from pal.digest import data_hasher
from pal.model import Change, Compliance, SearchStates, SeriesKey, SeriesResult, TrendGroup
from pal.spec import Spec
from pal.window import JobWindow, Plan, Slides, plan

log = logging.getLogger("pal")

#: under the run's cache directory
CACHE_DIR = ".analysis"
MAGIC = b"pal analysis results 2\n"
_KIND = MAGIC[:MAGIC.rindex(b" ") + 1]  # a file of another version is a miss, not a damaged file
SUFFIX = ".results"
STATES_SUFFIX = ".states"  # ``pal.analysis.mdl_states``
_LENGTH = struct.Struct("<Q")
#: a header is a few hundred bytes and about 60 per build of the job's window (``pal.window``):
#: a longer one is a damaged file
HEADER_MAX = 1 << 24
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
    h = data_hasher()
    for s in series:
        b, t, v, e = s.builds, s.times, s.values, s.stdevs
        texts.append(f"{s.test_set}\0{s.key.job}\0{s.key.test_id}\0{s.key.metric}\0{s.trials is not None}\0"
                     f"{b.dtype.str}{len(b)} {t.dtype.str}{len(t)} {v.dtype.str}{len(v)} {e.dtype.str}{len(e)}")
        for a in (b, t, v, e):
            h.update(np.ascontiguousarray(a))
        if s.trials is not None:
            h.update(pickle.dumps(s.trials, protocol=5))
    h.update("\n".join(texts).encode())
    return h.hexdigest()


def job_file(directory: Path, job: str) -> Path:
    """Where ``job``'s results are kept: its name made safe for a file, and a hash of it."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", job)[:80]
    return directory / f"{slug}-{hashlib.sha1(job.encode()).hexdigest()[:10]}{SUFFIX}"


def states_file(directory: Path, job: str) -> Path:
    """Where ``job``'s MDL states are kept (``pal.analysis.mdl_states``): beside its results."""
    return job_file(directory, job).with_suffix(STATES_SUFFIX)


def window_inputs(spec: Spec, store: Any, builds: pd.DataFrame) -> tuple[dict[str, str], Slides | None]:
    """Per job of ``builds`` (the window's, ``window_builds``): its window key, the digest of what
    its series and history rows are read from; and what a job's window is slid against
    (``pal.window.Slides``: the same manifest entries, build by build, placement aside).
    ({}, None) when a test set's detector reads trials (not kept)."""
    from pal.fingerprint import code_digest, file_digest
    from pal.history import needs_trials
    from pal.window import entry_digest, window_spec

    if builds.empty or needs_trials(spec):
        return {}, None
    base = json.dumps([MAGIC.decode(), code_digest(), window_spec(spec), file_digest(spec.resolve(spec.rename_file))])
    by_job: dict[str, list[dict[str, Any]]] = {}
    keys = zip(builds["job"].astype(str), builds["build"].astype(np.int64).tolist())
    for entry in store.manifest_entries(keys):
        by_job.setdefault(str(entry["job"]), []).append(entry)
    windows = {job: hashlib.sha256((base + json.dumps(entries, sort_keys=True, default=str)).encode()).hexdigest()
               for job, entries in by_job.items()}
    slides = Slides(hashlib.sha256(base.encode()).hexdigest(),
                    {job: {int(e["build"]): entry_digest(e) for e in entries} for job, entries in by_job.items()})
    return windows, slides


@dataclass(frozen=True)
class KeptJob:
    """What a run needs of a job whose window did not move, besides its results: the rows of its
    history the later stages read (``alert_samples``) and how many rows its window holds."""

    samples: pd.DataFrame
    rows: int


@dataclass
class ResultCache:
    """Results kept under ``directory`` for the jobs of this run's window.

    ``sort`` takes each job's series as they are cut and returns those to analyse (a kept
    job's results are rebuilt from its file); ``merge`` puts the analysed ones back among them
    in the inputs' order; ``save`` rewrites the files of the jobs analysed.
    ``unread`` comes first for each job, in the window's order: a job whose window key
    (``windows``) is its file's is not read at all.
    ``reuse`` False (``pal run --full``): every series is analysed, the files still written.
    ``growing``: the jobs whose window grows (``pal.history.growing_jobs``): their series are
    analysed with the MDL states the last run kept (``pal.analysis.mdl_states``) and their new
    states are kept for the next.
    """

    directory: Path
    context: str
    single_testbed: set[str]
    reuse: bool = True
    windows: dict[str, str] = field(default_factory=dict)  # job -> window key (``window_inputs``)
    slides: Slides | None = None  # the window's builds, to slide a job's last window (``moved``)
    reused: int = 0
    resumed: int = 0  # series analysed from their MDL state (``growing``)
    resumed_masked: int = 0  # ... whose alert filters' search of the masked series went on from its state
    _digests: dict[str, str] = field(default_factory=dict)  # job -> digest of the jobs read
    _hits: dict[SeriesKey, SeriesResult] = field(default_factory=dict)
    _pending: list[SeriesInput] = field(default_factory=list)
    _order: list[str] = field(default_factory=list)  # the jobs ``unread`` was asked for, in order
    _kept: dict[str, list[SeriesResult]] = field(default_factory=dict)  # results of the jobs not read
    _history: dict[str, JobWindow] = field(default_factory=dict)  # of the jobs read (its series aside)
    _file_windows: dict[str, str | None] = field(default_factory=dict)  # the window key a job's file keeps
    _damaged: set[str] = field(default_factory=set)  # jobs whose file could not be read whole
    growing: set[str] = field(default_factory=set)
    _states: dict[str, list[tuple[SeriesKey, SearchStates]]] = field(default_factory=dict)  # job -> states to keep

    @classmethod
    def open(cls, directory: Path, spec: Spec, single_testbed: set[str], reuse: bool = True,
             windows: dict[str, str] | None = None, slides: Slides | None = None,
             growing: set[str] | None = None) -> ResultCache:
        """The cache under ``directory`` for ``spec``'s test sets and this pal; ``windows``: the
        window keys of this run's jobs (``window_inputs``), none when the jobs are always read;
        ``slides``: their builds (``window_inputs``), none when a moved window is read whole;
        ``growing``: the jobs whose MDL states to use and keep."""
        return cls(Path(directory), cache_context(spec), set(single_testbed), reuse, dict(windows or {}), slides,
                   growing=set(growing or ()))

    def unread(self, job: str) -> KeptJob | None:
        """The history of ``job`` when its file was written for the same window (its results are
        then kept for ``merge``); None when the job is to be read (``read_job``, then ``sort``)."""
        self._order.append(job)
        window = self.windows.get(job)
        if not self.reuse or window is None:
            return None
        got = self._load(job, lambda header: header.get("window") == window and header.get("inputs") is True)
        if got is None:
            return None
        results, kept = got
        self._kept[job] = results
        self.reused += len(results)
        return kept

    def moved(self, job: str) -> tuple[JobWindow, Plan] | None:
        """The window the last run read of ``job`` (its series inputs, history rows, rows and
        builds) and how this run's differs (``pal.window.plan``), when it can be slid to this
        run's (``pal.window.slide``); None when the job is to be read whole. Call after
        ``unread`` gave None."""
        now = self.slides.builds.get(job) if self.slides is not None and self.reuse else None
        if now is None:
            return None
        found: list[tuple[dict[int, tuple[str, int]], Plan]] = []

        def wanted(header: dict[str, Any]) -> bool:
            if header.get("inputs") is not True or header.get("uniform") is not True or \
                    header.get("base") != self.slides.base:  # type: ignore[union-attr] - checked above
                return False
            kept = {int(b): (str(d), int(r)) for b, d, r in header.get("builds") or ()}
            steps = plan(kept, now)
            if steps is not None:
                found.append((kept, steps))
            return steps is not None

        got = self._load(job, wanted, results=False)
        if got is None or got[1] is None:
            return None
        inputs, kept_rows = got
        kept, steps = found[-1]
        return JobWindow(inputs, kept_rows.samples, kept_rows.rows, kept, True), steps

    def read_job(self, job: str, samples: pd.DataFrame | None, rows: int,
                 window: JobWindow | None = None) -> None:
        """The history rows the later stages read of a job that was read (``alert_samples``) and
        its row count: what ``save`` keeps with its results for a run that need not read it;
        ``window``: the job's window they are of (its builds, for the next run's ``moved``; its
        series are not held: the results hold what is saved of them)."""
        self._history[job] = JobWindow([], samples, rows, window.builds, window.uniform) if window is not None \
            else JobWindow([], samples, rows, {}, False)

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
                todo += self._with_states(job, items) if job in self.growing else items
            else:
                self._hits.update((r.key, r) for r in kept)
                self.reused += len(kept)
                if job in self._damaged or self.windows.get(job) not in (None, self._file_windows.get(job)):
                    self._digests[job] = digest  # rewritten: the same series from another window, or damaged
        self._pending += todo
        return todo

    def _with_states(self, job: str, items: list[SeriesInput]) -> list[SeriesInput]:
        """``items`` (a job's series) asking for their searches' states, each with those the last
        run kept for it (``--full``: none, every series searched from its first run)."""
        from pal.analysis import mdl_states

        kept = mdl_states.read(states_file(self.directory, job), self.context, job) if self.reuse else {}
        return [dataclasses.replace(s, resume=kept.get(s.key), keep=True) for s in items]

    @property
    def pending(self) -> list[SeriesInput]:
        """Every series ``sort`` returned, in order: what the analysis is to give ``merge``."""
        return self._pending

    def merge(self, inputs: Iterable[SeriesInput], analysed: list[SeriesResult]) -> list[SeriesResult]:
        """One result per series of the window, in order: per job in ``unread``'s order, a job not
        read has its kept results; a job read has one per input, kept ones and, in their places,
        ``analysed`` (the results of ``pending``, in its order)."""
        by_job: dict[str, list[SeriesInput]] = {}
        for s in inputs:
            by_job.setdefault(s.key.job, []).append(s)
        order = self._order or list(by_job)
        out: list[SeriesResult | None] = []
        fresh = iter(analysed)
        for job in order:
            kept = self._kept.pop(job, None)
            if kept is not None:
                out += kept
                continue
            for s in by_job.pop(job, ()):
                hit = self._hits.pop(s.key, None)
                out.append(hit if hit is not None else next(fresh, None))
        if any(r is None for r in out) or next(fresh, None) is not None or self._hits or self._kept or by_job:
            raise ValueError("analysis cache: the analysed series do not match the pending ones")
        from pal.analysis.mdl import MdlSaved

        for r in analysed:  # the searches' states go to the states files, not to the later stages
            if r.resume is not None:
                self._states.setdefault(r.key.job, []).append((r.key, r.resume))
                self.resumed += isinstance(r.resume.detector, MdlSaved) and r.resume.detector.resumed > 0
                self.resumed_masked += isinstance(r.resume.masked, MdlSaved) and r.resume.masked.resumed > 0
                r.resume = None
        self._pending, self._order = [], []
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
                continue  # not read: its file stands
            path = job_file(self.directory, job)
            read = self._history.get(job)
            samples, rows = (read.samples, read.rows) if read is not None else (None, 0)
            header = {"context": self.context, "job": job, "digest": digest, "series": len(items),
                      "window": self.windows.get(job), "rows": rows}
            if read is not None and read.builds and self.slides is not None:
                header.update(base=self.slides.base, uniform=read.uniform,
                              builds=[[b, d, r] for b, (d, r) in sorted(read.builds.items())])
            try:
                data = _encode(items, header, samples)
                if data is not None:
                    write_bytes_atomic(path, data)
                    written += 1
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("analysis cache: %s not written (%s)", path, exc)
        kept_states = self._save_states(by_job)
        self._digests.clear()
        self._history.clear()
        self._damaged.clear()
        keep = {job_file(self.directory, j).name for j in by_job} | kept_states
        try:
            names = os.listdir(self.directory)
        except OSError:
            names = []
        for name in names:
            if name.endswith((SUFFIX, STATES_SUFFIX)) and name not in keep and not is_temp(Path(name)):
                (self.directory / name).unlink(missing_ok=True)
        return written

    def _save_states(self, by_job: dict[str, list[SeriesResult]]) -> set[str]:
        """Write the states of the jobs analysed with ``keep``; the names of the states files that
        stay: those written, and those of growing jobs not analysed (their series did not change)."""
        from pal.analysis import mdl_states

        names = set()
        for job in by_job:
            path = states_file(self.directory, job)
            if job in self._states:
                try:
                    mdl_states.write(path, self.context, job, self._states[job])
                    names.add(path.name)
                except OSError as exc:
                    log.warning("mdl states: %s not written (%s)", path, exc)
            elif job in self.growing and job not in self._digests:
                names.add(path.name)
        self._states.clear()
        return names

    def _read(self, job: str, digest: str, series: list[SeriesInput]) -> list[SeriesResult] | None:
        """The results of ``series`` (a job's, of inputs ``digest``) rebuilt from the job's file;
        None when it holds none for them."""
        got = self._load(job, lambda header: header.get("digest") == digest, series)
        return None if got is None else got[0]  # type: ignore[return-value] - results asked for

    def _load(self, job: str, wanted: Any, series: list[SeriesInput] | None = None, results: bool = True
              ) -> tuple[list[Any], KeptJob | None] | None:
        """The job's results (for ``series``, else for the inputs the file holds; with ``results``
        False the inputs themselves) and, without ``series``, its kept history; None when the
        file's header is not ``wanted``. The header is read first: a job whose inputs changed
        costs it, not the file."""
        path = job_file(self.directory, job)
        then = "analysed" if series is not None else "read"
        try:
            with open(path, "rb") as f:
                head = f.read(len(MAGIC) + _LENGTH.size)
                if head.startswith(_KIND) and not head.startswith(MAGIC):
                    return None  # written by another version of pal
                if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _LENGTH.size:
                    raise ValueError("not a results file")
                (length,) = _LENGTH.unpack_from(head, len(MAGIC))
                header = json.loads(f.read(min(length, HEADER_MAX)))
                if not isinstance(header, dict):
                    raise ValueError("no header")
                self._file_windows[job] = header.get("window") if header.get("inputs") is True else None
                if header.get("context") != self.context or header.get("job") != job or not wanted(header):
                    return None  # other code, test sets, inputs or window
                f.seek(0)
                data = bytearray(os.fstat(f.fileno()).st_size)  # the floats' views need it writable
                if f.readinto(data) != len(data):
                    raise ValueError("changed while read")
            records, end = _document(data, len(head) + length)
            sections = _Sections(data, end + (-end % 8), header)
            floats = sections.take("floats", "<f8")
            kept = None
            if series is None:
                series = _inputs(job, records, sections.take("values", "<f8"), sections.take("axes", "<i8"))
                kept = KeptJob(_samples(sections.take("samples", "u1")), int(header["rows"]))
            return (_rebuild(series, records, floats) if results else series), kept
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, StopIteration, RecursionError,
                struct.error, pa.ArrowException) as exc:  # a file damaged in any way is a miss
            log.warning("analysis cache: %s unreadable (%s): its job is %s again", path, exc, then)
            self._damaged.add(job)  # rewritten, whatever a later look at it finds
            return None


class _Sections:
    """The binary sections after the records, in order, each as long as the header says."""

    def __init__(self, data: bytearray, at: int, header: dict[str, Any]):
        self._data, self._at, self._header = data, at, header

    def take(self, name: str, dtype: str) -> np.ndarray:
        count = int(self._header[name])
        size = np.dtype(dtype).itemsize
        if count < 0 or self._at + count * size > len(self._data):
            raise ValueError(f"section {name} truncated")
        arr = np.frombuffer(self._data, dtype=dtype, offset=self._at, count=count)
        self._at += count * size + (-(count * size) % 8)
        return arr


def _encode(results: list[SeriesResult], header: dict[str, Any], samples: pd.DataFrame | None = None) -> bytes | None:
    """A job's file (the magic line, the header and the records, each after its length, then the
    binary sections), or None when JSON cannot hold its results exactly: a field that is not one
    of Python's plain types (a NumPy scalar, which JSON would write as another type or refuse; a
    tuple, which comes back a list), an array that is not float64.

    The records are columns (one list per field, of every series in order), so the checks and
    the JSON are a few C-level passes over lists, not Python code per series. With ``samples``
    (the job's history rows, ``ResultCache.read_job``) and inputs that JSON and the arrays hold
    exactly, the inputs and those rows are kept too (``header["inputs"]``)."""
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
                if not _plain_dicts(column):
                    return None
            else:
                scalars.append(column)
    if not all(_PLAIN.issuperset(map(type, column)) for column in scalars):
        return None
    sections = [np.concatenate(arrays).astype("<f8", copy=False).tobytes() if arrays else b""]
    inputs = _encode_inputs(results, records, samples)
    header = {**header, "inputs": inputs is not None, "floats": sum(map(len, arrays))}
    header.update(inputs[0] if inputs is not None else {"values": 0, "axes": 0, "samples": 0})
    if inputs is not None:
        sections += inputs[1]
    parts = [MAGIC]
    for doc in (header, records):
        text = json.dumps(doc, separators=(",", ":")).encode()
        parts += [_LENGTH.pack(len(text)), text]
    for section in sections:
        parts.append(b"\0" * (-sum(map(len, parts)) % 8))
        parts.append(section)
    return b"".join(parts)


def _plain_dicts(column: list[Any]) -> bool:
    """Dicts by string of plain values only (what JSON gives back as they were)."""
    return all(type(d) is dict and _STR.issuperset(map(type, d)) and _PLAIN.issuperset(map(type, d.values()))
               for d in column)


def _encode_inputs(results: list[SeriesResult], records: dict[str, Any], samples: pd.DataFrame | None
                   ) -> tuple[dict[str, int], list[bytes]] | None:
    """The series' inputs (into ``records``: their ids, metrics, test sets, texts and axes) and the
    sections of their arrays and of the job's history rows; None when they cannot be kept exactly
    (``records`` then unchanged)."""
    if samples is None or not results:
        return None
    history = _samples_bytes(samples)
    if history is None:
        return None
    ids = [r.key.test_id for r in results]
    metrics = [r.key.metric for r in results]
    sets = [r.test_set for r in results]
    attrs = [r.attrs for r in results]
    if not all(_STR.issuperset(map(type, c)) for c in (ids, metrics, sets)) or not _plain_dicts(attrs):
        return None
    axes: dict[tuple[int, int], int] = {}  # the series of a job share their builds and times arrays
    distinct: list[np.ndarray] = []
    lengths: list[int] = []
    which: list[int] = []
    values: list[np.ndarray] = []
    for r in results:
        b, t, v, e = r.builds, r.times, r.values, r.stdevs
        if b.dtype != np.int64 or t.dtype != np.dtype("datetime64[ns]") or v.dtype != np.float64 or \
                e.dtype != np.float64 or not len(b) == len(t) == len(v) == len(e) or b.ndim != 1:
            return None
        k = (id(b), id(t))
        if k not in axes:
            axes[k] = len(lengths)
            lengths.append(len(b))
            distinct += [b, t.view(np.int64)]
        which.append(axes[k])
        values += [v, e]
    records.update(ids=ids, metrics=metrics, sets=sets, attrs=attrs, axis=which, axes=lengths)
    floats = np.concatenate(values).astype("<f8", copy=False)
    ints = np.concatenate(distinct).astype("<i8", copy=False)
    return {"values": len(floats), "axes": len(ints), "samples": len(history)}, \
        [floats.tobytes(), ints.tobytes(), history]


def _inputs(job: str, records: dict[str, Any], values: np.ndarray, axes: np.ndarray) -> list[SeriesInput]:
    """The series inputs ``_encode_inputs`` kept, their arrays views of the file's."""
    shared = []
    at = 0
    for n in records["axes"]:
        b, t = axes[at:at + n], axes[at + n:at + 2 * n].view("datetime64[ns]")
        b.flags.writeable = t.flags.writeable = False  # as ``split_series`` shares them
        shared.append((b, t))
        at += 2 * n
    if at != len(axes):
        raise ValueError("axes of another length")
    out = []
    at = 0
    for test_id, metric, test_set, attrs, a in zip(records["ids"], records["metrics"], records["sets"],
                                                   records["attrs"], records["axis"], strict=True):
        b, t = shared[a]
        n = len(b)
        if at + 2 * n > len(values):
            raise IndexError("values out of range")
        out.append(SeriesInput(SeriesKey(job, test_id, metric), test_set, b, t, values[at:at + n],
                               values[at + n:at + 2 * n], attrs))
        at += 2 * n
    if at != len(values):
        raise ValueError("values of another length")
    return out


#: dtypes of the history rows that Arrow IPC gives back exactly (``_samples_bytes``); tags aside
_KEPT_DTYPES = ("int64", "float64", "datetime64[ns, UTC]", "datetime64[ns]")
#: the dtype of a categorical's texts (``dictionary_to_categorical``'s)
_TEXT = pd.Index([], dtype="str").dtype


def _samples_bytes(samples: pd.DataFrame) -> bytes | None:
    """A job's history rows as Arrow IPC, or None when a column would not come back as it is:
    categoricals of text, the kept numeric dtypes, and ``tags`` (tuples of text or None, joined
    as the store joins them)."""
    from pal.store.schema import TAG_SEP

    columns = {}
    for name in samples.columns:
        col = samples[name]
        if name == "tags":
            rows = col.tolist()
            texts: dict[int, str | None] = {}  # per tuple object: the rows share one per tag set
            for tags in rows:
                if id(tags) in texts:
                    continue
                if tags is None:
                    texts[id(tags)] = None
                elif type(tags) is tuple and all(type(t) is str and TAG_SEP not in t for t in tags) \
                        and tags != ("",):  # ("",) would come back as ()
                    texts[id(tags)] = TAG_SEP.join(tags)
                else:
                    return None
            columns[name] = pa.array([texts[id(t)] for t in rows], pa.string()).dictionary_encode()
        elif isinstance(col.dtype, pd.CategoricalDtype):
            cats = col.cat.categories
            if col.cat.ordered or cats.dtype != _TEXT or not all(type(c) is str for c in cats.tolist()):
                return None  # (the store's categories are text: ``dictionary_to_categorical``)
            codes = col.cat.codes.to_numpy()
            columns[name] = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0),
                                                           pa.array(cats.tolist(), pa.string()))
        elif str(col.dtype) in _KEPT_DTYPES:
            columns[name] = pa.Array.from_pandas(col)
        else:
            return None
    if not isinstance(samples.index, pd.RangeIndex) or samples.index.start != 0 or samples.index.step != 1:
        return None
    table = pa.table(columns)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _samples(data: np.ndarray) -> pd.DataFrame:
    """The history rows ``_samples_bytes`` wrote."""
    from pal.history import shared_tags

    table = pa.ipc.open_stream(pa.py_buffer(data.tobytes())).read_all()
    table.validate(full=True)  # (a damaged file: an index past its dictionary, a length past its buffer)
    columns = {}
    for name, col in zip(table.column_names, table.columns):
        if name == "tags":
            columns[name] = shared_tags(col)
        elif pa.types.is_dictionary(col.type):
            chunk = col.combine_chunks()
            columns[name] = pd.Categorical.from_codes(
                chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64),
                categories=pd.Index(chunk.dictionary.to_pylist(), dtype=_TEXT), validate=True)
        else:
            columns[name] = col.to_pandas()
    return pd.DataFrame(columns, index=pd.RangeIndex(table.num_rows))


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
