"""Per-series cost of the analysis around MDL (bands, compliance, valid samples), old vs new.

    python -m benchmarks.bench_analysis             # 600 series of 180 runs
    python -m benchmarks.bench_analysis --series 6000

The reference is the implementation these replaced (kept below, as it was): the bands judged
each short history with ``tma.window_stats`` and the full windows with ``np.quantile``; the
compliance read every time array through ``pd.to_datetime``; the valid samples went through a
Python call per run. Prints microseconds per series, the ratio and whether every output is
identical bit for bit (NaN equal to NaN).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import time
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from pal.analysis import compliance as comp_mod
from pal.analysis.mdl_detector import _run_value, changes_from_groups, to_trend_groups, trend_array, valid_samples
from pal.analysis.bands import rolling_bands
from pal.analysis.compliance import compliance
from pal.analysis.mdl import classify
from pal.analysis.tma import window_stats
from pal.model import Change, TrendGroup
from pal.spec import Windows


# --- the replaced implementations (the reference) -------------------------------------------

def old_rolling_bands(values: np.ndarray, window: int = 14, min_history: int = 5,
                      sigma: float = 3.0) -> dict[str, np.ndarray]:
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    out = {k: np.full(n, np.nan) for k in ("mm", "tma", "tma_lo", "tma_hi", "tmsd")}
    valid = x[~np.isnan(x)]
    h = np.concatenate([[0], np.cumsum(~np.isnan(x))[:-1]]) if n else np.zeros(0, dtype=np.int64)
    stats = {name: np.full(len(valid) + 1, np.nan) for name in ("mm", "tma", "tmsd")}
    if len(valid) >= window:
        w = sliding_window_view(valid, window)
        q1, q2, q3 = np.quantile(w, [0.25, 0.5, 0.75], axis=1, method="linear")
        iqr = q3 - q1
        keep = (w >= (q1 - 1.5 * iqr)[:, None]) & (w <= (q3 + 1.5 * iqr)[:, None])
        cnt = keep.sum(axis=1)
        mean = np.where(keep, w, 0.0).sum(axis=1) / cnt
        dev = np.where(keep, w - mean[:, None], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.where(cnt > 1, np.sqrt((dev * dev).sum(axis=1) / (cnt - 1)), 0.0)
        idx = np.arange(window, len(valid) + 1)
        stats["mm"][idx], stats["tma"][idx], stats["tmsd"][idx] = q2, mean, sd
    for hist in range(min_history, min(window, len(valid) + 1)):
        st = window_stats(valid[:hist])
        stats["mm"][hist], stats["tma"][hist], stats["tmsd"][hist] = st.mm, st.tma, st.tmsd
    for name in ("mm", "tma", "tmsd"):
        out[name] = stats[name][h]
    out["tma_lo"] = out["tma"] - sigma * out["tmsd"]
    out["tma_hi"] = out["tma"] + sigma * out["tmsd"]
    return out


def old_valid_samples(values: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, list]:
    positions: list[int] = []
    compact: list = []
    for i, value in enumerate(values):
        run = _run_value(value)
        if run is not None:
            positions.append(i)
            compact.append(run)
    return np.asarray(positions, dtype=np.int64), compact


def old_trend_array(groups: Sequence[TrendGroup], length: int, positions: np.ndarray) -> np.ndarray:
    trend = np.full(length, np.nan)
    valid = np.zeros(length, dtype=bool)
    valid[positions] = True
    for g in groups:
        span = slice(g.start, g.end)
        trend[span] = np.where(valid[span], g.avg, np.nan)
    return trend


def old_nanos(times: Any, length: int) -> np.ndarray | None:
    if times is None:
        return None
    if len(times) != length:
        raise ValueError(f"{length} trend values but {len(times)} times")
    return pd.DatetimeIndex(pd.to_datetime(times, utc=True)).asi8


# --- realistic series ------------------------------------------------------------------------

def make_series(count: int, runs: int = 180, seed: int = 7) -> list[dict[str, Any]]:
    """CSIT-like MRR series: ~1e7 pps, 2 % noise, a level change in about one series of three
    (the bench history has anomalies in a few % of its series), dips, scattered and clustered
    failed runs (NaN), daily build times with jitter, and the same runs as 10-trial lists."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-05-01T03:00:00", "ns")
    out = []
    for _ in range(count):
        level = rng.uniform(2e6, 3e7) * np.cumprod(np.where(rng.random(runs) < 0.002, rng.uniform(0.8, 1.2, runs), 1.0))
        values = level * (1 + rng.normal(0, 0.02, runs))
        values[rng.random(runs) < 0.005] *= 0.6
        values[rng.random(runs) < 0.04] = np.nan
        if rng.random() < 0.2:  # a testbed outage: a few runs in a row fail
            gap = int(rng.integers(0, runs - 5))
            values[gap : gap + int(rng.integers(2, 6))] = np.nan
        jitter = rng.integers(0, 3 * 3600, runs) * np.timedelta64(1, "s")
        times = start + np.arange(runs) * np.timedelta64(1, "D") + jitter
        trials: list[Any] = []
        for v in values:
            if math.isnan(v):
                trials.append(None if rng.random() < 0.5 else [])
            else:
                t = (v * (1 + rng.normal(0, 0.01, 10))).tolist()
                if rng.random() < 0.05:
                    t[int(rng.integers(0, 10))] = math.nan
                trials.append(t)
        out.append({"values": values, "times": times, "trials": trials})
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal bit for bit, NaN equal to NaN; a list of floats equals the array of them."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and _same(dataclasses.astuple(a), dataclasses.astuple(b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _per_series(fn: Callable[[dict], Any], data: list[dict]) -> tuple[float, list]:
    """CPU microseconds per series (process time: other jobs on the machine count less).

    The garbage collector is off while timing (as in timeit): its passes would land on
    whichever side happens to cross its threshold.
    """
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        results = [fn(s) for s in data]
        return (time.process_time() - t0) / len(data) * 1e6, results
    finally:
        gc.enable()


