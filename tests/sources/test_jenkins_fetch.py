"""fetch_builds against a real HTTP fake Jenkins: ordered sources, faults, selection, auth."""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest

from pal.errors import SpecError
from pal.report import RunReport
from pal.sources import fetch_builds
from tests.fakejenkins import FakeJenkins, Fault
from tests.sources.conftest import (JOB, T0, add_builds, jenkins_source, make_spec, output_gz, output_xml,
                                   with_timeout)

ART = "{jenkins}/job/{job}/{build}/artifact/output.xml.gz"
LOGS = "{jenkins}/logs/{job}/{build}/archives/output.xml.gz"
ROBOT = "{jenkins}/job/{job}/{build}/robot/report/*zip*/robot-plugin.zip"
FAST = {"backoff": 0.001}


def art_path(build: int, job: str = JOB) -> str:
    return f"/job/{job}/{build}/artifact/output.xml.gz"


def fetch(tmp_path: Path, spec, report: RunReport | None = None, **kw):
    report = report if report is not None else RunReport()
    files = fetch_builds(spec, tmp_path / "cache", report, **{**FAST, **kw})
    return files, report


def test_all_builds_fetched_with_content_hash_and_no_problems(tmp_path, fake):
    add_builds(fake, JOB, range(1, 6))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1, 2, 3, 4, 5]
    for f in files:
        assert f.source == "jenkins"
        assert f.path == tmp_path / "cache" / JOB / str(f.build) / "output.xml.gz"
        assert gzip.decompress(f.path.read_bytes()) == output_xml(JOB, f.build)
        assert f.sha256 == hashlib.sha256(output_gz(JOB, f.build)).hexdigest()
        assert f.url == fake.url + art_path(f.build)
    assert report.problems == []
    assert report.counts["download.source.jenkins"] == 5
    assert report.counts["download.fetched"] == 5
    assert fake.count("/lastCompletedBuild/buildNumber") == 1


def test_404_on_first_source_then_second_source_has_it(tmp_path, fake):
    add_builds(fake, JOB, range(1, 5))
    fake.inject(art_path(3), Fault.http(404))
    spec = make_spec(tmp_path, [jenkins_source(fake.url, [ART], name="jenkins"),
                                jenkins_source(fake.url, [LOGS], name="logs")])
    files, report = fetch(tmp_path, spec)
    assert {f.build: f.source for f in files} == {1: "jenkins", 2: "jenkins", 3: "logs", 4: "jenkins"}
    assert report.counts["download.source.jenkins"] == 3
    assert report.counts["download.source.logs"] == 1
    assert fake.paths("/logs/") == [f"/logs/{JOB}/3/archives/output.xml.gz"]
    assert report.problems == []  # a 404 that another source covers is not a problem


def test_ordered_templates_within_one_source(tmp_path, fake):
    # build 2 only has its file on the log server layout (archives/), not as a Jenkins artifact
    add_builds(fake, JOB, [1])
    fake.add_build(JOB, 2, timestamp=T0, files={"archives/output.xml.gz": output_gz(JOB, 2)})
    spec = make_spec(tmp_path, [jenkins_source(fake.url, [ART, LOGS])])
    files, report = fetch(tmp_path, spec)
    assert [(f.build, f.url) for f in files] == [
        (1, fake.url + art_path(1)), (2, f"{fake.url}/logs/{JOB}/2/archives/output.xml.gz")]
    assert gzip.decompress(files[1].path.read_bytes()) == output_xml(JOB, 2)


def test_no_source_has_the_build_is_reported_with_urls(tmp_path, fake):
    add_builds(fake, JOB, range(1, 4))
    fake.inject(art_path(2), Fault.http(404))
    fake.inject(f"/logs/{JOB}/2/archives/output.xml.gz", Fault.http(404))
    spec = make_spec(tmp_path, [jenkins_source(fake.url, [ART, LOGS])])
    files, report = fetch(tmp_path, spec)
    assert [f.build for f in files] == [1, 3]
    [p] = report.errors("download")
    assert p.item == f"{JOB}/2"
    assert "no source has this build" in p.message
    assert p.details["urls"] == [fake.url + art_path(2), f"{fake.url}/logs/{JOB}/2/archives/output.xml.gz"]
    assert all("HTTP 404" in e for e in p.details["errors"])
    assert report.counts["download.missing"] == 1


def test_500_then_success_is_retried(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.http(500))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1]
    assert fake.count(art_path(1)) == 2
    assert report.problems == []


