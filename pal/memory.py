"""Handing freed memory back to the system between the stages of a run.

A run's peak is what the machine must have. Arrow's allocator keeps freed buffers (and each
reading thread's heap) mapped, and glibc's malloc keeps freed arenas, so without this every
stage would carry the largest transient of the ones before it (the window read, the series
split): measured at CSIT scale, 150-300 MB of a run's peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import sys

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _libc_trim() -> "ctypes._CFuncPtr | None":
    """glibc's ``malloc_trim``, or None where there is none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_memory() -> None:
    """Return freed memory of Arrow's pool (when Arrow is loaded) and of malloc to the system
    (a no-op where unsupported)."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        pa.default_memory_pool().release_unused()
    trim = _libc_trim()
    if trim is not None:
        trim(0)
