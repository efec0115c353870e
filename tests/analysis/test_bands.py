"""The vectorised bands equal the TMA statistics sample by sample, bit for bit where they can.

References: ``tma.window_stats`` (np.quantile, np.mean, np.std) for every history shorter than
the window, and the same NumPy calls on each full window with the outliers masked to 0.0 (the
published bands' summation); the TMA detector's per-run loop within 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pal.analysis import bands
from pal.analysis.bands import BAND_NAMES, _numpy_sum, rolling_bands
from pal.analysis.tma import TmaDetector, window_stats


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    """Each test on both paths: the compiled statistics (pal.analysis.bands_kernel) and the NumPy form."""
    if request.param == "compiled":
        pytest.importorskip("pal.analysis.bands_kernel", reason="numba is not installed")
    monkeypatch.setattr(bands, "USE_NUMBA", request.param == "compiled")
    return request.param


def _masked_window(w: np.ndarray) -> tuple[float, float, float]:
    """MM, TMA, TMSD of one full window, outliers masked to 0.0 in the sums (NumPy calls)."""
    q1, q2, q3 = np.quantile(w, [0.25, 0.5, 0.75], method="linear")
    iqr = q3 - q1
    keep = (w >= q1 - 1.5 * iqr) & (w <= q3 + 1.5 * iqr)
    cnt = int(keep.sum())
    mean = np.where(keep, w, 0.0).sum() / cnt
    dev = np.where(keep, w - mean, 0.0)
    sd = np.sqrt((dev * dev).sum() / (cnt - 1)) if cnt > 1 else 0.0
    return float(q2), float(mean), float(sd)


def reference(x: np.ndarray, window: int, min_history: int, sigma: float = 3.0) -> dict[str, np.ndarray]:
    """Every sample judged on its own: window_stats below the window, _masked_window at it."""
    out = {k: np.full(len(x), np.nan) for k in BAND_NAMES}
    history: list[float] = []
    for i, v in enumerate(x):
        h = len(history)
        if h >= window:
            mm, tma, tmsd = _masked_window(np.asarray(history[-window:]))
        elif h >= min_history:
            s = window_stats(np.asarray(history))
            mm, tma, tmsd = s.mm, s.tma, s.tmsd
        else:
            mm = tma = tmsd = np.nan
        out["mm"][i], out["tma"][i], out["tmsd"][i] = mm, tma, tmsd
        if not np.isnan(v):
            history.append(float(v))
    out["tma_lo"] = out["tma"] - sigma * out["tmsd"]
    out["tma_hi"] = out["tma"] + sigma * out["tmsd"]
    return out


def assert_same_bits(got: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> None:
    assert list(got) == list(BAND_NAMES)
    for name in BAND_NAMES:
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)  # NaN == NaN, exact floats
        assert got[name].dtype == np.float64


def mrr_like(rng: np.random.Generator, n: int, wide: bool = False) -> np.ndarray:
    """~1e7 pps with 2 % noise, dips, failed runs; ``wide``: values over many magnitudes."""
    x = rng.normal(1e7, 2e5, n)
    if wide:
        x *= np.exp(rng.normal(0, 3, n))
    x[rng.random(n) < 0.03] *= 0.5
    x[rng.random(n) < 0.15] = np.nan
    return x


@pytest.mark.parametrize("seed", range(40))
def test_bands_equal_reference_bit_for_bit(seed, path):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    x = mrr_like(rng, n, wide=seed % 2 == 1)
    if seed % 5 == 0:
        x = np.round(x / 1e6) * 1e6  # ties: equal values around the quartiles
    window = int(rng.integers(3, 30))
    min_history = int(rng.integers(1, window + 1))
    assert_same_bits(rolling_bands(x, window, min_history, 3.0), reference(x, window, min_history))


@pytest.mark.parametrize("seed", range(20))
def test_bands_equal_tma_detector(seed, path):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    x = rng.normal(1e7, 2e5, n)
    x[rng.random(n) < 0.15] = np.nan
    if n > 10:
        x[rng.integers(0, n)] = 5e6  # an outlier for the fences
    ref = TmaDetector({"window": 14, "min_history": 5}).detect(x, 1).bands
    got = rolling_bands(x, 14, 5, 3.0)
    for name in BAND_NAMES:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, equal_nan=True, err_msg=name)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e12, 1e12, allow_nan=False), st.sampled_from([0.0, 1.0, np.nan])),
                max_size=40),
       st.integers(3, 16), st.integers(1, 16))
def test_bands_equal_reference_any_floats(values, window, min_history):
    x = np.asarray(values, dtype=np.float64)
    ref = reference(x, window, min_history)
    saved = bands.USE_NUMBA
    try:
        for use in (True, False):  # both paths (hypothesis runs no function-scoped fixture)
            bands.USE_NUMBA = use
            assert_same_bits(rolling_bands(x, window, min_history), ref)
    finally:
        bands.USE_NUMBA = saved


def test_lengths_around_min_history_and_window(path):
    rng = np.random.default_rng(3)
    base = rng.normal(1e7, 2e5, 40)
    base[6] = 2e6
    for valid_runs in (0, 1, 4, 5, 6, 13, 14, 15, 40):
        x = base[:valid_runs].copy()
        x = np.insert(x, min(3, len(x)), np.nan)  # a failed run inside
        got = rolling_bands(x, 14, 5)
        assert_same_bits(got, reference(x, 14, 5))
        judged = np.flatnonzero(~np.isnan(got["tma"]))
        # a sample has bands from its 6th run on (5 valid before it), failed runs included
        hist = np.concatenate([[0], np.cumsum(~np.isnan(x))[:-1]])
        np.testing.assert_array_equal(judged, np.flatnonzero(hist >= 5))
    assert all(len(v) == 0 for v in rolling_bands(np.array([]), 14, 5).values())
    all_missing = rolling_bands(np.full(8, np.nan), 14, 5)
    assert all(np.isnan(v).all() and len(v) == 8 for v in all_missing.values())


def test_exactly_window_long_history(path):
    # 14 valid runs then one more: the 15th sample is the first one judged on a full window
    x = np.arange(1.0, 16.0)
    got = rolling_bands(x, 14, 5)
    w = x[:14]  # Q1 = 4.25, Q2 = 7.5, Q3 = 10.75: no outlier; mean 7.5, sd of 1..14
    assert got["mm"][14] == 7.5 and got["tma"][14] == 7.5
    assert got["tmsd"][14] == pytest.approx(np.std(w, ddof=1), rel=1e-15)
    assert got["mm"][13] == window_stats(x[:13]).mm == 7.0


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # window_stats when no value is kept
def test_constant_and_infinite_values(path):
    const = np.full(20, 5.0)
    got = rolling_bands(const, 14, 5)
    assert (got["tma"][5:] == 5.0).all() and (got["tmsd"][5:] == 0.0).all()  # IQR 0 keeps all
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.array([1.0, 2.0, np.inf, 3.0, 4.0, 5.0, -np.inf, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0])
        assert_same_bits(rolling_bands(x, 6, 3), reference(x, 6, 3))


def test_long_window_goes_one_by_one(path):
    # prefixes longer than numpy's pairwise block (128 values) take window_stats itself
    rng = np.random.default_rng(11)
    x = mrr_like(rng, 170)
    assert_same_bits(rolling_bands(x, 140, 5), reference(x, 140, 5))


@pytest.mark.parametrize("n", list(range(0, 40)) + [63, 64, 65, 127, 128])
def test_numpy_sum_order(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.normal(0, 1, n) * np.exp(rng.normal(0, 8, n))  # association shows in the bits
        assert _numpy_sum(a.tolist()) == np.sum(a)


def test_bands_hand_computed(path):
    x = np.array([10.0, 12.0, 11.0, 13.0, 100.0, 12.0])
    b = rolling_bands(x, window=5, min_history=5)
    # the last sample sees [10, 12, 11, 13, 100]: Q1 = 11, Q3 = 13, IQR = 2 -> 100 is an outlier
    assert b["mm"][5] == 12.0
    assert b["tma"][5] == pytest.approx(11.5)
    assert b["tmsd"][5] == pytest.approx(np.std([10, 12, 11, 13], ddof=1))
    assert np.isnan(b["tma"][:5]).all()
