"""A directory of past builds, used in place (no copy).

Layouts, nested first: ``DIR/<job>/<build>/<name>`` (also under ``<build>/archives/``) and
PAL's flat ``DIR/<job>__<build>__<name>``, where ``<name>`` is output.xml or
output_info.xml, plain or .gz/.xz/.zip, preferred in the order of NAMES. A nested build
directory without any of those is read as CSIT's UTI JSON results when it has them (an
archive of the tree, or the tree itself: pal.sources.uti_layout).

Build times: a directory knows no build time (an mtime says when a file was copied, not when
the build ran), so a local source lists builds without timestamps and ``period-days`` is not
applied to them; the analysis windows work on the build time inside output.xml instead.
``lastCompletedBuild``/``lastSuccessfulBuild`` resolve to the newest build present.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from pal.model import BuildFile
from pal.sources.base import BuildInfo, Failed, Missing
from pal.sources.cache import HashCache
from pal.sources.integrity import IntegrityError, check_file
from pal.sources.uti_layout import find_uti, tree_sha256

log = logging.getLogger("pal")

NAMES = tuple(f"{stem}{ext}" for stem in ("output.xml", "output_info.xml") for ext in (".gz", ".xz", ".zip", ""))
_RANK = {n: i for i, n in enumerate(NAMES)}


class LocalSource:
    """``Source`` over a directory."""

    def __init__(self, name: str, root: Path, hashes: HashCache):
        self.name = name
        self.root = Path(root)
        self.hashes = hashes
        self._found: dict[str, dict[int, Path]] = {}
        self._empty: dict[str, dict[int, list[str]]] = {}  # build dirs without a known file: names seen

    def _scan(self, job: str) -> dict[int, Path]:
        if job in self._found:
            return self._found[job]
        found: dict[int, Path] = {}
        empty: dict[int, list[str]] = {}
        job_dir = self.root / job
        if job_dir.is_dir():
            for entry in os.scandir(job_dir):
                if entry.is_dir() and entry.name.isdigit():
                    path = self._pick(Path(entry.path))
                    if path is not None:
                        found[int(entry.name)] = path
                    else:
                        empty[int(entry.name)] = sorted(os.listdir(entry.path))[:10]
        flat = re.compile(rf"^{re.escape(job)}__(\d+)__(.+)$")
        flat_hits: dict[int, Path] = {}
        if self.root.is_dir():
            for entry in os.scandir(self.root):
                m = flat.match(entry.name)
                if m and m.group(2) in _RANK and entry.is_file():
                    b = int(m.group(1))
                    old = flat_hits.get(b)
                    if old is None or _RANK[m.group(2)] < _RANK[old.name.split("__", 2)[2]]:
                        flat_hits[b] = Path(entry.path)
        for b, p in flat_hits.items():
            found.setdefault(b, p)
        self._found[job] = found
        self._empty[job] = {b: names for b, names in empty.items() if b not in found}
        return found

    @staticmethod
    def _pick(build_dir: Path) -> Path | None:
        for sub in (build_dir, build_dir / "archives"):
            for name in NAMES:
                p = sub / name
                if p.is_file():
                    return p
        return find_uti(build_dir)

    def list_builds(self, job: str) -> dict[int, BuildInfo]:
        """Builds with a file, and build directories without one (reported missing, never skipped silently)."""
        found = self._scan(job)
        return {b: BuildInfo(b, known=False) for b in sorted({*found, *self._empty.get(job, {})})}

    def resolve(self, job: str, alias: str, listed: dict[int, BuildInfo]) -> int | None:
        present = {*self._scan(job), *self._empty.get(job, {})}  # a build dir without a file is still a build
        return max(present) if present else None

    def fetch(self, job: str, build: int, info: BuildInfo | None) -> BuildFile:
        path = self._scan(job).get(build)
        if path is None:
            seen = self._empty.get(job, {}).get(build)
            if seen is not None:
                raise Missing(f"no {' / '.join(NAMES[:4])} in {self.root / job / str(build)} (it holds: "
                              f"{', '.join(seen) or 'nothing'})", urls=[str(self.root / job / str(build))])
            raise Missing(f"not in {self.root}", urls=[str(self.root / job / str(build))])
        if path.is_dir():  # a UTI tree: fingerprinted (paths, sizes, mtimes), checked file by file when parsed
            try:
                sha = tree_sha256(path)
            except OSError as exc:
                raise Failed(f"unreadable: {exc.strerror}", urls=[str(path)],
                             errors=[f"{path}: {exc.strerror}"]) from None
            return BuildFile(job=job, build=build, path=path, source=self.name, url=str(path), sha256=sha)
        try:
            st = path.stat()
            cached = self.hashes.get(path, st)
            if cached is None:
                sha, kind = check_file(path)
                self.hashes.put(path, st, sha, kind)
            else:
                sha, kind = cached
        except IntegrityError as exc:
            raise Failed(f"damaged file: {exc}", urls=[str(path)], errors=[f"{path}: damaged file: {exc}"]) from None
        except OSError as exc:
            raise Failed(f"unreadable: {exc.strerror}", urls=[str(path)], errors=[f"{path}: {exc.strerror}"]) from None
        return BuildFile(job=job, build=build, path=path, source=self.name, url=str(path), sha256=sha)

    def close(self) -> None:
        self.hashes.save()
