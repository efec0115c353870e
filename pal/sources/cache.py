"""The download cache: ``<cache>/<job>/<build>/<file>`` plus a JSON index, and a hash cache.

Policy (why no HEAD request per build): a completed Jenkins build's artifacts never change,
so a cached file whose index entry matches the file on disk (same size) is trusted without
asking the server. The one way a server can "say otherwise" is a different build
``timestamp`` for the same number in its build list (the job was deleted and re-created,
numbers reused): then the entry is dropped and the build fetched again. So a rerun over 180
builds where one is new costs the build list plus one download.

Local files are used in place; their sha256 is cached by (path, size, mtime_ns) so reruns do
not rehash gigabytes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from pal.atomic import write_text_atomic

log = logging.getLogger("pal")

INDEX_NAME = "index.json"
HASHES_NAME = "local-hashes.json"
VERSION = 1


@dataclass(frozen=True)
class CacheEntry:
    file: str  # path relative to the cache dir
    source: str
    url: str  # redacted
    sha256: str
    size: int
    kind: str
    build_timestamp_ms: int | None = None  # the build's timestamp when fetched (None: unknown)
    etag: str | None = None
    last_modified: str | None = None


def _atomic_write_json(path: Path, data: object) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True))


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("cache index %s unreadable (%s); starting afresh", path, exc)
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    return data


class CacheIndex:
    """Thread-safe index of fetched files; ``save()`` writes it atomically."""

    def __init__(self, cache_dir: Path):
        self.dir = Path(cache_dir)
        self._lock = threading.Lock()
        raw = _read_json(self.dir / INDEX_NAME).get("entries", {})
        self._entries: dict[str, CacheEntry] = {}
        for key, val in raw.items():
            try:
                self._entries[key] = CacheEntry(**val)
            except TypeError:
                continue
        self._dirty = False

    @staticmethod
    def key(job: str, build: int) -> str:
        return f"{job}/{build}"

    def build_dir(self, job: str, build: int) -> Path:
        return self.dir / job / str(build)

    def lookup(self, job: str, build: int, timestamp_ms: int | None) -> CacheEntry | None:
        """The entry if its file is still there, whole, and the build was not re-created."""
        with self._lock:
            entry = self._entries.get(self.key(job, build))
        if entry is None:
            return None
        path = self.dir / entry.file
        try:
            size = path.stat().st_size
        except OSError:
            size = -1
        stale_build = (timestamp_ms is not None and entry.build_timestamp_ms is not None
                       and timestamp_ms != entry.build_timestamp_ms)
        if size != entry.size or stale_build:
            log.debug("cache: %s/%s %s; fetching again", job, build,
                      "build re-created" if stale_build else "file gone or changed")
            with self._lock:
                self._entries.pop(self.key(job, build), None)
                self._dirty = True
            return None
        return entry

    def put(self, job: str, build: int, entry: CacheEntry) -> None:
        with self._lock:
            self._entries[self.key(job, build)] = entry
            self._dirty = True

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            data = {"version": VERSION, "entries": {k: asdict(v) for k, v in sorted(self._entries.items())}}
            self._dirty = False
        _atomic_write_json(self.dir / INDEX_NAME, data)


class HashCache:
    """sha256 and container kind of local files, keyed by (path, size, mtime_ns)."""

    def __init__(self, cache_dir: Path):
        self.path = Path(cache_dir) / HASHES_NAME
        self._lock = threading.Lock()
        self._entries: dict[str, list] = _read_json(self.path).get("files", {})
        self._dirty = False

    def get(self, path: Path, st: os.stat_result) -> tuple[str, str] | None:
        with self._lock:
            e = self._entries.get(str(path))
        if e and e[0] == st.st_size and e[1] == st.st_mtime_ns:
            return e[2], e[3]
        return None

    def put(self, path: Path, st: os.stat_result, sha256: str, kind: str) -> None:
        with self._lock:
            self._entries[str(path)] = [st.st_size, st.st_mtime_ns, sha256, kind]
            self._dirty = True

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            data = {"version": VERSION, "files": dict(self._entries)}
            self._dirty = False
        _atomic_write_json(self.path, data)
