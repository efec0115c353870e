"""Ask Jenkins what started this build, for pa-job.sh.

Freestyle jobs get ``BUILD_CAUSE`` from the EnvInject plugin, but neither they nor pipelines
get the upstream job and build of a ``ReverseBuildTrigger``/``upstream`` trigger as
variables. The build's own JSON API has them, so pa-job.sh asks it once.

Standard library only: it runs before (or without) pal being installed.

Usage: ``python build_cause.py BUILD_URL`` with ``JENKINS_USER``/``JENKINS_TOKEN`` in the
environment (optional, basic auth). Prints one tab-separated line on stdout:
``<trigger>\t<upstream job>\t<upstream build>`` (empty fields when not an upstream cause);
trigger is one of upstream, gerrit, timer, manual, or empty when no cause is known.
Exit 1 (and a message on stderr) when Jenkins cannot be asked.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any, Sequence

# Jenkins cause classes (the ``_class`` of a build's causes) -> pal's --trigger values.
CAUSE_TRIGGERS: dict[str, str] = {
    "hudson.model.Cause$UpstreamCause": "upstream",
    "org.jenkinsci.plugins.workflow.support.steps.build.BuildUpstreamCause": "upstream",
    "hudson.triggers.TimerTrigger$TimerTriggerCause": "timer",
    "com.sonyericsson.hudson.plugins.gerrit.trigger.hudsontrigger.GerritCause": "gerrit",
    "com.sonyericsson.hudson.plugins.gerrit.trigger.hudsontrigger.GerritUserCause": "gerrit",
    "com.sonyericsson.hudson.plugins.gerrit.trigger.hudsontrigger.GerritManualCause": "gerrit",
    "hudson.model.Cause$UserIdCause": "manual",
    "hudson.model.Cause$UserCause": "manual",
}
# When a build has several causes, the most specific one names the run.
PRECEDENCE = ("gerrit", "upstream", "timer", "manual")
TREE = "actions[causes[_class,upstreamProject,upstreamBuild]]"


def causes_url(build_url: str) -> str:
    """The JSON API address listing a build's causes."""
    return build_url.rstrip("/") + "/api/json?tree=" + TREE


def fetch_causes(build_url: str, user: str | None, token: str | None, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The cause objects of one build (all actions' ``causes`` concatenated)."""
    request = urllib.request.Request(causes_url(build_url), headers={"Accept": "application/json"})
    if user and token:
        cred = base64.b64encode(f"{user}:{token}".encode()).decode("ascii")
        request.add_header("Authorization", f"Basic {cred}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = json.load(response)
    found: list[dict[str, Any]] = []
    for action in data.get("actions") or []:
        if isinstance(action, dict):
            found.extend(c for c in action.get("causes") or [] if isinstance(c, dict))
    return found


def classify(causes: Sequence[dict[str, Any]]) -> tuple[str, str, str]:
    """(trigger, upstream job, upstream build) from a build's causes."""
    triggers = {CAUSE_TRIGGERS.get(str(c.get("_class", ""))) for c in causes}
    trigger = next((t for t in PRECEDENCE if t in triggers), "")
    if trigger == "upstream":
        upstream = next(c for c in causes if CAUSE_TRIGGERS.get(str(c.get("_class", ""))) == "upstream")
        project = str(upstream.get("upstreamProject") or "")
        build = upstream.get("upstreamBuild")
        return trigger, project, "" if build is None else str(build)
    return trigger, "", ""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0]:
        print("usage: build_cause.py BUILD_URL", file=sys.stderr)
        return 1
    try:
        causes = fetch_causes(args[0], os.environ.get("JENKINS_USER"), os.environ.get("JENKINS_TOKEN"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"build_cause: cannot read {causes_url(args[0])}: {exc}", file=sys.stderr)
        return 1
    print("\t".join(classify(causes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
