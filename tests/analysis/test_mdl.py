"""pal.analysis.mdl against the oracle, jumpavg 0.4.2, on seeded random series of many shapes."""

from __future__ import annotations

import math
import random

import jumpavg
import numpy as np
import pytest

from pal.analysis import mdl
from pal.analysis.mdl import Group, MdlInputError, MdlState, classify


@pytest.fixture(params=["compiled", "numpy"], autouse=True)
def search_path(request, monkeypatch):
    """Every test here runs on both search paths: the compiled kernel (C, built at install) and the
    NumPy fallback. The install builds the kernel: a missing one fails, it is not skipped."""
    if request.param == "compiled":
        assert mdl._load_kernel() is not None, "pal.analysis.mdl_kernel was not built (pip install -e .)"
    monkeypatch.setattr(mdl, "USE_COMPILED", request.param == "compiled")
    return request.param


def oracle(values, unit=None, sbps=None):
    """jumpavg's groups as (start, end, avg, stdev, samples, label, bits)."""
    out, pos = [], 0
    for g in jumpavg.classify(values, unit=unit, sbps=sbps):
        out.append((pos, pos + len(g), g.stats.avg, g.stats.stdev, g.stats.size, g.comment, g.bits))
        pos += len(g)
    return out


def ours(groups: list[Group]):
    return [(g.start, g.end, g.avg, g.stdev, g.samples, g.label, g.bits) for g in groups]


# ---------------------------------------------------------------------------
# Seeded series generators: each returns (values, unit, sbps)
# ---------------------------------------------------------------------------


def _scale(rng: random.Random) -> float:
    return rng.choice([1e-6, 1e-3, 1.0, 1e3, 1e6, 1e7, 1e9, 1e12]) * rng.uniform(1, 10)


def steps(rng):
    n, level, noise = rng.randint(3, 90), _scale(rng), rng.choice([0.001, 0.01, 0.05])
    values = []
    for _ in range(n):
        if rng.random() < 0.06:
            level *= rng.choice([0.6, 0.8, 0.95, 1.05, 1.25, 1.6])
        values.append(level * (1 + rng.gauss(0, noise)))
    return values, None, None


def dips(rng):
    n, level = rng.randint(3, 80), _scale(rng)
    values = [level * (1 + rng.gauss(0, 0.01)) for _ in range(n)]
    for _ in range(rng.randint(1, 3)):
        values[rng.randrange(n)] *= rng.choice([0.3, 0.5, 0.7, 1.4])
    return values, None, None


def trials(rng):
    n, level = rng.randint(2, 50), _scale(rng)
    values = []
    for _ in range(n):
        if rng.random() < 0.08:
            level *= rng.uniform(0.6, 1.4)
        values.append([level * (1 + rng.gauss(0, 0.02)) for _ in range(rng.randint(1, 10))])
    return values, None, None


def mixed_trials(rng):
    values, _, _ = steps(rng)
    return [[v, v * (1 + rng.gauss(0, 0.01))] if rng.random() < 0.4 else v for v in values], None, None


def constant(rng):
    return [_scale(rng)] * rng.randint(1, 60), None, None


def ties(rng):
    choices = [rng.choice([1.0, 2.0, 3.0, 100.0, 7e6]) for _ in range(3)]
    return [rng.choice(choices) for _ in range(rng.randint(1, 70))], None, None


