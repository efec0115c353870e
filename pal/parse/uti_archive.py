"""The ``*.info.json`` files of one build, whatever they were archived as.

CSIT's exporter writes one file per test (and ``setup.info.json`` / ``teardown.info.json``
per suite) under the job's output directory, mirroring the suite tree. A build's results
arrive as that directory, as a ``.tar.gz``/``.tgz`` (or xz/bz2 tar) or ``.zip`` of it, or as
single files. This module yields ``Member(name, data)`` for each ``*.info.json`` in order
and reports what it refuses; it never extracts anything to disk.

Bounds (the same guarantees as the output.xml path):
- tar archives are read as a stream: one member in memory at a time, and the compressed stream
  to its end (a cut archive is an error even when the cut falls after a whole member);
- a member larger than ``max_member`` is refused; the sum of member sizes read is capped by
  ``max_bytes`` (a decompression bomb stops the build with a ParseError);
- absolute names, ``..`` parts, links and device files are refused: nothing outside the
  build's own tree is ever read (a directory walk does not follow symbolic links either).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

from pal.errors import ParseError

SUFFIX = ".info.json"
#: Cap on one ``*.info.json`` (CSIT's are a few KiB; telemetry makes some reach a few MiB).
DEFAULT_MAX_MEMBER = 64 * 1024**2
_DECOMPRESS_ERRORS = (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError)


class Member(NamedTuple):
    """One ``*.info.json``: its path inside the build tree (``/``-separated) and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Refused:
    """A member that was not read, and why (a per-file problem, the build goes on)."""

    name: str
    reason: str


def is_uti_name(name: str) -> bool:
    """``*.info.json``, or ``*.info.json.gz`` as the log server keeps each file."""
    low = name.lower()
    return low.endswith(SUFFIX) or low.endswith(SUFFIX + ".gz")


def member_base(name: str) -> str:
    """The file name without the log server's ``.gz`` (``setup.info.json.gz`` -> ``setup.info.json``)."""
    base = name.rsplit("/", 1)[-1]
    return base[:-3] if base.endswith((".gz", ".GZ")) else base


def safe_member_name(name: str) -> str | None:
    """The member's path inside the build tree, or None when it would point outside it."""
    if not name or "\x00" in name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if any(p == ".." for p in parts):
        return None
    clean = "/".join(p for p in parts if p not in ("", "."))
    return clean or None


def archive_kind(path: Path) -> str | None:
    """``tar`` | ``zip`` | ``json`` | ``dir`` when ``path`` holds UTI results, None for anything else (XML)."""
    if path.is_dir():
        return "dir"
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return None
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except _DECOMPRESS_ERRORS:
            return None
        return "zip" if any(is_uti_name(n) for n in names) else None
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return "json"
    if head.startswith(b"\x1f\x8b") and path.name.lower().endswith(SUFFIX + ".gz"):
        return "json"  # one file as the log server keeps it
    if head.startswith((b"\x1f\x8b", b"\xfd7zXZ\x00", b"BZh")) or is_tar_name(path.name):
        return "tar" if _is_tar_stream(path) else None
    return None


def is_tar_name(name: str) -> bool:
    return name.lower().endswith((".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2"))


def _is_tar_stream(path: Path) -> bool:
    """A tar header behind the compression: the ``ustar`` magic (or a valid old-style header)."""
    try:
        with tarfile.open(path, mode="r|*") as tf:
            tf.next()
        return True
    except _DECOMPRESS_ERRORS:
        return False


def iter_members(path: str | Path, build: int | str | None = None, *, max_bytes: int,
                 max_member: int = DEFAULT_MAX_MEMBER) -> Iterator[Member | Refused]:
    """Yield every ``*.info.json`` of the build at ``path`` (a Member) or why one was refused.

    Raises:
        ParseError: unreadable or damaged archive, more than ``max_bytes`` in total, no UTI files.
    """
    p = Path(path)
    kind = archive_kind(p)
    name = str(path)
    budget = _Budget(name, build, max_bytes)
    if kind == "dir":
        yield from _dir_members(p, name, build, budget, max_member)
    elif kind == "json":
        yield _one(p.name, _read_file(p, name, build, max_member), budget, max_member)
    elif kind == "zip":
        yield from _zip_members(p, name, build, budget, max_member)
    elif kind == "tar":
        yield from _tar_members(p, name, build, budget, max_member)
    else:
        raise ParseError(name, "not UTI results (no directory, tar, zip or *.info.json)", build)
    if budget.members == 0:
        raise ParseError(name, f"no *{SUFFIX} files found", build)


class _Budget:
    def __init__(self, name: str, build: int | str | None, max_bytes: int):
        self.name, self.build, self.max_bytes = name, build, max_bytes
        self.total = 0
        self.members = 0

    def take(self, n: int) -> None:
        self.total += n
        if self.total > self.max_bytes:
            raise ParseError(self.name, f"UTI files exceed the cap of {self.max_bytes} bytes in total", self.build)


