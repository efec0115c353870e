"""Moving median and TMA ± 3·TMSD bands for every sample of a series, vectorised.

Drill-down graphs show these bands whatever the series' detector (seed design). The numbers
are those of ``pal.analysis.tma`` (each sample judged against the ``window`` valid runs before
it), computed for all samples at once: the TMA detector's per-run loop costs too much when
every series of a CSIT-sized history needs its bands on every run.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pal.analysis.tma import DEFAULTS, window_stats

BAND_NAMES = ("mm", "tma", "tma_lo", "tma_hi", "tmsd")


def rolling_bands(values: np.ndarray, window: int = DEFAULTS["window"], min_history: int = DEFAULTS["min_history"],
                  sigma: float = DEFAULTS["sigma"]) -> dict[str, np.ndarray]:
    """Per sample: MM, TMA, TMSD and TMA ± sigma·TMSD of the valid runs before it (NaN while too few)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    out = {k: np.full(n, np.nan) for k in BAND_NAMES}
    valid = x[~np.isnan(x)]
    # history length before each sample = valid runs strictly before it
    h = np.concatenate([[0], np.cumsum(~np.isnan(x))[:-1]]) if n else np.zeros(0, dtype=np.int64)
    stats = {name: np.full(len(valid) + 1, np.nan) for name in ("mm", "tma", "tmsd")}
    if len(valid) >= window:
        w = sliding_window_view(valid, window)  # row r = valid[r : r + window] -> history h = r + window
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
