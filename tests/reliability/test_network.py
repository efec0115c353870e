"""Network faults through a whole ``pal run`` against the fake Jenkins, TLS, and credential hygiene.

Every build of a tiny history is served by ``tests.fakejenkins`` with one fault each: resets,
stalls past the timeout (before and in the body), a slow drip, a short body under a full
Content-Length, 429 + Retry-After, gzip transfer encoding, and one build that answers 500
forever. pal must retry within its limits, report the lost build, finish the run, and never
let the token out: not in a file under the output dir, not on stdout/stderr, not to a host a
redirect points at.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fakejenkins.server import FakeJenkins, Fault
from tests.reliability.record import record
from tests.reliability.runs import JOB, build_files, run_pal, spec_dict, tiny_history, write_spec

USER = "pal-bot"
TOKEN = "tok-3f9c1d7e5a-SECRET-do-not-leak"
ARTIFACT = "{jenkins}/job/{job}/{build}/artifact/output.xml.gz"


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    return tiny_history(tmp_path_factory.mktemp("net") / "data")


def _jenkins_source(url: str, **over) -> dict:
    src = {"name": "jenkins", "type": "jenkins", "url": url, "artifacts": [ARTIFACT], "timeout": 1.0,
           "retries": 2, "workers": 2}
    src.update(over)
    return src


def _all_text(out: Path) -> str:
    chunks = []
    for f in sorted(out.rglob("*")):
        if f.is_file():
            chunks.append(f.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(chunks)


def _leaks(text: str) -> list[str]:
    """Where the token (or its base64 in a Basic header) shows up."""
    import base64

    b64 = base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    return [s for s in (TOKEN, b64, TOKEN[:16]) if s in text]


def test_faults_on_every_build_are_retried_reported_and_the_run_finishes(history, tmp_path):
    numbers = [int(p.parent.name) for p in build_files(history)]
    faults = [Fault.reset(), Fault.stall(3.0), Fault.drip(chunk=512, seconds=0.005), Fault.truncate(0.4),
              Fault.retry_after(1), Fault.gzip_encoding(), Fault.stall_body(3.0), Fault.http(503)]
    with FakeJenkins(history, auth=(USER, TOKEN)) as fj:
        for n, fault in zip(numbers, faults):
            fj.inject(f"/job/{JOB}/{n}/artifact/output.xml.gz", fault)
        lost = numbers[len(faults)]
        fj.inject(f"/job/{JOB}/{lost}/artifact/output.xml.gz", Fault.http(500), times=None)
        spec = write_spec(tmp_path / "spec.yaml", spec_dict(None, tmp_path / "out", sources=[_jenkins_source(fj.url)]))
        r = run_pal("run", "--spec", str(spec), "-v", env={"JENKINS_USER": USER, "JENKINS_TOKEN": TOKEN})
        artifact_requests = fj.count(r"/artifact/")
    assert r.returncode in (0, 2), r.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    errors = [p for p in report["problems"] if p["severity"] == "error"]
    assert [p["item"] for p in errors] == [f"{JOB}/{lost}"], errors
    assert "HTTP 500" in json.dumps(errors)
    assert report["counts"]["builds.stored"] == len(numbers) - 1
    # each faulted build needed one more request; the lost one took 1 + retries (urllib3 status retries)
    assert artifact_requests >= len(numbers) + len(faults)
    assert not _leaks(r.stdout + r.stderr), "token in pal's output"
    assert not _leaks(_all_text(tmp_path / "out")), "token in a file under the output dir"
    record("network faults", "whole run vs fake Jenkins: reset, stall, drip, short body, 429 Retry-After, "
           "gzip encoding, stall in body, 503, permanent 500", "8 builds recovered by retries, the 500 one "
           "reported; run completes; token nowhere in output", inputs=len(numbers), faults=len(faults) + 3,
           lost=0)


def test_credentials_are_not_sent_to_another_host_on_redirect(history, tmp_path):
    seen: list[str | None] = []

    class Catch(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server API)
            seen.append(self.headers.get("Authorization"))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Catch)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        with FakeJenkins(history, auth=(USER, TOKEN)) as fj:
            n = int(build_files(history)[0].parent.name)
            fj.inject(f"/job/{JOB}/{n}/artifact/output.xml.gz",
                      Fault.redirect(f"http://localhost:{other.server_address[1]}/steal"), times=None)
            spec = write_spec(tmp_path / "spec.yaml",
                              spec_dict(None, tmp_path / "out", sources=[_jenkins_source(fj.url)]))
            r = run_pal("run", "--spec", str(spec), env={"JENKINS_USER": USER, "JENKINS_TOKEN": TOKEN})
    finally:
        other.shutdown()
        other.server_close()
    assert r.returncode in (0, 2), r.stderr[-2000:]
    assert seen and all(h is None for h in seen), seen
    assert not _leaks(r.stdout + r.stderr + _all_text(tmp_path / "out"))
    record("network faults", "redirect to another host", "followed without the Authorization header",
           inputs=1, faults=1)


def test_credentials_in_the_url_are_redacted(history, tmp_path):
    """A token written into the source URL (bad practice, but seen) never reaches logs or files."""
    with FakeJenkins(history) as fj:
        url = fj.url.replace("http://", f"http://{USER}:{TOKEN}@")
        n = int(build_files(history)[0].parent.name)
        fj.inject(f"/job/{JOB}/{n}/artifact/output.xml.gz", Fault.http(500), times=None)
        spec = write_spec(tmp_path / "spec.yaml",
                          spec_dict(None, tmp_path / "out", sources=[_jenkins_source(url, retries=0)]))
        r = run_pal("run", "--spec", str(spec), "-v")
    assert r.returncode in (0, 2), r.stderr[-2000:]
    report = (tmp_path / "out" / "report.json").read_text()
    assert f"{JOB}/{n}" in report and "HTTP 500" in report
    leaks = _leaks(r.stdout + r.stderr + _all_text(tmp_path / "out"))
    assert not leaks, leaks
    record("network faults", "token inside the source URL (user:token@host)", "redacted from logs, report, "
           "cache index and site", inputs=1, faults=1)


# --------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    key, cert = d / "key.pem", d / "cert.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"openssl cannot make a self-signed certificate here: {exc}")
    return key, cert


def _tls(fj: FakeJenkins, key: Path, cert: Path) -> str:
    """Wrap the fake's listening socket in TLS (same file descriptor, so its accept loop goes on)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    fj._server.socket = ctx.wrap_socket(fj._server.socket, server_side=True)
    return fj.url.replace("http://", "https://")


