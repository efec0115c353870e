"""jenkins/build_cause.py: Jenkins cause classes to pal triggers."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.jenkins.conftest import REPO

SCRIPT = REPO / "jenkins" / "build_cause.py"
_spec = importlib.util.spec_from_file_location("build_cause", SCRIPT)
build_cause = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_cause)  # type: ignore[union-attr]

UPSTREAM = {"_class": "hudson.model.Cause$UpstreamCause", "upstreamProject": "csit-vpp-perf-mrr-daily-master-2n-icx",
            "upstreamBuild": 77}
TIMER = {"_class": "hudson.triggers.TimerTrigger$TimerTriggerCause"}
USER = {"_class": "hudson.model.Cause$UserIdCause", "userId": "admin"}
GERRIT = {"_class": "com.sonyericsson.hudson.plugins.gerrit.trigger.hudsontrigger.GerritCause"}


@pytest.mark.parametrize(("causes", "expected"), [
    ([UPSTREAM], ("upstream", "csit-vpp-perf-mrr-daily-master-2n-icx", "77")),
    ([TIMER], ("timer", "", "")),
    ([USER], ("manual", "", "")),
    ([GERRIT], ("gerrit", "", "")),
    ([USER, UPSTREAM], ("upstream", "csit-vpp-perf-mrr-daily-master-2n-icx", "77")),  # specific beats manual
    ([TIMER, GERRIT], ("gerrit", "", "")),
    ([{"_class": "hudson.model.Cause$RemoteCause"}], ("", "", "")),
    ([], ("", "", "")),
    ([{"_class": "hudson.model.Cause$UpstreamCause", "upstreamProject": "folder/pt-job"}], ("upstream", "folder/pt-job", "")),
])
def test_classify(causes: list[dict], expected: tuple[str, str, str]) -> None:
    assert build_cause.classify(causes) == expected


def test_command_line_against_a_server(causes_server) -> None:
    causes_server.causes = [TIMER, UPSTREAM]
    p = subprocess.run([sys.executable, str(SCRIPT), causes_server.url + "/job/pa/3"], capture_output=True,
                       text=True, env={"PATH": "/usr/bin:/bin"}, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "upstream\tcsit-vpp-perf-mrr-daily-master-2n-icx\t77\n"
    (path, headers), = causes_server.requests
    assert path == "/job/pa/3/api/json?tree=" + build_cause.TREE
    assert "Authorization" not in headers


def test_command_line_error_exit() -> None:
    p = subprocess.run([sys.executable, str(SCRIPT), "http://127.0.0.1:9/job/pa/3/"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 1
    assert p.stdout == ""
    assert "cannot read http://127.0.0.1:9/job/pa/3/api/json" in p.stderr
