"""pal's streaming parser agrees with Robot Framework's own reader (robot.api.ExecutionResult).

Over a multi-build RF 7 history made by Robot Framework itself and over the hand-written
RF 3.x / RF 6 files: the same tests, statuses, messages and build times, and values equal
to what the RF-read message holds (computed here independently of pal's message parsers).
"""

from __future__ import annotations

import ast
import math
import statistics
from datetime import timezone

import pytest
from robot.api import ExecutionResult

from pal.parse import parse_build
from tests.parse.conftest import MRR_JOB


def _rf_tests(path):
    result = ExecutionResult(str(path), include_keywords=False)
    tests = {(t.parent.full_name.lower(), t.name): t for t in result.suite.all_tests}
    return result, tests


def _expected_value(message: str, metric: str) -> float:
    if message.startswith("MaxReceivedRate_Results"):  # 2018: rx / seconds
        secs = float(message.split("pkts/", 1)[1].split("sec", 1)[0])
        return float(message.rsplit("rx ", 1)[1]) / secs
    if metric in ("mrr", "cps"):
        return statistics.fmean(ast.literal_eval(message[message.index("["):message.index("]") + 1]))
    key = {"ndr": "NDR_LOWER:", "pdr": "PDR_LOWER:", "soak": "PLRsearch lower bound:"}[metric]
    if key not in message and metric in ("ndr", "pdr"):  # MLRsearch v7 (2023-10): "\nNDR: <f> pps, ..."
        key = "\n" + metric.upper() + ":"
    return float(message.split(key, 1)[1].split()[0])


def _check(path, job, build, skip_ambiguous=False):
    result, rf = _rf_tests(path)
    r = parse_build(path, job, build)
    df = r.samples
    got = {(row.suite, row.test_name) for row in df.itertuples()}
    ran = {k for k, t in rf.items() if t.status in ("PASS", "FAIL")}
    assert got <= ran
    for row in df.itertuples():
        t = rf[(row.suite, row.test_name)]
        if not (skip_ambiguous and row.message.startswith("ambiguous")):
            assert row.status == t.status, row.test_id
        if row.status == "FAIL":
            assert math.isnan(row.value) and t.message in row.message
        elif row.metric in ("mrr", "cps", "ndr", "pdr", "soak") and not math.isnan(row.value):
            assert row.value == pytest.approx(_expected_value(t.message, row.metric), rel=1e-12)
    top = result.suite
    assert r.meta.build_time == top.end_time.replace(tzinfo=timezone.utc)
    assert r.meta.start_time == top.start_time.replace(tzinfo=timezone.utc)
    assert r.meta.duration_s == pytest.approx(top.elapsed_time.total_seconds(), abs=1e-3)
    return r, rf


def test_rf7_history_agrees(rf7_history):
    per_build = {}
    for build, path in rf7_history.items():
        r, rf = _check(path, MRR_JOB, build)
        # every perf test RF read appears in pal's samples
        assert {k for k in rf} == {(row.suite, row.test_name) for row in r.samples.itertuples()}
        stats = ExecutionResult(str(path)).statistics.total
        assert (r.meta.passed, r.meta.failed) == (stats.passed, stats.failed)
        per_build[build] = r.samples
    # the same test ids in every build; statuses of the alternating test follow the build parity
    ids = [set(df.test_id) for df in per_build.values()]
    assert ids[0] == ids[1] == ids[2]
    alt = {b: df[df.test_id.str.endswith("64b-4t2c-ethip4-ip4base-mrr")].status.item() for b, df in per_build.items()}
    assert alt == {1: "FAIL", 2: "PASS", 3: "FAIL"}


def test_rf3_agrees(data_dir):
    _check(data_dir / "rf3_output.xml", "csit-vpp-perf-ndrpdr-weekly-master-3n-hsw", 12)


def test_rf6_agrees(data_dir):
    _check(data_dir / "rf6_output.xml", MRR_JOB, 40, skip_ambiguous=True)
