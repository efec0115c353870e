"""The fake Jenkins answers in the real API shapes, and its faults and log behave as documented."""

from __future__ import annotations

import io
import json
import re
import zipfile
from datetime import datetime, timezone

import pytest
import requests

from tests.fakejenkins import FakeJenkins, Fault

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
XML = b"<robot></robot>"


@pytest.fixture
def fj():
    with FakeJenkins() as server:
        for n in range(1, 121):
            server.add_build(JOB, n, timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc),
                             files={"output.xml": XML, "archives/output_info.xml.gz": b"\x1f\x8bzz"})
        yield server


def test_job_json_caps_builds_at_100_like_jenkins_but_not_all_builds(fj):
    r = requests.get(f"{fj.url}/job/{JOB}/api/json", params={"tree": "builds[number,result,timestamp,url]"})
    builds = r.json()["builds"]
    assert len(builds) == 100 and builds[0]["number"] == 120 and builds[-1]["number"] == 21
    assert builds[0] == {"_class": "hudson.model.FreeStyleBuild", "number": 120, "result": "SUCCESS",
                         "timestamp": 1704067200000, "url": f"{fj.url}/job/{JOB}/120/"}
    r = requests.get(f"{fj.url}/job/{JOB}/api/json", params={"tree": "allBuilds[number,result]"})
    assert len(r.json()["allBuilds"]) == 120


def test_build_json_aliases_artifacts_and_log_server(fj):
    fj.jobs[JOB][120].result = None
    fj.jobs[JOB][119].result = "FAILURE"
    get = lambda p: requests.get(fj.url + p)  # noqa: E731
    assert get(f"/job/{JOB}/lastCompletedBuild/buildNumber").text == "119"
    assert get(f"/job/{JOB}/lastSuccessfulBuild/buildNumber").text == "118"
    data = get(f"/job/{JOB}/7/api/json").json()
    assert [a["relativePath"] for a in data["artifacts"]] == ["archives/output_info.xml.gz", "output.xml"]
    assert (data["number"], data["result"], data["building"]) == (7, "SUCCESS", False)
    assert get(f"/job/{JOB}/7/artifact/output.xml").content == XML
    assert get(f"/logs/{JOB}/7/archives/output_info.xml.gz").content == b"\x1f\x8bzz"
    with zipfile.ZipFile(io.BytesIO(get(f"/job/{JOB}/7/robot/report/*zip*/robot-plugin.zip").content)) as zf:
        assert zf.read("robot-plugin/output.xml") == XML
    assert [get(p).status_code for p in (f"/job/{JOB}/999/api/json", "/job/nope/api/json",
                                         f"/job/{JOB}/7/artifact/nope")] == [404, 404, 404]


def test_faults_are_queued_per_path_and_logged(fj):
    path = f"/job/{JOB}/1/artifact/output.xml"
    fj.inject(path, Fault.http(503), Fault.http(500))
    fj.inject(re.compile(r"/api/json$"), Fault.bad_json(), times=2)
    codes = [requests.get(fj.url + path).status_code for _ in range(3)]
    assert codes == [503, 500, 200]
    bodies = [requests.get(f"{fj.url}/job/{JOB}/api/json").text for _ in range(3)]
    with pytest.raises(json.JSONDecodeError):
        json.loads(bodies[0])
    assert bodies[0] == bodies[1] and "builds" in json.loads(bodies[2])
    assert [(r.status, r.fault) for r in fj.requests[:3]] == [(503, "status"), (500, "status"), (200, None)]
    assert fj.count(r"/artifact/") == 3 and fj.count("/api/json", method="GET") == 3


def test_basic_auth_is_checked(tmp_path):
    with FakeJenkins(auth=("u", "t")) as server:
        server.add_build(JOB, 1, files={"output.xml": XML})
        assert requests.get(f"{server.url}/job/{JOB}/1/artifact/output.xml").status_code == 401
        assert requests.get(f"{server.url}/job/{JOB}/1/artifact/output.xml", auth=("u", "x")).status_code == 401
        assert requests.get(f"{server.url}/job/{JOB}/1/artifact/output.xml", auth=("u", "t")).content == XML
        assert [(r.auth, r.user) for r in server.requests] == [(False, None), (False, "u"), (True, "u")]


def test_load_dir_serves_a_demo_layout(tmp_path):
    (tmp_path / JOB / "3").mkdir(parents=True)
    (tmp_path / JOB / "3" / "output.xml.gz").write_bytes(b"\x1f\x8bdata")
    (tmp_path / JOB / "empty").mkdir()
    with FakeJenkins(tmp_path) as server:
        assert sorted(server.jobs[JOB]) == [3]
        assert requests.get(f"{server.url}/job/{JOB}/3/artifact/output.xml.gz").content == b"\x1f\x8bdata"
