"""pa-job.sh run with Jenkins-like environments and a fake pal that records its argv."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from tests.jenkins.conftest import PaJob

UPSTREAM = "hudson.model.Cause$UpstreamCause"
TIMER = "hudson.triggers.TimerTrigger$TimerTriggerCause"


def expected_argv(job: PaJob, trigger: str, *extra: str) -> list[str]:
    return ["run", "--spec", "specs/csit-trending.yaml", "--out", str(job.workspace / "out"),
            "--trigger", trigger, *extra]


# --- the four triggers -----------------------------------------------------------------------


def test_timer_trigger(pa_job: PaJob) -> None:
    r = pa_job.run(BUILD_CAUSE="TIMERTRIGGER")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "timer")
    # The printed command line is the one that ran, word for word.
    assert r.printed_command == [str(pa_job.fake_pal), *r.argv]
    assert r.result == "SUCCESS"
    assert r.subject == "Performance trending: no new regressions"


def test_upstream_trigger_with_upstream_variables(pa_job: PaJob) -> None:
    r = pa_job.run(BUILD_CAUSE="UPSTREAMTRIGGER", UPSTREAM_JOB_NAME="csit-vpp-perf-mrr-daily-master-3n-alt",
                   UPSTREAM_BUILD_NUMBER="412", BUILD_URL="http://127.0.0.1:9/never-asked/")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "upstream", "--upstream", "csit-vpp-perf-mrr-daily-master-3n-alt#412")
    assert r.pal_env == {"PAL_UPSTREAM_JOB": "csit-vpp-perf-mrr-daily-master-3n-alt", "PAL_UPSTREAM_BUILD": "412"}
    assert "trigger: upstream (upstream csit-vpp-perf-mrr-daily-master-3n-alt #412)" in r.stdout


def test_upstream_job_and_build_read_from_the_jenkins_api(pa_job: PaJob, causes_server) -> None:
    # EnvInject says UPSTREAMTRIGGER but not which build: the build's causes name it.
    causes_server.causes = [{"_class": UPSTREAM, "upstreamProject": "csit-vpp-perf-mrr-daily-master-2n-icx",
                             "upstreamBuild": 1234, "upstreamUrl": "job/csit-vpp-perf-mrr-daily-master-2n-icx/"}]
    r = pa_job.run(BUILD_CAUSE="UPSTREAMTRIGGER", BUILD_URL=causes_server.url + "/job/pal-trending-master/17/",
                   JENKINS_USER="pal-bot", JENKINS_TOKEN="s3cret")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "upstream", "--upstream", "csit-vpp-perf-mrr-daily-master-2n-icx#1234")
    assert r.pal_env == {"PAL_UPSTREAM_JOB": "csit-vpp-perf-mrr-daily-master-2n-icx", "PAL_UPSTREAM_BUILD": "1234"}
    (path, headers), = causes_server.requests
    assert path.startswith("/job/pal-trending-master/17/api/json?tree=actions")
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"pal-bot:s3cret").decode()
    assert "s3cret" not in r.stdout + r.stderr


def test_pipeline_build_without_envinject_takes_the_trigger_from_the_api(pa_job: PaJob, causes_server) -> None:
    causes_server.causes = [{"_class": TIMER, "shortDescription": "Started by timer"}]
    r = pa_job.run(BUILD_URL=causes_server.url + "/job/pal-trending-master/18/")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "timer")


def test_unreachable_jenkins_api_falls_back_to_manual(pa_job: PaJob) -> None:
    r = pa_job.run(BUILD_URL="http://127.0.0.1:9/job/x/1/")  # port 9: connection refused
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "manual")
    assert "could not read the build causes" in r.stdout


def test_gerrit_comment_trigger_without_fetch(pa_job: PaJob) -> None:
    r = pa_job.run(BUILD_CAUSE="GERRITCAUSE", GERRIT_EVENT_TYPE="comment-added", GERRIT_PROJECT="csit",
                   GERRIT_BRANCH="master", GERRIT_CHANGE_NUMBER="40123", GERRIT_PATCHSET_NUMBER="3",
                   GERRIT_REFSPEC="refs/changes/23/40123/3", PAL_GERRIT_FETCH="0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "gerrit")
    assert "gerrit: change 40123 patch set 3 (csit master)" in r.stdout
    assert "fetch disabled" in r.stdout


@pytest.mark.parametrize("env", [{"BUILD_CAUSE": "MANUALTRIGGER"}, {}, {"ROOT_BUILD_CAUSE": "MANUALTRIGGER"}])
def test_manual_trigger(pa_job: PaJob, env: dict[str, str]) -> None:
    r = pa_job.run(**env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.argv == expected_argv(pa_job, "manual")


def test_build_cause_takes_precedence_over_root_cause(pa_job: PaJob) -> None:
    # A PT build started by the timer triggered this PA build: the PA trigger is upstream.
    r = pa_job.run(BUILD_CAUSE="UPSTREAMTRIGGER", ROOT_BUILD_CAUSE="TIMERTRIGGER",
                   UPSTREAM_JOB_NAME="csit-vpp-perf-mrr-daily-master-2n-icx", UPSTREAM_BUILD_NUMBER="5")
    assert r.argv == expected_argv(pa_job, "upstream", "--upstream", "csit-vpp-perf-mrr-daily-master-2n-icx#5")


def test_job_parameters_become_options(pa_job: PaJob) -> None:
    r = pa_job.run(BUILD_CAUSE="MANUALTRIGGER", PAL_SPEC="specs/other.yaml", PAL_EXECUTOR="dask",
                   PAL_SCHEDULER="tcp://10.0.0.5:8786", PAL_WORKERS="8", PAL_FULL="true",
                   PAL_OUT=str(pa_job.workspace / "elsewhere"))
    assert r.argv == ["run", "--spec", "specs/other.yaml", "--out", str(pa_job.workspace / "elsewhere"),
                      "--trigger", "manual", "--executor", "dask", "--scheduler", "tcp://10.0.0.5:8786",
                      "--workers", "8", "--full"]
    r = pa_job.run(BUILD_CAUSE="MANUALTRIGGER", PAL_FULL="false")
    assert "--full" not in r.argv


def test_unknown_forced_trigger_is_a_failure_and_pal_does_not_run(pa_job: PaJob) -> None:
    r = pa_job.run(PAL_TRIGGER="cron")
    assert r.returncode == 1
    assert r.argv is None
    assert r.result == "FAILURE"
    assert "unknown trigger 'cron'" in r.stdout
    # The mail still goes out, saying what happened.
    assert r.subject == "Performance trending: analysis failed (build 17)"
    body = (pa_job.workspace / "out" / "alerts" / "trending-regressions.txt").read_text()
    assert "(exit code 1)" in body


# --- exit codes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("pal_rc", "regression_result", "exit_code", "result"), [
    (0, "UNSTABLE", 0, "SUCCESS"),
    (0, "FAILURE", 0, "SUCCESS"),
    (2, "UNSTABLE", 3, "UNSTABLE"),
    (2, "FAILURE", 1, "FAILURE"),
    (2, None, 1, "FAILURE"),         # key absent: pal's default is FAILURE
    (2, "BOGUS", 1, "FAILURE"),      # unreadable value: never silently UNSTABLE
    (1, "UNSTABLE", 1, "FAILURE"),
    (130, "UNSTABLE", 1, "FAILURE"),  # interrupted
    (3, "UNSTABLE", 1, "FAILURE"),   # a pal exit code 3 is not "unstable"
])
def test_exit_code_mapping(pa_job: PaJob, pal_rc: int, regression_result: str | None,
                           exit_code: int, result: str) -> None:
    pa_job.write_spec(regression_result)
    r = pa_job.run(pal_rc=pal_rc, BUILD_CAUSE="TIMERTRIGGER")
    assert (r.returncode, r.result) == (exit_code, result), r.stdout + r.stderr
    assert f"pal exit code {pal_rc} -> {result}" in r.stdout


def test_unstable_return_code_is_configurable(pa_job: PaJob) -> None:
    r = pa_job.run(pal_rc=2, BUILD_CAUSE="TIMERTRIGGER", PAL_UNSTABLE_RETURN="5")
    assert (r.returncode, r.result) == (5, "UNSTABLE")


def test_missing_spec_with_regressions_is_a_failure(pa_job: PaJob) -> None:
    r = pa_job.run(pal_rc=2, BUILD_CAUSE="TIMERTRIGGER", PAL_SPEC="specs/missing.yaml")
    assert (r.returncode, r.result) == (1, "FAILURE")


# --- mail subject and bodies ---------------------------------------------------------------------


def test_regression_subject_names_the_jobs_with_regressions(pa_job: PaJob) -> None:
    alerts = pa_job.workspace / "out" / "alerts"
    alerts.mkdir(parents=True)
    (alerts / "regressions-csit-vpp-perf-mrr-daily-master-2n-icx.txt").write_text(
        "64b-2t1c-ethip4-ip4base-mrr   xxv710   64B   21.7   1  -4.2\n")
    (alerts / "regressions-csit-vpp-perf-mrr-daily-master-3n-alt.txt").write_text("No regressions\n")
    (alerts / "regressions-csit-vpp-perf-mrr-daily-master-2n-spr.txt").write_text("")
    (alerts / "regressions-csit-vpp-perf-ndrpdr-weekly-master-2n-icx.txt").write_text("\nx  y  64B  1.0  2  -9.9\n")
    r = pa_job.run(pal_rc=2, BUILD_CAUSE="TIMERTRIGGER")
    assert r.subject == ("Performance trending: regressions in csit-vpp-perf-mrr-daily-master-2n-icx, "
                         "csit-vpp-perf-ndrpdr-weekly-master-2n-icx")


def test_regression_subject_without_per_job_files_names_the_upstream_job(pa_job: PaJob) -> None:
    r = pa_job.run(pal_rc=2, UPSTREAM_JOB_NAME="csit-vpp-perf-mrr-daily-master-3n-alt", UPSTREAM_BUILD_NUMBER="9")
    assert r.subject == "Performance trending: regressions in csit-vpp-perf-mrr-daily-master-3n-alt"


def _stale_outputs(out: Path) -> list[Path]:
    """What an earlier, successful run left in the workspace's out/ (the workspace is kept)."""
    files = {
        "site/index.html": "<td>64b-2t1c-ethip4-ip4base-mrr</td><td>-12.5 %</td>",
        "site/series/x.html": "old graph",
        "alerts/trending-regressions.txt": "OLD: 64b-2t1c-ethip4-ip4base-mrr -12.5 %",
        "alerts/trending-failed-tests.txt": "OLD: 3 tests failed",
        "alerts/regressions-csit-vpp-perf-mrr-daily-master-2n-icx.txt": "OLD regression",
        "alerts.json": "[]", "junit.xml": "<testsuites/>", "exports/series.csv": "old,csv",
        "report.json": '{"counts": {}, "problems": []}',
    }
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    return [out / name for name in files]


