"""``make demo-jenkins``: serve the demo history from a local fake Jenkins and run pal against it.

    python -m tests.fakejenkins.run_demo --data demo-data --spec specs/demo-jenkins.yaml [--faults]

The spec names its server as ``http://${PAL_JENKINS_ADDR}``; this sets that variable to the
fake's 127.0.0.1:<port>. It runs ``pal run`` when that command exists, else ``pal download``
(``--command`` chooses). ``--faults`` makes the server misbehave on a few builds (a 404 that
the log server covers, a 500 that a retry covers, one build no source has) so the ordered
sources and the run report can be seen at work.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from pathlib import Path

from tests.fakejenkins.server import FakeJenkins, Fault

log = logging.getLogger("pal")


def plant_faults(fj: FakeJenkins) -> list[str]:
    """A few misbehaving builds per the newest job listed; returns what was planted, for the log."""
    planted = []
    for job in sorted(fj.jobs):
        builds = sorted(n for n, b in fj.jobs[job].items() if b.result is not None)
        if len(builds) < 4:
            continue
        a, b, c = builds[-2], builds[-3], builds[-4]
        fj.inject(f"/job/{job}/{a}/artifact/output.xml.gz", Fault.http(404), times=None)
        fj.inject(re.compile(rf"^/job/{re.escape(job)}/{a}/robot/"), Fault.http(404), times=None)
        fj.inject(f"/job/{job}/{b}/artifact/output.xml.gz", Fault.http(500))
        fj.inject(re.compile(rf"^(/job/{re.escape(job)}|/logs/{re.escape(job)})/{c}/"), Fault.http(404), times=None)
        planted.append(f"{job}: #{a} only on the log server, #{b} one HTTP 500, #{c} nowhere")
    return planted


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="run_demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="the demo history, <job>/<build>/output.xml.gz")
    p.add_argument("--spec", type=Path, required=True)
    p.add_argument("--command", choices=["auto", "run", "download"], default="auto")
    p.add_argument("--faults", action="store_true", help="plant a few faults to show the fallbacks")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)

    from pal import cli, commands

    if not args.data.is_dir():
        print(f"run_demo: {args.data} is not a directory (make demo-data first)", file=sys.stderr)
        return 1
    command = args.command
    if command == "auto":
        command = "run" if hasattr(commands, "cmd_run") else "download"
    with FakeJenkins(args.data, port=args.port) as fj:
        n = sum(len(b) for b in fj.jobs.values())
        print(f"run_demo: fake Jenkins at {fj.url} serving {n} builds of {len(fj.jobs)} jobs; pal {command}",
              file=sys.stderr)
        if args.faults:
            for line in plant_faults(fj):
                print(f"run_demo: planted: {line}", file=sys.stderr)
        old = os.environ.get("PAL_JENKINS_ADDR")
        os.environ["PAL_JENKINS_ADDR"] = fj.address
        try:
            rc = cli.main([command, "--spec", str(args.spec)])
        finally:
            if old is None:
                os.environ.pop("PAL_JENKINS_ADDR", None)
            else:
                os.environ["PAL_JENKINS_ADDR"] = old
        print(f"run_demo: the server answered {len(fj.requests)} requests", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
