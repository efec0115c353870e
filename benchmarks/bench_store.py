"""Store speed: growing by one build, reading the history back, and reading a PA run's window.

    python -m benchmarks.bench_store [--jobs 3] [--builds 360] [--window 170] [--tests 200]

References measured in the same run: ``DataFrame.to_parquet`` of the same build (what one
fragment costs at least), ``pd.read_parquet`` of one file holding the whole history (the
cheapest possible full read), and the previous window read (``old_read_window`` below, kept
callable here: every listed fragment read, then ``Table.filter`` to the window's builds, strings
as one UTF-8 copy per row). The store holds ``--builds`` per job, the window is the newest
``--window``: the window read must cost the same whatever the store's age. Ratios > 1 mean
this code is slower than the reference.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from pal.history import UNREAD_COLUMNS, _read_window
from pal.model import SAMPLE_COLUMNS, BuildMeta, coerce_samples
from pal.store import Store
from pal.store.schema import arrow_to_samples, samples_to_arrow


def old_read_window(store: Store, jobs: list[str], builds: pd.DataFrame) -> pd.DataFrame:
    """The window read before the manifest chose fragments (pal.history at c6149c1): a dataset of
    every listed fragment of the jobs, read whole, then filtered to the window's builds. (The
    fragments now hold their rows' tags joined, ``STORED_SCHEMA``: read as such, where that read
    had lists to join.)"""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from pal.store.schema import STORED_SCHEMA

    columns = [c for c in SAMPLE_COLUMNS if c not in UNREAD_COLUMNS]
    plain = [c for c in columns if c != "tags"]
    rels = store._manifest().fragments(jobs)
    table = ds.dataset([str(store.path / r) for r in rels], schema=STORED_SCHEMA, format="parquet").to_table(
        columns=columns)
    mask = None
    for job, numbers in builds.groupby("job", sort=False)["build"]:
        m = pc.and_(pc.equal(table["job"], str(job)), pc.is_in(table["build"], pa.array(numbers.to_numpy(np.int64))))
        mask = m if mask is None else pc.or_(mask, m)
    if mask is not None and not pc.all(mask).as_py():
        table = table.filter(mask)
    samples = arrow_to_samples(table.select(plain), plain)
    joined = pc.dictionary_encode(table["tags"]).combine_chunks()
    uniq = np.empty(len(joined.dictionary) + 1, dtype=object)
    uniq[:-1] = [tuple(t.split("\x1f")) if t else () for t in joined.dictionary.to_pylist()]
    uniq[-1] = None
    samples["tags"] = uniq[joined.indices.fill_null(len(uniq) - 1).to_numpy(zero_copy_only=False)]
    return samples[columns]


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


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    """Seconds of the fastest of ``repeat`` calls, and the last call's result."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--builds", type=int, default=360)
    ap.add_argument("--window", type=int, default=170)
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
        builds = store.builds()
        win = builds[builds["build"] > a.builds - a.window].reset_index(drop=True)
        t_old, old = timed(lambda: old_read_window(store, jobs, win), repeat=3)
        t_new, new = timed(lambda: _read_window(store, jobs, win), repeat=3)
        t_vac, vac = timed(store.vacuum)
        t_old_c, _ = timed(lambda: old_read_window(store, jobs, win), repeat=3)
        t_new_c, new_c = timed(lambda: _read_window(store, jobs, win), repeat=3)
        as_old = new.astype({c: old[c].dtype for c in new.columns if str(new[c].dtype) == "category"})
        pd.testing.assert_frame_equal(as_old, old)
        pd.testing.assert_frame_equal(new_c, new)
        mem_old, mem_new = (int(df.memory_usage(deep=True).sum()) for df in (old, new))
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
    print(f"window read ({a.window} of {a.builds} builds per job, {len(old)} rows; fastest of 3): previous read+filter "
          f"{t_old:.2f} s, manifest-chosen fragments {t_new:.2f} s, ratio {t_new / t_old:.2f}")
    print(f"  after vacuum ({vac['compacted']} builds compacted in {t_vac:.1f} s): previous {t_old_c:.2f} s, "
          f"this {t_new_c:.2f} s, ratio {t_new_c / t_old_c:.2f}")
    print(f"  DataFrame in memory: previous {mem_old / 1e6:.0f} MB ({mem_old / len(old):.0f} B/row), "
          f"this {mem_new / 1e6:.0f} MB ({mem_new / len(new):.0f} B/row), ratio {mem_new / mem_old:.2f}")
    assert len(got) == rows


if __name__ == "__main__":
    main()