def test_failed_run_publishes_what_failed_and_no_stale_results(pa_job: PaJob) -> None:
    out = pa_job.workspace / "out"
    stale = _stale_outputs(out)
    (out / "cache").mkdir()
    (out / "cache" / "kept.gz").write_text("downloads are not results")
    error = "error: download: csit-vpp-perf-mrr-daily-master-2n-icx: no build of this job from any source <&>"
    r = pa_job.run(pal_rc=1, BUILD_CAUSE="TIMERTRIGGER", BUILD_URL="", PAL_CAUSE_LOOKUP="0",
                   FAKE_PAL_STDERR=f"pal run: spec t\n{error}\npal: 1 jobs; exit 1")
    assert (r.returncode, r.result) == (1, "FAILURE")
    assert r.subject == "Performance trending: analysis failed (build 17)"
    assert error in r.stderr  # pal's log still reaches the console
    # nothing of the earlier run is left to archive, mail, or show
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "alerts/trending-failed-tests.txt", "alerts/trending-progressions.txt", "alerts/trending-regressions.txt",
        "cache/kept.gz", "site/index.html"]
    body = (out / "alerts" / "trending-regressions.txt").read_text()
    assert body.startswith("ERROR: The build number 17 of the job pal-trending-master failed (exit code 1).")
    assert f"What failed:\n{error}\n" in body and "OLD" not in body
    assert (out / "alerts" / "trending-progressions.txt").read_text() == body
    assert (out / "alerts" / "trending-failed-tests.txt").read_text() == body
    page = (out / "site" / "index.html").read_text()
    assert "analysis failed" in page and "-12.5" not in page
    assert "no build of this job from any source &lt;&amp;&gt;" in page and "<&>" not in page
    assert not any(p.exists() for p in stale if p.name in ("alerts.json", "junit.xml", "report.json", "x.html"))


