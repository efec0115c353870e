"""``MdlState.saved`` / ``MdlState.resume``: a series searched from a saved state is the series
searched from its first run, every state array to the bit (and so jumpavg's groups), at every
vector level; a state that does not fit the series is not used."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

import pal.analysis.mdl_kernel as kernel
from pal.analysis import mdl
from pal.analysis.mdl import MdlSaved, MdlState
from tests.analysis.test_mdl import SHAPES, oracle, ours
from tests.analysis.test_mdl_kernel import _held, level  # noqa: F401 - the fixture

#: every array of the state, as the search leaves them
ARRAYS = ("r_n", "r_avg", "r_sd", "c_n", "c_nf", "c_avg", "c_sd", "c_prev", "c_base", "c_lognorm", "win", "best",
          "gbits", "w_n", "w_avg", "w_sd")


def same_state(a: MdlState, b: MdlState) -> None:
    n = len(a)
    assert n == len(b)
    assert (a.max_value, a.unit) == (b.max_value, b.unit)
    for name in ARRAYS:
        x, y = getattr(a, name)[:n], getattr(b, name)[:n]
        if name == "c_lognorm":  # candidate 0 has no previous group: never written
            x, y = x[1:], y[1:]
        assert x.tobytes() == y.tobytes(), name


def resumed(values, k, unit=None, sbps=None) -> MdlState:
    saved = MdlState.start(values[:k], unit=unit, sbps=sbps).saved()
    assert saved is not None and saved.resumed == 0
    return MdlState.resume(saved, values, unit=unit, sbps=sbps)


def test_a_resumed_search_is_the_full_search_at_every_split(level):  # noqa: F811 - the fixture
    rng = random.Random(31)
    went_on = 0
    for k in range(160):
        values, unit, sbps = SHAPES[k % len(SHAPES)](rng)
        if not len(values) or max(max(v) if isinstance(v, list) else v for v in values) <= 0:
            continue
        full = MdlState.start(values, unit=unit, sbps=sbps)
        for split in sorted({1, len(values) // 2, len(values) - 1, len(values)} - {0}):
            state = resumed(values, split, unit, sbps)
            same_state(state, full)
            assert ours(state.groups()) == ours(full.groups())
            went_on += state.saved().resumed == split
    assert went_on > 150  # most splits held no new maximum: the state was rebuilt, not searched again


def test_a_resumed_search_equals_jumpavg():
    rng = random.Random(4)
    for n in (2, 3, 40, 365):
        values = [1e6 * (0.9 if n // 3 <= i < n // 2 else 1.0) * (1 + rng.gauss(0, 0.02)) for i in range(n)]
        top = values.index(max(values))
        for split in {1, top + 1, n - 1, n} - {0}:
            assert ours(resumed(values, split).groups()) == oracle(values), (n, split)


def test_the_rebuild_gives_the_searchs_arrays_for_long_and_trial_series():
    rng = random.Random(9)
    values = [[5e5 * (1.05 if 300 <= i < 900 else 1.0) * (1 + rng.gauss(0, 0.01)) for _ in range(1 + i % 3)]
              for i in range(1500)]
    values[0] = [1e6, 0.97e6, 1.01e6]  # the maximum first: every split goes on from its state; a first
    # group of several samples (its frozen copy's stats differ from its own: run 1 sits on them)
    full = MdlState.start(values)
    for split in (1, 2, 700, 1499, 1500):
        state = resumed(values, split)
        assert state.saved().resumed == split
        same_state(state, full)


def test_a_new_maximum_searches_again():
    values = [1.0, 1.1, 0.9, 1.0, 2.0, 2.1]
    state = resumed(values, 4)
    assert state.saved().resumed == 0
    same_state(state, MdlState.start(values))


@pytest.mark.parametrize("change", ["value", "unit", "sbps", "count", "c_avg", "win"])
def test_a_state_that_does_not_fit_is_not_used(change):
    rng = random.Random(2)
    values = [100.0] + [rng.gauss(50, 1) for _ in range(59)]
    saved = MdlState.start(values[:40]).saved()
    args: dict = {}
    given = list(values)
    if change == "value":  # one of the runs it was saved from differs
        given[17] += 1e-9
    elif change == "unit":
        args = {"unit": 0.5}
    elif change == "sbps":
        args = {"sbps": 10}
    elif change == "count":  # a series shorter than the state
        given = given[:30]
    elif change == "c_avg":  # the last winner's stats are not the saved candidates': not that state
        c_avg = saved.c_avg.copy()
        c_avg[saved.win[-1]] += 1e-9
        saved = dataclasses.replace(saved, c_avg=c_avg)
    else:  # a start after its run
        win = saved.win.copy()
        win[3] = 5
        saved = dataclasses.replace(saved, win=win)
    state = MdlState.resume(saved, given, **args)
    assert state.saved().resumed == 0
    same_state(state, MdlState.start(given, **args))


def test_no_state_for_a_series_held_as_zeros_or_empty():
    assert MdlState.start([0.0, 0.0, 0.0]).saved() is None
    assert MdlState.start([]).saved() is None
    state = MdlState.resume(None, [0.0, 0.0, 1.0])
    same_state(state, MdlState.start([0.0, 0.0, 1.0]))


def test_without_the_kernel_a_state_is_not_used(monkeypatch):
    values = [3.0, 2.0, 2.1, 2.2, 1.0, 1.1]
    saved = MdlState.start(values[:4]).saved()
    monkeypatch.setattr(mdl, "USE_COMPILED", False)
    state = MdlState.resume(saved, values)
    assert state.saved().resumed == 0
    assert ours(state.groups()) == oracle(values)


def test_the_kernel_refuses_a_win_array_that_is_no_states():
    values = [3.0, 2.0, 2.1, 2.2]
    saved = MdlState.start(values).saved()
    fresh, args = _held(values)
    fresh.win[:4] = [0, 2, 1, 1]  # run 1 won by a start after it
    fresh.c_avg[:4], fresh.c_sd[:4] = saved.c_avg, saved.c_sd
    with pytest.raises(ValueError, match="state arrays"):
        kernel.rebuild(0, 4, *args)
    with pytest.raises(ValueError, match="state arrays"):
        kernel.rebuild(1, 4, *args)  # a rebuild starts at run 0


def test_saved_is_what_resume_needs_and_no_more():
    state = MdlState.start([1.0, 2.0, 1.5, 1.4])
    saved = state.saved()
    assert isinstance(saved, MdlSaved)
    assert saved.count == 4 and saved.win.dtype == np.int32
    assert saved.c_avg.tobytes() == state.c_avg[:4].tobytes() and saved.c_sd.tobytes() == state.c_sd[:4].tobytes()
    saved.c_avg[0] = -1.0  # a copy: the state is not changed through it
    assert state.c_avg[0] != -1.0

