"""TCPD reader and F1 (the paper's measure), by hand on tiny files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pal.errors import ParseError
from pal.evaluation.tcpd import f1, read_tcpd, score


def test_f1_by_hand():
    # the first observation counts for everyone. Annotator a: {0, 50}; b: {0, 50, 80}.
    # predictions {0, 52, 70}: 52 is within 5 of 50 for both, 70 matches nobody.
    # precision 2/3; recall (2/2 + 2/3) / 2 = 5/6; F1 = 2 * (2/3) * (5/6) / (2/3 + 5/6) = 20/27
    ann = {"a": [50], "b": [50, 80]}
    assert f1(ann, [52, 70], margin=5) == pytest.approx(20 / 27)
    # no prediction: precision 1 (only 0), recall (1/2 + 1/3) / 2
    r = (1 / 2 + 1 / 3) / 2
    assert f1(ann, []) == pytest.approx(2 * r / (1 + r))
    assert f1({"a": []}, []) == 1.0  # nobody saw a change, none predicted
    assert f1(ann, [56]) == pytest.approx(5 / 11)  # 6 away: outside the margin, precision 1/2, recall 5/12


def test_one_to_one_matching():
    # two predictions near one annotated point: only one is a true positive
    assert f1({"a": [50]}, [49, 51]) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_read_tcpd_univariate_only_nulls_missing(tmp_path):
    (tmp_path / "datasets" / "uni").mkdir(parents=True)
    (tmp_path / "datasets" / "multi").mkdir(parents=True)
    (tmp_path / "annotations.json").write_text(json.dumps({"uni": {"1": [2], "2": []}, "multi": {"1": []}}))
    (tmp_path / "datasets" / "uni" / "uni.json").write_text(json.dumps(
        {"name": "uni", "n_obs": 4, "n_dim": 1, "series": [{"label": "V1", "type": "float", "raw": [1, None, 3, 4]}]}))
    (tmp_path / "datasets" / "multi" / "multi.json").write_text(json.dumps(
        {"name": "multi", "n_obs": 2, "n_dim": 2, "series": [{"raw": [1, 2]}, {"raw": [3, 4]}]}))
    got = read_tcpd(tmp_path)
    assert [s.name for s in got] == ["uni"]
    assert np.array_equal(got[0].values, [1.0, np.nan, 3.0, 4.0], equal_nan=True)
    assert got[0].annotations == {"1": (2,), "2": ()}
    assert score(got, lambda s: [2]) == {"uni": pytest.approx(f1({"1": [2], "2": []}, [2]))}
    (tmp_path / "annotations.json").write_text("{not json")
    with pytest.raises(ParseError) as exc:
        read_tcpd(tmp_path)
    assert "annotations.json" in str(exc.value)
