"""The history store: samples as Parquet fragments (one per job/build), a JSON manifest of
builds, MDL states and the previous run's alerts, all under one directory.

Layout::

    <store>/manifest.json                                  builds, fragment paths, schema version
    <store>/samples/job=<job>/<build>-<sha8>-<id>.parquet  one fragment per (job, build)
    <store>/samples/job=<job>/c<first>-<last>-<id>.parquet compacted: builds first..last, a row group each
    <store>/state/<name>.json                              saved states (series key -> state: page digests)
    <store>/alerts.json                                    the previous run's alerts
    <store>/staging/                                       fragments written by workers (Arrow IPC, ``write_staged``)
    <store>/.lock                                          the single-writer lock (holder's pid)

Every write goes to a temp file in the target directory and is renamed into place; the
manifest is written last, so a killed run leaves the previous state readable. Readers take
no lock: they read the manifest, then only the fragments (and row groups) it lists for the
builds they want. ``vacuum`` compacts the small per-build fragments of a job into larger ones
the same way: new file first, manifest second, old files last.
"""

from __future__ import annotations

import contextlib
import dataclasses
from concurrent.futures import ThreadPoolExecutor
import json
import logging
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pal.errors import StoreError
from pal.model import SAMPLE_COLUMNS, BuildMeta
from pal.atomic import crash_point, is_temp, write_atomic, write_text_atomic
from pal.store.lock import LOCK_NAME, StoreLock
from pal.store.manifest import MANIFEST_NAME, Manifest, builds_frame, entry_of
from pal.store.schema import (
    READABLE_VERSIONS, SAMPLES_SCHEMA, SCHEMA_VERSION, SORT_KEYS, STORED_SCHEMA, STRING_COLUMNS, arrow_to_samples,
    from_stored, json_safe, samples_to_arrow, to_stored,
)

if TYPE_CHECKING:
    from pal.store.ingest import Fragment

log = logging.getLogger("pal")

SAMPLES_DIR = "samples"
STATE_DIR = "state"
STAGING_DIR = "staging"
ALERTS_NAME = "alerts.json"
_MISSING = object()
#: ``vacuum`` compacts runs of single-build fragments of a job into files of about this many rows,
COMPACT_ROWS = 500_000
#: in row groups of about this many rows (whole builds): few column chunks to open per window read
GROUP_ROWS = 32_768
#: ``commit_fragments`` compacts a job's run of this many consecutive single-build fragments by
#: itself, so the fragments a window read opens stay few without a maintenance job
AUTO_COMPACT_BUILDS = 64
#: threads reading fragments (Arrow decodes without the GIL)
READ_THREADS = 4


@dataclass
class CommitResult:
    """What ``commit_fragments`` did: build keys ``"job/build"`` per outcome."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list["Fragment"] = field(default_factory=list)  # fragments with an error: not stored


#: how every fragment is written: zstd, with dictionary pages for the text columns only. A number
#: column's values are nearly all distinct: its dictionary page filled up and the writer fell back
#: to plain pages after building it (Arrow's default dictionary-encodes every column). The
#: benchmark's compacted file of 253,500 rows: 2.47 -> 1.16 us a row to write, 13.0 -> 11.4 MB,
#: the same read time.
FRAGMENT_WRITE = {"compression": "zstd", "use_dictionary": [f.name for f in STORED_SCHEMA if pa.types.is_string(f.type)]}


def _sorted_stored(samples: pd.DataFrame | pa.Table) -> pa.Table:
    """Samples as a fragment holds them: ``STORED_SCHEMA``'s joined tags, sorted by ``SORT_KEYS``."""
    table = to_stored(samples if isinstance(samples, pa.Table) else samples_to_arrow(samples))
    if table.num_rows:
        table = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in SORT_KEYS]))
    return table


def write_fragment(samples: pd.DataFrame | pa.Table, target: Path, *, step: str | None = "fragment-temp") -> int:
    """Write samples (sorted by test_id, metric) as one Parquet file, atomically; return the row count."""
    table = _sorted_stored(samples)
    _write_parquet(table, target, step)
    return table.num_rows


def _write_parquet(table: pa.Table, target: Path, step: str | None) -> None:
    """A table already as a fragment holds it (``_sorted_stored``), written atomically as one."""
    write_atomic(target, lambda p: pq.write_table(table, p, **FRAGMENT_WRITE), step=step)


