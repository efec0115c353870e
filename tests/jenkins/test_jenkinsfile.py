"""The Jenkinsfile, checked as text (no Jenkins here): same triggers, script and publishers
as the JJB job, and no logic beyond mapping the result pa-job.sh wrote."""

from __future__ import annotations

import re

import pytest

from tests.jenkins.conftest import REPO

JENKINSFILE = REPO / "jenkins" / "Jenkinsfile"


@pytest.fixture(scope="module")
def source() -> str:
    # Drop // comments so the checks see code only.
    return "\n".join(re.sub(r"^\s*//.*$", "", line) for line in JENKINSFILE.read_text().splitlines())


def block(source: str, name: str) -> str:
    """The text between the braces of the first ``name {`` block."""
    start = re.search(rf"\b{name}\s*\{{", source)
    assert start, f"no {name} block"
    depth, i = 1, start.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
    return source[start.end():i - 1]


def groovy_string(s: str) -> str:
    """A single-quoted Groovy string's value (only \\\\ and \\' escapes are used here)."""
    return s.replace("\\\\", "\\").replace("\\'", "'")


def test_braces_balance(source: str) -> None:
    assert source.count("{") == source.count("}")
    assert source.count("(") == source.count(")")
    assert source.count("[") == source.count("]")


def test_upstream_trigger_matches_the_jjb_job(source: str) -> None:
    triggers = block(source, "triggers")
    m = re.search(r"upstream\(upstreamProjects:\s*'([^']+)',\s*threshold:\s*hudson\.model\.Result\.(\w+)\)", triggers)
    assert m, triggers
    jobs = [j.strip() for j in m.group(1).split(",")]
    jjb = (REPO / "jenkins" / "jobs" / "pal-pa.yaml").read_text()
    jjb_jobs = re.findall(r"^\s+(csit-\w+-perf-[\w-]+),?$", jjb, re.M)
    assert jobs == jjb_jobs and len(jobs) == 8
    assert m.group(2) == "FAILURE"


def test_upstream_trigger_is_the_jobs_of_the_spec(source: str) -> None:
    """The pipeline analyses the spec named by its PAL_SPEC default: its trigger list is that spec's jobs."""
    from pal.spec import load_spec

    spec = re.search(r"string\(name: 'PAL_SPEC', defaultValue: '([^']+)'", source)
    assert spec, "no PAL_SPEC parameter"
    m = re.search(r"upstream\(upstreamProjects:\s*'([^']+)'", block(source, "triggers"))
    assert m
    expected = [j.name for j in load_spec(REPO / spec.group(1)).jobs]
    assert [j.strip() for j in m.group(1).split(",")] == expected, ", ".join(expected)


def test_cron_trigger(source: str) -> None:
    assert re.search(r"\bcron\('H 2 \* \* \*'\)", block(source, "triggers"))


def test_gerrit_trigger(source: str) -> None:
    triggers = block(source, "triggers")
    g = triggers[triggers.index("gerrit("):]
    regex = groovy_string(re.search(r"commentAddedContains\(commentAddedCommentContains:\s*'((?:[^'\\]|\\.)*)'\)",
                                    g).group(1))
    assert regex == r"(?m)^\s*run-trending\s*$"
    assert re.search(regex, "Patch Set 2:\n\nrun-trending")
    assert "pattern: 'csit'" in g and "pattern: 'master'" in g
    assert "silentMode: true" in g
    assert re.search(r"skipVote:\s*\[onSuccessful: true, onFailed: true, onUnstable: true, onNotBuilt: true", g)


def test_the_one_stage_calls_the_script(source: str) -> None:
    stages = block(source, "stages")
    assert re.findall(r"stage\('([^']+)'\)", stages) == ["PA"]
    assert re.findall(r"sh\(script: '([^']+)'", stages) == ["./jenkins/pa-job.sh"]
    assert "returnStatus: true" in stages
    assert "usernameVariable: 'JENKINS_USER'" in stages and "passwordVariable: 'JENKINS_TOKEN'" in stages


def test_result_comes_from_pal_result_txt(source: str) -> None:
    post = block(source, "post")
    assert "readFile('pal-result.txt').trim()" in post
    assert "currentBuild.result = result" in post
    # No trigger or exit-code logic in Groovy: that is pa-job.sh's.
    assert "BUILD_CAUSE" not in source and "getBuildCauses" not in source
    assert not re.search(r"\b(rc|status)\s*==", source)


def test_publishers(source: str) -> None:
    post = block(source, "always")
    assert "archiveArtifacts(artifacts: 'out/site/**, out/alerts/*.txt, out/alerts.json, out/junit.xml, " \
           "out/exports/**, out/report.json, pal-result.txt'" in post
    assert re.search(r"publishHTML\(target: \[reportName: 'Performance trending', reportDir: 'out/site', "
                     r"reportFiles: 'index.html'", post)
    assert "junit(testResults: 'out/junit.xml', allowEmptyResults: true)" in post
    assert "subject: '${FILE,path=\"pal-email-subject.txt\"}'" in post
    assert re.findall(r'\$\{FILE,path="(out/alerts/[^"]+)"\}', post) == [
        "out/alerts/trending-regressions.txt", "out/alerts/trending-progressions.txt",
        "out/alerts/trending-failed-tests.txt"]
    assert "attachmentsPattern: 'out/alerts/*.txt'" in post
