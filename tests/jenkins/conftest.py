"""Fixtures for the Jenkins integration tests: a fake ``pal``, a Jenkins-like environment
for pa-job.sh, and a tiny HTTP server answering a build's causes like Jenkins' JSON API."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
PA_JOB = REPO / "jenkins" / "pa-job.sh"
VENV = Path(sys.prefix)  # the project venv: has pyyaml, like the venv pa-job.sh installs

FAKE_PAL = """#!/bin/sh
# Records its argv (one per line) and the upstream variables, then exits with $FAKE_PAL_RC.
printf '%s\\n' "$@" > "$FAKE_PAL_DIR/argv"
printf 'PAL_UPSTREAM_JOB=%s\\nPAL_UPSTREAM_BUILD=%s\\n' "$PAL_UPSTREAM_JOB" "$PAL_UPSTREAM_BUILD" > "$FAKE_PAL_DIR/env"
# $FAKE_PAL_STDERR: what it logs on stderr; $FAKE_PAL_REPORT: report.json it writes into --out
[ -z "${FAKE_PAL_STDERR:-}" ] || printf '%s\\n' "$FAKE_PAL_STDERR" >&2
[ -z "${FAKE_PAL_REPORT:-}" ] || { mkdir -p "$WORKSPACE/out"; printf '%s\\n' "$FAKE_PAL_REPORT" > "$WORKSPACE/out/report.json"; }
exit "${FAKE_PAL_RC:-0}"
"""


@dataclass
class PaRun:
    """One pa-job.sh run: its exit code, output and what the fake pal saw."""

    returncode: int
    stdout: str
    stderr: str
    workspace: Path
    fake_dir: Path

    @property
    def argv(self) -> list[str] | None:
        f = self.fake_dir / "argv"
        return f.read_text().splitlines() if f.exists() else None

    @property
    def pal_env(self) -> dict[str, str]:
        lines = (self.fake_dir / "env").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)

    @property
    def result(self) -> str:
        return (self.workspace / "pal-result.txt").read_text().strip()

    @property
    def subject(self) -> str:
        return (self.workspace / "pal-email-subject.txt").read_text()

    @property
    def printed_command(self) -> list[str]:
        """The command line pa-job.sh printed, split back into words."""
        line = next(l for l in self.stdout.splitlines() if l.startswith("pa-job: running:"))
        return shlex.split(line[len("pa-job: running:"):])


@dataclass
class PaJob:
    """Runs pa-job.sh in a temporary workspace with a clean, Jenkins-like environment."""

    workspace: Path
    fake_dir: Path
    base_env: dict[str, str] = field(default_factory=dict)

    @property
    def fake_pal(self) -> Path:
        return self.fake_dir / "pal"

    def write_spec(self, regression_result: str | None, path: str = "specs/csit-trending.yaml") -> Path:
        spec = self.workspace / path
        spec.parent.mkdir(parents=True, exist_ok=True)
        text = "name: t\njobs: [{name: csit-vpp-perf-mrr-daily-master-2n-icx}]\n"
        if regression_result is not None:
            text += f"alerts:\n  regression-result: {regression_result}\n"
        spec.write_text(text)
        return spec

    def run(self, pal_rc: int = 0, **env: str) -> PaRun:
        full = dict(self.base_env, FAKE_PAL_RC=str(pal_rc))
        full.update(env)
        p = subprocess.run(["bash", str(PA_JOB)], env=full, cwd=self.workspace,
                           capture_output=True, text=True, timeout=60)
        return PaRun(p.returncode, p.stdout, p.stderr, self.workspace, self.fake_dir)


@pytest.fixture
def pa_job(tmp_path: Path) -> PaJob:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_dir = tmp_path / "fake"
    fake_dir.mkdir()
    (fake_dir / "pal").write_text(FAKE_PAL)
    (fake_dir / "pal").chmod(0o755)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "WORKSPACE": str(ws),
        "PAL_VENV": str(VENV),
        "PAL_SKIP_INSTALL": "1",
        "PAL_BIN": str(fake_dir / "pal"),
        "FAKE_PAL_DIR": str(fake_dir),
        "JOB_NAME": "pal-trending-master",
        "BUILD_NUMBER": "17",
    }
    job = PaJob(ws, fake_dir, env)
    job.write_spec("UNSTABLE")
    return job


@dataclass
class CausesServer:
    """Serves ``/job/<name>/<n>/api/json`` with the given causes; records request headers."""

    causes: list[dict[str, Any]]
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def causes_server() -> Iterator[CausesServer]:
    state = CausesServer(causes=[])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            state.requests.append((self.path, dict(self.headers.items())))
            if "/api/json" not in self.path:
                self.send_error(404)
                return
            body = json.dumps({"_class": "hudson.model.FreeStyleBuild", "actions": [
                {"_class": "hudson.model.ParametersAction"},
                {"_class": "hudson.model.CauseAction", "causes": state.causes},
            ]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
