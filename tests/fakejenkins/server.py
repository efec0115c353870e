"""A real HTTP server on 127.0.0.1 that answers like Jenkins (and a log server) for tests.

Usage::

    with FakeJenkins() as fj:                       # or FakeJenkins(root=demo_dir)
        fj.add_build("job-a", 1, files={"output.xml.gz": gz_bytes})
        fj.add_build("job-a", 2, result=None)       # still running
        fj.inject("/job/job-a/1/artifact/output.xml.gz", Fault.status(500))   # once, then normal
        ... fj.url ...                              # http://127.0.0.1:<port>
        assert fj.count(r"/artifact/") == 1         # the request log

Paths served:

- ``/job/<job>/api/json?tree=builds[...]`` (newest 100, like Jenkins) or ``allBuilds[...]``
- ``/job/<job>/<build>/api/json`` with ``artifacts[].relativePath``
- ``/job/<job>/lastCompletedBuild/buildNumber``, ``/job/<job>/lastSuccessfulBuild/buildNumber``
- ``/job/<job>/<build>/artifact/<relativePath>``
- ``/job/<job>/<build>/robot/report/*zip*/robot-plugin.zip`` (``robot-plugin/output.xml`` inside)
- ``/logs/<job>/<build>/archives/<name>`` (a log server; ``<name>`` looked up in the build's files)

Faults are queued per path (exact path without query, or a compiled regex): each request to a
matching path takes the next queued fault; ``times=None`` makes a fault permanent.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import socket
import struct
import threading
import time
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass(frozen=True)
class Fault:
    """One misbehaviour. Build them with the class methods."""

    kind: str
    status: int = 0
    seconds: float = 0.0
    location: str = ""
    fraction: float = 0.5
    chunk: int = 1024

    @classmethod
    def http(cls, status: int) -> "Fault":
        """Answer with this status and a short HTML body (404, 500, 503, ...)."""
        return cls("status", status=status)

    @classmethod
    def retry_after(cls, seconds: int, status: int = 429) -> "Fault":
        """429 (or 503) with ``Retry-After: seconds``."""
        return cls("retry_after", status=status, seconds=seconds)

    @classmethod
    def stall(cls, seconds: float) -> "Fault":
        """Send nothing for ``seconds`` (past the client's read timeout), then answer normally."""
        return cls("stall", seconds=seconds)

    @classmethod
    def stall_body(cls, seconds: float) -> "Fault":
        """Send headers and half the body, then stall ``seconds`` before the rest."""
        return cls("stall_body", seconds=seconds)

    @classmethod
    def truncate(cls, fraction: float = 0.5) -> "Fault":
        """Announce the full Content-Length, send only ``fraction`` of the body, close."""
        return cls("truncate", fraction=fraction)

    @classmethod
    def corrupt(cls, fraction: float = 0.5) -> "Fault":
        """A complete HTTP transfer of a file cut at ``fraction`` (a damaged artifact on the server)."""
        return cls("corrupt", fraction=fraction)

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> "Fault":
        """Redirect to ``location`` (a path on this server or a full URL)."""
        return cls("redirect", status=status, location=location)

    @classmethod
    def gzip_encoding(cls) -> "Fault":
        """Serve the file (decompressed if it was .gz) with ``Content-Encoding: gzip``."""
        return cls("gzip_encoding")

    @classmethod
    def bad_json(cls) -> "Fault":
        """A 200 answer whose body is not JSON."""
        return cls("bad_json")

    @classmethod
    def reset(cls) -> "Fault":
        """Reset the TCP connection (RST) without answering."""
        return cls("reset")

    @classmethod
    def drip(cls, chunk: int = 1024, seconds: float = 0.01) -> "Fault":
        """Send the body ``chunk`` bytes at a time with a pause between."""
        return cls("drip", chunk=chunk, seconds=seconds)


@dataclass
class FakeBuild:
    number: int
    result: str | None = "SUCCESS"  # None: still running
    timestamp_ms: int = 0
    files: dict[str, bytes | Path] = field(default_factory=dict)  # relativePath -> content or file


@dataclass(frozen=True)
class Request:
    """One logged request. ``auth`` is True/False when credentials were checked, None otherwise."""

    method: str
    path: str
    query: str
    status: int  # 0 while the answer is under way, -1 for a reset connection
    fault: str | None
    auth: bool | None
    user: str | None
    time: float


class FakeJenkins:
    """The server. ``root`` (optional) is a directory ``<job>/<build>/<files>`` served as builds.

    ``auth=(user, token)`` demands HTTP basic auth (401 otherwise); ``latency`` delays every answer.
    """

    def __init__(self, root: Path | None = None, *, auth: tuple[str, str] | None = None,
                 log_prefix: str = "/logs", host: str = "127.0.0.1", port: int = 0, latency: float = 0.0):
        self.latency = latency  # seconds before every answer, like a server across a WAN
        self.jobs: dict[str, dict[int, FakeBuild]] = {}
        self.auth = auth
        self.log_prefix = log_prefix.rstrip("/")
        self.requests: list[Request] = []
        self._faults: list[tuple[str | re.Pattern[str], Fault, int | None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        if root is not None:
            self.load_dir(Path(root))

    # -- content -----------------------------------------------------------------------------
    def add_build(self, job: str, number: int, result: str | None = "SUCCESS", *,
                  timestamp: datetime | None = None, files: dict[str, bytes | Path] | None = None) -> FakeBuild:
        ts = timestamp or datetime(2024, 1, 1, tzinfo=timezone.utc)
        b = FakeBuild(number, result, int(ts.timestamp() * 1000), dict(files or {}))
        with self._lock:
            self.jobs.setdefault(job, {})[number] = b
        return b

    def load_dir(self, root: Path) -> int:
        """Serve ``root/<job>/<build>/**`` as builds (timestamps from file mtimes). Returns builds added."""
        n = 0
        for job_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for build_dir in sorted(p for p in job_dir.iterdir() if p.is_dir() and p.name.isdigit()):
                files = {str(f.relative_to(build_dir)): f for f in sorted(build_dir.rglob("*")) if f.is_file()}
                if not files:
                    continue
                mtime = max(f.stat().st_mtime for f in files.values())
                self.add_build(job_dir.name, int(build_dir.name),
                               timestamp=datetime.fromtimestamp(mtime, tz=timezone.utc), files=files)
                n += 1
        return n

    def inject(self, path: str | re.Pattern[str], *faults: Fault, times: int | None = 1) -> None:
        """Queue ``faults`` for requests to ``path``, each used ``times`` times (None: forever)."""
        with self._lock:
            for f in faults:
                self._faults.append((path, f, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # -- request log -------------------------------------------------------------------------
    def count(self, pattern: str = "", method: str | None = None) -> int:
        """Requests whose path matches the regex ``pattern`` (search), optionally of one method."""
        rx = re.compile(pattern)
        with self._lock:
            return sum(1 for r in self.requests if rx.search(r.path) and (method is None or r.method == method))

    def paths(self, pattern: str = "") -> list[str]:
        rx = re.compile(pattern)
        with self._lock:
            return [r.path for r in self.requests if rx.search(r.path)]

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- life cycle --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``, for a spec URL written as ``http://${PAL_JENKINS_ADDR}``."""
        return self.url.split("://", 1)[1]

    def start(self) -> "FakeJenkins":
        fake = self

        class Handler(_Handler):
            jenkins = fake

        self._server = _Server((self._host, self._port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-jenkins", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes stalled handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeJenkins":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals used by the handler -------------------------------------------------------
    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for i, (pat, fault, times) in enumerate(self._faults):
                hit = pat.search(path) if isinstance(pat, re.Pattern) else pat == path
                if not hit:
                    continue
                if times is not None:
                    if times <= 1:
                        del self._faults[i]
                    else:
                        self._faults[i] = (pat, fault, times - 1)
                return fault
        return None

    def _log(self, req: Request, slot: int | None = None) -> int:
        """Log a request on arrival (so a stalled one is already counted), then update its status."""
        with self._lock:
            if slot is None:
                self.requests.append(req)
                return len(self.requests) - 1
            if slot < len(self.requests) and self.requests[slot].path == req.path:
                self.requests[slot] = req
            return slot


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (timeouts, pooled connections closed) is normal here, not news."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def _read(content: bytes | Path) -> bytes:
    return content.read_bytes() if isinstance(content, Path) else content


class _Handler(BaseHTTPRequestHandler):
    jenkins: FakeJenkins
    protocol_version = "HTTP/1.1"  # keep-alive, as a real server: exercises connection pooling

    def log_message(self, format: str, *args: object) -> None:  # quiet: the request log is the record
        pass

    def do_HEAD(self) -> None:
        self._handle(head=True)

    def do_GET(self) -> None:
        self._handle(head=False)

    # -- dispatch ----------------------------------------------------------------------------
    def _handle(self, head: bool) -> None:
        fj = self.jenkins
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), parts.query
        self._status, self._fault_kind = 0, None
        auth_ok, user = self._check_auth()
        slot = fj._log(Request(self.command, path, query, 0, None, auth_ok, user, time.time()))
        try:
            if auth_ok is False:
                self._send(401, b"unauthorized", "text/plain", extra={"WWW-Authenticate": 'Basic realm="fake"'})
                return
            if fj.latency:
                fj._stop.wait(fj.latency)
            fault = fj._take_fault(path)
            self._fault_kind = fault.kind if fault else None
            if fault is not None and self._pre_fault(fault):
                return
            status, body, ctype = self._route(path, query)
            if fault is not None and body is not None and status == 200:
                self._body_fault(fault, body, ctype, head)
                return
            self._send(status, body if body is not None else b"not found", ctype, head=head)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            fj._log(Request(self.command, path, query, self._status, self._fault_kind, auth_ok, user, time.time()),
                    slot)

    def _check_auth(self) -> tuple[bool | None, str | None]:
        if self.jenkins.auth is None:
            return None, None
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False, None
        try:
            user, _, token = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return False, None
        return (user, token) == self.jenkins.auth, user

    def _pre_fault(self, fault: Fault) -> bool:
        """Faults that replace the answer. True when the request is done."""
        k = fault.kind
        if k == "status":
            self._send(fault.status, f"<html><body>Error {fault.status}</body></html>".encode(), "text/html")
        elif k == "retry_after":
            self._send(fault.status, b"slow down", "text/plain", extra={"Retry-After": str(int(fault.seconds))})
        elif k == "redirect":
            self._send(fault.status, b"", "text/plain", extra={"Location": fault.location})
        elif k == "bad_json":
            self._send(200, b"{\"builds\": [ <html>oops", "application/json")
        elif k == "reset":
            self._status = -1
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif k == "stall":
            self.jenkins._stop.wait(fault.seconds)
            return False
        else:
            return False
        return True

    def _body_fault(self, fault: Fault, body: bytes, ctype: str, head: bool) -> None:
        k = fault.kind
        if k == "gzip_encoding":
            plain = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
            self._send(200, gzip.compress(plain), "application/xml", extra={"Content-Encoding": "gzip"}, head=head)
        elif k == "truncate":
            self._status = 200
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: int(len(body) * fault.fraction)])
            self.wfile.flush()
            self.close_connection = True
        elif k == "corrupt":
            self._send(200, body[: int(len(body) * fault.fraction)], ctype, head=head)
        elif k in ("drip", "stall_body"):
            self._status = 200
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if k == "stall_body":
                half = len(body) // 2
                self.wfile.write(body[:half])
                self.wfile.flush()
                self.jenkins._stop.wait(fault.seconds)
                self.wfile.write(body[half:])
            else:
                for i in range(0, len(body), fault.chunk):
                    self.wfile.write(body[i:i + fault.chunk])
                    self.wfile.flush()
                    if self.jenkins._stop.wait(fault.seconds):
                        break
        else:
            self._send(200, body, ctype, head=head)

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None,
              head: bool = False) -> None:
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    # -- routes ------------------------------------------------------------------------------
    def _route(self, path: str, query: str) -> tuple[int, bytes | None, str]:
        fj = self.jenkins
        if fj.log_prefix and path.startswith(fj.log_prefix + "/"):
            m = re.fullmatch(r"/([^/]+)/(\d+)/archives/(.+)", path[len(fj.log_prefix):])
            b = self._build(m.group(1), int(m.group(2))) if m else None
            if b is None:
                return 404, None, "text/plain"
            name = m.group(3)
            for rel in (f"archives/{name}", name):
                if rel in b.files:
                    return 200, _read(b.files[rel]), _ctype(name)
            return 404, None, "text/plain"
        m = re.fullmatch(r"/job/([^/]+)(/.*)?", path)
        if not m:
            return 404, None, "text/plain"
        job, rest = m.group(1), (m.group(2) or "/").rstrip("/") or "/"
        with fj._lock:
            builds = dict(fj.jobs.get(job, {}))
        if job not in fj.jobs:
            return 404, None, "text/plain"
        if rest == "/api/json":
            return self._job_json(job, builds, query)
        m = re.fullmatch(r"/(lastCompletedBuild|lastSuccessfulBuild)/buildNumber", rest)
        if m:
            ok = [n for n, b in builds.items()
                  if b.result is not None and (m.group(1) == "lastCompletedBuild" or b.result == "SUCCESS")]
            return (200, str(max(ok)).encode(), "text/plain") if ok else (404, None, "text/plain")
        m = re.fullmatch(r"/(\d+)(/.*)?", rest)
        b = builds.get(int(m.group(1))) if m else None
        if b is None:
            return 404, None, "text/plain"
        sub = m.group(2) or "/"
        if sub == "/api/json":
            return 200, json.dumps(self._build_json(job, b)).encode(), "application/json"
        if sub.startswith("/artifact/"):
            rel = sub[len("/artifact/"):]
            return (200, _read(b.files[rel]), _ctype(rel)) if rel in b.files else (404, None, "text/plain")
        if sub == "/robot/report/*zip*/robot-plugin.zip":
            xml = self._output_xml(b)
            if xml is None:
                return 404, None, "text/plain"
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr("robot-plugin/output.xml", xml)
            return 200, buf.getvalue(), "application/zip"
        return 404, None, "text/plain"

    def _build(self, job: str, number: int) -> FakeBuild | None:
        with self.jenkins._lock:
            return self.jenkins.jobs.get(job, {}).get(number)

    @staticmethod
    def _output_xml(b: FakeBuild) -> bytes | None:
        for rel in sorted(b.files, key=lambda r: (not r.rsplit("/", 1)[-1].startswith("output.xml"), r)):
            name = rel.rsplit("/", 1)[-1]
            if name == "output.xml":
                return _read(b.files[rel])
            if name in ("output.xml.gz", "output_info.xml.gz"):
                return gzip.decompress(_read(b.files[rel]))
        return None

    def _build_json(self, job: str, b: FakeBuild) -> dict:
        return {
            "_class": "hudson.model.FreeStyleBuild",
            "number": b.number,
            "result": b.result,
            "building": b.result is None,
            "timestamp": b.timestamp_ms,
            "url": f"{self._base()}/job/{job}/{b.number}/",
            "artifacts": [{"displayPath": r.rsplit("/", 1)[-1], "fileName": r.rsplit("/", 1)[-1],
                           "relativePath": r} for r in sorted(b.files)],
        }

    def _job_json(self, job: str, builds: dict[int, FakeBuild], query: str) -> tuple[int, bytes, str]:
        tree = parse_qs(query).get("tree", [""])[0]
        key = "allBuilds" if tree.startswith("allBuilds") else "builds"
        newest = sorted(builds.values(), key=lambda b: -b.number)
        if key == "builds":
            newest = newest[:100]  # Jenkins caps `builds` at 100
        items = [{"_class": "hudson.model.FreeStyleBuild", "number": b.number, "result": b.result,
                  "timestamp": b.timestamp_ms, "url": f"{self._base()}/job/{job}/{b.number}/"} for b in newest]
        return 200, json.dumps({"_class": "hudson.model.FreeStyleProject", key: items}).encode(), "application/json"

    def _base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"


def _ctype(name: str) -> str:
    if name.endswith(".gz"):
        return "application/gzip"
    if name.endswith(".zip"):
        return "application/zip"
    if name.endswith(".xz"):
        return "application/x-xz"
    return "application/xml"
