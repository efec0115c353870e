"""A real local HTTP server that misbehaves on purpose, one behaviour per path.

``/drip/<n>``: a 200 with Content-Length n, then one byte every ``drip_s`` seconds;
``/drip-headers``: the status line itself one byte every ``drip_s`` seconds; ``/stall``:
headers, then nothing; ``/reset``: half a body, then a TCP reset; ``/loop``: a 301 to itself;
``/short/<name>``: a Content-Length twice the body; ``/long/<name>``: a Content-Length half
the body; ``/file/<name>``: the named payload as is; ``/enc/<name>``: the payload gzip'd again
with ``Content-Encoding: gzip``; ``/enc2/<name>``: with ``Content-Encoding: gzip, gzip``.
Every request is counted per path.
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class HostileServer:
    def __init__(self, payloads: dict[str, bytes] | None = None, drip_s: float = 2.0):
        self.payloads = dict(payloads or {})
        self.drip_s = drip_s
        self.hits: Counter[str] = Counter()
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                owner.hits[self.path.split("/")[1]] += 1
                try:
                    owner._answer(self)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "HostileServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _wait(self, seconds: float) -> bool:
        return not self.stop.wait(seconds)

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        parts = h.path.split("/")
        kind, arg = parts[1], (parts[2] if len(parts) > 2 else "")
        w = h.wfile
        if kind == "drip":
            n = int(arg or 1000)
            w.write(f"HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n".encode())
            w.flush()
            for _ in range(n):
                if not self._wait(self.drip_s):
                    return
                w.write(b"<")
                w.flush()
        elif kind == "drip-headers":
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n<":
                w.write(bytes([b]))
                w.flush()
                if not self._wait(self.drip_s):
                    return
        elif kind == "stall":
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<x")
            w.flush()
            self._wait(60)
        elif kind == "reset":
            body = self.payloads[arg]
            w.write(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[: len(body) // 2])
            w.flush()
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            h.close_connection = True
        elif kind == "loop":
            w.write(b"HTTP/1.1 301 Moved Permanently\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n")
        elif kind in ("short", "long"):
            body = self.payloads[arg]
            n = len(body) * 2 if kind == "short" else len(body) // 2
            w.write(f"HTTP/1.1 200 OK\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n".encode() + body)
            w.flush()
            h.close_connection = True
        elif kind in ("file", "enc", "enc2"):
            body = self.payloads[arg]
            extra = ""
            if kind != "file":
                body = gzip.compress(body, 1)
                extra = "Content-Encoding: gzip\r\n" if kind == "enc" else "Content-Encoding: gzip, gzip\r\n"
            w.write(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body)
        else:
            w.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        w.flush()
