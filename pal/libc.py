"""The C library of this process, for the few calls Python's ``os`` lacks (``malloc_trim``,
``prctl``, ``renameat2``).

Looked up in the process's own symbols (``dlopen(NULL)``: the C library Python itself runs on),
not by ``ctypes.util.find_library``, which starts ``ldconfig -p`` in every process that asks.
"""

from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL | None:
    """The C library (errno kept for ``ctypes.get_errno``), or None where it cannot be reached."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def function(name: str) -> object | None:
    """The C function ``name``, or None where this C library does not have it (musl, macOS, old glibc)."""
    lib = libc()
    return getattr(lib, name, None) if lib is not None else None
