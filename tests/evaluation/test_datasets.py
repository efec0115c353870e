"""The CSIT-like labelled series: seeded, within the documented ranges, and CSV round trip."""

from __future__ import annotations

import numpy as np
import pytest

from pal.evaluation.datasets import MIN_GAP, csit_like, read_csv, write_csv
from pal.errors import ParseError


@pytest.fixture(scope="module")
def sets():
    return csit_like(n_changing=30, n_stationary=20, runs=100, seed=3)


def test_seeded(sets):
    again = csit_like(n_changing=30, n_stationary=20, runs=100, seed=3)
    assert all(np.array_equal(a.values, b.values, equal_nan=True) and a.changes == b.changes
               for a, b in zip(sets, again))
    other = csit_like(n_changing=30, n_stationary=20, runs=100, seed=4)
    assert not np.array_equal(sets[0].values, other[0].values, equal_nan=True)


def test_shape_and_ranges(sets):
    changing = [s for s in sets if not s.stationary]
    assert len(changing) == 30 and len(sets) == 50
    for s in sets:
        v = s.values[~np.isnan(s.values)]
        assert 0.005 <= s.noise <= 0.05
        assert 1e6 * 0.3 < np.median(v) < 3e7 * 4  # steps may move the level a little outside
        assert all(len(t) == 10 for t in s.trials if t is not None)
        assert all((t is None) == np.isnan(x) for t, x in zip(s.trials, s.values))
    for s in changing:
        idx = [i for i, _ in s.changes]
        assert 1 <= len(idx) <= 3
        assert np.all(np.diff([0] + idx + [100]) >= MIN_GAP)


def test_changes_move_the_level_as_labelled(sets):
    for s in sets:
        for k, (i, kind) in enumerate(s.changes):
            lo = s.changes[k - 1][0] if k else 0
            hi = s.changes[k + 1][0] if k + 1 < len(s.changes) else len(s.values)
            dips = set(s.dips)
            before = np.nanmedian([s.values[j] for j in range(lo, i) if j not in dips])
            after = np.nanmedian([s.values[j] for j in range(i, hi) if j not in dips])
            rel = after / before - 1
            assert (rel < 0) == (kind == "regression")
            assert abs(rel) > 0.015  # steps are >= 2 % (medians of noisy runs land close)


def test_dips_revert_and_are_not_changes(sets):
    n = 0
    for s in sets:
        for d in s.dips:
            n += 1
            assert d not in dict(s.changes)
            assert s.values[d] < 0.97 * np.nanmedian(s.values[max(0, d - 3):d + 4])
    assert n > 20  # about one per 40 runs


def test_csv_round_trip(sets, tmp_path):
    path = tmp_path / "labelled.csv"
    write_csv(sets[:3], path)
    back = read_csv(path)
    assert [b.name for b in back] == [s.name for s in sets[:3]]
    for a, b in zip(sets[:3], back):
        assert np.array_equal(a.values, b.values, equal_nan=True)
        assert a.changes == b.changes and a.dips == b.dips


def test_bad_csv_names_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("series,value,label\na,1.0,\na,x,\n")
    with pytest.raises(ParseError) as exc:
        read_csv(path)
    assert exc.value.line == 3
    path.write_text("series,value\na,1.0\n")
    with pytest.raises(ParseError):
        read_csv(path)


def test_honest_set_ranges():
    from pal.evaluation.datasets import HONEST_MIN_SEGMENT, honest

    series = honest(seed=5, n_changing=40, n_stationary=10)
    assert [s.name for s in series] == [s.name for s in honest(seed=5, n_changing=40, n_stationary=10)]
    spikes_up = spikes_down = excursions = 0
    for s in series:
        n = len(s.values)
        assert 50 <= n <= 1000 and 0.005 <= s.noise <= 0.05
        assert len(s.sizes) == len(s.changes) == len(s.categories)
        assert all(len(t) == 10 and np.mean(t) == pytest.approx(v) for t, v in zip(s.trials, s.values) if t)
        idx = [i for i, _ in s.changes]
        assert idx == sorted(idx)
        k = 0
        while k < len(s.changes):
            i, kind = s.changes[k]
            assert 0.5 - 1e-9 <= s.sizes[k] <= 30 + 1e-9 and 0.01 - 1e-9 <= s.sizes[k] * s.noise <= 0.30 + 1e-9
            prev = s.changes[k - 1][0] if k else 0
            assert i - prev >= HONEST_MIN_SEGMENT
            if s.categories[k] == "excursion":  # the move and the way back, 3-10 runs apart
                j, back = s.changes[k + 1]
                assert s.categories[k + 1] == "excursion" and 3 <= j - i <= 10 and back != kind
                assert s.sizes[k] >= 3.0
                excursions += 1
                k += 2
            else:
                k += 1
        for d in s.dips:
            assert d not in idx
            around = np.nanmedian(s.values[max(0, d - 5):d + 6])
            spikes_down += s.values[d] < around
            spikes_up += s.values[d] > around
    assert excursions >= 5 and spikes_up >= 5 and spikes_down >= 5
    assert sum(s.stationary for s in series) >= 10
