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
    """Each test on both paths: the compiled statistics (pal.analysis.bands_kernel, C built at
    install: a missing kernel fails here, it is not skipped) and the NumPy form."""
    if request.param == "compiled":
        import pal.analysis.bands_kernel  # noqa: F401
    monkeypatch.setattr(bands, "USE_COMPILED", request.param == "compiled")
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
    saved = bands.USE_COMPILED
    try:
        for use in (True, False):  # both paths (hypothesis runs no function-scoped fixture)
            bands.USE_COMPILED = use
            assert_same_bits(rolling_bands(x, window, min_history), ref)
    finally:
        bands.USE_COMPILED = saved


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


# -- the compiled kernel (pal.analysis.bands_kernel, C) against the NumPy form, at its edges --

def _both_paths(x: np.ndarray, window: int, min_history: int, sigma: float = 3.0):
    """rolling_bands of x on the compiled path and on the NumPy form."""
    out = {}
    for use in (True, False):
        saved, bands.USE_COMPILED = bands.USE_COMPILED, use
        try:
            with np.errstate(all="ignore"):
                out[use] = rolling_bands(x, window, min_history, sigma)
        finally:
            bands.USE_COMPILED = saved
    return out[True], out[False]


def test_kernel_is_built_and_taken(monkeypatch):
    """The install builds the kernel: it loads, and rolling_bands calls it for a window <= 128."""
    from pal import compiled

    kernel = compiled.load("pal.analysis.bands_kernel")
    assert kernel is not None and not kernel.__file__.endswith(".py")
    calls = []

    class Spy:
        def bands_at(self, *args):
            calls.append(args[1:4])
            return kernel.bands_at(*args)

    monkeypatch.setattr(compiled, "load", lambda name: Spy())
    monkeypatch.setattr(bands, "USE_COMPILED", True)
    x = np.arange(1.0, 30.0)
    assert_same_bits(rolling_bands(x, 14, 5), reference(x, 14, 5))
    rolling_bands(x, 129, 5)  # past numpy's pairwise block: the NumPy form
    assert calls == [(14, 5, 3.0)]


def test_import_does_not_load_the_kernel_module():
    import subprocess
    import sys

    code = "import sys, pal.analysis.bands; assert 'pal.analysis.bands_kernel' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("window", [1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 127, 128])
def test_kernel_windows_around_numpys_sum_blocks(window):
    # sums of fewer than 8 values, of exactly 8 and 16 (blocks only), with a remainder, of 128
    rng = np.random.default_rng(window)
    for first in sorted({1, 2, max(window - 1, 1), window}):
        for n in (0, 1, 2, window - 1, window, window + 1, 2 * window + 5, 170):
            x = mrr_like(rng, max(n, 0), wide=n % 2 == 1)
            got, ref = _both_paths(x, window, first)
            assert_same_bits(got, ref)
            assert_same_bits(got, reference(x, window, first))


@pytest.mark.parametrize("values", [
    [np.inf, -np.inf, 1.0, 2.0, 3.0, np.inf, 4.0, -np.inf, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],  # inf - inf: NaN
    [1e308, 1.7e308, -1e308, 1e308, 5.0, 1.7e308, 1.7e308, 1e308, 1e308, 1e308, 1.7e308, 2.0],  # sums overflow
    [5e-324, 1e-310, -5e-324, 2.2e-308, 0.0, 5e-324, 1e-310, 1e-310, 3e-310, 5e-324],  # subnormals
    [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, -0.0, 0.0, 0.0, -0.0, 2.0, 0.0, -0.0],  # signed zeros
    [3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 1e9, 3.0, 3.0, 3.0, 3.0],  # IQR 0: one outlier
    [-1e7, -1.1e7, -0.9e7, -1e7, np.nan, -1e7, -5e7, -1e7, -1.05e7, -1e7, -0.95e7, -1e7, -1e7, -2e7],
    [1.0, np.nan, 2.0, np.nan, np.nan, 2.0, 1.0, 2.0, 1.0, 2.0, np.nan, 1.0, 1.0, 2.0, 2.0, 1.0, np.nan],
])
@pytest.mark.parametrize("window, min_history", [(1, 1), (3, 1), (5, 2), (8, 8), (9, 5), (14, 5)])
def test_kernel_equals_numpy_form_on_extreme_values(values, window, min_history):
    x = np.array(values * 3)
    got, ref = _both_paths(x, window, min_history)
    assert_same_bits(got, ref)


@pytest.mark.parametrize("sigma", [0.0, -1.0, 0.5, 1e300, np.inf, np.nan])
def test_kernel_equals_numpy_form_for_any_sigma(sigma):
    rng = np.random.default_rng(5)
    x = mrr_like(rng, 170)
    x[[20, 21]] = np.inf, -np.inf  # NaN statistics for the windows that hold both
    got, ref = _both_paths(x, 14, 5, sigma)
    assert_same_bits(got, ref)


def test_kernel_writes_every_cell_and_checks_its_arguments():
    from pal.analysis import bands_kernel

    x = np.array([1.0, np.nan, 2.0, 4.0, 3.0, 5.0, 9.0, np.nan])
    out = np.full((5, len(x)), 12345.0)  # garbage: every cell is written
    assert bands_kernel.bands_at(x, 3, 2, 3.0, out) is None
    ref = rolling_bands(x, 3, 2)
    np.testing.assert_array_equal(out, np.array([ref[k] for k in BAND_NAMES]))
    assert np.isnan(out[:, :3]).all() and not np.isnan(out[:, 3:]).any()
    for bad_x, bad_out, err in [
        (x.astype(np.float32), out, TypeError),
        (np.arange(16.0)[::2], out, TypeError),  # not contiguous
        (x, np.empty((5, len(x) - 1)), ValueError),
        (x, np.empty((len(x), 5)), ValueError),
        (x, np.empty((5, len(x)), dtype=np.int64), TypeError),
        (x, np.empty((len(x), 5)).T, TypeError),  # not C-contiguous
    ]:
        with pytest.raises(err):
            bands_kernel.bands_at(bad_x, 3, 2, 3.0, bad_out)
    read_only = np.empty((5, len(x)))
    read_only.flags.writeable = False
    with pytest.raises(TypeError):
        bands_kernel.bands_at(x, 3, 2, 3.0, read_only)
    with pytest.raises(ValueError):
        bands_kernel.bands_at(x, 0, 2, 3.0, out)
    with pytest.raises(ValueError):
        bands_kernel.bands_at(x, 3, 0, 3.0, out)


@pytest.mark.parametrize("seed", range(8))
def test_kernel_rolling_stats_equal_the_numpy_forms(seed):
    from pal.analysis import bands_kernel

    rng = np.random.default_rng(seed)
    valid = mrr_like(rng, int(rng.integers(0, 60)), wide=seed % 2 == 1)
    valid = valid[~np.isnan(valid)]
    window = int(rng.integers(1, 20))
    for first in range(1, window + 1):
        stop = min(window, len(valid) + 1)
        stats = np.full((3, len(valid) + 1), 12345.0)
        bands_kernel.rolling_stats(valid, window, first, stop, stats)
        np.testing.assert_array_equal(stats, bands._rolling_stats(valid, window, first, stop))
