"""Store speed: growing by one build, and reading the history back, against plain pandas+Parquet.

    python -m benchmarks.bench_store [--jobs 3] [--builds 180] [--tests 200]

References measured in the same run: ``DataFrame.to_parquet`` of the same build (what one
fragment costs at least) and ``pd.read_parquet`` of one file holding the whole history
(the cheapest possible full read). Ratios > 1 mean the store is slower than the reference.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from pal.model import BuildMeta, coerce_samples
from pal.store import Store
from pal.store.schema import samples_to_arrow


def build_samples(job: str, build: int, tests: int, rng: np.random.Generator) -> pd.DataFrame:
    t = datetime(2022, 1, 1, tzinfo=timezone.utc) + timedelta(hours=build)
    trials = rng.normal(20e6, 2e5, size=(tests, 10))
    trials[rng.random(tests) < 0.02] = np.nan  # a few failed tests: value NaN, no trials
    ok = ~np.isnan(trials[:, 0])
    df = pd.DataFrame({
        "job": job, "build": build, "build_time": t, "topo_arch": "2n-icx", "testbed": "tb1", "dut": "vpp",
        "dut_version": f"22.02-rc0~{build}", "test_id": [f"tests.vpp.perf.ip4.t{i:04d}-mrr" for i in range(tests)],
        "test_name": [f"64b-2t1c-t{i:04d}-mrr" for i in range(tests)], "suite": "tests.vpp.perf.ip4",
        "test_type": "MRR", "metric": "mrr", "unit": "pps", "value": trials.mean(axis=1), "stdev": trials.std(axis=1),
        "trials": [row.tolist() if k else None for row, k in zip(trials, ok)],
        "status": np.where(ok, "PASS", "FAIL"), "message": np.where(ok, "", "Traffic lost"), "nic": "25ge2p1xxv710",
        "frame_size": "64B", "cores": "1C", "threads_cores": "2T1C", "driver": "vfio-pci",
        "topology": "2_NODE_SINGLE_LINK_TOPO", "tags": [("MRR", "64B", "2T1C")] * tests, "source_file": "x",
    })
    return coerce_samples(df)


def meta_of(job: str, build: int) -> BuildMeta:
    t = datetime(2022, 1, 1, tzinfo=timezone.utc) + timedelta(hours=build)
    return BuildMeta(job, build, t, t, "vpp", "22.02", "tb1", 200, 0, 3600.0)


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--builds", type=int, default=180)
    ap.add_argument("--tests", type=int, default=200)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    jobs = [f"csit-vpp-perf-mrr-daily-master-{k}n-icx" for k in range(2, 2 + a.jobs)]
    frames = {(j, b): build_samples(j, b, a.tests, rng) for j in jobs for b in range(1, a.builds + 1)}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store")
        ins, ref_ins = [], []
        with store.lock():
            for (j, b), df in frames.items():
                ins.append(timed(lambda: store.insert(df, meta_of(j, b), f"{b:064d}"))[0])
                ref_ins.append(timed(lambda: df.to_parquet(Path(tmp) / "ref.parquet"))[0])
        again = timed(lambda: [store.insert(df, meta_of(j, b), f"{b:064d}") for (j, b), df in frames.items()])[0]
        rows = sum(len(df) for df in frames.values())
        whole = pd.concat(frames.values(), ignore_index=True)
        samples_to_arrow(whole)  # warm up
        one = Path(tmp) / "whole.parquet"
        import pyarrow.parquet as pq

        pq.write_table(samples_to_arrow(whole), one)
        t_ref, _ = timed(lambda: pd.read_parquet(one))
        t_all, got = timed(store.samples)
        t_job, _ = timed(lambda: store.samples(jobs=[jobs[0]]))
        t_cols, _ = timed(lambda: store.samples(jobs=[jobs[0]], columns=["build", "test_id", "metric", "value"]))
        info = store.info()
    n = len(frames)
    print(f"history: {a.jobs} jobs x {a.builds} builds x {a.tests} tests = {rows} rows, "
          f"{info['size_bytes'] / 1e6:.1f} MB on disk ({info['size_bytes'] / rows:.0f} B/row)")
    print(f"insert one build: {np.median(ins) * 1e3:.1f} ms median (first 10: {np.median(ins[:10]) * 1e3:.1f} ms, "
          f"last 10: {np.median(ins[-10:]) * 1e3:.1f} ms); ratio to DataFrame.to_parquet: "
          f"{np.median(ins) / np.median(ref_ins):.2f}")
    print(f"re-insert all {n} builds, unchanged (idempotent skip): {again:.2f} s total, {again / n * 1e3:.2f} ms/build")
    print(f"read all samples: {t_all:.2f} s; ratio to pd.read_parquet of one file: {t_all / t_ref:.2f}")
    print(f"read one job: {t_job:.2f} s ({t_job / t_all:.2f} of all); one job, 4 columns: {t_cols:.3f} s "
          f"({t_cols / t_all:.3f} of all)")
    assert len(got) == rows


if __name__ == "__main__":
    main()