def test_failed_run_keeps_the_report_pal_wrote_in_this_run(pa_job: PaJob) -> None:
    out = pa_job.workspace / "out"
    _stale_outputs(out)
    report = '{"counts": {}, "problems": [{"stage": "download", "details": {"fatal": true}}]}'
    r = pa_job.run(pal_rc=1, BUILD_CAUSE="TIMERTRIGGER", FAKE_PAL_REPORT=report)
    assert r.result == "FAILURE"
    assert (out / "report.json").read_text() == report + "\n"
    # a crash without a report: the earlier run's report.json is not archived as this one's
    r = pa_job.run(pal_rc=1, BUILD_CAUSE="TIMERTRIGGER")
    assert not (out / "report.json").exists()


def test_early_failure_says_which_step_failed_and_clears_old_results(pa_job: PaJob) -> None:
    out = pa_job.workspace / "out"
    _stale_outputs(out)
    r = pa_job.run(BUILD_CAUSE="TIMERTRIGGER", PAL_TRIGGER="cron")
    assert (r.returncode, r.result, r.argv) == (1, "FAILURE", None)
    body = (out / "alerts" / "trending-regressions.txt").read_text()
    assert "What failed:\nunknown trigger 'cron' (expected upstream, gerrit, timer or manual)\n" in body
    assert "unknown trigger 'cron'" in (out / "site" / "index.html").read_text()
    assert not (out / "alerts.json").exists() and not (out / "exports").exists()


