"""A local static HTTP server for browser tests, optionally with Jenkins' CSP header."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path
from typing import Iterator

#: what Jenkins sends with archived HTML reports (blocks scripts and inline styles)
JENKINS_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'self';"

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    csp: str | None = None

    def end_headers(self) -> None:
        if self.csp:
            self.send_header("Content-Security-Policy", self.csp)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


@contextlib.contextmanager
def serve(directory: Path, csp: str | None = None) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port); yields the base URL."""
    handler = type("Handler", (_Handler,), {"csp": csp})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
