"""Made with pal at commit c6149c1 (store schema version 1)."""
import sys
from pal.store import Store
from tests.store.data import make_meta, make_samples
root = sys.argv[1]
s = Store(root)
A, B = "csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-ndrpdr-weekly-master-3n-icx"
for job in (A, B):
    for b in (1, 2, 3):
        s.insert(make_samples(job, b), make_meta(job, b), f"{b:064d}")
s.insert(make_samples(A, 2, scale=2.0), make_meta(A, 2), "f" * 64)  # a replaced build
s.save_state("digests", {"x|y|mrr": "abc"})
s.save_alerts([{"id": "a1", "kind": "regression"}])
