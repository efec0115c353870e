"""The compiled MDL kernel (pal.analysis.mdl_kernel, C, built at install): same floats as CPython,
same results as the NumPy path and jumpavg, lazy import, and the fallback where numbers leave the
finite range."""

from __future__ import annotations

import importlib.machinery
import math
import platform
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pal.analysis.mdl_kernel as kernel
from pal.analysis import mdl
from pal.analysis.mdl import MdlState, classify

from tests.analysis.test_mdl import oracle, ours

#: Every vector level of the kernel's loops, narrowest first.
ALL_LEVELS = ("scalar", "sse2", "avx2", "avx512")
#: The levels this CPU runs (the best is the default): every one must give the same bits.
LEVELS = ALL_LEVELS[: ALL_LEVELS.index(kernel._simd()) + 1]


@pytest.fixture(params=ALL_LEVELS)
def level(request):
    """The kernel's loops at each vector level, the best restored afterwards; a level this CPU does
    not have is skipped."""
    if request.param not in LEVELS:
        pytest.skip(f"this CPU has no {request.param} (its best level is {LEVELS[-1]})")
    best = kernel._simd()
    kernel._simd(request.param)
    yield request.param
    kernel._simd(best)


def both_paths(monkeypatch, fn):
    """fn() on the compiled path, then on the NumPy path."""
    monkeypatch.setattr(mdl, "USE_COMPILED", True)
    compiled = fn()
    monkeypatch.setattr(mdl, "USE_COMPILED", False)
    return compiled, fn()


def test_import_does_not_load_the_kernel_module():
    code = (
        "import sys\n"
        "import pal.analysis.mdl as m\n"
        "print('pal.analysis.mdl_kernel' in sys.modules)\n"
        "m.classify([1.0, 2.0, 2.0])\n"
        "print('pal.analysis.mdl_kernel' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_the_kernel_is_the_built_extension():
    # The C extension built at install, loaded by the caller (no Python module of that name).
    assert mdl._load_kernel() is kernel
    assert kernel.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), kernel.__file__
    assert not (Path(mdl.__file__).parent / "mdl_kernel.py").exists()


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


def test_both_paths_give_the_same_state(monkeypatch, level):
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
        monkeypatch.setattr(mdl, "USE_COMPILED", first)
        state = MdlState.start(values[:55])
        monkeypatch.setattr(mdl, "USE_COMPILED", second)
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


# ---------------------------------------------------------------------------
# Edge cases of the C kernel (kept from its differential test against the Numba kernel it replaced)
# ---------------------------------------------------------------------------

_STATE = ("c_n", "c_avg", "c_sd", "c_prev", "c_base", "win", "best", "gbits", "w_n", "w_avg", "w_sd")


def _held(values, unit=None):
    """A state holding ``values`` with nothing consumed yet, and run_steps' arguments for it."""
    state = MdlState(unit=unit)
    state._reserve(len(values))
    r_n, r_avg, r_sd, top = mdl._prepare(values)
    state.r_n[: len(values)], state.r_avg[: len(values)], state.r_sd[: len(values)] = r_n, r_avg, r_sd
    state.max_value, state.unit = top, mdl._unit_of(top, state.unit_arg, None)
    t = top / state.unit
    args = [state.r_n, state.r_avg, state.r_sd, state.max_value, state.unit, math.log(t + 1, 2),
            math.log(1 - 1 / (t + 2), 2), *mdl._exact_tables(int(r_n.sum())),
            state.c_n, state.c_nf, state.c_avg, state.c_sd, state.c_prev, state.c_base, state.c_lognorm,
            state.win, state.best, state.gbits, state.w_n, state.w_avg, state.w_sd]
    return state, args


@pytest.mark.parametrize("values", [
    [5.0], [5.0, 5.0], [5.0, 6.0], [6.0, 5.0], [0.0, 3.0], [3.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 2.0],
    [1e-300, 2e-300, 1e-300], [1e150, 3e150, 1e150, 1e150], [1e-310, 3e-310, 3e-310], [1.0] * 40,
    [float(i % 2) for i in range(41)], [[1.0, 1.2], [1.1], [5.0, 5.5, 4.5], [5.0]], [[2.0] * 7, [2.0] * 3],
])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NumPy path's overflows on the subnormal unit
def test_edge_series_give_the_same_state_on_both_paths(monkeypatch, values, level):
    compiled, plain = both_paths(monkeypatch, lambda: MdlState.start(values))
    n = len(compiled)
    for name in _STATE:
        assert getattr(compiled, name)[:n].tobytes() == getattr(plain, name)[:n].tobytes(), name
    assert ours(compiled.groups()) == ours(plain.groups()) == oracle(values)


