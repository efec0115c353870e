"""Atomic writes for every stage: files (temp file in the same directory, fsync, ``os.replace``),
directory swaps, and the crash hook of the store's kill tests.

A reader sees either the old file or the new one, never a half-written one; a killed
writer leaves only a ``.tmp-`` file behind, which ``Store.vacuum`` removes. The store, the
alerts, the render stage (whole-site swap), the run report and the fingerprint all write
through this module.

Crash hook (for tests only): when the environment variable ``PAL_STORE_CRASH_AT`` names a
step passed to :func:`crash_point`, the process ends at once with ``os._exit(137)`` (the
status of ``kill -9``), leaving the files exactly as a killed run would. Steps, in order of
a write: ``fragment-temp`` (a fragment's temp file written, not yet renamed),
``fragments-placed`` (fragments in place, manifest not yet written), ``manifest-temp``
(new manifest in its temp file), ``manifest-replaced`` (manifest replaced, replaced
fragments not yet deleted).
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Sequence

from pal.libc import function

CRASH_ENV = "PAL_STORE_CRASH_AT"
TMP_MARK = ".tmp-"


def crash_point(step: str) -> None:
    """End the process like ``kill -9`` if the test hook names this step."""
    if os.environ.get(CRASH_ENV) == step:
        os._exit(137)


def temp_path_for(target: Path) -> Path:
    """A unique temp file name beside ``target`` (same directory, so ``os.replace`` is atomic)."""
    return target.with_name(f".{target.name}{TMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")


def is_temp(path: Path) -> bool:
    return TMP_MARK in path.name


def write_atomic(target: Path, write: Callable[[Path], None], *, step: str | None = None) -> None:
    """Call ``write(tmp)`` then fsync and rename the temp file onto ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        write(tmp)
        _fsync(tmp)
        if step:
            crash_point(step)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def write_files_atomic(files: Sequence[tuple[Path, bytes]], *, step: str | None = None) -> dict[Path, OSError]:
    """Write every ``(target, data)`` as :func:`write_atomic` does, as one batch: the temp files
    are written and fsynced, then renamed, then each of their directories is fsynced once, not
    once a file (the benchmark's cold run exports 1,360 files into eight). A target that
    cannot be written keeps what it held and its error is returned; the others are written.
    At any moment each target is its old file or its new one, as with one write at a time."""
    errors: dict[Path, OSError] = {}
    staged: list[tuple[Path, Path]] = []
    try:
        for target, data in files:
            tmp = temp_path_for(target)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_bytes(data)
                _fsync(tmp)
                staged.append((tmp, target))
            except OSError as exc:
                _discard(tmp)
                errors[target] = exc
        if step and staged:
            crash_point(step)
        dirs: dict[Path, None] = {}
        while staged:
            tmp, target = staged[0]
            try:
                os.replace(tmp, target)
                dirs[target.parent] = None
            except OSError as exc:
                _discard(tmp)
                errors[target] = exc
            staged.pop(0)
    except BaseException:
        for tmp, _ in staged:
            _discard(tmp)
        raise
    for d in dirs:
        _fsync_dir(d)
    return errors


def _discard(tmp: Path) -> None:
    """Remove a temp file if there is one (its directory may be missing, or a file)."""
    try:
        tmp.unlink()
    except OSError:
        pass


def write_text_atomic(target: Path, text: str, *, step: str | None = None) -> None:
    write_atomic(target, lambda p: p.write_text(text, encoding="utf-8"), step=step)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes_atomic(target: Path, data: bytes) -> Path:
    """``data`` to ``target``, atomically; returns ``target``."""
    write_atomic(target, lambda p: p.write_bytes(data))
    return target


# ---------------------------------------------------------------------------- directories

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def swap_dirs(new: Path, target: Path, old_prefix: str) -> Path:
    """Put the complete directory ``new`` at ``target``; the old one stays until then.

    Linux: one atomic renameat2(RENAME_EXCHANGE), so readers never see a missing ``target``.
    Elsewhere: two renames (a moment without ``target``). Returns a unique ``<old_prefix>*``
    directory beside ``target`` holding the old one (as ``<target name>``), for the caller to delete.
    """
    old = Path(tempfile.mkdtemp(prefix=old_prefix, dir=target.parent))
    if target.exists() and _exchange(new, target):
        os.rename(new, old / target.name)  # ``new`` now holds the old directory
        return old
    if target.exists():
        os.rename(target, old / target.name)
    os.rename(new, target)
    return old


def _exchange(a: Path, b: Path) -> bool:
    fn = function("renameat2")
    if fn is None:
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0