def test_500_forever_gives_up_after_retries_and_reports(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.http(500), times=None)
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url, retries=2)]))
    assert files == []
    assert fake.count(art_path(1)) == 3  # the first try and 2 retries
    [p] = report.errors("download")
    assert "HTTP 500" in p.details["errors"][0]
    assert "damaged or unreachable" in p.message


def test_429_with_retry_after_is_retried(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.retry_after(1))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1]
    assert [r.status for r in fake.requests if r.path == art_path(1)] == [429, 200]


def test_stall_past_timeout_is_retried_then_fetched(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.stall(3))
    files, report = fetch(tmp_path, with_timeout(make_spec(tmp_path, [jenkins_source(fake.url, retries=1)]), 0.3))
    assert [f.build for f in files] == [1]
    assert fake.count(art_path(1)) == 2
    assert report.problems == []


def test_stall_forever_is_reported_as_timeout(tmp_path, fake):
    add_builds(fake, JOB, [1, 2])
    fake.inject(art_path(2), Fault.stall(3), times=None)
    files, report = fetch(tmp_path, with_timeout(make_spec(tmp_path, [jenkins_source(fake.url, retries=1)]), 0.3))
    assert [f.build for f in files] == [1]
    [p] = report.errors("download")
    assert p.item == f"{JOB}/2" and "timed out" in p.details["errors"][0]


def test_stall_in_the_middle_of_the_body_is_retried(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.stall_body(3))
    files, report = fetch(tmp_path, with_timeout(make_spec(tmp_path, [jenkins_source(fake.url, retries=1)]), 0.3))
    assert [f.build for f in files] == [1]
    assert gzip.decompress(files[0].path.read_bytes()) == output_xml(JOB, 1)
    assert fake.count(art_path(1)) == 2


def test_truncated_body_once_is_retried(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.truncate(0.5))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1]
    assert gzip.decompress(files[0].path.read_bytes()) == output_xml(JOB, 1)
    assert report.problems == []


def test_truncated_body_always_is_reported_and_leaves_no_partial_file(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.truncate(0.5), times=None)
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url, retries=1)]))
    assert files == []
    [p] = report.errors("download")
    assert "truncated" in p.details["errors"][0]
    assert list((tmp_path / "cache" / JOB / "1").iterdir()) == []


def test_damaged_file_on_server_is_reported_and_next_source_used(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.corrupt(0.6))
    spec = make_spec(tmp_path, [jenkins_source(fake.url, [ART], name="jenkins"),
                                jenkins_source(fake.url, [LOGS], name="logs")])
    files, report = fetch(tmp_path, spec)
    assert [(f.build, f.source) for f in files] == [(1, "logs")]
    [p] = report.problems
    assert p.severity == "warning" and "taken from logs" in p.message
    assert "damaged file: truncated gzip data" in p.details["errors"][0]


def test_html_error_page_with_status_200_is_damaged(tmp_path, fake):
    fake.add_build(JOB, 1, timestamp=T0, files={"output.xml.gz": b"<!DOCTYPE html><html>Log server maintenance</html>"})
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert files == []
    assert "an HTML page" in report.errors("download")[0].details["errors"][0]


def test_redirect_is_followed(tmp_path, fake):
    add_builds(fake, JOB, [1])
    target = f"/logs/{JOB}/1/archives/output.xml.gz"
    fake.inject(art_path(1), Fault.redirect(target))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1]
    assert [(r.path, r.status) for r in fake.requests if "output.xml" in r.path] == [(art_path(1), 302), (target, 200)]
    assert gzip.decompress(files[0].path.read_bytes()) == output_xml(JOB, 1)


def test_gzip_content_encoding_is_decoded_and_named_by_content(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.gzip_encoding())
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    [f] = files
    assert f.path.name == "output.xml"  # plain XML arrived, so it is not called .gz
    assert f.path.read_bytes() == output_xml(JOB, 1)
    assert f.sha256 == hashlib.sha256(output_xml(JOB, 1)).hexdigest()


def test_connection_reset_is_retried(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.reset())
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1]
    assert report.problems == []


def test_slow_drip_within_timeout_completes(tmp_path, fake):
    add_builds(fake, JOB, [1])
    fake.inject(art_path(1), Fault.drip(chunk=16, seconds=0.005))
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert gzip.decompress(files[0].path.read_bytes()) == output_xml(JOB, 1)


