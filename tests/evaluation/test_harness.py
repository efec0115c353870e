"""The accuracy harness and its metrics, on tiny data sets whose scores are known by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pal.cli import main
from pal.evaluation.datasets import LabelledSeries, write_csv
from pal.evaluation.harness import (
    Candidate, changes_from_starts, detector_candidate_for, evaluate, format_table, online_alerts, run_candidate_for,
)
from pal.evaluation.metrics import Detected, match, score
from pal.spec import AlertFilters, TestSet

CHANGING = LabelledSeries("c", np.full(60, 1.0), ((10, "regression"), (30, "progression")))
STATIONARY = LabelledSeries("s", np.r_[np.full(99, 1.0), [np.nan]] , ())
FAKE = {  # fixed outputs of a fake detector: (index, kind, reported_at)
    "c": [(11, "regression", 13), (30, "regression", 30), (50, "progression", 50)],
    "s": [(40, "regression", 41)],
}


def fake(s: LabelledSeries) -> list[Detected]:
    return [Detected(i, k, r) for i, k, r in FAKE[s.name]]


MDL_RAW = detector_candidate_for(TestSet("t"), "mdl")
MDL_RUN = run_candidate_for(TestSet("t", alert_filters=AlertFilters(1.0, 2)), "mdl+f")


def test_match_kind_and_margin():
    truth = [(10, "regression"), (30, "progression")]
    assert match(truth, [Detected(13, "regression", 13)], margin=3) == [(0, 0)]
    assert match(truth, [Detected(14, "regression", 14)], margin=3) == []
    assert match(truth, [Detected(30, "regression", 30)], margin=3) == []  # wrong kind
    # one-to-one, closest first: two detections near one change -> one match
    assert match(truth, [Detected(12, "regression", 12), Detected(10, "regression", 10)]) == [(0, 1)]


def test_fake_detector_scores_by_hand():
    sc = evaluate([CHANGING, STATIONARY], [Candidate("fake", fake)], margin=3)[0]
    # truth 2; detected 4; TP 1 (11 ~ 10); FP 3 (30 wrong kind, 50, and 40 on the stationary one)
    assert (sc.truth, sc.detected, sc.tp, sc.fp, sc.fn) == (2, 4, 1, 3, 1)
    assert sc.precision == 0.25 and sc.recall == 0.5
    assert sc.f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert sc.stationary_runs == 99 and sc.false_alarms == 1
    assert sc.false_alarms_per_1k == pytest.approx(1000 / 99)
    assert sc.mean_delay == 3.0  # reported at 13 for the change at 10
    assert sc.cpu_seconds >= 0.0


def test_perfect_and_silent_detectors():
    perfect = score("p", [(((5, "regression"),), [Detected(5, "regression", 6)], 20)])
    assert (perfect.precision, perfect.recall, perfect.f1, perfect.mean_delay) == (1.0, 1.0, 1.0, 1.0)
    silent = score("s", [(((5, "regression"),), [], 20)])
    assert (silent.precision, silent.recall, silent.f1) == (1.0, 0.0, 0.0)
    assert math.isnan(silent.mean_delay) and math.isnan(silent.false_alarms_per_1k)


def test_changes_from_starts_uses_valid_runs():
    values = np.array([10.0, 10.0, np.nan, 10.0, 5.0, 5.0])
    cps = changes_from_starts(values, [3], +1, "peer")  # start 3 of the valid runs = run 4
    assert [(c.index, c.kind, c.before, c.after, c.runs) for c in cps] == [(4, "regression", 10.0, 5.0, 2)]


def test_pal_candidate_with_filters_on_a_known_series():
    wobble = np.where(np.arange(60) % 2 == 0, 0.5, -0.5)
    values = 100.0 + wobble
    values[20] = 60.0  # a dip, not a change
    values[40:] -= 10.0
    s = LabelledSeries("x", values, ((40, "regression"),))
    raw, alert = evaluate([s], [MDL_RAW, MDL_RUN])
    assert (raw.tp, raw.fp) == (1, 2)  # the dip is called a regression and a progression
    assert (alert.tp, alert.fp, alert.mean_delay) == (1, 0, 1.0)


def test_table_and_cli_on_a_csv(tmp_path, capsys):
    sc = evaluate([CHANGING, STATIONARY], [Candidate("fake", fake)])
    table = format_table(sc)
    assert "| fake | 0.250 | 0.500 | 0.333 | 10.10 | 3.00 |" in table
    wobble = np.where(np.arange(40) % 2 == 0, 0.5, -0.5)
    series = [LabelledSeries("a", np.r_[np.full(20, 100.0), np.full(20, 80.0)] + wobble, ((20, "regression"),))]
    path = tmp_path / "one.csv"
    write_csv(series, path)
    assert main(["-q", "evaluate", "--csv", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 true changes" in out
    assert "| mdl+filters (pal's alerts) | 1.000 | 1.000 | 1.000 |" in out
    assert main(["-q", "evaluate", "--csv", str(path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    run = next(r for r in rows if r["name"] == "mdl+filters (pal's alerts)")
    assert run["path"] == "run" and (run["precision"], run["recall"], run["f1"]) == (1.0, 1.0, 1.0)
    assert set(run) >= {"name", "path", "precision", "recall", "f1", "false_alarms_per_1k", "mean_delay_runs", "cpu_s"}
    assert {r["path"] for r in rows} == {"run", "detector"}


def test_online_alerts_send_a_step_once_and_never_a_dip():
    wobble = np.where(np.arange(32) % 2 == 0, 0.5, -0.5)
    values = 100.0 + wobble
    values[15] = 60.0  # dip: at t=15 pending (one run), at t=16 a transient -> masked
    values[22:] -= 10.0  # step: pending at t=22, confirmed and alerted at t=23, then ongoing
    s = LabelledSeries("x", values, ((22, "regression"),))
    ts = TestSet("t", alert_filters=AlertFilters(1.0, 2))
    assert online_alerts(ts, s) == [Detected(22, "regression", 23)]
    sc = evaluate([s], [run_candidate_for(ts, "mdl online", online=True)])[0]
    assert (sc.tp, sc.fp, sc.mean_delay) == (1, 0, 1.0)


def test_spec_detectors_and_filters_are_used(tmp_path):
    from pal.evaluation.harness import spec_candidates
    from pal.spec import parse_spec

    spec = parse_spec("""