def test_successful_run_keeps_what_pal_wrote(pa_job: PaJob) -> None:
    out = pa_job.workspace / "out"
    stale = _stale_outputs(out)
    r = pa_job.run(pal_rc=0, BUILD_CAUSE="TIMERTRIGGER")
    assert r.result == "SUCCESS"
    # pal rewrites these itself (the fake does not); only report.json is cleared before a run
    assert [p.exists() for p in stale] == [True] * (len(stale) - 1) + [False]


# --- pinned installs ------------------------------------------------------------------------------

FAKE_PYTHON = """#!/bin/sh
# A venv python that records pip's argv instead of installing.
printf '%s\\n' "$@" > "$FAKE_PAL_DIR/pip-argv"
"""


def test_install_is_pinned_by_the_constraints_file(pa_job: PaJob, tmp_path: Path) -> None:
    from tests.jenkins.conftest import REPO

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(FAKE_PYTHON)
    (venv / "bin" / "python").chmod(0o755)
    r = pa_job.run(BUILD_CAUSE="TIMERTRIGGER", PAL_VENV=str(venv), PAL_SKIP_INSTALL="0")
    assert r.returncode == 0, r.stdout + r.stderr
    argv = (pa_job.fake_dir / "pip-argv").read_text().splitlines()
    assert argv == ["-m", "pip", "install", "--quiet", "--upgrade", "-c", str(REPO / "constraints.txt"), str(REPO)]
    r = pa_job.run(BUILD_CAUSE="TIMERTRIGGER", PAL_VENV=str(venv), PAL_SKIP_INSTALL="0",
                   PAL_CONSTRAINTS=str(tmp_path / "none.txt"))
    assert (r.returncode, r.result) == (1, "FAILURE")
    assert "dependencies are only installed pinned" in (pa_job.workspace / "out" / "site" / "index.html").read_text()


