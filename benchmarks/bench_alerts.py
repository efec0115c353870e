"""Alert outputs at production scale, against writing the raw samples table in the same run.

    python -m benchmarks.bench_alerts            # 2,000 series x 180 runs
    python -m benchmarks.bench_alerts --series 500

Reference: ``DataFrame.to_csv`` + ``to_parquet`` of the samples table (what any export costs
at least). Prints the time of build_alerts, write_alert_outputs (texts, JSON, JUnit, CSV,
Parquet) and their ratio to the reference.
"""

from __future__ import annotations

import argparse
import io
import random
import tempfile
import time
from pathlib import Path

from pal.alerts import build_alerts, write_alert_outputs
from pal.report import RunReport
from tests.alerts.factory import ALT, ICX, builds_for, flat, make_result, make_spec, samples_for


def results(n_series: int, runs: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n_series):
        level = rng.uniform(5e6, 40e6)
        values = flat(level, runs - 3, level * 0.005)
        breaks: tuple[int, ...] = ()
        if rng.random() < 0.05:  # 5 % regress at the end
            values += [level * 0.9] * 3
            breaks = (runs - 3,)
        else:
            values += flat(level, 3, level * 0.005)
        out.append(make_result(values, breaks, job=ICX if i % 2 else ALT, name=f"64b-2t1c-test{i}-mrr"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=180)
    args = ap.parse_args()
    rs = results(args.series, args.runs)
    builds, samples = builds_for(rs), samples_for(rs)
    spec = make_spec()
    t0 = time.perf_counter()
    buf = io.StringIO()
    samples.drop(columns=["trials", "tags"]).to_csv(buf, index=False)
    samples.drop(columns=["trials", "tags"]).to_parquet(io.BytesIO(), index=False)
    ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    alerts = build_alerts(rs, builds, samples, spec)
    t_build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = write_alert_outputs(Path(tmp), alerts, rs, builds, samples, spec, RunReport())
        t_write = time.perf_counter() - t0
    n = len(samples)
    print(f"{args.series} series x {args.runs} runs = {n} samples, {len(alerts)} alerts, {len(paths)} files")
    print(f"reference (samples to CSV + Parquet): {ref:.2f} s")
    print(f"build_alerts:        {t_build:.2f} s  ratio {t_build / ref:.2f}")
    print(f"write_alert_outputs: {t_write:.2f} s  ratio {t_write / ref:.2f}")


if __name__ == "__main__":
    main()
