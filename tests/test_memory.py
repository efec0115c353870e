"""pal.memory.release_memory: freed heap memory goes back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pal.memory import _libc_trim

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
release_memory()
print(before, rss())
"""


@pytest.mark.skipif(_libc_trim() is None, reason="no malloc_trim (not glibc)")
def test_release_memory_returns_a_fragmented_heap_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    before, after = map(int, out.split())
    assert before > 250  # MB still resident after the blocks were freed
    assert after < before - 150  # handed back
