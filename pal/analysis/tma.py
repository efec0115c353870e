"""Three-sigma rule on trimmed statistics (CSIT PA/PT design): TMA ± 3·TMSD over a rolling window.

Each new value is judged against the last ``window`` valid runs before it:

- quartiles Q1, Q2, Q3 with numpy's ``linear`` quantile method (type 7, the default of numpy,
  pandas and R), IQR = Q3 - Q1;
- outliers: values strictly below Q1 - 1.5·IQR or strictly above Q3 + 1.5·IQR (Tukey fences;
  strict, so that a constant window with IQR = 0 keeps all its points);
- TMA, TMSD: mean and sample standard deviation (ddof=1) of the window without outliers;
- MM: median of the whole window, outliers included.

The value is normal inside [TMA - 3·TMSD, TMA + 3·TMSD], a regression below and a progression
above (swapped for lower-is-better metrics). Bands per sample (for drill-down graphs) are the
range the sample was judged against, NaN while the history is shorter than ``min_history``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pal.analysis.detector import (
    MISSING,
    NORMAL,
    PROGRESSION,
    REGRESSION,
    Detection,
    SeriesInput,
    as_values,
    changes_from_runs,
    check_number,
    check_params,
)

DEFAULTS: dict[str, Any] = {"window": 14, "min_history": 5, "sigma": 3.0}


@dataclass(frozen=True)
class WindowStats:
    """The trimmed statistics of one window, as the design document names them."""

    q1: float
    q2: float
    q3: float
    iqr: float
    low_fence: float  # Q1 - 1.5·IQR
    high_fence: float  # Q3 + 1.5·IQR
    outliers: int
    tma: float
    tmsd: float
    mm: float


def window_stats(window: np.ndarray) -> WindowStats:
    """Quartiles, IQR fences, TMA/TMSD without outliers and MM with all points of ``window``."""
    w = np.asarray(window, dtype=np.float64)
    w = w[~np.isnan(w)]
    if len(w) == 0:
        raise ValueError("window_stats needs at least one value")
    q1, q2, q3 = (float(q) for q in np.quantile(w, [0.25, 0.5, 0.75], method="linear"))
    iqr = q3 - q1
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    kept = w[(w >= lo) & (w <= hi)]
    tmsd = float(np.std(kept, ddof=1)) if len(kept) > 1 else 0.0
    return WindowStats(q1, q2, q3, iqr, lo, hi, int(len(w) - len(kept)), float(np.mean(kept)), tmsd, q2)


def judge(stats: WindowStats, value: float, direction: int = 1, sigma: float = 3.0) -> str:
    """Normal inside TMA ± sigma·TMSD; below is a regression (higher-is-better), above a progression."""
    if math.isnan(value):
        return MISSING
    low, high = stats.tma - sigma * stats.tmsd, stats.tma + sigma * stats.tmsd
    if low <= value <= high:
        return NORMAL
    below = value < low
    return REGRESSION if below == (direction >= 0) else PROGRESSION


class TmaDetector:
    """Each valid run judged against the trimmed statistics of the ``window`` valid runs before it.

    Params: ``window`` (runs, default 14), ``min_history`` (runs needed before judging, default 5),
    ``sigma`` (band half-width in TMSDs, default 3).
    """

    name = "tma"
    uses_trials = False

    def __init__(self, params: dict[str, Any] | None = None):
        self.params = check_params("tma", params, DEFAULTS)
        check_number("tma", "window", self.params["window"], 3, integer=True)
        check_number("tma", "min_history", self.params["min_history"], 2, integer=True)
        check_number("tma", "sigma", self.params["sigma"], 0.0)
        self.params["window"] = int(self.params["window"])
        self.params["min_history"] = int(self.params["min_history"])

    def detect(self, series: SeriesInput, direction: int = 1, resume: Any = None, keep: bool = False
               ) -> Detection:
        """(Keeps nothing between runs: ``resume`` and ``keep`` are ignored.)"""
        values = as_values(series)
        n = len(values)
        window, min_hist, sigma = self.params["window"], self.params["min_history"], float(self.params["sigma"])
        bands = {k: np.full(n, np.nan) for k in ("mm", "tma", "tma_lo", "tma_hi", "tmsd")}
        flags = [MISSING if math.isnan(v) else NORMAL for v in values]
        history: list[float] = []
        for i, v in enumerate(values):
            if len(history) >= min_hist:
                st = window_stats(np.asarray(history[-window:]))
                bands["mm"][i], bands["tma"][i], bands["tmsd"][i] = st.mm, st.tma, st.tmsd
                bands["tma_lo"][i] = st.tma - sigma * st.tmsd
                bands["tma_hi"][i] = st.tma + sigma * st.tmsd
                if not math.isnan(v):
                    flags[i] = judge(st, float(v), direction, sigma)
            if not math.isnan(v):
                history.append(float(v))

        def extra(i: int) -> dict[str, Any]:
            return {"tma": float(bands["tma"][i]), "tmsd": float(bands["tmsd"][i]),
                    "low": float(bands["tma_lo"][i]), "high": float(bands["tma_hi"][i]),
                    "mm": float(bands["mm"][i]), "value": float(values[i]), "sigma": sigma}

        changes = changes_from_runs(values, flags, bands["tma"], extra)
        verdict = flags[-1] if n else MISSING  # every flagged run is a call, the last one too
        return Detection("tma", flags, bands["tma"].copy(), changes, bands, verdict, dict(self.params))
