"""Executor overhead and speed-up: the same CPU-bound items inline, in a local pool and on Dask.

    python -m benchmarks.bench_executor [--items 40] [--work 200000] [--workers 2]

The reference is the inline run measured in the same process; ratios < 1 are speed-ups.
Start-up (pool or LocalCluster) is timed separately from ``map``.
"""

from __future__ import annotations

import argparse
import time

from pal.executor import make_executor


def burn(n: int) -> int:
    """A stand-in for parsing one archive: pure-Python CPU work."""
    acc = 0
    for i in range(n):
        acc = (acc + i * i) % 1_000_003
    return acc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--work", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    items = [a.work] * a.items
    results = {}
    for kind, workers in (("local", 1), ("local", a.workers), ("dask", a.workers)):
        t0 = time.perf_counter()
        with make_executor(kind, workers=workers) as ex:  # type: ignore[arg-type]
            ex.map(burn, items[:workers], label="warm-up")
            t1 = time.perf_counter()
            out = ex.map(burn, items, label="burn")
            t2 = time.perf_counter()
        name = "inline" if workers == 1 else f"{kind}({workers})"
        results[name] = (t1 - t0, t2 - t1, out)
    ref = results["inline"][1]
    print(f"{a.items} items of {a.work} loop steps; inline map: {ref:.2f} s ({ref / a.items * 1e3:.1f} ms/item)")
    for name, (start, run, out) in results.items():
        assert out == results["inline"][2]
        print(f"{name:>9}: start-up {start:.2f} s, map {run:.2f} s, ratio to inline {run / ref:.2f}")


if __name__ == "__main__":
    main()
