"""The benchmarks' memory sampler: the peak of a process tree's summed PSS, found with few PSS reads."""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.bench_pipeline import TreeRss, _tree

MB = 1 << 20

# A parent holding 120 MB starts a child holding 160 MB, which starts a grandchild holding 80 MB;
# all three hold their memory (touched, private) together for 3 s, then end.
HOLD = """
import subprocess, sys, time
mb, depth = int(sys.argv[1]), int(sys.argv[2])
block = bytearray(mb << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
child = None
if depth:
    child = subprocess.Popen([sys.executable, "-c", sys.argv[3], str(mb + 40 if depth == 2 else 80), str(depth - 1), sys.argv[3]])
time.sleep(3.0 if depth == 2 else 2.5)
if child:
    child.wait()
"""


def test_the_peak_is_the_trees_sum_and_costs_few_pss_reads():
    proc = subprocess.Popen([sys.executable, "-c", HOLD, "120", "2", HOLD])
    sampler = TreeRss(proc.pid)
    time.sleep(1.5)  # all three hold their blocks by now
    tree = _tree(proc.pid)
    proc.wait(timeout=60)
    started = time.monotonic()
    peak = sampler.stop()
    assert len(tree) == 3 and tree[0] == proc.pid  # the child and the grandchild found from /proc
    # 120 + 160 + 80 MB of private pages, plus three interpreters (about 10 MB each)
    assert 360 * MB <= peak <= 460 * MB
    # a PSS sum (9 ms a pal worker) only every `idle` seconds, or sooner while the sum rises
    lasted = 3.5 + (time.monotonic() - started)
    assert 2 <= sampler.pss_samples <= lasted / sampler.rising + 1
