"""Atomic file writes (temp file in the same directory, then ``os.replace``) and the crash hook.

A reader sees either the old file or the new one, never a half-written one; a killed
writer leaves only a ``.tmp-`` file behind, which ``Store.vacuum`` removes.

Crash hook (for tests only): when the environment variable ``PAL_STORE_CRASH_AT`` names a
step passed to :func:`crash_point`, the process ends at once with ``os._exit(137)`` (the
status of ``kill -9``), leaving the files exactly as a killed run would. Steps, in order of
a write: ``fragment-temp`` (a fragment's temp file written, not yet renamed),
``fragments-placed`` (fragments in place, manifest not yet written), ``manifest-temp``
(new manifest in its temp file), ``manifest-replaced`` (manifest replaced, replaced
fragments not yet deleted).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Callable

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
