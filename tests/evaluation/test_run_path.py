"""What `pal run` alerts on is what `pal evaluate` scores as the "run" path.

A history is written as real Robot Framework-shaped output.xml files (one per build, one MRR
test per labelled series), `pal run` analyses it through download, parse, store, analysis and
alerts, and the alerts it writes to alerts.json are compared with the harness' run path on the
same values: the same changes (first bad build, kind) and, replayed build by build with the
store kept between runs, the same new alerts at the same runs.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
import yaml

from pal.evaluation.datasets import LabelledSeries
from pal.evaluation.harness import online_alerts, run_alertable
from pal.pipeline import RunOptions, run
from pal.spec import AlertFilters, TestSet, Windows, parse_spec

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
SUITE = "2N1L-25Ge2P1Xxv710-Avf-Ethip4-Ip4Base-Mrr"
FIRST_BUILD = 100
NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)


def labelled(seed: int = 7, n_series: int = 24, runs: int = 60) -> list[LabelledSeries]:
    """Series with the hard cases: one-run dips and spikes both ways, 3-6-run excursions that
    revert, small and large steps, noise from 0.5 % to 3 %."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_series):
        level = float(rng.uniform(5e6, 3e7))
        noise = float(rng.uniform(0.005, 0.03))
        shape = np.ones(runs)
        changes = []
        kind = k % 4
        if kind == 0:  # a step, small or large
            at = int(rng.integers(20, runs - 5))
            factor = float(rng.choice([0.97, 0.9, 1.08, 0.75]))
            shape[at:] *= factor
            changes.append((at, "regression" if factor < 1 else "progression"))
        elif kind == 1:  # one-run dips and spikes
            for at in rng.choice(np.arange(5, runs - 2), size=3, replace=False):
                shape[int(at)] *= float(rng.choice([0.55, 1.4]))
        elif kind == 2:  # a reverted excursion of 3 to 6 runs
            at = int(rng.integers(15, runs - 12))
            shape[at:at + int(rng.integers(3, 7))] *= 0.85
        # kind 3: stationary
        values = level * shape * (1 + rng.normal(0, noise, runs))
        values[rng.random(runs) < 0.03] = np.nan  # failed runs
        out.append(LabelledSeries(f"s{k:02d}", values, tuple(changes), 1))
    return out


def _test_xml(name: str, value: float, t: str) -> str:
    if np.isnan(value):
        status = f'<status status="FAIL" starttime="{t}" endtime="{t}">Traffic generator failed</status>'
    else:
        trials = ", ".join(f"{value:.1f}" for _ in range(2))
        status = (f'<status status="PASS" starttime="{t}" endtime="{t}">Maximum Receive Rate trial results in '
                  f'packets per second: [{trials}]</status>')
    return (f'<test id="s1-s1-s1-s1-t{name[1:]}" name="64B-1c-{name}-avf-ethip4-ip4base-mrr" line="90">\n'
            "<tag>1C</tag>\n<tag>2T1C</tag>\n<tag>64B</tag>\n<tag>DRV_AVF</tag>\n<tag>MRR</tag>\n"
            "<tag>NIC_Intel-XXV710</tag>\n" + status + "\n</test>\n")


def write_build(root: Path, series: list[LabelledSeries], run_index: int) -> None:
    """One build's output.xml (RF 6 layout) holding run ``run_index`` of every series."""
    build = FIRST_BUILD + run_index
    date = np.datetime64("2024-01-01") + np.timedelta64(run_index, "D")
    t = str(date).replace("-", "") + " 03:00:00.000"
    end = str(date).replace("-", "") + " 05:00:00.000"
    tests = "".join(_test_xml(s.name, float(s.values[run_index]), t) for s in series)
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n'
           f'<robot generator="Robot 6.0.2" generated="{t}" rpa="false" schemaversion="3">\n'
           '<suite id="s1" name="Tests" source="/w/csit/tests">\n'
           '<suite id="s1-s1" name="Vpp" source="/w/csit/tests/vpp">\n'
           '<suite id="s1-s1-s1" name="Perf" source="/w/csit/tests/vpp/perf">\n'
           f'<suite id="s1-s1-s1-s1" name="{SUITE}" source="/w/csit/tests/vpp/perf/ip4/x.robot">\n'
           '<kw name="Show Vpp Version On All Duts" library="performance_utils" type="SETUP">\n'
           f'<msg timestamp="{t}" level="INFO">VPP Version: 24.02-rc0~{build}-gabc{build}~b{build}</msg>\n'
           f'<status status="PASS" starttime="{t}" endtime="{t}"/>\n</kw>\n'
           + tests +
           f'<status status="PASS" starttime="{t}" endtime="{end}"/>\n</suite>\n'
           f'<status status="PASS" starttime="{t}" endtime="{end}"/>\n</suite>\n'
           f'<status status="PASS" starttime="{t}" endtime="{end}"/>\n</suite>\n'
           f'<status status="PASS" starttime="{t}" endtime="{end}"/>\n</suite>\n</robot>\n')
    d = root / JOB / str(build)
    d.mkdir(parents=True, exist_ok=True)
    (d / "output.xml").write_text(xml, encoding="utf-8")


