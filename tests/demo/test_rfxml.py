"""Generated files are real Robot Framework output in each dialect: RF reads them, rebot renders them."""

from __future__ import annotations

import gzip
import shutil

import pytest
from robot import rebot
from robot.api import ExecutionResult

from pal.demo import generate
from tests.demo.fixtures import demo_small, demo_small_rf3, demo_small_rf4  # noqa: F401
from tests.demo.xmlread import normalised_id, read_build


def _plain(history, job_name, build, tmp_path):
    """Robot reads plain XML only: decompress one build next to the test."""
    src = history.root / job_name / str(build) / "output.xml.gz"
    dst = tmp_path / f"{job_name}-{build}.xml"
    with gzip.open(src) as fh, open(dst, "wb") as out:
        shutil.copyfileobj(fh, out)
    return dst


def _tests(suite):
    yield from suite.tests
    for child in suite.suites:
        yield from _tests(child)


@pytest.fixture(params=["rf7", "rf4", "rf3"])
def history(request, demo_small, demo_small_rf4, demo_small_rf3):
    return {"rf7": demo_small, "rf4": demo_small_rf4, "rf3": demo_small_rf3}[request.param]


def test_robot_reads_every_dialect_with_expected_tests_statuses_tags(history, tmp_path):
    truth = history.truth
    assert truth.dialect in ("rf7", "rf4", "rf3")
    for job in truth.jobs:
        failed_events = [e for e in truth.events_of("failed", job.name) if job.readable[-1] in e.builds]
        result = ExecutionResult(str(_plain(history, job.name, job.readable[-1], tmp_path)))
        tests = list(_tests(result.suite))
        assert len(tests) == job.tests
        ids = {normalised_id(t.full_name, tuple(t.tags)): t for t in tests}
        assert sorted(ids) == job.test_ids  # the last build carries the new names
        failing = {e.test_id for e in failed_events}
        assert failing and {i for i, t in ids.items() if t.status == "FAIL"} == failing
        assert result.suite.status == "FAIL" and result.suite.statistics.failed == len(failing)
        for t in tests:
            assert job.test_type in t.tags and "PERFTEST" in t.tags
            assert sum(1 for tag in t.tags if tag[0].isdigit() and tag.endswith("C") and "T" in tag) == 1
            assert t.setup.name == "Setup Test"
            if t.status == "PASS":
                assert t.message.startswith(("Maximum Receive Rate",) if job.test_type == "MRR" else ("\nNDR_LOWER: ", "\nNDR: "))
        perf = result.suite.suites[0].suites[0]
        assert perf.name == "Perf" and perf.setup.type == "SETUP"
        names = [kw.name for kw in perf.setup.body]
        assert names == ["Setup Framework", "Show Vpp Version On All Duts"]
        assert perf.setup.body[0].body[0].message.startswith("Setup of node TG host 10.30.51.")
        assert perf.setup.body[1].body[0].message.startswith("VPP version: ")
        # The build time is the top suite's end; it lies on the job's last day.
        assert result.suite.end_time.isoformat()[:10] == "2026-11-20"
        assert result.suite.end_time.isoformat() + "Z" == job.last_time
        assert result.suite.end_time > max(t.end_time for t in tests)


def test_suite_path_follows_csit(demo_small, tmp_path):
    job = demo_small.truth.jobs[0]
    result = ExecutionResult(str(_plain(demo_small, job.name, job.readable[0], tmp_path)))
    t = next(_tests(result.suite))
    parts = t.full_name.split(".")
    assert parts[:3] == ["Tests", "Vpp", "Perf"] and len(parts) == 6
    assert parts[4].startswith("2N1L-") and parts[4].endswith("-Mrr")


def test_rebot_writes_log_and_report(history, tmp_path):
    job = history.truth.jobs[2]  # NDRPDR: the longest messages
    src = _plain(history, job.name, job.readable[-1], tmp_path)
    rc = rebot(str(src), outputdir=str(tmp_path), log="log.html", report="report.html", output="NONE",
               statusrc=False, stdout=open(tmp_path / "out.txt", "w"), stderr=open(tmp_path / "err.txt", "w"))
    assert rc == 0, (tmp_path / "err.txt").read_text()
    assert (tmp_path / "log.html").stat().st_size > 10_000 and (tmp_path / "report.html").exists()
    assert (tmp_path / "err.txt").read_text() == ""


def test_dialect_spelling(demo_small, demo_small_rf4, demo_small_rf3):
    def head(h):
        job = h.truth.jobs[0]
        with gzip.open(h.root / job.name / str(job.readable[0]) / "output.xml.gz", "rt") as fh:
            return fh.read()

    rf7, rf4, rf3 = head(demo_small), head(demo_small_rf4), head(demo_small_rf3)
    assert 'schemaversion="5"' in rf7 and '<kw name="Run Keywords" owner="BuiltIn" type="SETUP">' in rf7
    assert '<msg time="2026-' in rf7 and ' elapsed="' in rf7 and "starttime=" not in rf7
    assert 'schemaversion="4"' in rf4 and 'library="BuiltIn" type="SETUP"' in rf4
    assert '<msg timestamp="2026' in rf4 and 'starttime="2026' in rf4 and "<tags>" not in rf4
    assert "schemaversion" not in rf3 and 'type="setup"' in rf3 and "<tags>\n<tag>" in rf3
    assert 'critical="yes"' in rf3 and "<arguments>" in rf3
    # Same seed, same numbers: only the spelling differs.
    job = demo_small.truth.jobs[0]
    b = job.readable[5]
    r7 = read_build(demo_small.root / job.name / str(b) / "output.xml.gz").rows
    r3 = read_build(demo_small_rf3.root / job.name / str(b) / "output.xml.gz").rows
    assert {k: v.message for k, v in r7.items()} == {k: v.message for k, v in r3.items()}


def test_keyword_depth_nests_keyword_trees_in_every_test(tmp_path):
    truth = generate(tmp_path, seed=1, jobs=[ "csit-vpp-perf-mrr-daily-master-3n-alt"], builds=10, tests=2,
                     keyword_depth=3)
    job = truth.jobs[0]
    src = tmp_path / "x.xml"
    with gzip.open(tmp_path / job.name / str(job.readable[0]) / "output.xml.gz") as fh, open(src, "wb") as out:
        shutil.copyfileobj(fh, out)
    tests = list(_tests(ExecutionResult(str(src)).suite))
    assert len(tests) == 2

    def count(kw, depth=1):
        kws = [k for k in kw.body if k.type == "KEYWORD"]
        msgs = [m for m in kw.body if m.type == "MESSAGE"]
        sub = [count(k, depth + 1) for k in kws]
        return 1 + sum(s[0] for s in sub), len(msgs) + sum(s[1] for s in sub), max([depth] + [s[2] for s in sub])

    for t in tests:
        trees = [k for k in t.body if k.type == "KEYWORD"]
        assert len(trees) == 1
        assert count(trees[0]) == (7, 7 * 2 + 4, 3)  # 2**3 - 1 keywords; leaves log one more message
        assert {m.level for k in trees[0].body if k.type == "KEYWORD" for m in k.body if m.type == "MESSAGE"} == {"TRACE"}