#: a staged fragment (``write_staged``): an Arrow IPC file, read by ``commit_fragments`` only
STAGED_SUFFIX = ".arrow"


def write_staged(samples: pd.DataFrame | pa.Table, target: Path) -> int:
    """Write a worker's fragment for ``commit_fragments`` (sorted as ``write_fragment`` sorts), as
    an Arrow IPC file with zstd buffers, atomically; return the row count.

    Why not Parquet: the commit reads every staged fragment once, into a compacted file or into
    the one Parquet file of its build, so a Parquet file written here was decoded again at once.
    A build of 1,500 tests: 2 ms to write and 1 ms to read as IPC, 8 and 4 ms as Parquet; a cold
    run's commit read 680 of them in its own process, the workers waiting.
    """
    table = _sorted_stored(samples)

    def write(path: Path) -> None:
        with pa.OSFile(str(path), "wb") as sink, \
                pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
            writer.write_table(table)

    write_atomic(target, write, step="fragment-temp")
    return table.num_rows


def read_fragment_file(path: Path) -> pa.Table:
    """A fragment file whole: a staged IPC file (``STAGED_SUFFIX``) or a Parquet fragment."""
    if path.suffix == STAGED_SUFFIX:
        with pa.OSFile(str(path), "rb") as source:
            return pa.ipc.open_file(source).read_all()
    return pq.read_table(path)


def _schema(columns: list[str] | None, dictionary: bool) -> pa.Schema:
    """SAMPLES_SCHEMA (or its ``columns``), string columns and joined tags as dictionaries when ``dictionary``."""
    fields = [SAMPLES_SCHEMA.field(c) for c in (columns if columns is not None else SAMPLES_SCHEMA.names)]
    if dictionary:
        fields = [f.with_type(pa.dictionary(pa.int32(), pa.string())) if f.name in (*STRING_COLUMNS, "tags") else f
                  for f in fields]
    return pa.schema(fields)


def _read_spans(pf: pq.ParquetFile, spans: list[tuple[int, int, int]], columns: list[str] | None,
                convert: Callable[[pa.Table], pa.Table]) -> pa.Table:
    """The rows of ``spans`` ((row group, offset, rows), in file order) of a compacted fragment:
    each row group holding them read once and ``convert``ed, then zero-copy slices of it (one per
    run of adjacent builds). One group at a time: the read's transient buffers are a group's."""
    parts: list[pa.Table] = []
    for g in sorted({g for g, _, _ in spans}):
        table = convert(pf.read_row_group(g, columns=columns))
        slices: list[list[int]] = []
        for _, offset, rows in (s for s in spans if s[0] == g):
            if slices and slices[-1][0] + slices[-1][1] == offset:
                slices[-1][1] += rows
            else:
                slices.append([offset, rows])
        parts += [table] if slices == [[0, table.num_rows]] else [table.slice(a, n) for a, n in slices]
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def fragment_name(job: str, build: int, sha256: str) -> str:
    """Relative path of a new fragment; unique per write so a replacement never overwrites a listed file."""
    return f"{SAMPLES_DIR}/job={quote(job, safe='')}/{int(build)}-{(sha256 or 'nohash')[:8]}-{uuid.uuid4().hex[:6]}.parquet"


