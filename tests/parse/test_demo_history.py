"""The demo history (pal.demo, all three dialects): pal reads what the generator wrote, and
agrees with Robot Framework's own reader on tests, statuses and values."""

from __future__ import annotations

import gzip
import math
from datetime import datetime

import pytest
from robot.api import ExecutionResult

from pal.errors import ParseError
from pal.parse import parse_build
from tests.demo.fixtures import demo_small, demo_small_rf3, demo_small_rf4  # noqa: F401
from tests.parse.test_agreement import _expected_value


@pytest.fixture(params=["demo_small", "demo_small_rf4", "demo_small_rf3"])
def history(request):
    return request.getfixturevalue(request.param)


def test_every_readable_build_matches_the_truth(history):
    truth = history.truth
    for job in truth.jobs:
        for i, build in enumerate(job.readable):
            r = parse_build(history.root / job.name / str(build) / "output.xml.gz", job.name, build,
                            rename=truth.renames)
            df = r.samples
            assert sorted(set(df.test_id)) == job.test_ids, (job.name, build)
            assert set(df.metric) <= set(job.metrics)
            assert len(df[df.status == "PASS"]) == len(df.dropna(subset=["value"])) + \
                int(df[df.status == "PASS"].value.isna().sum())
            assert r.meta.passed + r.meta.failed == job.tests
            if i == 0:
                assert r.meta.build_time == datetime.fromisoformat(job.first_time)
            if build == job.readable[-1]:
                assert r.meta.build_time == datetime.fromisoformat(job.last_time)
        for build in job.corrupt:
            with pytest.raises(ParseError, match=rf"\(build {build}\)"):
                parse_build(history.root / job.name / str(build) / "output.xml.gz", job.name, build)


def test_agrees_with_robot_api(history, tmp_path):
    """Every 7th build of each job through both readers: same tests, statuses, messages and values."""
    for job in history.truth.jobs:
        for build in job.readable[::7]:
            path = history.root / job.name / str(build) / "output.xml.gz"
            r = parse_build(path, job.name, build)
            plain = tmp_path / f"{job.name}-{build}.xml"  # the RF API does not read gzip
            plain.write_bytes(gzip.decompress(path.read_bytes()))
            rf = {(t.parent.full_name.lower(), t.name): t
                  for t in ExecutionResult(str(plain), include_keywords=False).suite.all_tests}
            pal_tests = {(row.suite, row.test_name) for row in r.samples.itertuples()}
            assert pal_tests == set(rf)
            for row in r.samples.itertuples():
                t = rf[(row.suite, row.test_name)]
                assert row.status == t.status
                if row.status == "FAIL":
                    assert math.isnan(row.value) and row.message == t.message
                elif row.metric in ("mrr", "ndr", "pdr"):
                    assert row.value == pytest.approx(_expected_value(t.message, row.metric), rel=1e-12)