TEST_SET = TestSet("mrr", alert_filters=AlertFilters(1.0, 2), windows=Windows(10, 5, 180, 180))


def make_spec(tmp: Path, data: Path, windows: Windows) -> object:
    doc = {
        "name": "run-path",
        "jobs": [{"name": JOB, "testbeds": 2}],
        "sources": [{"name": "dir", "type": "local", "path": str(data)}],
        "test-sets": [{"name": "mrr", "metrics": ["mrr"],
                       "alert-filters": {"min-change-pct": 1.0, "confirm-runs": 2},
                       "windows": {"short-term-runs": windows.short_term_runs,
                                   "short-term-runs-single-testbed": windows.short_term_runs_single_testbed,
                                   "long-term-runs": windows.long_term_runs}}],
        "outputs": {"dir": str(tmp / "out"), "exports": []},
        "store": {"path": str(tmp / "store"), "executor": "local", "workers": 1},
        "alerts": {"fail-on": "never"},
    }
    return parse_spec(yaml.safe_dump(doc), base_dir=str(tmp))


def _alerts_json(out: Path) -> list[dict]:
    return json.loads((out / "alerts.json").read_text())["alerts"]


def _name_of(test_id: str) -> str:
    return test_id.rsplit(".", 1)[-1].split("-")[2]


def test_pal_run_alerts_equal_the_evaluated_run_path(tmp_path):
    """Offline: one run over the whole history, every change inside the short-term window."""
    series = labelled()
    runs = len(series[0].values)
    data = tmp_path / "data"
    for i in range(runs):
        write_build(data, series, i)
    windows = Windows(runs, runs, runs + 1, 10_000)
    spec = make_spec(tmp_path, data, windows)
    run(spec, RunOptions(now=NOW))
    got = {(_name_of(a["test_id"]), a["evidence"]["first_bad_build"], a["kind"], a["state"])
           for a in _alerts_json(tmp_path / "out")}
    ts = TestSet("mrr", alert_filters=AlertFilters(1.0, 2), windows=windows)
    want = {(s.name, FIRST_BUILD + c.index, c.kind, c.state) for s in series for c in run_alertable(ts, s)}
    assert got == want
    assert len(got) >= 5 and {k for _, _, k, _ in got} == {"regression", "progression"}
    # the hard cases are in there: dips and excursions produced no alert of their own
    kinds = {s.name: {c.kind for c in run_alertable(ts, s)} for s in series}
    assert any(kinds[s.name] for s in series[0::4])  # steps were alerted


@pytest.mark.slow
def test_daily_pal_runs_send_what_the_online_replay_scores(tmp_path):
    """Online: `pal run` once per new build, the store kept; the alerts first seen as "new"
    are those the harness' daily replay sends, at the same runs."""
    series = labelled(seed=11, n_series=8, runs=36)
    runs = len(series[0].values)
    data = tmp_path / "data"
    start = 12
    for i in range(start):
        write_build(data, series, i)
    spec = make_spec(tmp_path, data, TEST_SET.windows)
    sent: set[tuple[str, int, str, int]] = set()
    for t in range(start, runs):
        write_build(data, series, t)
        run(spec, RunOptions(now=NOW))
        for a in _alerts_json(tmp_path / "out"):
            if a["status"] == "new":
                sent.add((_name_of(a["test_id"]), a["evidence"]["first_bad_build"] - FIRST_BUILD, a["kind"], t))
    want = set()
    for s in series:
        for d in online_alerts(TEST_SET, s, start=start):
            want.add((s.name, d.index, d.kind, d.reported_at))
    assert sent == want and len(sent) >= 2