def integers(rng):
    base = rng.randint(1, 10**7)
    return [base + rng.randint(-base // 50, base // 50) for _ in range(rng.randint(1, 60))], None, None


def tiny(rng):
    n = rng.randint(1, 40)
    return [rng.choice([1e-6, 2e-6, 1.5e-6]) * (1 + rng.gauss(0, 0.05)) for _ in range(n)], None, None


def huge(rng):
    n = rng.randint(1, 40)
    level = 1e12
    return [(level := level * rng.choice([1, 1, 1, 1.3, 0.7])) * (1 + rng.gauss(0, 0.01)) for _ in range(n)], None, None


def short(rng):
    return [_scale(rng) for _ in range(rng.randint(1, 2))], None, None


def explicit_unit(rng):
    values, _, _ = steps(rng)
    return values, max(values) * rng.choice([1e-4, 1e-3, 1e-2]), None


def explicit_sbps(rng):
    values, _, _ = steps(rng)
    return values, None, rng.choice([4, 8, 10, 16, 20])


SHAPES = [steps, dips, trials, mixed_trials, constant, ties, integers, tiny, huge, short, explicit_unit, explicit_sbps]
BATCHES = 12
PER_BATCH = 45  # 12 * 45 = 540 series


@pytest.mark.parametrize("batch", range(BATCHES))
def test_identical_to_jumpavg(batch):
    rng = random.Random(1000 + batch)
    for k in range(PER_BATCH):
        shape = SHAPES[(batch + k) % len(SHAPES)]
        values, unit, sbps = shape(rng)
        expected = oracle(values, unit, sbps)
        got = ours(classify(values, unit=unit, sbps=sbps))
        # Bit-for-bit: same boundaries, labels, sample counts, and the same floats.
        assert got == expected, (shape.__name__, k, values, unit, sbps)


def test_long_series_identical_to_jumpavg():
    rng = random.Random(7)
    level, values = 2.0e7, []
    for i in range(400):
        if i in (90, 200, 210, 330):
            level *= [0.8, 1.3, 0.9, 1.1][[90, 200, 210, 330].index(i)]
        values.append(level * (1 + rng.gauss(0, 0.01)))
    assert ours(classify(values)) == oracle(values)


def test_known_step_and_labels():
    # Hand-checkable: a clear drop then a clear rise, no noise inside groups.
    values = [10.0] * 6 + [5.0] * 6 + [20.0] * 6
    groups = classify(values)
    assert [(g.start, g.end, g.avg, g.stdev, g.size, g.label) for g in groups] == [
        (0, 6, 10.0, 0.0, 6, "normal"),
        (6, 12, 5.0, 0.0, 6, "regression"),
        (12, 18, 20.0, 0.0, 6, "progression"),
    ]


def test_trial_lists_count_trials_not_runs():
    values = [[10.0, 10.2, 9.8], [10.1, 9.9, 10.0], [5.0, 5.1, 4.9], [5.0, 5.2, 4.8]]
    groups = classify(values)
    assert ours(groups) == oracle(values)
    assert [(g.start, g.end, g.size, g.samples) for g in groups] == [(0, 2, 2, 6), (2, 4, 2, 6)]
    assert groups[0].avg == pytest.approx(10.0, rel=1e-12)


def test_numpy_input_and_single_value():
    arr = np.array([3.0, 3.0, 9.0, 9.0, 9.0])
    assert ours(classify(arr)) == oracle(list(arr))
    (g,) = classify([42.0])
    assert (g.start, g.end, g.avg, g.stdev, g.size, g.label) == (0, 1, 42.0, 0.0, 1, "normal")


def test_bad_input():
    assert classify([]) == []
    with pytest.raises(MdlInputError):
        classify([1.0, float("nan"), 2.0])
    with pytest.raises(MdlInputError):
        classify([1.0, [], 2.0])
    with pytest.raises(MdlInputError):  # negative values and no positive one
        classify([0.0, -1.0])


# ---------------------------------------------------------------------------
# Zero runs (a dead DUT): data, never a crash
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("values", [[0.0] * 6, [[0.0, 0.0]] * 4, [0.0], np.zeros(5)])
def test_all_zero_series_is_one_group_at_zero(values):
    if len(values) > 1:
        with pytest.raises(ValueError):  # jumpavg divides by its zero unit
            jumpavg.classify(list(values))
    (g,) = classify(values)
    n = len(values)
    samples = sum(len(v) if isinstance(v, list) else 1 for v in values)
    assert (g.start, g.end, g.avg, g.stdev, g.size, g.samples, g.label) == (0, n, 0.0, 0.0, n, samples, "normal")
    assert math.isfinite(g.bits)


@pytest.mark.parametrize("values", [
    [0.0, 0.0, 0.0, 5.0, 5.1, 4.9, 5.0],            # zeros then values (the DUT came back)
    [5.0, 5.1, 4.9, 5.0, 0.0, 0.0, 0.0],            # values then zeros (the DUT died)
    [5.0, 5.1, 0.0, 4.9, 5.0, 0.0, 5.0],            # dead runs scattered
    [[0.0, 0.0], [0.0, 0.0], [9.0, 9.5], [9.2, 9.1]],
])
def test_series_with_zero_runs_identical_to_jumpavg(values):
    assert ours(classify(values)) == oracle(values)


def test_values_then_zeros_is_a_regression_to_zero():
    groups = classify([5.0, 5.1, 4.9, 5.0, 0.0, 0.0, 0.0])
    assert [(g.start, g.end, g.avg, g.label) for g in groups] == [(0, 4, 5.0, "normal"), (4, 7, 0.0, "regression")]


@pytest.mark.parametrize("values", [[5e-324, 1e-323], [1e-323, 0.0, 2e-323, 1.5e-323], [[5e-324, 1e-323], [0.0]]])
def test_a_subnormal_maximum_is_held_as_zeros_not_a_division_by_zero(values):
    """Every value under about 4e-320: jumpavg's unit, max / (2**13 - 1), underflows to 0 and it
    divides by zero; pal holds the series as zeros (nothing a measurement gives, but a file may
    say it, and one such series must not end the run)."""
    with pytest.raises(ZeroDivisionError):
        jumpavg.classify(list(values))
    (g,) = classify(values)
    assert (g.start, g.end, g.avg, g.stdev, g.label) == (0, len(values), 0.0, 0.0, "normal")
    assert math.isfinite(g.bits)
    state = MdlState.start(values[:1]).extend(values[1:])
    assert ours(state.groups()) == ours([g])
    zeros = [[0.0] * len(v) if isinstance(v, list) else 0.0 for v in values]  # the same runs and trials
    assert ours(state.extend([5.0, 5.1]).groups()) == ours(classify(zeros + [5.0, 5.1]))


def test_zero_state_extends():
    values = [0.0, 0.0, 0.0, 0.0, 5.0, 5.1, 4.9]
    state = MdlState.start([])
    for k, v in enumerate(values):
        state.extend([v])
        if k < 4:  # still all zeros: one group at 0
            assert [(g.start, g.end, g.avg) for g in state.groups()] == [(0, k + 1, 0.0)]
    assert ours(state.groups()) == oracle(values)
    zeros = MdlState.start([0.0, 0.0]).extend([0.0])
    assert [(g.start, g.end, g.avg, g.samples) for g in zeros.groups()] == [(0, 3, 0.0, 3)]


# ---------------------------------------------------------------------------
# Incremental state
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_extend_equals_full(seed):
    rng = random.Random(50 + seed)
    for k in range(25):
        values, unit, sbps = SHAPES[k % len(SHAPES)](rng)
        if len(values) < 2:
            continue
        cuts = sorted(rng.sample(range(1, len(values)), min(3, len(values) - 1)))
        state = MdlState.start(values[: cuts[0]], unit=unit, sbps=sbps)
        for a, b in zip(cuts, cuts[1:] + [len(values)]):
            state.extend(values[a:b])
        assert ours(state.groups()) == ours(classify(values, unit=unit, sbps=sbps)), (k, cuts)
        assert len(state) == len(values)


def test_extend_one_by_one_from_empty():
    rng = random.Random(3)
    values = [1e6 * (1 + rng.gauss(0, 0.02)) * (0.7 if 20 <= i < 30 else 1.0) for i in range(45)]
    state = MdlState.start([])
    for v in values:
        state.extend([v])
    assert ours(state.groups()) == oracle(values)


def test_new_maximum_recomputes():
    # The maximum sets the unit (and the bits of every average), so a new one must recompute.
    head = [100.0, 101.0, 99.0, 100.5, 60.0, 61.0, 59.5, 60.2]
    tail = [300.0, 301.0, 299.0]
    state = MdlState.start(head)
    before = state.unit
    state.extend(tail)
    assert state.unit == pytest.approx(301.0 / 8191.0) and before == pytest.approx(101.0 / 8191.0)
    assert ours(state.groups()) == oracle(head + tail)


def test_group_bits_finite_and_positive():
    groups = classify([1.0, 2.0, 3.0, 2.0, 1.0])
    assert all(math.isfinite(g.bits) and g.bits > 0 for g in groups)


def test_negative_values_follow_jumpavg():
    # Not a pal use case (rates are positive), but the arithmetic must still match the oracle.
    for values in ([5.0, -3.0, 4.0, 5.0], [1.0, -100.0, 1.0], [-1.0, 2.0, 2.0, -1.0, 2.0]):
        assert ours(classify(values)) == oracle(values)
