"""TMA ± 3·TMSD (CSIT PA design), hand-computed on a five-value window."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pal.analysis.tma import TmaDetector, judge, window_stats

# Window 10 11 12 13 100: linear quartiles at positions 1, 2, 3 -> Q1 11, Q2 12, Q3 13; IQR 2;
# fences 8 and 16, so 100 is the one outlier; TMA = mean(10..13) = 11.5;
# TMSD = sqrt((1.5^2 + 0.5^2 + 0.5^2 + 1.5^2) / 3) = sqrt(5/3); MM = 12 (all points).
WINDOW = np.array([10.0, 11.0, 12.0, 13.0, 100.0])
TMSD = math.sqrt(5 / 3)


def test_window_stats_by_hand():
    st = window_stats(WINDOW)
    assert (st.q1, st.q2, st.q3, st.iqr) == (11.0, 12.0, 13.0, 2.0)
    assert (st.low_fence, st.high_fence, st.outliers) == (8.0, 16.0, 1)
    assert st.tma == 11.5
    assert st.tmsd == pytest.approx(TMSD)
    assert st.mm == 12.0


def test_judge_three_sigma():
    st = window_stats(WINDOW)
    low, high = 11.5 - 3 * TMSD, 11.5 + 3 * TMSD  # 7.627, 15.373
    assert judge(st, 7.6) == "regression" and low > 7.6
    assert judge(st, 7.7) == "normal"
    assert judge(st, 15.3) == "normal" and judge(st, 15.4) == "progression" and high < 15.4
    assert judge(st, 7.0, direction=-1) == "progression"
    assert judge(st, 16.0, direction=-1) == "regression"
    assert judge(st, float("nan")) == "missing"


def test_constant_window_keeps_all_points():
    st = window_stats(np.array([5.0, 5.0, 5.0, 5.0]))
    assert st.outliers == 0 and st.tma == 5.0 and st.tmsd == 0.0
    assert judge(st, 5.0) == "normal" and judge(st, 4.9) == "regression"


def test_detector_bands_and_labels():
    series = list(WINDOW) + [7.0, float("nan"), 12.0]
    det = TmaDetector({"window": 14, "min_history": 5}).detect(series)
    assert det.labels == ["normal"] * 5 + ["regression", "missing", "normal"]
    assert all(math.isnan(det.bands["tma"][i]) for i in range(5))
    assert det.bands["mm"][5] == 12.0 and det.bands["tma"][5] == 11.5
    assert det.bands["tma_lo"][5] == pytest.approx(11.5 - 3 * TMSD)
    assert det.bands["tma_hi"][5] == pytest.approx(11.5 + 3 * TMSD)
    # sample 7 is judged on 10 11 12 13 100 7: Q1 = 10.25, Q3 = 12.75, IQR 2.5 -> 100 out
    st = window_stats(np.array(list(WINDOW) + [7.0]))
    assert det.bands["tma"][7] == pytest.approx(st.tma) == pytest.approx(53 / 5)
    cp = det.changes[0]
    assert (cp.index, cp.kind, cp.before, cp.after, cp.runs) == (5, "regression", 11.5, 7.0, 1)
    assert cp.evidence["low"] == pytest.approx(11.5 - 3 * TMSD)
    assert det.verdict == "normal"


def test_window_limits_history():
    # window 3: sample 4 is judged only on 1000, 1000, 1000 -> 1000 normal despite early 1s
    det = TmaDetector({"window": 3, "min_history": 3}).detect([1.0, 1000.0, 1000.0, 1000.0, 1000.0])
    assert det.labels[4] == "normal" and det.bands["tma"][4] == 1000.0
    # sample 3 is judged on 1, 1000, 1000: Q1 500.5, IQR 499.5, no outlier; TMA 667, TMSD 576.8
    assert det.bands["tma"][3] == pytest.approx(667.0)
    assert det.bands["tmsd"][3] == pytest.approx(math.sqrt((666**2 + 2 * 333**2) / 2))
    assert det.labels[3] == "normal"
