"""pal.memory.release_memory: freed heap memory goes back to the system (glibc's malloc_trim),
and only when enough of it is free if asked so (``min_free``)."""

from __future__ import annotations

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