name: t
jobs: [{name: csit-vpp-perf-mrr-daily-master-2n-icx}]
sources: [{name: l, type: local, path: /tmp}]
test-sets:
  - name: mrr
    detector: {name: tma, params: {window: 10}}
    alert-filters: {min-change-pct: 2.0, confirm-runs: 3}
""")
    cands = spec_candidates(spec)
    assert [(c.name, c.path) for c in cands] == [("mrr:tma (raw)", "detector"), ("mrr:tma", "run")]
    # a 10 % step held 3 runs at the end: TMA flags it (3 consecutive runs); +filters confirms at run 32
    values = np.r_[100.0 + np.where(np.arange(30) % 2 == 0, 0.5, -0.5), [90.0, 90.0, 90.0]]
    s = LabelledSeries("x", values, ((30, "regression"),))
    raw, alert = evaluate([s], cands)
    assert (raw.tp, raw.fp) == (1, 0)
    assert (alert.tp, alert.fp, alert.mean_delay) == (1, 0, 2.0)


def test_breakdown_by_size_category_and_length_by_hand():
    from pal.evaluation.metrics import Scored, breakdown

    items = [
        # 60 runs: a 1.5-sd step found, a 4-sd excursion (two labels) of which the way back is missed
        Scored(((10, "regression"), (30, "progression"), (35, "regression")),
               [Detected(11, "regression", 12), Detected(30, "progression", 31)], 60, 60,
               (1.5, 4.0, 4.0), ("step", "excursion", "excursion")),
        # 300 runs: a 12-sd step missed, one false alarm far from it
        Scored(((100, "regression"),), [Detected(200, "progression", 201)], 300, 300, (12.0,), ("step",)),
        # 600 stationary runs with one false alarm
        Scored((), [Detected(5, "regression", 6)], 600, 600),
    ]
    b = breakdown(items, margin=3)
    assert b["series"] == 3
    assert b["by_size"]["1-2"] == {"truth": 1, "tp": 1, "recall": 1.0}
    assert b["by_size"]["3-5"] == {"truth": 2, "tp": 1, "recall": 0.5}
    assert b["by_size"][">=10"] == {"truth": 1, "tp": 0, "recall": 0.0}
    assert b["by_size"]["<2"] == {"truth": 1, "tp": 1, "recall": 1.0}
    assert b["by_size"]["<1"] == {"truth": 0, "tp": 0, "recall": None}
    assert b["by_category"] == {"step": {"truth": 2, "tp": 1, "recall": 0.5},
                                "excursion": {"truth": 2, "tp": 1, "recall": 0.5}}
    short = b["by_length"]["50-99"]
    assert (short["series"], short["precision"], short["recall"]) == (1, 1.0, pytest.approx(2 / 3, abs=1e-6))
    long = b["by_length"]["500-1000"]
    assert (long["series"], long["detected"], long["false_alarms_per_1k"]) == (1, 1, pytest.approx(1000 / 600, abs=1e-6))
    assert b["by_length"]["200-499"]["f1"] == 0.0


def test_json_rows_carry_the_breakdowns():
    from pal.evaluation.harness import score_row

    cand = Candidate("fake", fake)
    sc = evaluate([CHANGING, STATIONARY], [cand])[0]
    row = score_row(cand, sc)
    assert row["cpu_ms_per_series"] is not None and row["cpu_ms_per_series"] >= 0
    assert row["by_category"]["step"] == {"truth": 2, "tp": 1, "recall": 0.5}
    assert set(row["by_length"]) == {"50-99", "100-199", "200-499", "500-1000"}
    assert row["by_length"]["50-99"]["series"] == 1 and row["by_length"]["100-199"]["series"] == 1


def test_the_daily_replay_sends_a_change_found_late_once_when_its_evidence_became_strong():
    """A step of 1.5 noise sd down at run 40 of 90: the shift test first finds it on the
    history up to run 56, 16 runs after it started (outside the 10-run window). It is sent once,
    as new at run 56 (its level's mean became strong at run 55, inside the window), and is
    ongoing after that."""
    x = 100.0 + np.random.default_rng(6).standard_normal(90)
    x[40:] -= 1.5
    s = LabelledSeries("late", x, ((40, "regression"),))
    ts = TestSet("t", alert_filters=AlertFilters(1.0, 2))
    assert online_alerts(ts, s) == [Detected(40, "regression", 56)]