def test_robot_plugin_zip_source(tmp_path, fake):
    add_builds(fake, JOB, [1])
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url, [ROBOT])]))
    [f] = files
    assert f.path.name == "robot-plugin.zip"
    with zipfile.ZipFile(f.path) as zf:
        assert zf.read("robot-plugin/output.xml") == output_xml(JOB, 1)


def test_size_limit_aborts_and_reports(tmp_path, fake):
    big = gzip.compress(os.urandom(1_200_000) , mtime=0)  # incompressible: > 1 MB on the wire
    fake.add_build(JOB, 1, timestamp=T0, files={"output.xml.gz": big})
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url, **{"max-size-mb": 1})]))
    assert files == []
    assert "exceeds max-size-mb (1 MB)" in report.errors("download")[0].details["errors"][0]


def test_running_and_aborted_builds_are_skipped_with_reason(tmp_path, fake):
    add_builds(fake, JOB, range(1, 7))
    fake.jobs[JOB][2].result = None  # a concurrent build still running
    fake.jobs[JOB][4].result = "ABORTED"
    fake.jobs[JOB][5].result = None
    fake.jobs[JOB][6].result = None
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == [1, 3]  # lastCompletedBuild = 4 (aborted builds are completed)
    assert {(p.item, p.message, p.severity) for p in report.problems} == {
        (f"{JOB}/2", "skipped: build still running", "warning"),
        (f"{JOB}/4", "skipped: build aborted", "warning"),
    }
    assert report.counts["download.skipped"] == 2
    assert fake.count(r"/artifact/") == 2


def test_last_completed_and_last_successful_resolution(tmp_path, fake):
    add_builds(fake, JOB, range(1, 11))
    fake.jobs[JOB][10].result = None
    fake.jobs[JOB][9].result = "FAILURE"
    files, _ = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert [f.build for f in files] == list(range(1, 10))
    jobs = [{"name": JOB, "end": "lastSuccessfulBuild", "start": 5}]
    files, _ = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)], jobs))
    assert [f.build for f in files] == [5, 6, 7, 8]
    assert fake.count("/lastSuccessfulBuild/buildNumber") == 1


def test_max_builds_and_period(tmp_path, fake):
    add_builds(fake, JOB, range(1, 21))  # build n ran at T0 + n days
    now = T0 + timedelta(days=20, hours=1)
    jobs = [{"name": JOB, "period-days": 10}]
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)], jobs), now=now)
    assert [f.build for f in files] == list(range(11, 21))  # T0+10d is older than now-10d
    assert report.counts["download.older_than_period"] == 10
    jobs = [{"name": JOB, "period-days": 10, "max-builds": 4}]
    files, _ = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)], jobs), now=now)
    assert [f.build for f in files] == [17, 18, 19, 20]
    jobs = [{"name": JOB, "start": 3, "end": 8, "max-builds": 3}]
    files, _ = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)], jobs), now=now)
    assert [f.build for f in files] == [6, 7, 8]
    jobs = [{"name": JOB, "builds": [2, 5, 40]}]
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)], jobs), now=now)
    assert [f.build for f in files] == [2, 5]
    assert [p.item for p in report.errors("download")] == [f"{JOB}/40"]


def test_bad_json_build_list_is_reported_and_other_sources_still_list(tmp_path, fake):
    add_builds(fake, JOB, [1, 2])
    fake.inject(f"/job/{JOB}/api/json", Fault.bad_json())
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]))
    assert files == []
    msgs = [(p.item, p.severity, p.message) for p in report.problems]
    assert msgs[0][0] == JOB and "not valid Jenkins JSON" in msgs[0][2]
    assert msgs[1] == (JOB, "error", "no source lists any build of this job")
    # with a local copy of build 1 listed first, the run still gets it
    local = tmp_path / "local" / JOB / "1"
    local.mkdir(parents=True)
    (local / "output.xml.gz").write_bytes(output_gz(JOB, 1))
    fake.inject(f"/job/{JOB}/api/json", Fault.bad_json())
    spec = make_spec(tmp_path, [{"name": "dir", "type": "local", "path": "local"}, jenkins_source(fake.url)])
    files, report = fetch(tmp_path, spec)
    assert [(f.build, f.source) for f in files] == [(1, "dir")]


def test_more_than_100_builds_are_listed(tmp_path, fake):
    add_builds(fake, JOB, range(1, 131))
    jobs = [{"name": JOB, "start": 1}]
    files, _ = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url, workers=4)], jobs))
    assert len(files) == 130  # Jenkins' `builds` would have stopped at 100


