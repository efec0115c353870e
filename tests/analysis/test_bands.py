"""The vectorised bands equal the TMA detector's per-run loop."""

import numpy as np
import pytest

from pal.analysis.bands import rolling_bands
from pal.analysis.tma import TmaDetector


@pytest.mark.parametrize("seed", range(20))
def test_bands_equal_tma_detector(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    x = rng.normal(1e7, 2e5, n)
    x[rng.random(n) < 0.15] = np.nan
    if n > 10:
        x[rng.integers(0, n)] = 5e6  # an outlier for the fences
    ref = TmaDetector({"window": 14, "min_history": 5}).detect(x, 1).bands
    got = rolling_bands(x, 14, 5, 3.0)
    for name in ("mm", "tma", "tmsd", "tma_lo", "tma_hi"):
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, equal_nan=True, err_msg=name)


def test_bands_hand_computed():
    x = np.array([10.0, 12.0, 11.0, 13.0, 100.0, 12.0])
    b = rolling_bands(x, window=5, min_history=5)
    # the last sample sees [10, 12, 11, 13, 100]: Q1 = 11, Q3 = 13, IQR = 2 -> 100 is an outlier
    assert b["mm"][5] == 12.0
    assert b["tma"][5] == pytest.approx(11.5)
    assert b["tmsd"][5] == pytest.approx(np.std([10, 12, 11, 13], ddof=1))
    assert np.isnan(b["tma"][:5]).all()
