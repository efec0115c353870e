"""The compiled scans of the alert filters (pal.analysis.filters_kernel: C, built at install): the
NumPy forms' exact results (the same z, start and end, ties and NaN as ``np.argmax`` has them) on
every edge, and the same alertable changes on a whole labelled set whichever path runs."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from pal.analysis import filters
from pal.analysis import filters_kernel as kernel  # built at install: missing is a failure, not a skip
from pal.analysis.mdl_detector import MdlDetector
from pal.evaluation.datasets import honest


def same(a: tuple, b: tuple) -> bool:
    """Equal element by element (NaN equals NaN), and plain Python numbers like the NumPy forms'."""
    return len(a) == len(b) and all(
        (p == q or (np.isnan(p) and np.isnan(q))) and type(p) is type(q) for p, q in zip(a, b))


def cases(seed: int, count: int):
    """Series of 0-90 runs: noise, steps, rounded values (ties), constants, +-inf, and every
    small min_runs / min_after (0 divides by zero, as the NumPy forms do)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(0, 90))
        x = rng.normal(100.0, 3.0, n)
        kind = rng.random()
        if n and kind < 0.2:
            x = np.round(x)
        elif n and kind < 0.3:
            x[:] = 5.0
        elif n and kind < 0.4:
            x[int(rng.integers(0, n))] = rng.choice([np.inf, -np.inf])
        elif n > 10 and kind < 0.6:
            x[n // 2:] += rng.normal(0.0, 10.0)
        yield x, float(rng.choice([3.0, 1.0, 0.5, 1e-9])), int(rng.integers(0, 10)), int(rng.integers(0, 10))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NumPy forms' 0/0 and inf - inf
def test_scans_equal_the_numpy_forms():
    checked = {"shift": 0, "excursion": 0, "window": 0}
    for x, sigma, min_runs, min_after in cases(5, 3000):
        got = kernel.best_shift(x, sigma, min_runs, min_after)
        assert same(got, filters._best_shift_numpy(x, sigma, min_runs, min_after)), (x, sigma, min_runs)
        checked["shift"] += got[1] >= 0
        got = kernel.best_excursion(x, sigma, *filters.EXCURSION_RUNS)
        assert same(got, filters._best_excursion_numpy(x, sigma, filters.EXCURSION_RUNS)), (x, sigma)
        checked["excursion"] += got[1] >= 0
        got = kernel.best_window(x, sigma, min_runs, filters._WINDOW_LENGTHS)
        assert same(got, filters._best_window_numpy(x, sigma, min_runs)), (x, sigma, min_runs)
        checked["window"] += got[1] >= 0
    assert min(checked.values()) > 500  # most cases found something to compare


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ties_and_nan_pick_what_argmax_picks():
    # a symmetric series: the splits at 10 and 20 both part means 0 and 0.5 (10 runs against 20);
    # argmax keeps the first
    x = np.array([0.0] * 10 + [1.0] * 10 + [0.0] * 10)
    z = 0.5 / math.sqrt(1 / 10 + 1 / 20)
    assert kernel.best_shift(x, 1.0, 8, 8) == filters._best_shift_numpy(x, 1.0, 8, 8) == (pytest.approx(z), 10)
    # inf at run 25: splits up to 25 have z = inf, later ones inf - inf = NaN; the first NaN
    # wins over the infs before it, in both (and an excursion then reports none)
    y = np.linspace(0.0, 1.0, 40)
    y[25] = np.inf
    z, k = kernel.best_shift(y, 1.0, 8, 8)
    assert np.isnan(z) and k == filters._best_shift_numpy(y, 1.0, 8, 8)[1] == 26
    assert kernel.best_excursion(y, 1.0, 3, 10) == (0.0, -1, -1)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_noise_and_isolated_runs_equal_the_numpy_forms(monkeypatch):
    """``run_noise`` and ``isolated_runs`` to the bit and the type, with NaN gaps, ties (rounded
    values), constants (no noise: nothing isolated), short series, and infinities, which the
    kernel leaves to the NumPy forms."""
    def both(f, *args):
        out = []
        for use in (True, False):
            monkeypatch.setattr(filters, "USE_COMPILED", use)
            out.append(f(*args))
        return out

    found = isolated = left = 0
    for x, _, _, _ in cases(7, 3000):
        rng = np.random.default_rng(len(x))
        x = x.copy()
        if len(x):
            x[rng.random(len(x)) < 0.15] = np.nan  # gaps
            if rng.random() < 0.3:
                x[int(rng.integers(0, len(x)))] *= rng.choice([0.5, 2.0])  # one run off its level
        got, ref = both(filters.run_noise, x)
        assert type(got) is type(ref) is float and (got == ref or (math.isnan(got) and math.isnan(ref))), x
        got, ref = both(filters.isolated_runs, x)
        assert got == ref and all(type(i) is int for i in got), x
        found += not math.isnan(ref := filters.run_noise(x))
        isolated += bool(got)
        left += bool(len(x)) and not kernel.run_noise(x)[0]  # an infinity: the NumPy form answered
    assert found > 1500 and isolated > 300 and left > 100


@pytest.mark.parametrize("n", [3, 4, 16, 17, 40, 41, 365])
def test_the_selected_medians_are_the_sorted_ones(monkeypatch, n):
    """The kernel selects its medians (no sort): plateaus of equal values, signed zeros (0.0 and
    -0.0 compare equal; which of them a selection leaves in the middle differs from a sort's),
    even and odd counts and values far apart give the NumPy form's noise to the bit."""
    rng = np.random.default_rng(n)
    for trial in range(60):
        kind = trial % 4
        if kind == 0:  # a few levels, each held for runs: many zero differences
            x = np.repeat(rng.choice([-1.0, 0.0, 2.5], n // 3 + 1), 3)[:n]
        elif kind == 1:  # zeros of both signs among a few values
            x = rng.choice([0.0, -0.0, 1.0, -1.0], n)
        elif kind == 2:  # values of every magnitude
            x = rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 12, n)
        else:  # rounded measurements: ties in the differences
            x = np.round(rng.normal(1e6, 10, n))
        monkeypatch.setattr(filters, "USE_COMPILED", True)
        got = filters.run_noise(x), filters.isolated_runs(x)
        monkeypatch.setattr(filters, "USE_COMPILED", False)
        ref = filters.run_noise(x), filters.isolated_runs(x)
        assert got[0] == ref[0] or (math.isnan(got[0]) and math.isnan(ref[0])), (n, trial)
        assert got[1] == ref[1], (n, trial)


@pytest.mark.parametrize("confirm_runs", [1, 3])
def test_alertable_changes_do_not_depend_on_the_path(monkeypatch, confirm_runs):
    det = MdlDetector()
    series = honest(seed=2, n_changing=30, n_stationary=10)
    out = {}
    for use in (True, False):
        monkeypatch.setattr(filters, "USE_COMPILED", use)
        out[use] = [filters.alertable_changes(det, s.values, s.direction, confirm_runs=confirm_runs, window_runs=10)
                    for s in series]
    assert out[True] == out[False]
    assert sum(len(c) for c in out[True]) > 30  # the set has changes to alert on


def test_import_does_not_load_the_kernel_module():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import pal.analysis.filters as f\n"
        "print('pal.analysis.filters_kernel' in sys.modules)\n"
        "f._best_shift(np.arange(20.0), 1.0, 8, 8)\n"
        "print('pal.analysis.filters_kernel' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def both_paths(monkeypatch, f, *args):
    """``f(*args)`` with the compiled kernel, then with the NumPy forms."""
    out = []
    for use in (True, False):
        monkeypatch.setattr(filters, "USE_COMPILED", use)
        out.append(f(*args))
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_noise_medians_by_hand(monkeypatch):
    """The medians of an even count are (a + b) / 2, to the bit: differences 3, -2, 6, -5 have
    the median 0.5, deviations 2.5, 2.5, 5.5, 5.5 the median 4. Two middle deviations of 1.7e308
    add up to inf (a + (b - a) / 2 would stay finite), and the median of -inf and inf is NaN."""
    got, ref = both_paths(monkeypatch, filters.run_noise, np.array([1.0, 4.0, 2.0, 8.0, 3.0]))
    assert got == ref == 4.0 / 0.6745 / math.sqrt(2.0)
    got, ref = both_paths(monkeypatch, filters.run_noise, np.array([1.0, np.nan, 4.0, 2.0, np.nan, 8.0]))
    assert got == ref == 3.0 / 0.6745 / math.sqrt(2.0)  # differences 3, -2, 6 of the valid runs: 3; 0, 5, 3: 3
    got, ref = both_paths(monkeypatch, filters.run_noise, np.array([1.7e308, 0.0, -1.7e308, 0.0, 1.7e308]))
    assert got == ref == math.inf
    got, ref = both_paths(monkeypatch, filters.run_noise, np.array([1e308, -1e308, 1e308, -1e308, 1e308]))
    assert math.isnan(got) and math.isnan(ref)
    done, noise = kernel.run_noise(np.array([1.0, np.inf, 2.0, 3.0]))  # left to the NumPy form
    assert done is False and math.isnan(noise)
    assert kernel.run_noise(np.array([np.nan, 1.0, np.nan, 2.0]))[0] is True  # two valid runs: NaN, done


def window_cases(seed: int, count: int):
    """Series of 20-420 runs, the lengths of a year's window and more, for the window scans:
    noise, values rounded to a few levels (many equal z: the first must win), constants (every
    z 0), a level that moves for tens of runs and comes back, an inf (NaN z), sigma 0 (0/0)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(20, 420))
        x = rng.normal(6.5e6, 1.5e5, n)
        kind = rng.random()
        if kind < 0.25:
            x = np.round(x / 1e5) * 1e5
        elif kind < 0.3:
            x[:] = 6.5e6
        elif kind < 0.35:
            x[int(rng.integers(0, n))] = np.inf
        elif kind < 0.7:
            a = int(rng.integers(0, n // 2))
            x[a:a + int(rng.integers(11, 60))] -= rng.normal(0.0, 4e5)
        sigma = float(rng.choice([filters.run_noise(x), 1.5e5, 1.0, 0.0]))
        yield x, sigma, int(rng.choice([0, 3, 8, 8, 16]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("level", ["scalar", "avx2"])
def test_window_scans_equal_the_numpy_forms_at_each_vector_level(level):
    """The AVX2 form (four starts an instruction; the lanes' first largest z merged by value, then
    by row and start) gives the scalar loop's z, start and end, ties and NaN included."""
    before = kernel._simd()
    try:
        kernel._simd(level)
    except ValueError:
        pytest.skip(f"this CPU has no {level}")
    try:
        won = 0
        for x, sigma, min_runs in window_cases(3, 800):
            got = kernel.best_window(x, sigma, min_runs, filters._WINDOW_LENGTHS)
            assert same(got, filters._best_window_numpy(x, sigma, min_runs)), (x, sigma, min_runs)
            got_e = kernel.best_excursion(x, sigma, *filters.EXCURSION_RUNS)
            assert same(got_e, filters._best_excursion_numpy(x, sigma, filters.EXCURSION_RUNS)), (x, sigma)
            won += got[1] > min_runs + 4  # a winner a block of four starts could have held
        assert won > 200
    finally:
        kernel._simd(before)


def test_window_scans_tie_across_lanes_by_hand():
    """A constant series: every z is 0, so the first window of the first row wins (a lane's and the
    tail's equal z are merged by row, then start); one raised run: the windows holding it tie
    within a row, the earliest start wins."""
    x = np.full(200, 7.0)
    lengths = filters._WINDOW_LENGTHS
    assert kernel.best_window(x, 1.0, 8, lengths) == (0.0, 8, 8 + int(lengths[0])) \
        == filters._best_window_numpy(x, 1.0, 8)
    y = x.copy()
    y[100] = 8.0  # every window of a length holding run 100 has the same z
    got = kernel.best_window(y, 1.0, 8, lengths)
    assert got == filters._best_window_numpy(y, 1.0, 8)
    assert got[1] == 100 - int(lengths[0]) + 1 and got[2] - got[1] == int(lengths[0])


def test_long_series_equal_the_numpy_forms(monkeypatch):
    """A series longer than the kernel's stack scratch (its heap path): a 3000-run level of
    10e6 with a shift, a one-run spike and gaps."""
    rng = np.random.default_rng(0)
    x = rng.normal(10e6, 2e5, 3000)
    x[1500:] += 3e5
    x[2000] = 2e7
    x[rng.random(3000) < 0.05] = np.nan
    got, ref = both_paths(monkeypatch, filters.run_noise, x)
    assert got == ref and 1.9e5 < got < 2.1e5
    got, ref = both_paths(monkeypatch, filters.isolated_runs, x)
    assert got == ref and 2000 in got
    v = x[~np.isnan(x)]
    sigma = filters.run_noise(x)
    assert kernel.best_shift(v, sigma, 8, 8) == filters._best_shift_numpy(v, sigma, 8, 8)
    assert kernel.best_excursion(v, sigma, 3, 10) == filters._best_excursion_numpy(v, sigma, (3, 10))
    assert kernel.best_window(v, sigma, 8, filters._WINDOW_LENGTHS) == filters._best_window_numpy(v, sigma, 8)


def test_isolated_runs_writes_the_caller_s_array():
    """The kernel returns (done, count) and writes the runs' indices into ``out``; a wrong
    array is refused, not written past."""
    x = np.array([5.0, 5.1, 4.9, np.nan, 5.0, 9.0, 5.05, 4.95, 5.0, 5.02])
    out = np.full(8, -1, dtype=np.int64)
    assert kernel.isolated_runs(x, 4.0, out) == (True, 1) and out[0] == 5
    assert kernel.isolated_runs(np.array([1.0, np.inf, 2.0, 3.0]), 4.0, np.empty(2, np.int64)) == (False, 0)
    with pytest.raises(ValueError):
        kernel.isolated_runs(x, 4.0, np.empty(7, np.int64))  # fewer than len(x) - 2
    with pytest.raises(TypeError):
        kernel.isolated_runs(x, 4.0, np.empty(8))  # not int64
    with pytest.raises(TypeError):
        kernel.run_noise(x[::2])  # not contiguous
    with pytest.raises(TypeError):
        kernel.best_shift(np.arange(20), 1.0, 8, 8)  # not float64
    with pytest.raises(ValueError):
        kernel.best_shift(np.arange(20.0), 1.0, -1, 8)  # a negative part
    assert filters.run_noise(np.arange(40.0)[::2]) == 0.0  # the wrappers make strided input contiguous
    assert filters.isolated_runs(np.repeat(x, 2)[::2]) == [5]
