"""Made with pal at commit 76300a8 (store schema version 2: tags stored as lists)."""
import sys
from pal.store import Store
from tests.store.data import make_meta, make_samples
root = sys.argv[1]
s = Store(root, auto_compact=None)
A, B = "csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-ndrpdr-weekly-master-3n-icx"
for b in (1, 2, 3, 4):
    s.insert(make_samples(A, b, scale=float(b)), make_meta(A, b), f"{b:064d}")
s.vacuum()  # A's four builds in one compacted fragment
for b in (1, 2):
    s.insert(make_samples(B, b), make_meta(B, b), f"{b:064d}")  # B's as single-build fragments