def test_calls_in_pieces_equal_one_call():
    # j0 > 0 continues the held candidates; j0 == j1 and j1 == 0 consume nothing (and touch nothing).
    rng = random.Random(5)
    values = [[1e6 * (0.8 if 9 <= i < 17 else 1.0) * (1 + rng.gauss(0, 0.01)) for _ in range(1 + i % 3)]
              for i in range(30)]
    whole, args = _held(values)
    assert kernel.run_steps(0, len(values), *args) == 0
    pieces, args = _held(values)
    for j0, j1 in ((0, 0), (0, 1), (1, 1), (1, 2), (2, 11), (11, 11), (11, 30), (30, 30)):
        assert kernel.run_steps(j0, j1, *args) == 0
    for name in (*_STATE, "c_nf", "c_lognorm"):
        assert getattr(whole, name).tobytes() == getattr(pieces, name).tobytes(), name
    whole._count = len(values)
    assert ours(whole.groups()) == oracle(values)


def test_record_bits_out_of_the_finite_range_fail_the_kernel(monkeypatch):
    # max / unit is subnormal (1e-310): a later group's average term divides 1 by a subnormal
    # norm, an infinite argument of log, while the screen's log2 of the norm is finite. The
    # kernel stops at run 1; the NumPy path gives jumpavg's -inf bits.
    values = [1e-10, 2e-10, 1e-10]
    state, args = _held(values, unit=1e300)
    assert kernel.run_steps(0, len(values), *args) == 2
    compiled, plain = both_paths(monkeypatch, lambda: ours(classify(values, unit=1e300)))
    assert compiled == plain == oracle(values, unit=1e300)
    assert [row[-1] for row in compiled[1:]] == [-math.inf, -math.inf]


def test_bad_arguments_raise_and_release_the_arrays():
    values = [1.0, 2.0, 1.5]

    def call(change):
        state, args = _held(values)
        args = [0, len(values), *(a.copy() if isinstance(a, np.ndarray) else a for a in args)]
        change(args)
        return args

    cases = [
        (TypeError, "takes 25 arguments", lambda a: a.pop()),
        (TypeError, "r_n must be a 1-D int64", lambda a: a.__setitem__(2, a[3].copy())),
        (TypeError, "r_sd must be a 1-D float64", lambda a: a.__setitem__(4, a[4].astype(np.float32))),
        (TypeError, "r_sd must be a C-contiguous", lambda a: a.__setitem__(4, np.zeros(8)[::2])),
        (TypeError, "best must be a C-contiguous writable", lambda a: a[20].setflags(write=False)),
        (ValueError, "w_sd has 2 entries", lambda a: a.__setitem__(24, np.zeros(2))),
        (ValueError, "must not be negative", lambda a: a.__setitem__(0, -1)),
        (ValueError, "the tables are shorter", lambda a: a.__setitem__(9, np.zeros(3))),
        (ValueError, "r_n[1] is 0", lambda a: a[2].__setitem__(1, 0)),
        (ValueError, "c_avg and c_sd share memory", lambda a: a.__setitem__(15, a[14])),
        (ValueError, "r_avg and c_avg share memory", lambda a: a.__setitem__(3, a[14])),
        (ValueError, "do not match the runs", lambda a: (a.__setitem__(0, 2), a[12].__setitem__(0, 99))),
        (ValueError, "do not match the runs", lambda a: (a.__setitem__(0, 1), a[12].__setitem__(0, 1),
                                                          a[22].__setitem__(0, 10**6))),
    ]
    for exc, message, change in cases:
        args = call(change)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        refs = [sys.getrefcount(a) for a in arrays]
        with pytest.raises(exc, match=message.replace("[", r"\[")):
            kernel.run_steps(*args)
        # Every buffer released (a buffer held keeps a reference to its array).
        assert [sys.getrefcount(a) for a in arrays] == refs, message
    args = call(lambda a: None)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    refs = [sys.getrefcount(a) for a in arrays]
    assert kernel.run_steps(*args) == 0
    assert [sys.getrefcount(a) for a in arrays] == refs


# ---------------------------------------------------------------------------
# The merge and bound loops at every vector level against their Python form
# ---------------------------------------------------------------------------

_ONE_BITS = 0x3FF0000000000000


def _lin_log2(x):
    return (struct.unpack("<q", struct.pack("<d", x))[0] - _ONE_BITS) / float(1 << 52)