class Store:
    """A Parquet history of samples and builds under ``path`` (created on the first write).

    Opening reads the manifest and raises StoreError if it is damaged or of another schema
    version. Write methods take the lock themselves (re-entrant within this instance), so a
    second process writing at the same time gets StoreError "store locked by pid N".
    """

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = 0.0,
                 auto_compact: int | None = AUTO_COMPACT_BUILDS):
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.auto_compact = auto_compact  # None: only ``vacuum`` compacts
        self._lock = StoreLock(self.path)
        self._depth = 0
        self._cache: tuple[tuple[int, int, int], Manifest] | None = None
        self._manifest()  # validate the schema version now

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def lock(self, timeout: float | None = None) -> Iterator["Store"]:
        """Hold the exclusive writer lock; StoreError "locked by pid N" if another holder keeps it past ``timeout``."""
        if self._depth == 0:
            self._lock.acquire(self.lock_timeout if timeout is None else timeout)
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._lock.release()

    # ------------------------------------------------------------------ builds and samples

    def _manifest(self) -> Manifest:
        """The current manifest, re-read when the file changed (another process may have written)."""
        try:
            st = (self.path / MANIFEST_NAME).stat()
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        if self._cache is None or self._cache[0] != stamp:
            self._cache = (stamp, Manifest.load(self.path))
        return self._cache[1]

    def _save(self, manifest: Manifest) -> None:
        manifest.save(self.path)
        self._cache = None

    def has_build(self, job: str, build: int, sha256: str | None = None) -> bool:
        """True if (job, build) is stored, and (when ``sha256`` is given) from an archive with that hash."""
        entry = self._manifest().builds.get((job, int(build)))
        return entry is not None and (sha256 is None or entry.get("sha256") == sha256)

    def insert(self, samples: Any, meta: BuildMeta | str, sha256: str | None = None, *, replace: bool = False) -> str:
        """Store one build's samples; return "added", "replaced" or "unchanged".

        ``insert(samples_df, meta, sha256)``, or ``insert(parse_result, sha256)`` with a ParseResult
        (``.samples``, ``.meta``) as docs/architecture.md writes it. Idempotent: the same
        (job, build, sha256) again is "unchanged" (nothing written) unless ``replace``; a different
        sha256 (a changed archive) replaces the stored build.
        """
        if isinstance(meta, str) and sha256 is None and hasattr(samples, "meta"):
            samples, meta, sha256 = samples.samples, samples.meta, meta
        if not isinstance(meta, BuildMeta) or sha256 is None:
            raise TypeError("insert(samples_df, meta: BuildMeta, sha256) or insert(parse_result, sha256)")
        with self.lock():
            manifest = self._manifest().copy()
            key = (meta.job, int(meta.build))
            old = manifest.builds.get(key)
            if old is not None and old.get("sha256") == sha256 and not replace:
                return "unchanged"
            rel = fragment_name(meta.job, meta.build, sha256)
            rows = write_fragment(samples, self.path / rel)
            crash_point("fragments-placed")
            manifest.builds[key] = entry_of(meta, sha256, rel, rows)
            self._save(manifest)
            if old is not None:
                self._unlink_fragment(old["fragment"], keep=rel)
            return "added" if old is None else "replaced"

    def staging_dir(self) -> Path:
        """Where workers write fragments for ``commit_fragments`` (inside the store: same filesystem)."""
        path = self.path / STAGING_DIR
        path.mkdir(parents=True, exist_ok=True)
        return path

    def commit_fragments(self, fragments: Iterable["Fragment"], *, replace: bool = False) -> CommitResult:
        """Place fragments written by workers into the store and list them in the manifest, in one atomic step.

        A fragment with ``error`` set (or no file) is skipped and returned in ``skipped``; one
        whose (job, build, sha256) is already stored is "unchanged" and its staged file deleted.
        With ``auto_compact``, a job's run of that many single-build fragments (the new ones
        among them) is written as one compacted file straight from the staged files; each other
        new build gets a Parquet file of its own. The files are written first, the manifest
        names them in one replace, the staged files and the fragments the manifest no longer
        lists go last.
        """
        result = CommitResult()
        with self.lock():
            manifest = self._manifest().copy()
            obsolete: list[str] = []
            staged: dict[tuple[str, int], Path] = {}
            for frag in fragments:
                name = f"{frag.job}/{frag.build}"
                if frag.error or not frag.path or frag.meta is None:
                    result.skipped.append(frag)
                    continue
                key = (frag.job, int(frag.build))
                old = manifest.builds.get(key)
                if old is not None and old.get("sha256") == frag.sha256 and not replace:
                    Path(frag.path).unlink(missing_ok=True)
                    result.unchanged.append(name)
                    continue
                if key in staged and staged[key] != Path(frag.path):  # (a build twice in one commit: the last is kept)
                    staged[key].unlink(missing_ok=True)
                staged[key] = Path(frag.path)
                manifest.builds[key] = entry_of(frag.meta, frag.sha256, fragment_name(frag.job, frag.build, frag.sha256),
                                                frag.rows)
                if old is not None:
                    obsolete.append(old["fragment"])
                (result.added if old is None else result.replaced).append(name)
            if not (result.added or result.replaced):
                return result
            runs = self._runs(manifest, COMPACT_ROWS, self.auto_compact) if self.auto_compact else []
            _, merged = self._write_runs(manifest, runs, staged)
            in_runs = {k for run in runs for k in run}
            for key, path in staged.items():
                if key not in in_runs:
                    self._place(path, self.path / manifest.builds[key]["fragment"])
            crash_point("fragments-placed")
            self._save(manifest)
            for rel in dict.fromkeys(obsolete + merged):
                self._unlink_fragment(rel)
            for path in staged.values():
                path.unlink(missing_ok=True)
        return result

    def remove_build(self, job: str, build: int) -> bool:
        """Forget one build (manifest first, then its file); False if it was not stored."""
        with self.lock():
            manifest = self._manifest().copy()
            old = manifest.builds.pop((job, int(build)), None)
            if old is None:
                return False
            self._save(manifest)
            self._unlink_fragment(old["fragment"])
            return True

    def samples(self, jobs: Iterable[str] | str | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored samples of ``jobs`` (all if None), only ``columns`` (all if None; SAMPLE_COLUMNS dtypes).

        Sorted by job, build, test_id, metric. Only the fragments of the wanted jobs are opened and
        only the wanted columns are read. ``trials`` are lists of floats, ``tags`` tuples of strings.
        """
        if isinstance(jobs, str):
            jobs = [jobs]
        wanted = None if columns is None else list(columns)
        unknown = [c for c in (wanted or []) if c not in SAMPLE_COLUMNS]
        if unknown:
            raise StoreError(f"{self.path}: unknown sample columns {unknown}")
        table = self.table(jobs, wanted)
        return arrow_to_samples(table, wanted)

    def table(self, jobs: Iterable[str] | None = None, columns: Iterable[str] | None = None, *,
              builds: Iterable[tuple[str, int]] | None = None, dictionary: bool = False) -> pa.Table:
        """The stored samples as an Arrow table, sorted by job, build, test_id, metric.

        ``builds`` (``(job, build)`` pairs) selects builds through the manifest: only their
        fragments, and in compacted fragments only their row groups, are read; nothing is read
        and then filtered away. ``dictionary``: string columns stay Arrow dictionaries (each
        distinct value held once per fragment) instead of one UTF-8 copy per row, and ``tags``
        becomes one dictionary string per row, the row's tags joined by ``TAG_SEP`` (null for
        no list). Such a read is done one row group at a time, so that its peak memory is the
        result plus a row group per reading thread.
        """
        wanted = None if columns is None else list(columns)
        if isinstance(jobs, str):
            jobs = [jobs]
        m = self._manifest()
        if builds is not None:
            keys = sorted({(str(j), int(b)) for j, b in builds} & m.builds.keys())
        else:
            chosen = None if jobs is None else set(jobs)
            keys = [k for k in sorted(m.builds) if chosen is None or k[0] in chosen]
        return self._read_pieces(m.pieces(keys), wanted, dictionary)

    def _read_pieces(self, pieces: list[tuple[str, list[tuple[int, int, int]] | None]], columns: list[str] | None,
                     dictionary: bool) -> pa.Table:
        """Read the pieces in order (each fragment is sorted by test_id, metric when written, and the
        pieces come in (job, build) order, so the result is sorted without a sort)."""
        schema = _schema(columns, dictionary)
        if not pieces:
            return schema.empty_table()
        as_dict = [c for c in (*STRING_COLUMNS, "tags") if columns is None or c in columns] if dictionary else None

        def convert(t: pa.Table) -> pa.Table:
            t = from_stored(t, joined=dictionary)
            i = t.schema.get_field_index("tags")
            if dictionary and i >= 0 and not pa.types.is_dictionary(t.schema.field(i).type):  # a pre-3 fragment's
                t = t.set_column(i, "tags", pc.dictionary_encode(t.column(i)))
            return t

        def read(piece: tuple[str, list[tuple[int, int, int]] | None]) -> pa.Table:
            rel, spans = piece
            path = self.path / rel
            try:
                try:
                    pf = pq.ParquetFile(path, read_dictionary=as_dict)
                except KeyError:  # a fragment written before version 3: its tags are lists
                    pf = pq.ParquetFile(path, read_dictionary=[c for c in as_dict or () if c != "tags"])
                if spans is None:
                    t = convert(pf.read(columns=columns))
                else:
                    t = _read_spans(pf, spans, columns, convert)
            except (OSError, pa.ArrowInvalid) as exc:
                raise StoreError(f"{path}: cannot read a listed fragment ({exc})") from None
            return t.cast(schema) if t.schema != schema else t

        if len(pieces) == 1:
            tables = [read(pieces[0])]
        else:
            with ThreadPoolExecutor(min(READ_THREADS, len(pieces))) as pool:
                tables = list(pool.map(read, pieces))
        return pa.concat_tables(tables)

    def builds(self, jobs: Iterable[str] | str | None = None) -> pd.DataFrame:
        """The builds table (pal.model.BUILD_COLUMNS, sha256 = the archive's hash), sorted by job, build."""
        if isinstance(jobs, str):
            jobs = [jobs]
        wanted = None if jobs is None else set(jobs)
        m = self._manifest()
        return builds_frame([e for k, e in sorted(m.builds.items()) if wanted is None or k[0] in wanted])

    def widest_builds(self) -> dict[str, int]:
        """Each job's most rows in one stored build: about the most series its window can hold,
        known before the window is read (the run sizes the render's pool by it)."""
        widest: dict[str, int] = {}
        for (job, _), entry in self._manifest().builds.items():
            widest[job] = max(widest.get(job, 0), int(entry.get("rows", 0)))
        return widest

    def manifest_entries(self, keys: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
        """The manifest entries (copies) of the stored builds among ``keys``, in (job, build) order."""
        m = self._manifest()
        return [dict(m.builds[k]) for k in sorted({(str(j), int(b)) for j, b in keys} & m.builds.keys())]

    # ------------------------------------------------------------------ MDL state and alerts

    def _state_path(self, name: str) -> Path:
        return self.path / STATE_DIR / f"{quote(name, safe='')}.json"

    def save_state(self, name: str, key_or_states: str | Mapping[str, Any], obj: Any = _MISSING) -> None:
        """Save MDL states under ``name`` (one file per name, e.g. per job), atomically.

        ``save_state(name, {series_key: state, ...})`` replaces the whole mapping;
        ``save_state(name, series_key, state)`` sets one entry and keeps the others.
        Keys are strings; states are JSON-able (numpy scalars/arrays are converted).
        """
        with self.lock():
            if obj is _MISSING:
                if not isinstance(key_or_states, Mapping):
                    raise TypeError("save_state(name, states) needs a mapping; or call save_state(name, key, state)")
                states = dict(key_or_states)
            else:
                states = self.load_state(name)
                states[key_or_states] = obj  # type: ignore[index]
            bad = [k for k in states if not isinstance(k, str)]
            if bad:
                raise TypeError(f"state keys must be strings, got {bad[0]!r} in state {name!r}")
            text = json.dumps({"schema_version": SCHEMA_VERSION, "states": states}, sort_keys=True, default=json_safe)
            write_text_atomic(self._state_path(name), text)

    def drop_state(self, name: str) -> bool:
        """Remove the states saved under ``name``; False if there were none."""
        with self.lock():
            path = self._state_path(name)
            if not path.exists():
                return False
            path.unlink()
            return True

    def load_state(self, name: str) -> dict[str, Any]:
        """The states saved under ``name`` ({} if none)."""
        return self._load_json(self._state_path(name), "states", {})

    def save_alerts(self, alerts: Iterable[Mapping[str, Any] | Any]) -> None:
        """Keep this run's alerts (dicts or dataclasses) for the next run's "new regression" check."""
        rows = [dataclasses.asdict(a) if dataclasses.is_dataclass(a) else dict(a) for a in alerts]
        with self.lock():
            text = json.dumps({"schema_version": SCHEMA_VERSION, "alerts": rows}, sort_keys=True, default=json_safe)
            write_text_atomic(self.path / ALERTS_NAME, text)

    def load_alerts(self) -> list[dict[str, Any]]:
        """The alerts saved by the previous run ([] if none)."""
        return self._load_json(self.path / ALERTS_NAME, "alerts", [])

    @staticmethod
    def _load_json(path: Path, member: str, default: Any) -> Any:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default
        except (OSError, json.JSONDecodeError) as exc:
            raise StoreError(f"{path}: unreadable ({exc})") from None
        if data.get("schema_version") not in READABLE_VERSIONS:
            raise StoreError(f"{path}: schema version {data.get('schema_version')!r}, expected one of "
                             f"{', '.join(map(str, READABLE_VERSIONS))}")
        return data.get(member, default)

    # ------------------------------------------------------------------ maintenance

    def info(self) -> dict[str, Any]:
        """Jobs, builds, rows, size on disk (bytes) and schema version, plus per-job counts."""
        m = self._manifest()
        per_job: dict[str, dict[str, int]] = {}
        for (job, build), e in sorted(m.builds.items()):
            j = per_job.setdefault(job, {"builds": 0, "rows": 0, "first_build": build, "last_build": build})
            j["builds"] += 1
            j["rows"] += int(e.get("rows", 0))
            j["last_build"] = build
        size = sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file()) if self.path.exists() else 0
        return {
            "path": str(self.path),
            "schema_version": m.schema_version,
            "jobs": len(per_job),
            "builds": len(m.builds),
            "rows": sum(j["rows"] for j in per_job.values()),
            "size_bytes": size,
            "per_job": per_job,
        }

    def vacuum(self, *, compact: bool = True, target_rows: int = COMPACT_ROWS) -> dict[str, Any]:
        """Compact small fragments (``compact``), then remove temp files, staged leftovers and
        fragments the manifest does not list; return what was compacted and removed."""
        removed: list[str] = []
        freed = 0
        if not self.path.exists():
            return {"removed": removed, "bytes": 0, "compacted": 0, "fragments": []}
        with self.lock():
            made = self._compact(target_rows) if compact else []
            listed = set(Manifest.load(self.path).fragments())
            for p in sorted(self.path.rglob("*")):
                if not p.is_file() or p.name == LOCK_NAME:
                    continue
                rel = p.relative_to(self.path).as_posix()
                orphan = rel.startswith(SAMPLES_DIR + "/") and rel not in listed
                if is_temp(p) or orphan or rel.startswith(STAGING_DIR + "/"):
                    freed += p.stat().st_size
                    p.unlink()
                    removed.append(rel)
            for d in sorted((p for p in self.path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                if d.name in (SAMPLES_DIR, STATE_DIR):
                    continue
                with contextlib.suppress(OSError):
                    d.rmdir()  # only empty ones
        if removed or made:
            log.info("store vacuum: %d compacted fragments; removed %d files (%d bytes)", len(made), len(removed), freed)
        return {"removed": removed, "bytes": freed, "compacted": sum(n for _, n in made),
                "fragments": [rel for rel, _ in made]}

    def _compact(self, target_rows: int, min_builds: int = 2) -> list[tuple[str, int]]:
        """Merge runs of at least ``min_builds`` consecutive single-build fragments of a job into
        files of about ``target_rows`` rows, in row groups of whole builds; return (new fragment,
        builds in it).

        Crash-safe like every write: the new files are placed first (unlisted: a kill leaves
        orphans that the vacuum removes), then the manifest names them in one atomic replace,
        then the old files go. The rows and their order are unchanged.
        """
        manifest = self._manifest().copy()
        made, old = self._write_runs(manifest, self._runs(manifest, target_rows, min_builds), {})
        if not made:
            return made
        crash_point("fragments-placed")
        self._save(manifest)
        for rel in old:
            self._unlink_fragment(rel)
        return made

    @staticmethod
    def _runs(manifest: Manifest, target_rows: int, min_builds: int) -> list[list[tuple[str, int]]]:
        """The runs of at least ``min_builds`` (and 2) consecutive single-build fragments of a job
        that ``_compact`` merges, each cut where it would pass ``target_rows`` rows."""
        runs: list[list[tuple[str, int]]] = []
        current: list[tuple[str, int]] = []
        rows = 0
        for key in sorted(manifest.builds):
            e = manifest.builds[key]
            single = "row_group" not in e and int(e.get("rows", 0)) > 0
            if current and (not single or key[0] != current[-1][0] or rows + int(e["rows"]) > target_rows):
                runs.append(current)
                current, rows = [], 0
            if single:
                current.append(key)
                rows += int(e["rows"])
        runs.append(current)
        return [r for r in runs if len(r) >= max(2, min_builds)]

    def _write_runs(self, manifest: Manifest, runs: list[list[tuple[str, int]]],
                    staged: Mapping[tuple[str, int], Path]) -> tuple[list[tuple[str, int]], list[str]]:
        """Write each run as one compacted file (unlisted yet) and point its builds' entries in
        ``manifest`` at it; a build in ``staged`` is read from its staged file, any other from its
        stored fragment. Returns (new fragment, builds in it) and the stored fragments merged."""
        made: list[tuple[str, int]] = []
        old: list[str] = []
        for run in runs:
            job = run[0][0]
            rel = (f"{SAMPLES_DIR}/job={quote(job, safe='')}/c{run[0][1]}-{run[-1][1]}-"
                   f"{uuid.uuid4().hex[:6]}.parquet")
            sources = [staged[k] if k in staged else self.path / manifest.builds[k]["fragment"] for k in run]
            places: list[tuple[int, int]] = []
            write_atomic(self.path / rel, lambda p, sources=sources, places=places:
                         places.extend(self._write_compacted(p, sources)), step="fragment-temp")
            old.extend(manifest.builds[k]["fragment"] for k in run if k not in staged)
            for k, (group, offset) in zip(run, places):
                manifest.builds[k] = dict(manifest.builds[k], fragment=rel, row_group=group, offset=offset)
            made.append((rel, len(run)))
        return made, old

    def _write_compacted(self, target: Path, sources: list[Path]) -> list[tuple[int, int]]:
        """One Parquet file of the ``sources`` fragment files (stored or staged), in order, in row
        groups of about GROUP_ROWS rows (whole fragments); return each source's (row group, row offset)."""
        places: list[tuple[int, int]] = []
        pending: list[pa.Table] = []
        rows = 0
        group = 0
        with pq.ParquetWriter(target, STORED_SCHEMA, **FRAGMENT_WRITE) as writer:
            def flush() -> None:
                nonlocal pending, rows, group
                if pending:
                    t = pa.concat_tables(pending)
                    writer.write_table(t, row_group_size=max(1, t.num_rows))
                    pending, rows, group = [], 0, group + 1

            for source in sources:
                try:
                    t = from_stored(read_fragment_file(source), joined=True).cast(STORED_SCHEMA)
                except (OSError, pa.ArrowInvalid) as exc:
                    raise StoreError(f"{source}: cannot read a fragment to compact, stored or staged ({exc})") from None
                if pending and rows + t.num_rows > GROUP_ROWS:
                    flush()
                places.append((group, rows))
                pending.append(t)
                rows += t.num_rows
            flush()
        return places

    def export(self, path: str | os.PathLike[str], jobs: Iterable[str] | None = None) -> Path:
        """Write all (or ``jobs``') samples to ``path``: .parquet (Arrow types) or .csv (trials/tags as JSON lists)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            table = self.table(jobs)
            write_atomic(path, lambda p: pq.write_table(table, p, compression="zstd"))
        elif suffix == ".csv":
            df = self.samples(jobs)
            for col in ("trials", "tags"):
                df[col] = [None if v is None else json.dumps(list(v)) for v in df[col]]
            write_atomic(path, lambda p: df.to_csv(p, index=False))
        else:
            raise StoreError(f"{path}: export format must be .csv or .parquet")
        return path

    # ------------------------------------------------------------------ helpers

    def _place(self, staged: Path, target: Path) -> None:
        """A staged fragment as the Parquet file ``target`` (written from a staged IPC file, which
        the caller deletes once the manifest is saved; a staged Parquet file is moved)."""
        if staged.suffix != STAGED_SUFFIX:
            self._move_in(staged, target)
            return
        try:
            table = read_fragment_file(staged)
        except (OSError, pa.ArrowInvalid) as exc:
            raise StoreError(f"{staged}: cannot read the staged fragment ({exc})") from None
        _write_parquet(table, target, "fragment-temp")  # (staged sorted: written as write_fragment writes it)

    def _move_in(self, staged: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(staged, target)
        except OSError as exc:
            if exc.errno != 18:  # EXDEV: staging on another filesystem -> copy, then rename
                raise StoreError(f"{staged}: cannot move the fragment into the store ({exc.strerror})") from None
            write_atomic(target, lambda p: shutil.copyfile(staged, p))
            staged.unlink(missing_ok=True)

    def _unlink_fragment(self, rel: str, keep: str | None = None) -> None:
        """Delete a fragment the (just saved) manifest no longer lists; a compacted one still
        holding other builds stays."""
        if rel != keep and self._manifest().references(rel) == 0:
            (self.path / rel).unlink(missing_ok=True)