def _compliance_with(nanos: Callable) -> Callable[[dict], Any]:
    windows = Windows()
    anomalies = [Change(170, "regression", 0.0, 0.0, 1, 170)]

    def run(s: dict) -> Any:
        saved = comp_mod._nanos
        comp_mod._nanos = nanos  # the only part that changed
        try:
            trend = s["values"]  # a stand-in trend: NaN where missing, one level per run
            return compliance(trend, s["times"], anomalies, windows, False, +1)
        finally:
            comp_mod._nanos = saved
    return run


def _mdl_glue(samples: Callable, trend_of: Callable) -> Callable[[dict], Any]:
    """mdl_detector.analyse without MDL itself: valid samples, groups, trend array, changes."""
    def run(s: dict) -> Any:
        positions, _ = samples(s["values"])
        groups = to_trend_groups(s["mdl_groups"], positions, +1)
        return trend_of(groups, len(s["values"]), positions), changes_from_groups(groups)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=600, help="series of 180 runs (default 600)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds, the best one counts (default 5)")
    args = parser.parse_args(argv)
    data = make_series(args.series)
    for s in data:  # MDL's groups, computed once: the glue around them is what is timed
        s["builds"] = np.arange(1000, 1000 + len(s["values"]))
        s["mdl_groups"] = classify(valid_samples(s["values"])[1])
    cases = [
        ("rolling_bands", lambda s: old_rolling_bands(s["values"], 14),
         lambda s: rolling_bands(s["values"], 14)),
        ("valid_samples (floats)", lambda s: old_valid_samples(s["values"]),
         lambda s: valid_samples(s["values"])),
        ("valid_samples (trial lists)", lambda s: old_valid_samples(s["trials"]),
         lambda s: valid_samples(s["trials"])),
        ("analyse around MDL", _mdl_glue(old_valid_samples, old_trend_array), _mdl_glue(valid_samples, trend_array)),
        ("compliance", _compliance_with(old_nanos), _compliance_with(comp_mod._nanos)),
    ]
    print(f"{args.series} series x 180 runs; CPU microseconds per series (best of {args.repeat})")
    for name, old, new in cases:
        t_old, t_new = float("inf"), float("inf")
        for _ in range(args.repeat):  # interleaved, best of: both see the same machine load
            t, ref = _per_series(old, data)
            t_old = min(t_old, t)
            t, got = _per_series(new, data)
            t_new = min(t_new, t)
        same = all(_same(r, g) for r, g in zip(ref, got))
        print(f"{name:28s} old {t_old:8.1f} us  new {t_new:8.1f} us  ratio {t_old / t_new:6.1f}x  identical {same}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
