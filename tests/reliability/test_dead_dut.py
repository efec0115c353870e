"""A dead DUT (every MRR trial 0.0) is data: ``pal run`` analyses and shows it, never crashes.

Before the fix a single all-zero series ended the whole job in the analyse stage
(``the maximal value is 0.0``): no report.json, no site, no alerts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.record import record
from tests.reliability.runs import DEAD_TESTS, plant_dead, run_pal, spec_dict, tiny_history, write_spec


@pytest.fixture(scope="module")
def dead_run(tmp_path_factory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("dead")
    tiny_history(root / "data")
    plant_dead(root / "data")
    spec = write_spec(root / "spec.yaml", spec_dict(root / "data", root / "out"))
    return root / "out", run_pal("run", "--spec", str(spec))


def test_dead_dut_series_are_analysed_and_shown(dead_run):
    out, r = dead_run
    assert r.returncode == 2, r.stderr[-3000:]  # 2: new regressions (the DUT that died among them)
    assert "Traceback" not in r.stderr
    report = json.loads((out / "report.json").read_text())
    assert not [p for p in report["problems"] if p.get("stage") == "analyse"], report["problems"]
    pages = {p.name for p in (out / "site" / "s").glob("*.html")}
    for name in DEAD_TESTS:
        assert any(f"-{name}-mrr" in p for p in pages), (name, pages)
    alerts = json.loads((out / "alerts.json").read_text())
    alerts = alerts.get("alerts", alerts)
    kinds = {a["test_id"].rsplit("-", 2)[-2]: a["kind"] for a in alerts if "-dead-" in a["test_id"]}
    # values then zeros: a regression to 0; zeros then values: a progression; all zeros: one flat group
    assert kinds == {"last": "regression", "first": "progression"}, kinds
    change = {a["test_id"].rsplit("-", 2)[-2]: a["evidence"]["change_pct"] for a in alerts if "-dead-" in a["test_id"]}
    assert change == {"last": -100.0, "first": None}, change  # from 0 no relative change exists
    record("analysis", "dead DUT: MRR trials all 0.0 in every build / the first half / the second half",
           "analysed and shown; dying is a new regression to 0, coming back a progression; run completes",
           inputs=len(DEAD_TESTS), faults=len(DEAD_TESTS), no_report=0)
