"""Handing freed memory back to the system between the stages of a run.

A run's peak is what the machine must have. Arrow's allocator keeps freed buffers (and each
reading thread's heap) mapped, and glibc's malloc keeps freed arenas, so without this every
stage would carry the largest transient of the ones before it (the window read, the series
split): measured at CSIT scale, 150-300 MB of a run's peak.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import sys
from typing import Callable, Iterator

from pal.libc import function, libc


@functools.lru_cache(maxsize=1)
def _libc() -> "ctypes.CDLL | None":
    """glibc with ``malloc_trim`` and ``mallinfo2`` typed, or None where they are missing (musl, macOS, old glibc)."""
    lib = libc()
    if lib is None or function("malloc_trim") is None or function("mallinfo2") is None:
        return None
    lib.malloc_trim.argtypes, lib.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    lib.mallinfo2.restype = _MallInfo2
    return lib


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]


def release_memory(min_free: int = 0) -> None:
    """Return freed memory of Arrow's pool (when Arrow is loaded) and of malloc to the system
    (a no-op where unsupported).

    ``min_free``: trim malloc only when at least this many bytes of its heap are free. A trim
    costs little itself, but the next allocations fault the pages in again (a parse worker
    trimming after every build parsed 10 % slower); a worker trims when it is worth it.
    """
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        pa.default_memory_pool().release_unused()
    libc = _libc()
    if libc is None:
        return
    if min_free and libc.mallinfo2().fordblks < min_free:
        return
    libc.malloc_trim(0)


#: Arrow's allocator in pal's processes (``use_arrow_allocator``)
ARROW_ALLOCATOR = "jemalloc"
ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"  # what pyarrow reads when it is imported


def use_arrow_allocator(name: str = ARROW_ALLOCATOR) -> None:
    """Make ``name`` Arrow's allocator in this process and in the processes it starts.

    Call it before pyarrow is imported: Arrow reads ``ARROW_DEFAULT_MEMORY_POOL`` when it loads
    (``pa.set_memory_pool`` afterwards reaches only part of Arrow's allocations, a pool chosen
    that way peaked 60-110 MB higher). An operator's own ``ARROW_DEFAULT_MEMORY_POOL`` wins; a
    pyarrow built without ``name`` warns once and keeps its default.

    Why jemalloc: pip's pyarrow defaults to mimalloc, which kept the window read's transient
    buffers mapped (reading 1 M samples, a 128 MB table, left the process 400 MB larger and
    peaked 480 MB above where it started, 320 MB with jemalloc): the run's peak falls by
    about 100 MB (docs/scaling.md).
    """
    if os.environ.get(ARROW_POOL_ENV):
        return
    os.environ[ARROW_POOL_ENV] = name
    pa = sys.modules.get("pyarrow")
    if pa is not None:  # imported already (pal called in-process): switch what still can be
        try:
            pa.set_memory_pool(getattr(pa, f"{name}_memory_pool")())
        except (AttributeError, NotImplementedError):
            pass


#: what numpy's OpenBLAS reads when it loads: the size of its thread pool
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def single_threaded_blas() -> None:
    """One BLAS thread in this process and the processes it starts, unless the operator chose.

    Call it before numpy is imported. pal's linear algebra is dot products of a few hundred
    values, which OpenBLAS does on one thread anyway; its pool's threads only spun at start-up
    in every process of a run (parse and render workers too): 1.4 % of a daily run's CPU.
    """
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


#: the cyclic garbage collector's thresholds while a run works (``sparse_gc``): a collection of the
#: youngest objects every 50,000 net allocations, not CPython's 700
RUN_GC_THRESHOLDS = (50_000, 20, 100)


def use_sparse_gc(thresholds: tuple[int, int, int] = RUN_GC_THRESHOLDS) -> tuple[int, ...]:
    """Set the cyclic collector's ``thresholds`` in this process; return the ones it had.

    Why: a run allocates millions of objects that refcounting frees (a drill-down's texts, an
    analysis' changes and dicts), and at CPython's threshold the collector walked the young ones
    every 700 allocations: 0.4-0.6 s of a daily run's main process, 0.2 s with these. Cyclic
    garbage waits longer for its pass; a run's data are arrays that refcounting frees, and the
    peak memory of the pipeline benchmark's runs did not move (537 MB cold, 515 MB daily).
    """
    before = gc.get_threshold()
    gc.set_threshold(*thresholds)
    return before


@contextlib.contextmanager
def sparse_gc(thresholds: tuple[int, int, int] = RUN_GC_THRESHOLDS) -> Iterator[None]:
    """A block run with ``use_sparse_gc``; the process's thresholds are restored after it."""
    before = use_sparse_gc(thresholds)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def frozen_gc() -> Iterator[Callable[[], None]]:
    """A block whose caller may ``freeze()`` what is alive: those objects are left out of the
    cyclic garbage collector's passes until the block ends (``gc.freeze``).

    Why: a run holds millions of long-lived objects (the window's series, then their results),
    and every full collection walked them all again: 0.63 s of a daily run's main process, 0.18 s
    with them frozen. Refcounting still frees them; only cyclic garbage waits for the block's end.
    """
    already = gc.get_freeze_count()
    try:
        yield gc.freeze
    finally:
        if not already:  # someone else's frozen objects stay frozen
            gc.unfreeze()
