"""pal.memory: freed heap memory goes back to the system (glibc's malloc_trim),
and only when enough of it is free if asked so (``min_free``); Arrow allocates with jemalloc."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pal.memory import _libc

PROBE = r"""
import sys
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
blocks = [bytes(1000 + i % 7) for i in range(300_000)]  # ~300 MB of malloc'ed 1 KB blocks
keep = blocks[::16]  # a fragmented heap: every 16th block stays, the pages around it are free
del blocks
before = rss()
from pal.memory import release_memory
release_memory(min_free=1 << 40)  # less than a TB free: not worth a trim
gated = rss()
release_memory()
print(before, gated, rss())
"""


@pytest.mark.skipif(_libc() is None, reason="no malloc_trim / mallinfo2 (not glibc 2.33+)")
def test_release_memory_returns_a_fragmented_heap_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    before, gated, after = map(int, out.split())
    assert before > 250  # MB still resident after the blocks were freed
    assert gated > before - 20  # below the threshold: kept
    assert after < before - 150  # handed back


def _pool_in_fresh_process(env: dict[str, str], start_child: bool) -> list[str]:
    """Arrow's pool after ``use_arrow_allocator`` in a new interpreter, and in a child it starts."""
    code = (
        "import subprocess, sys\n"
        "from pal.memory import use_arrow_allocator\n"
        "use_arrow_allocator()\n"
        "import pyarrow as pa\n"
        "print(pa.default_memory_pool().backend_name)\n"
        + ("print(subprocess.run([sys.executable, '-c', 'import pyarrow as pa; "
           "print(pa.default_memory_pool().backend_name)'], capture_output=True, text=True).stdout.strip())\n"
           if start_child else "")
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.split()


def test_arrow_allocator_is_jemalloc_here_and_in_the_processes_a_run_starts():
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow is built without jemalloc")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    assert _pool_in_fresh_process(env, start_child=True) == ["jemalloc", "jemalloc"]
    # an operator's own choice wins
    assert _pool_in_fresh_process({**env, "ARROW_DEFAULT_MEMORY_POOL": "system"}, start_child=False) == ["system"]


def test_frozen_gc_keeps_what_was_alive_out_of_collections_until_the_block_ends():
    import gc

    from pal.memory import frozen_gc

    class Node:
        pass

    assert gc.get_freeze_count() == 0
    with frozen_gc() as freeze:
        held = [Node() for _ in range(1000)]
        freeze()
        assert gc.get_freeze_count() >= len(held)
        frozen = gc.get_freeze_count()
        held.append(Node())  # made after the freeze: the collector still sees it
        assert gc.is_tracked(held[-1]) and gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == 0  # the block's end gives them back

    gc.freeze()  # frozen by someone else: left frozen
    try:
        before = gc.get_freeze_count()
        with frozen_gc() as freeze:
            freeze()
        assert gc.get_freeze_count() >= before > 0
    finally:
        gc.unfreeze()


def test_sparse_gc_sets_the_run_thresholds_for_its_block_and_restores_the_processs():
    import gc

    from pal.memory import RUN_GC_THRESHOLDS, sparse_gc

    before = gc.get_threshold()
    assert before != RUN_GC_THRESHOLDS
    with sparse_gc():
        assert gc.get_threshold() == RUN_GC_THRESHOLDS
        junk = [[] for _ in range(5_000)]
        assert gc.get_count()[0] > 4_000 > before[0]  # no young collection since CPython's threshold
        del junk
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError):
        with sparse_gc((1000, 5, 5)):
            assert gc.get_threshold() == (1000, 5, 5)
            raise RuntimeError("the block failed")
    assert gc.get_threshold() == before


BLAS_PROBE = r"""
import os
from pal.memory import single_threaded_blas
single_threaded_blas()
import numpy as np
np.dot(np.ones(100_000), np.ones(100_000))
print(os.environ["OPENBLAS_NUM_THREADS"], len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_a_pal_process_starts_numpy_with_one_blas_thread_unless_the_operator_chose():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"]  # the variable set, and no BLAS thread besides the main one
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE], env={**env, "OPENBLAS_NUM_THREADS": "2"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "2"