# --- gerrit: the spec of the change under review --------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                               "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.fixture
def gerrit_change(pa_job: PaJob, tmp_path: Path) -> tuple[Path, str]:
    """A 'Gerrit' repository whose master says FAILURE and whose change says UNSTABLE; the
    workspace is a clone at master. Returns (remote, change revision)."""
    remote = tmp_path / "gerrit"
    remote.mkdir()
    _git(remote, "init", "-q", "-b", "master")
    spec = remote / "specs" / "csit-trending.yaml"
    spec.parent.mkdir()
    spec.write_text("name: t\nalerts:\n  regression-result: FAILURE\n")
    _git(remote, "add", ".")
    _git(remote, "commit", "-q", "-m", "spec")
    spec.write_text("name: t\nalerts:\n  regression-result: UNSTABLE\n")
    _git(remote, "commit", "-q", "-am", "change under review")
    revision = _git(remote, "rev-parse", "HEAD")
    _git(remote, "update-ref", "refs/changes/45/12345/2", revision)
    _git(remote, "reset", "-q", "--hard", "HEAD~1")
    ws = pa_job.workspace
    for p in ws.iterdir():
        p.unlink() if p.is_file() else None
    (ws / "specs" / "csit-trending.yaml").unlink()
    (ws / "specs").rmdir()
    _git(ws, "clone", "-q", str(remote), ".")
    return remote, revision


def test_gerrit_run_fetches_and_analyses_the_change(pa_job: PaJob, gerrit_change: tuple[Path, str]) -> None:
    remote, revision = gerrit_change
    ws = pa_job.workspace
    assert "FAILURE" in (ws / "specs" / "csit-trending.yaml").read_text()
    r = pa_job.run(pal_rc=2, GERRIT_EVENT_TYPE="comment-added", GERRIT_REFSPEC="refs/changes/45/12345/2",
                   GERRIT_PATCHSET_REVISION=revision, PAL_GERRIT_REMOTE=str(remote))
    assert r.returncode == 3, r.stdout + r.stderr
    assert _git(ws, "rev-parse", "HEAD") == revision
    assert f"gerrit: checked out {revision}" in r.stdout
    # The change's spec decided: UNSTABLE, where master's would have been FAILURE.
    assert r.result == "UNSTABLE"
    assert r.argv == expected_argv(pa_job, "gerrit")


def test_gerrit_run_does_not_fetch_what_is_already_checked_out(pa_job: PaJob,
                                                              gerrit_change: tuple[Path, str]) -> None:
    ws = pa_job.workspace
    head = _git(ws, "rev-parse", "HEAD")
    r = pa_job.run(GERRIT_EVENT_TYPE="comment-added", GERRIT_REFSPEC="refs/changes/45/12345/2",
                   GERRIT_PATCHSET_REVISION=head, PAL_GERRIT_REMOTE=str(ws / "no-such-remote"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "already checked out" in r.stdout
    assert _git(ws, "rev-parse", "HEAD") == head


def test_gerrit_fetch_failure_is_a_failure(pa_job: PaJob, gerrit_change: tuple[Path, str]) -> None:
    r = pa_job.run(GERRIT_EVENT_TYPE="comment-added", GERRIT_REFSPEC="refs/changes/99/99999/1",
                   PAL_GERRIT_REMOTE=str(gerrit_change[0]))
    assert r.returncode == 1
    assert r.result == "FAILURE"
    assert r.argv is None


# --- the virtualenv -------------------------------------------------------------------------------


def test_creates_the_venv_when_missing(pa_job: PaJob, tmp_path: Path) -> None:
    venv = tmp_path / "new-venv"
    r = pa_job.run(BUILD_CAUSE="TIMERTRIGGER", PAL_VENV=str(venv))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (venv / "bin" / "python").exists()
    assert f"creating virtualenv {venv}" in r.stdout
    assert r.argv == expected_argv(pa_job, "timer")
