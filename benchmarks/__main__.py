"""`make bench`: every benchmark in one go, each printing its ratios against its reference.

Run one alone with ``python -m benchmarks.bench_<name> --help``.
"""

from __future__ import annotations

import subprocess
import sys
import time

# cheap first; the pipeline benchmark (CSIT scale) last. Arguments after a name are its own:
# bench_year runs 12 jobs at a tenth of a year here (the full year takes hours on two cores:
# ``python -m benchmarks.bench_year`` with its defaults, docs/scaling.md)
BENCHES = ["bench_mdl", "bench_analysis", "bench_parse", "bench_uti", "bench_demo", "bench_store", "bench_executor", "bench_download",
           "bench_render", "bench_exports", "bench_alerts", "bench_accuracy",
           "bench_year --jobs 12 --builds 36 --tests 300", "bench_pipeline"]


def main(argv: list[str]) -> int:
    chosen = argv or BENCHES
    failed = []
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        t0 = time.monotonic()
        module, *args = name.split()
        rc = subprocess.call([sys.executable, "-m", f"benchmarks.{module}", *args])
        print(f"=== {name}: exit {rc}, {time.monotonic() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