def test_cache_second_run_downloads_only_the_new_build(tmp_path, fake):
    add_builds(fake, JOB, range(1, 181))
    spec = make_spec(tmp_path, [jenkins_source(fake.url, workers=4)], [{"name": JOB, "max-builds": 180}])
    files, report = fetch(tmp_path, spec)
    assert len(files) == 180 and fake.count("/artifact/") == 180
    add_builds(fake, JOB, [181])
    fake.reset_log()
    files2, report2 = fetch(tmp_path, spec)
    assert [f.build for f in files2] == list(range(2, 182))
    assert fake.paths("/artifact/") == [art_path(181)]
    assert report2.counts["download.cached"] == 179
    assert report2.counts["download.fetched"] == 1
    assert report2.counts["download.source.jenkins"] == 180
    assert {f.build: f.sha256 for f in files2 if f.build < 181} == {f.build: f.sha256 for f in files if f.build > 1}


def test_cache_refetches_when_a_build_number_was_reused(tmp_path, fake):
    add_builds(fake, JOB, [1, 2])
    spec = make_spec(tmp_path, [jenkins_source(fake.url)])
    fetch(tmp_path, spec)
    fake.add_build(JOB, 2, timestamp=T0 + timedelta(days=30), files={"output.xml.gz": output_gz("other", 2)})
    fake.reset_log()
    files, _ = fetch(tmp_path, spec)
    assert fake.paths("/artifact/") == [art_path(2)]
    assert gzip.decompress(files[1].path.read_bytes()) == output_xml("other", 2)


def test_cache_refetches_a_deleted_file(tmp_path, fake):
    add_builds(fake, JOB, [1])
    spec = make_spec(tmp_path, [jenkins_source(fake.url)])
    [f] = fetch(tmp_path, spec)[0]
    f.path.unlink()
    fake.reset_log()
    [g] = fetch(tmp_path, spec)[0]
    assert g.path.is_file() and fake.count("/artifact/") == 1


def test_credentials_are_sent_and_never_logged_or_reported(tmp_path):
    token = "tok-9f8e7d6c5b4a-SECRET"
    with FakeJenkins(auth=("pal-bot", token)) as fj:
        add_builds(fj, JOB, [1, 2, 3])
        fj.inject(art_path(2), Fault.http(500), times=None)
        fj.inject(art_path(3), Fault.truncate(0.3), times=None)
        spec = make_spec(tmp_path, [jenkins_source(fj.url, retries=1)])
        logger = logging.getLogger("pal")
        records: list[str] = []
        handler = logging.Handler(logging.DEBUG)
        handler.emit = lambda rec: records.append(rec.getMessage())  # type: ignore[method-assign]
        old_level = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        try:
            env = {"JENKINS_USER": "pal-bot", "JENKINS_TOKEN": token}
            files, report = fetch(tmp_path, spec, env=env)
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
        assert [f.build for f in files] == [1]
        assert all(r.auth is True and r.user == "pal-bot" for r in fj.requests)
        assert len(report.errors("download")) == 2 and records
        text = "\n".join(records) + report.to_json() + repr(files) + (tmp_path / "cache" / "index.json").read_text()
        assert token not in text
        # without credentials the server refuses, and the report says so (without any secret)
        files, report = fetch(tmp_path / "anon", spec, env={})
        assert files == [] and "HTTP 401" in report.problems[0].message


def test_unset_environment_variable_in_url_is_a_spec_error(tmp_path):
    spec = make_spec(tmp_path, [jenkins_source("http://${PAL_TEST_NO_SUCH_VAR}")])
    with pytest.raises(SpecError, match="PAL_TEST_NO_SUCH_VAR"):
        fetch(tmp_path, spec, env={})


def test_url_from_environment_variable(tmp_path, fake):
    add_builds(fake, JOB, [1])
    spec = make_spec(tmp_path, [jenkins_source("http://${PAL_JENKINS_ADDR}")])
    files, _ = fetch(tmp_path, spec, env={"PAL_JENKINS_ADDR": fake.address})
    assert files[0].url == fake.url + art_path(1)


def test_unknown_job_name_is_reported(tmp_path, fake):
    add_builds(fake, JOB, [1])
    files, report = fetch(tmp_path, make_spec(tmp_path, [jenkins_source(fake.url)]), jobs=[JOB, "nope"])
    assert [f.build for f in files] == [1]
    assert [(p.item, p.message) for p in report.problems] == [("nope", "job is not in the spec; nothing fetched for it")]