@pytest.mark.parametrize("verify", [True, False])
def test_tls_self_signed(history, tmp_path, self_signed, verify):
    key, cert = self_signed
    with FakeJenkins(history, auth=(USER, TOKEN)) as fj:
        url = _tls(fj, key, cert)
        spec = write_spec(tmp_path / "spec.yaml", spec_dict(
            None, tmp_path / "out", sources=[_jenkins_source(url, **{"verify-tls": verify, "retries": 0})]))
        r = run_pal("run", "--spec", str(spec), env={"JENKINS_USER": USER, "JENKINS_TOKEN": TOKEN,
                                                      "REQUESTS_CA_BUNDLE": "", "CURL_CA_BUNDLE": ""})
    out = tmp_path / "out"
    assert not _leaks(r.stdout + r.stderr + (_all_text(out) if out.exists() else ""))
    if verify:
        text = r.stderr + ((out / "report.json").read_text() if (out / "report.json").exists() else "")
        assert re.search(r"TLS error|certificate verify failed|SSLError", text), r.stderr[-2000:]
        assert "verify-tls: false" in text  # the message says what to do
        assert "Traceback" not in r.stderr
        record("network faults", "TLS server with a self-signed certificate, verify-tls on",
               "reported TLS error naming the fix; no traceback", inputs=1, faults=1)
    else:
        assert r.returncode in (0, 2), r.stderr[-2000:]
        report = json.loads((out / "report.json").read_text())
        assert report["counts"]["builds.stored"] == len(build_files(history))
        record("network faults", "TLS server with a self-signed certificate, verify-tls: false",
               "every build fetched", inputs=1)


def test_port_that_refuses_connections(history, tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    spec = write_spec(tmp_path / "spec.yaml", spec_dict(
        None, tmp_path / "out", sources=[_jenkins_source(f"http://127.0.0.1:{port}", retries=1)]))
    r = run_pal("run", "--spec", str(spec), env={"JENKINS_USER": USER, "JENKINS_TOKEN": TOKEN})
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode in (0, 1, 2)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert any(JOB in p["item"] for p in report["problems"]), report
    assert (tmp_path / "out" / "site" / "index.html").exists()
    record("network faults", "Jenkins not listening (connection refused)", "reported; run completes with an "
           "empty site", inputs=1, faults=1)
