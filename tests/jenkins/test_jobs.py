"""The JJB definitions rendered by the real ``jenkins-jobs test``, checked on the XML."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.jenkins.conftest import PA_JOB, REPO

JJB = Path(sys.executable).parent / "jenkins-jobs"
GERRIT = "com.sonyericsson.hudson.plugins.gerrit.trigger.hudsontrigger"
PA = "pal-trending-master"
TESTBEDS = ["2n-icx", "2n-spr", "3n-icx", "3n-alt", "3n-snr"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ET.Element]:
    """job name -> parsed config.xml, from one ``jenkins-jobs test`` run over jenkins/jobs."""
    tmp = tmp_path_factory.mktemp("jjb")
    ini = tmp / "jenkins.ini"
    ini.write_text("[job_builder]\nignore_cache=True\n\n[jenkins]\nurl=http://127.0.0.1:9\nquery_plugins_info=False\n")
    out = tmp / "out"
    p = subprocess.run([str(JJB), "--conf", str(ini), "-l", "error", "test", str(REPO / "jenkins" / "jobs"),
                        "-o", str(out), "--config-xml"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return {d.name: ET.parse(d / "config.xml").getroot() for d in sorted(out.iterdir())}


def one(root: ET.Element, path: str) -> ET.Element:
    found = root.findall(path)
    assert len(found) == 1, f"{path}: {len(found)} matches"
    return found[0]


def text(root: ET.Element, path: str) -> str:
    return one(root, path).text or ""


def pt_jobs(rendered: dict[str, ET.Element]) -> list[str]:
    return sorted(n for n in rendered if re.match(r"csit-\w+-perf-", n))


def test_jobs_rendered(rendered: dict[str, ET.Element]) -> None:
    assert sorted(rendered) == sorted(
        [PA] + [f"csit-vpp-perf-mrr-daily-master-{t}" for t in TESTBEDS]
        + ["csit-vpp-perf-ndrpdr-weekly-master-2n-icx", "csit-vpp-perf-ndrpdr-weekly-master-3n-icx",
           "csit-dpdk-perf-mrr-weekly-master-2n-icx"])


def test_pa_has_exactly_the_three_triggers(rendered: dict[str, ET.Element]) -> None:
    triggers = [t.tag for t in one(rendered[PA], "triggers")]
    assert triggers == ["jenkins.triggers.ReverseBuildTrigger", f"{GERRIT}.GerritTrigger",
                        "hudson.triggers.TimerTrigger"]


def test_reverse_trigger_watches_every_pt_job(rendered: dict[str, ET.Element]) -> None:
    rev = one(rendered[PA], "triggers/jenkins.triggers.ReverseBuildTrigger")
    upstream = [j.strip() for j in text(rev, "upstreamProjects").split(",")]
    assert len(upstream) == len(set(upstream)) == len(spec_jobs(rendered)) == 8
    # The PA job is triggered by exactly the PT jobs defined next to it.
    assert sorted(upstream) == pt_jobs(rendered)
    assert "csit-vpp-perf-mrr-daily-master-2n-icx" in upstream
    # Any completed PT build (failed tests are analysed and reported too).
    assert text(rev, "threshold/name") == "FAILURE"
    assert text(rev, "threshold/completeBuild") == "true"


def spec_jobs(rendered: dict[str, ET.Element]) -> list[str]:
    """The jobs of the spec the PA job runs by default (its PAL_SPEC parameter)."""
    from pal.spec import load_spec

    params = one(rendered[PA], "properties/hudson.model.ParametersDefinitionProperty/parameterDefinitions")
    spec = next(text(p, "defaultValue") for p in params if text(p, "name") == "PAL_SPEC")
    return [j.name for j in load_spec(REPO / spec).jobs]


def test_upstream_jobs_are_the_jobs_of_the_spec(rendered: dict[str, ET.Element]) -> None:
    """One list of analysed jobs: a PT job not in the trigger never starts an analysis, an extra
    one starts useless runs. On failure, paste the expected list into jobs/pal-pa.yaml."""
    rev = one(rendered[PA], "triggers/jenkins.triggers.ReverseBuildTrigger")
    upstream = [j.strip() for j in text(rev, "upstreamProjects").split(",")]
    expected = spec_jobs(rendered)
    assert upstream == expected, "upstream-jobs: >-\n" + ",\n".join(expected)


def test_timer_trigger(rendered: dict[str, ET.Element]) -> None:
    assert text(rendered[PA], "triggers/hudson.triggers.TimerTrigger/spec") == "H 2 * * *"


def test_gerrit_comment_trigger(rendered: dict[str, ET.Element]) -> None:
    g = one(rendered[PA], f"triggers/{GERRIT}.GerritTrigger")
    events = one(g, "triggerOnEvents")
    assert [e.tag for e in events] == [f"{GERRIT}.events.PluginCommentAddedContainsEvent"]
    regex = text(events, f"{GERRIT}.events.PluginCommentAddedContainsEvent/commentAddedCommentContains")
    # Java and Python agree on this regex; Gerrit sends "Patch Set N:" then the comment.
    assert re.search(regex, "Patch Set 3:\n\nrun-trending")
    assert re.search(regex, "Patch Set 3: Code-Review+1\n\n  run-trending  \n\nthanks")
    assert not re.search(regex, "Patch Set 3:\n\nplease do not run-trending yet")
    assert not re.search(regex, "Patch Set 3:\n\nrun-trending-weekly")
    project = one(g, f"gerritProjects/{GERRIT}.data.GerritProject")
    assert (text(project, "compareType"), text(project, "pattern")) == ("PLAIN", "csit")
    assert text(project, f"branches/{GERRIT}.data.Branch/pattern") == "master"
    # Never votes or comments on the change.
    assert text(g, "silentMode") == "true"
    assert text(g, "silentStartMode") == "true"
    assert {e.tag: e.text for e in one(g, "skipVote")} == {
        "onSuccessful": "true", "onFailed": "true", "onUnstable": "true", "onNotBuilt": "true", "onAborted": "true"}
    assert text(g, "serverName") == "Primary"


def test_builder_calls_pa_job_with_matching_unstable_return(rendered: dict[str, ET.Element]) -> None:
    shell = one(rendered[PA], "builders/hudson.tasks.Shell")
    command = text(shell, "command")
    assert re.search(r"^PAL_UNSTABLE_RETURN=3 exec \./jenkins/pa-job\.sh$", command, re.M)
    assert text(shell, "unstableReturn") == "3"
    assert PA_JOB.relative_to(REPO).as_posix() == "jenkins/pa-job.sh"


def test_parameters(rendered: dict[str, ET.Element]) -> None:
    params = one(rendered[PA], "properties/hudson.model.ParametersDefinitionProperty/parameterDefinitions")
    by_name = {text(p, "name"): p for p in params}
    assert text(by_name["PAL_SPEC"], "defaultValue") == "specs/csit-trending.yaml"
    assert [s.text for s in by_name["PAL_EXECUTOR"].iter("string")] == ["local", "dask"]
    assert text(by_name["PAL_FULL"], "defaultValue") == "false"
    assert text(by_name["GERRIT_REFSPEC"], "defaultValue") == "refs/heads/master"


def test_api_credentials_are_bound(rendered: dict[str, ET.Element]) -> None:
    b = one(rendered[PA], "buildWrappers/org.jenkinsci.plugins.credentialsbinding.impl.SecretBuildWrapper/"
                          "bindings/org.jenkinsci.plugins.credentialsbinding.impl.UsernamePasswordMultiBinding")
    assert (text(b, "usernameVariable"), text(b, "passwordVariable")) == ("JENKINS_USER", "JENKINS_TOKEN")
    timeout = one(rendered[PA], "buildWrappers/hudson.plugins.build__timeout.BuildTimeoutWrapper")
    assert text(timeout, "strategy/timeoutMinutes") == "360"


def test_archives_the_outputs(rendered: dict[str, ET.Element]) -> None:
    arch = one(rendered[PA], "publishers/hudson.tasks.ArtifactArchiver")
    patterns = [p.strip() for p in text(arch, "artifacts").split(",")]
    assert patterns == ["out/site/**", "out/alerts/*.txt", "out/alerts.json", "out/junit.xml",
                        "out/exports/**", "out/report.json", "pal-result.txt"]
    assert text(arch, "allowEmptyArchive") == "true"  # a failed run still archives what exists


def test_publishes_site_and_junit(rendered: dict[str, ET.Element]) -> None:
    html = one(rendered[PA], "publishers/htmlpublisher.HtmlPublisher/reportTargets/htmlpublisher.HtmlPublisherTarget")
    assert (text(html, "reportName"), text(html, "reportDir"), text(html, "reportFiles")) == (
        "Performance trending", "out/site", "index.html")
    assert text(html, "keepAll") == "true"
    junit = one(rendered[PA], "publishers/hudson.tasks.junit.JUnitResultArchiver")
    assert text(junit, "testResults") == "out/junit.xml"
    assert text(junit, "allowEmptyResults") == "true"


def test_mails_the_alert_files(rendered: dict[str, ET.Element]) -> None:
    mail = one(rendered[PA], "publishers/hudson.plugins.emailext.ExtendedEmailPublisher")
    assert text(mail, "recipientList") == "csit-report@lists.fd.io"
    assert text(mail, "defaultSubject") == '${FILE,path="pal-email-subject.txt"}'
    body = text(mail, "defaultContent")
    files = re.findall(r'\$\{FILE,path="([^"]+)"\}', body)
    assert files == ["out/alerts/trending-regressions.txt", "out/alerts/trending-progressions.txt",
                     "out/alerts/trending-failed-tests.txt"]
    assert text(mail, "attachmentsPattern") == "out/alerts/*.txt"
    assert text(mail, "contentType") == "text/plain"
    # One mail per build, whatever the result.
    assert [t.tag.rsplit(".", 1)[-1] for t in one(mail, "configuredTriggers")] == ["AlwaysTrigger"]


def test_files_named_in_the_job_are_the_ones_pa_job_writes() -> None:
    script = PA_JOB.read_text()
    assert '"$WORKSPACE/pal-result.txt"' in script
    assert '"$WORKSPACE/pal-email-subject.txt"' in script
    assert 'PAL_OUT="${PAL_OUT:-$WORKSPACE/out}"' in script
    for name in ("trending-regressions.txt", "trending-progressions.txt", "trending-failed-tests.txt"):
        assert name in script


def test_pt_jobs_archive_gzipped_results(rendered: dict[str, ET.Element]) -> None:
    for name in pt_jobs(rendered):
        job = rendered[name]
        assert text(job, "publishers/hudson.tasks.ArtifactArchiver/artifacts") == "archives/*.xml.gz"
        assert text(job, "assignedNode") == "csit-" + name.split("-master-")[1]
    assert text(rendered["csit-vpp-perf-mrr-daily-master-3n-alt"], "triggers/hudson.triggers.TimerTrigger/spec") \
        == "H 22 * * 0-4"
    assert text(rendered["csit-vpp-perf-ndrpdr-weekly-master-3n-icx"], "triggers/hudson.triggers.TimerTrigger/spec") \
        == "H 0 * * 6"


ROBOT_SUITE = """*** Test Cases ***
64B-1c-ethip4-ip4base-mrr
    [Tags]    MRR    64B    1C    2T1C
    Log    Maximum Receive Rate trial results in packets per second: [1.0, 2.0]    level=DEBUG
    Pass Execution    Maximum Receive Rate trial results in packets per second: [1.0, 2.0]