def _extend_open_in_python(j, rn, ravg, rsd, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound):
    """The Numba kernel's _extend_open, in CPython floats (the same IEEE operations)."""
    rnf = float(rn)
    extra = rsd * rsd * rnf
    plain = rn == 1 and rsd == 0.0
    for i in range(j):
        nf = float(c_nf[i])
        a1 = float(c_avg[i]) * nf
        a1 /= nf
        sd = float(c_sd[i])
        m = sd * sd
        m *= nf
        delta = ravg - a1
        total = nf + rnf
        if plain:
            avg = a1 + delta / total
        else:
            step = delta * rnf
            step /= total
            m += extra
            avg = a1 + step
        d2 = delta * delta
        d2 *= nf
        if rn != 1:
            d2 *= rnf
        d2 /= total
        m += d2
        m /= total
        sd = math.sqrt(m)
        c_avg[i], c_sd[i], c_nf[i] = avg, sd, total
        c_n[i] += rn
        gap = abs(avg - float(c_prev[i])) * inv + 1.0
        dev = sd * inv + 1.0
        low = float(size_low[j + 1 - i]) + float(c_lognorm[i]) + float(c_base[i]) - (_lin_log2(gap) + 0.0861)
        low += _lin_log2(dev) * (total - 1.0) + 1.0
        bound[i] = low - 1e-6 * (1.0 + abs(low))


def test_extend_open_gives_pythons_bits_at_every_level(level):
    # Every lane of the vector loops (and the masked or scalar tail after them: j of every
    # remainder of 8, 4 and 2) does CPython's operations: merged stats and bounds (through the
    # exact int64 -> double of the exponent-and-mantissa log2) bit for bit.
    rng = random.Random(level)
    for case in range(400):
        j = case % 19 if case < 190 else rng.randint(19, 300)
        scale = 10 ** rng.uniform(-100, 100) if case % 5 == 0 else 1e7
        unit = scale / rng.choice([8191.0, 1.0, 1e-6, 1e6])
        state = {
            "c_n": np.array([rng.randint(1, 400) for _ in range(j)], dtype=np.int64),
            "c_avg": np.array([scale * rng.uniform(0.5, 1.5) for _ in range(j)]),
            "c_sd": np.array([scale * rng.choice([0.0, 1e-9, 1e-3, 0.05, 1.0, 1e3]) * rng.random() for _ in range(j)]),
            "c_prev": np.array([math.nan if i == 0 else scale * rng.uniform(0.5, 1.5) for i in range(j)]),
            "c_base": np.array([rng.uniform(0, 5000) for _ in range(j)]),
            "c_lognorm": np.array([rng.uniform(-40, 40) for _ in range(j)]),
        }
        state["c_nf"] = state["c_n"].astype(float)
        size_low = np.array([math.nan] + sorted(rng.uniform(-1, 200) for _ in range(j + 1)))
        rn = rng.choice([1, 1, 1, rng.randint(2, 12)])
        rsd = 0.0 if rng.random() < 0.5 else scale * rng.random() * 0.01
        ravg = scale * rng.uniform(0.5, 1.5)
        inv = 1.0 / unit
        ours_, ref = ({k: v.copy() for k, v in state.items()} for _ in range(2))
        ours_["bound"], ref["bound"] = np.full(j, -1.0), np.full(j, -1.0)
        kernel._extend_open(j, rn, ravg, rsd, ours_["c_n"], ours_["c_nf"], ours_["c_avg"], ours_["c_sd"],
                            ours_["c_prev"], ours_["c_base"], ours_["c_lognorm"], size_low, inv, ours_["bound"])
        _extend_open_in_python(j, rn, ravg, rsd, ref["c_n"], ref["c_nf"], ref["c_avg"], ref["c_sd"], ref["c_prev"],
                               ref["c_base"], ref["c_lognorm"], size_low, inv, ref["bound"])
        for name in ("c_n", "c_nf", "c_avg", "c_sd", "bound"):
            assert ours_[name].tobytes() == ref[name].tobytes(), (case, j, name)


def test_simd_levels():
    assert LEVELS[0] == "scalar" and kernel._simd() == LEVELS[-1]
    if platform.machine() in ("x86_64", "AMD64"):
        assert "sse2" in LEVELS  # part of x86-64
    with pytest.raises(ValueError, match="not one of this CPU's"):
        kernel._simd("avx9")
    for name in ALL_LEVELS[len(LEVELS):]:
        with pytest.raises(ValueError, match="not one of this CPU's"):
            kernel._simd(name)
    assert kernel._simd() == LEVELS[-1]
