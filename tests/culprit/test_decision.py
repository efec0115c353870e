"""CSIT's bisect decision against the reference: jumpavg 0.4.2 driven exactly as CSIT's
``resources/tools/integrated/compare_bisect.py`` drives it, on the same values."""

from __future__ import annotations

import random

import jumpavg
import pytest

from pal.analysis.mdl import MdlInputError
from pal.culprit.decision import EARLY, LATE, SEPARATE, decide


def csit_reference(early: list[float], mid: list[float], late: list[float]) -> tuple[float, float, float, str]:
    """compare_bisect.main's arithmetic on fresh lists: (early, late, double bits, new boundary)."""
    early, mid, late = list(early), list(mid), list(late)
    early_avg = jumpavg.AvgStdevStats.for_runs(early).avg
    late_avg = jumpavg.AvgStdevStats.for_runs(late).avg
    mid_avg = jumpavg.AvgStdevStats.for_runs(mid).avg
    max_early, abs_diff_late = max(early_avg, mid_avg), abs(late_avg - mid_avg)
    max_late, abs_diff_early = max(late_avg, mid_avg), abs(early_avg - mid_avg)
    rel_diff_early = abs_diff_early / max_early if max_early else 0.0
    rel_diff_late = abs_diff_late / max_late if max_late else 0.0
    common = jumpavg.BitCountingGroupList(max_value=max(early + mid + late)).append_group_of_runs(early)
    e = common.copy()
    e.extend_runs_to_last_group(mid)
    e.append_group_of_runs(late)
    lt = common.copy()
    lt.append_group_of_runs(mid)
    lt.extend_runs_to_last_group(late)
    d = common.copy()
    d.append_group_of_runs(mid)
    d.append_group_of_runs(late)
    single = min(e.bits, lt.bits)
    if d.bits <= single:
        becomes = LATE if rel_diff_early > rel_diff_late else EARLY
    else:
        becomes = LATE if e.bits > lt.bits else EARLY
    return e.bits, lt.bits, d.bits, becomes


def _check(early, mid, late):
    ref = csit_reference(early, mid, late)
    got = decide(early, mid, late)
    assert (got.early_bits, got.late_bits, got.separate_bits, got.becomes) == ref  # exact, to the last bit
    return got


def _sets(rng: random.Random, base: float, noise: float, sizes=(1, 12)):
    out = []
    for _ in range(3):
        level = base * (1 + rng.choice([0.0, 0.03, 0.1, 0.3]) * rng.choice([-1, 1]))
        out.append([abs(level * (1 + rng.gauss(0, noise))) for _ in range(rng.randint(*sizes))])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_random_throughput_like_sets(seed):
    """pps-sized values, 1-12 values a set, several noise levels: 300 decisions per seed."""
    rng = random.Random(seed)
    seen = set()
    for _ in range(300):
        got = _check(*_sets(rng, rng.choice([2.1e7, 3.4e6, 9.9e5]), rng.choice([0.001, 0.01, 0.05])))
        seen.add(got.grouping)
    assert seen == {EARLY, LATE}  # both boundaries move


def test_small_values_reach_the_separate_rule():
    """Values below 1 (e.g. reconf loss times in seconds, unit 1.0) make 'separate' win, both ways."""
    rng = random.Random(7)
    seen = set()
    for _ in range(600):
        got = _check(*_sets(rng, rng.choice([0.02, 0.1, 0.3]), 0.3, sizes=(1, 4)))
        seen.add((got.grouping, got.becomes))
    assert seen == {(EARLY, EARLY), (LATE, LATE), (SEPARATE, EARLY), (SEPARATE, LATE)}


def test_mrr_trial_lists_are_flattened_runs():
    """CSIT flattens each build's tests' trial lists into one list of floats (60 x 1 s trials)."""
    rng = random.Random(11)
    trials = lambda level: [level * (1 + rng.gauss(0, 0.004)) for _ in range(60)]  # noqa: E731
    early, late = trials(2.1e7) + trials(1.2e7), trials(1.9e7) + trials(1.2e7)  # two tests each
    for mid_level in (2.1e7, 2.02e7, 1.98e7, 1.9e7):
        got = _check(early, trials(mid_level) + trials(1.2e7), late)
        assert got.becomes == (EARLY if mid_level > 2.0e7 else LATE)


def test_bit_tie_goes_to_early():
    got = _check([1.0, 3.0], [2.0], [3.0, 1.0])
    assert got.early_bits == got.late_bits and got.grouping == EARLY


def test_separate_with_equal_relative_differences_goes_to_early():
    got = _check([0.01], [0.01], [0.01])
    assert got.grouping == SEPARATE and got.rel_diff_early == got.rel_diff_late == 0.0 and got.becomes == EARLY
    got = _check([0.04], [0.02], [0.04])
    assert got.grouping == SEPARATE and got.rel_diff_early == got.rel_diff_late == 0.5 and got.becomes == EARLY


def test_failed_builds_use_csit_fake_values():
    """A failed test is four values of 1.0: a failing mid among passing builds joins the failing side."""
    ok = [2.0e7, 2.01e7, 1.99e7, 2.0e7]
    assert _check(ok, [1.0] * 4, [1.0] * 4).becomes == LATE
    assert _check([1.0] * 4, [1.0] * 4, ok).becomes == EARLY
    _check([1.0] * 4, [1.0] * 4, [1.0] * 4)  # all failed: whatever CSIT does, the same


def test_csit_counts_the_separate_grouping_with_the_mid_list_extended():
    """Why decide() counts [early][mid+late][late]: jumpavg keeps the list it is given, so the
    'late' encoding extends CSIT's mid list before the 'separate' encoding reads it."""
    early, mid, late = [1.0, 2.0], [3.0], [4.0, 5.0]
    g = jumpavg.BitCountingGroupList(max_value=5.0).append_group_of_runs(early)
    g.copy().append_group_of_runs(mid).extend_runs_to_last_group(late)
    assert mid == [3.0, 4.0, 5.0]
    documented = jumpavg.BitCountingGroupList(max_value=5.0).append_group_of_runs([1.0, 2.0])
    documented.append_group_of_runs([3.0]).append_group_of_runs([4.0, 5.0])
    got = decide([1.0, 2.0], [3.0], [4.0, 5.0])
    assert got.separate_bits != documented.bits
    assert got.separate_bits == csit_reference([1.0, 2.0], [3.0], [4.0, 5.0])[2]


@pytest.mark.parametrize("sets, match", [
    (([], [1.0], [1.0]), "early results are empty"),
    (([1.0], [float("nan")], [1.0]), "mid results hold NaN"),
    (([0.0], [0.0], [-1.0]), "positive maximum"),
])
def test_bad_input(sets, match):
    with pytest.raises(MdlInputError, match=match):
        decide(*sets)
