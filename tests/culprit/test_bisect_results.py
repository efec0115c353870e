"""A bisect job's archive read back: values per build, CSIT's decisions replayed, the culprit."""

from __future__ import annotations

import json

import pytest

from pal.culprit.bisect_results import BisectLayoutError, read_build, replay
from pal.report import RunReport
from tests.culprit import bisect_archive as ba
from tests.culprit.test_decision import csit_reference


def _expected_path():
    """The boundaries CSIT's script moves, step by step, on the archive's values."""
    values = {name: ba.trials(k) for name, k in ba.ORDER}
    early, late, out = "earliest", "latest", []
    for name, _ in ba.ORDER[2:]:
        becomes = csit_reference(values[early], values[name], values[late])[3]
        early, late = (early, name) if becomes == "late" else (name, late)
        out.append((becomes, early, late))
    return out


@pytest.mark.parametrize("form, prefix", [("uti", ""), ("uti", "csit_"), ("results.json", ""), ("output.xml", "")])
def test_finished_bisect_finds_the_culprit(tmp_path, form, prefix):
    root = ba.write_archive(tmp_path / "archive", form, prefix=prefix)
    report = RunReport()
    state = replay(root, report)
    assert [(s.decision.becomes, s.early, s.late) for s in state.steps] == _expected_path()
    # the planted step: 104 is before it (early), 106 and 105 after it (late)
    assert [s.decision.becomes for s in state.steps] == ["early", "late", "late"]
    assert state.earliest.values == tuple(ba.trials(100))
    assert state.steps[0].mid.values == tuple(ba.trials(104))
    if form == "results.json":  # CSIT's cache holds no version: no commit count, no culprit
        assert (state.commits_left, state.culprit) == (None, None)
        return
    assert state.early.version == ba.version(104) and state.late.version == ba.version(105)
    assert state.commits_left == 1 and state.steps_left == 0
    assert state.culprit.ref == ba.commit(ba.CULPRIT)
    assert state.to_dict()["culprit"] == {"commit": ba.commit(105), "version": ba.version(105)}
    assert not report.errors()


def test_running_bisect_shows_the_state_so_far(tmp_path):
    root = ba.write_archive(tmp_path / "archive", "uti", upto=3)
    (root / "middle" / "2").mkdir()  # created, not measured yet
    state = replay(root)
    assert [s.mid.name for s in state.steps] == ["middle/1"] and state.pending == ("middle/2",)
    assert (state.early.name, state.late.name, state.commits_left, state.steps_left) == ("middle/1", "latest", 4, 2)
    assert state.culprit is None


def test_failed_test_counts_as_csit_fake_values(tmp_path):
    d = tmp_path / "b"
    ba.write_uti(d, 104, passed=False)
    got = read_build(d, "middle/1", RunReport())
    assert got.values == (1.0, 1.0, 1.0, 1.0) and got.version == ba.version(104)
    x = tmp_path / "x"
    ba.write_output_xml(x, 104, tmp_path / "src", passed=False)
    got = read_build(x, "middle/1", RunReport())
    assert got.values == (1.0, 1.0, 1.0, 1.0) and got.source == "output.xml"


def test_results_json_wins_over_the_json_tree(tmp_path):
    d = tmp_path / "b"
    ba.write_uti(d, 100)
    (d / "results.json").write_text(json.dumps({"b": [3.0], "a": [1.0, 2.0]}))
    got = read_build(d, "earliest", RunReport())
    assert (got.values, got.tests, got.source, got.version) == ((1.0, 2.0, 3.0), 2, "results.json", ba.version(100))


def test_bad_files_are_reported_and_skipped(tmp_path):
    d = tmp_path / "b"
    ba.write_uti(d, 100)
    (d / "tests" / "broken.info.json").write_text("{not json")
    (d / "tests" / "odd.info.json").write_text(json.dumps({"test_id": "odd", "passed": True,
                                                           "result": {"type": "device"}}))
    report = RunReport()
    got = read_build(d, "earliest", report)
    assert got.values == tuple(ba.trials(100))
    msgs = [p.message for p in report.problems]
    assert any("not readable JSON" in m for m in msgs) and any("'device'" in m for m in msgs)


def test_not_a_bisect_archive(tmp_path):
    with pytest.raises(BisectLayoutError, match="no earliest/"):
        replay(tmp_path)
    (tmp_path / "earliest").mkdir()
    (tmp_path / "latest").mkdir()
    with pytest.raises(BisectLayoutError, match="no results"):
        replay(tmp_path)