def _one(member: str, data: bytes | None, budget: _Budget, max_member: int) -> Member | Refused:
    if data is None:
        return Refused(member, f"larger than the cap of {max_member} bytes per file")
    if member.lower().endswith(".gz"):
        try:
            data = _gunzip(data, max_member)
        except (OSError, EOFError, zlib.error) as exc:
            return Refused(member, f"damaged gzip data: {exc}")
        if data is None:
            return Refused(member, f"decompresses to more than the cap of {max_member} bytes per file")
    budget.take(len(data))
    budget.members += 1
    return Member(member, data)


def _gunzip(data: bytes, max_member: int) -> bytes | None:
    """One gzip'd member, decompressed up to the cap (None beyond it); a cut stream raises EOFError."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = d.decompress(data, max_member + 1)
    if len(out) > max_member:
        return None
    if not d.eof:
        raise EOFError("compressed data ends before the end-of-stream marker")
    return out


def _read_capped(path: str | Path, max_member: int) -> bytes:
    """The file's bytes, at most ``max_member + 1`` of them (sized from fstat: a read of the cap itself
    would allocate the whole cap for every small file)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        return fh.read(min(size, max_member) + 1)


def _read_file(p: Path, name: str, build: int | str | None, max_member: int) -> bytes | None:
    try:
        data = _read_capped(p, max_member)
    except OSError as exc:
        raise ParseError(name, f"cannot open {p}: {exc.strerror or exc}", build) from None
    return data if len(data) <= max_member else None


def _dir_members(root: Path, name: str, build: int | str | None, budget: _Budget,
                 max_member: int) -> Iterator[Member | Refused]:
    if not os.access(root, os.R_OK | os.X_OK):
        raise ParseError(name, "cannot read the directory", build)
    # scandir with string paths: the file type comes with the listing (no stat, no pathlib per file)
    stack = [(str(root), "")]
    while stack:
        path, rel = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Refused(rel or ".", f"unreadable directory: {exc.strerror or exc}")
            continue
        subdirs = []
        for e in entries:
            member = rel + e.name
            if e.is_dir(follow_symlinks=False):
                subdirs.append((e.path, member + "/"))
                continue
            if not is_uti_name(e.name):
                continue
            if not e.is_file(follow_symlinks=False):
                yield Refused(member, "not a regular file (links are not followed)")
                continue
            try:
                data = _read_capped(e.path, max_member)
            except OSError as exc:
                yield Refused(member, f"unreadable: {exc.strerror or exc}")
                continue
            yield _one(member, data if len(data) <= max_member else None, budget, max_member)
        stack.extend(reversed(subdirs))  # depth first, in name order


def _zip_members(p: Path, name: str, build: int | str | None, budget: _Budget,
                 max_member: int) -> Iterator[Member | Refused]:
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                if info.is_dir() or not is_uti_name(info.filename):
                    continue
                member = safe_member_name(info.filename)
                if member is None:
                    yield Refused(info.filename, "member outside the build tree (absolute path or '..')")
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    yield Refused(member, "a symbolic link")
                    continue
                if info.file_size > max_member:
                    yield Refused(member, f"declares {info.file_size} bytes, over the cap of {max_member} per file")
                    continue
                with zf.open(info) as fh:
                    data = fh.read(info.file_size + 1)  # more than declared: refused below or a CRC error
                yield _one(member, data if len(data) <= max_member else None, budget, max_member)
    except _DECOMPRESS_ERRORS as exc:
        raise ParseError(name, f"damaged zip archive: {exc}", build) from None


def _decompressed(raw: BinaryIO, stack: ExitStack) -> BinaryIO:
    """The tar stream inside gzip / xz / bzip2 (by magic bytes), or the file itself; read in order only."""
    head = raw.read(8)
    raw.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
    if head.startswith(b"\xfd7zXZ\x00"):
        return stack.enter_context(lzma.LZMAFile(raw, mode="rb"))
    if head.startswith(b"BZh"):
        return stack.enter_context(bz2.BZ2File(raw, mode="rb"))
    return raw


def _tar_members(p: Path, name: str, build: int | str | None, budget: _Budget,
                 max_member: int) -> Iterator[Member | Refused]:
    try:
        with ExitStack() as stack:
            raw = stack.enter_context(open(p, "rb"))
            stream = _decompressed(raw, stack)
            tf = stack.enter_context(tarfile.open(fileobj=stream, mode="r|"))
            for info in tf:
                if not is_uti_name(info.name) or info.isdir():
                    continue
                member = safe_member_name(info.name)
                if member is None:
                    yield Refused(info.name, "member outside the build tree (absolute path or '..')")
                    continue
                if not info.isreg():
                    yield Refused(member, "not a regular file (links and devices are refused)")
                    continue
                if info.size > max_member:
                    yield Refused(member, f"declares {info.size} bytes, over the cap of {max_member} per file")
                    continue
                fh = tf.extractfile(info)
                data = fh.read(info.size) if fh is not None else b""
                yield _one(member, data if len(data) <= max_member else None, budget, max_member)
            # The tar end marker can come before a cut: read the compressed stream to its end so
            # that a truncated or corrupt archive is an error, not a build with tests missing.
            while chunk := stream.read(1 << 20):
                budget.take(len(chunk))
    except _DECOMPRESS_ERRORS as exc:
        raise ParseError(name, f"damaged tar archive: {exc}", build) from None