"""


@pytest.mark.skipif(shutil.which("gzip") is None, reason="gzip not installed")
def test_pt_builder_produces_the_archives_pal_reads(rendered: dict[str, ET.Element], tmp_path: Path) -> None:
    """Run the example PT builder on a real (tiny) Robot Framework output.xml."""
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    (tmp_path / "suite.robot").write_text(ROBOT_SUITE)
    subprocess.run([str(bin_dir / "robot"), "--output", "output.xml", "--log", "NONE", "--report", "NONE",
                    "--loglevel", "DEBUG", "suite.robot"], cwd=tmp_path, env=env, check=True, capture_output=True)
    command = text(rendered["csit-vpp-perf-mrr-daily-master-2n-icx"], "builders/hudson.tasks.Shell/command")
    p = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in (tmp_path / "archives").iterdir()) == ["output.xml.gz", "output_info.xml.gz"]
    full = ET.fromstring(gzip.decompress((tmp_path / "archives" / "output.xml.gz").read_bytes()))
    info = ET.fromstring(gzip.decompress((tmp_path / "archives" / "output_info.xml.gz").read_bytes()))
    assert full.tag == info.tag == "robot"
    levels = lambda root: {m.get("level") for m in root.iter("msg")}  # noqa: E731
    assert "DEBUG" in levels(full) and "DEBUG" not in levels(info)  # the INFO-level copy
    status = info.find(".//test/status")
    assert status is not None and "packets per second: [1.0, 2.0]" in (status.text or "")
