"""A local fake Gerrit over real HTTP: the two REST endpoints pal uses, every request recorded."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAGIC = ")]}'\n"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeGerrit:
    """``changes``: commit prefix -> (project, number, full revision). ``refuse``: answer POSTs with this status."""

    changes: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    refuse: int | None = None
    echo: bool = False  # the refusal echoes the request headers (a careless proxy)
    seen: list[Seen] = field(default_factory=list)

    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: object | str) -> None:
                body = (payload if isinstance(payload, str) else MAGIC + json.dumps(payload)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _record(self) -> Seen:
                n = int(self.headers.get("Content-Length") or 0)
                u = urlsplit(self.path)
                s = Seen(self.command, u.path, parse_qs(u.query), dict(self.headers.items()), self.rfile.read(n))
                fake.seen.append(s)
                return s

            def do_GET(self):
                s = self._record()
                q = s.query.get("q", [""])[0]
                if s.path != "/r/changes/" or not q.startswith("commit:"):
                    return self._send(404, "Not found")
                c = q[len("commit:"):]
                found = [{"project": p, "_number": n, "current_revision": rev, "revisions": {rev: {"_number": 1}}}
                         for prefix, (p, n, rev) in fake.changes.items() if rev.startswith(c) or prefix == c]
                self._send(200, found)

            def do_POST(self):
                s = self._record()
                if "Authorization" not in s.headers or not s.path.startswith("/r/a/"):
                    return self._send(401, "Unauthorized")
                if fake.refuse:
                    echoed = f"refused; you sent Authorization: {s.headers['Authorization']}"
                    return self._send(fake.refuse, echoed if fake.echo else "refused")
                self._send(200, {"labels": {}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/r"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
