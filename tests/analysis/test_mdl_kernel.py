"""The compiled MDL kernel (pal.analysis.mdl_kernel): same floats as CPython, same results as the
NumPy path and jumpavg, lazy import, and the fallback where numbers leave the finite range."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import numpy as np
import pytest

from pal.analysis import mdl
from pal.analysis.mdl import MdlState, classify

from tests.analysis.test_mdl import oracle, ours

kernel = pytest.importorskip("pal.analysis.mdl_kernel", reason="numba is not installed")


def both_paths(monkeypatch, fn):
    """fn() on the compiled path, then on the NumPy path."""
    monkeypatch.setattr(mdl, "USE_NUMBA", True)
    compiled = fn()
    monkeypatch.setattr(mdl, "USE_NUMBA", False)
    return compiled, fn()


def test_import_does_not_load_numba():
    code = (
        "import sys\n"
        "import pal.analysis.mdl as m\n"
        "print('numba' in sys.modules, 'pal.analysis.mdl_kernel' in sys.modules)\n"
        "m.classify([1.0, 2.0, 2.0])\n"
        "print('pal.analysis.mdl_kernel' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


def test_bits_are_cpythons_to_the_last_bit():
    # The kernel's scalar group bits against mdl.group_bits (CPython math) on re-entered stats.
    rng = random.Random(11)
    t_size, t_area, t_logn = mdl._TABLES
    for _ in range(3000):
        n = rng.choice([1, 2, 3, rng.randint(4, 60), rng.randint(61, 4095)])
        top_value = 10 ** rng.uniform(-6, 12)
        unit = top_value / rng.choice([8191.0, 511.0, 2.0**21 - 1, rng.uniform(1, 1e5)])
        avg = top_value * rng.uniform(-0.5, 1.0)
        sd = 0.0 if n == 1 else top_value * rng.choice([0.0, 1e-9, 1e-3, 0.05, 0.7])
        prev = None if rng.random() < 0.2 else top_value * rng.uniform(0.0, 1.0)
        top = top_value / unit
        got = kernel._bits(n, avg, sd, prev is not None, prev or 0.0, top, unit,
                           math.log(top + 1, 2), math.log(1 - 1 / (top + 2), 2), t_size, t_area, t_logn)
        assert got == mdl.group_bits(*mdl._restat(n, avg, sd), prev, top_value, unit), (n, avg, sd, prev, unit)


def _near_ties(rng, n):
    # Two levels so close that many candidate partitions differ by a hair.
    return [rng.choice([1000.0, 1000.0 + rng.choice([1e-3, 0.1, 0.122])]) for _ in range(n)]


def _alternating(rng, n):
    return [(5e6 if (i // rng.randint(1, 3)) % 2 else 5.05e6) * (1 + rng.gauss(0, 1e-4)) for i in range(n)]


def _ramp(rng, n):
    return [1e7 * (1 + i / n * 0.2) * (1 + rng.gauss(0, 0.005)) for i in range(n)]


def _plateaus_with_exact_ties(rng, n):
    level, out = 200, []
    for _ in range(n):
        if rng.random() < 0.02:
            level = rng.choice([150, 200, 201, 260])
        out.append(level + rng.choice([-1, 0, 0, 1]))
    return out


@pytest.mark.parametrize("shape", [_near_ties, _alternating, _ramp, _plateaus_with_exact_ties])
def test_long_series_identical_to_jumpavg(shape):
    values = shape(random.Random(shape.__name__), 320)
    assert ours(classify(values)) == oracle(values)


def test_long_trial_series_beyond_the_table():
    # 420 runs of 12 trials: groups of up to 5,040 samples, past the import-time lgamma table.
    rng = random.Random(4)
    values = [[3e6 * (0.9 if 150 <= i < 260 else 1.0) * (1 + rng.gauss(0, 0.01)) for _ in range(12)]
              for i in range(420)]
    assert sum(len(v) for v in values) >= len(mdl._TABLES[0])
    assert ours(classify(values)) == oracle(values)


def test_both_paths_give_the_same_state(monkeypatch):
    from tests.analysis.test_mdl import SHAPES

    rng = random.Random(21)
    for k in range(120):
        values, unit, sbps = SHAPES[k % len(SHAPES)](rng)
        compiled, plain = both_paths(monkeypatch, lambda: MdlState.start(values, unit=unit, sbps=sbps))
        # Same state arrays (bit for bit), same groups.
        n = len(compiled)
        for name in ("c_n", "c_avg", "c_sd", "c_prev", "c_base", "win", "best", "gbits", "w_n", "w_avg", "w_sd"):
            np.testing.assert_array_equal(getattr(compiled, name)[:n], getattr(plain, name)[:n], err_msg=f"{k} {name}")
        assert ours(compiled.groups()) == ours(plain.groups())


def test_paths_continue_each_others_state(monkeypatch):
    rng = random.Random(8)
    values = [2e6 * (1.1 if 40 <= i < 70 else 1.0) * (1 + rng.gauss(0, 0.01)) for i in range(100)]
    full = ours(classify(values))
    for first, second in ((True, False), (False, True)):
        monkeypatch.setattr(mdl, "USE_NUMBA", first)
        state = MdlState.start(values[:55])
        monkeypatch.setattr(mdl, "USE_NUMBA", second)
        state.extend(values[55:80]).extend(values[80:])
        assert ours(state.groups()) == full == oracle(values)


def test_kernel_refuses_numbers_out_of_range_and_the_numpy_path_takes_over():
    # unit 1e-151: samples are ~1e151 units, past the kernel's 1e150 (where it guarantees finite
    # intermediates); CPython still computes (top**2 ~ 1e302), and so must we, via NumPy.
    values = [1.0, 1.0, 1.5, 1.5, 1.5]
    state = MdlState(unit=1e-151)
    state._restart(*mdl._prepare(values))
    args = (state.r_n, state.r_avg, state.r_sd, state.max_value, state.unit, 0.0, 0.0, *mdl._TABLES,
            state.c_n, state.c_nf, state.c_avg, state.c_sd, state.c_prev, state.c_base, state.c_lognorm,
            state.win, state.best, state.gbits, state.w_n, state.w_avg, state.w_sd)
    assert kernel.run_steps(0, len(values), *args) == 1
    assert ours(classify(values, unit=1e-151)) == oracle(values, unit=1e-151)


def test_overflow_gives_jumpavgs_nan_bits():
    # unit 1e-160: top**2 overflows, CPython's arithmetic turns it into NaN bits without raising;
    # the kernel refuses the series and the NumPy path reproduces jumpavg (NaN compared as NaN).
    values = [1.0, 2.0, 1.0]

    def canon(rows):
        return [tuple("nan" if isinstance(x, float) and math.isnan(x) else x for x in row) for row in rows]

    got = canon(ours(classify(values, unit=1e-160)))
    assert got == canon(oracle(values, unit=1e-160))
    assert [row[-1] for row in got[1:]] == ["nan", "nan"]
