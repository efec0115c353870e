"""HTTP plumbing for remote sources: a pooled, retrying session and a safe streaming download.

Why this shape: a Jenkins or log server drops connections and answers 5xx or 429 under load,
so connection errors, read timeouts and those statuses are retried with exponential backoff
(urllib3 ``Retry``, which honours ``Retry-After``, capped). A body that breaks mid-way is
retried here, since urllib3 retries only up to the response headers. Bytes are streamed to a
temporary file in the destination directory, hashed and container-checked in the same pass,
and only a complete, checked file is renamed into place (``os.replace`` is atomic), so a
crash or a damaged transfer never leaves a file that looks good.

Bounds, because a server can be hostile or broken: every file has a total deadline for all
its attempts (``HttpOptions.deadline``: once a request is sent, a watchdog shuts the socket
down when it passes, so a server dripping one byte per second cannot hold a download past it;
a connection attempt is bounded by the smaller of the timeout and the time left); a redirect counts against ``retries`` (a 301 loop costs ``retries + 1``
requests); a ``Content-Encoding`` (gzip or deflate, nothing else) is decoded here in bounded
steps, and the container check caps what the file decompresses to.
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.retry import Retry

from pal.sources.integrity import OUT_CHUNK, SUFFIXES, ContainerCheck, IntegrityError

log = logging.getLogger("pal")

RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRY_AFTER_MAX_S = 120.0  # a server asking for more than this is treated as asking for this
CHUNK = 1 << 16


@dataclass(frozen=True)
class HttpOptions:
    """Per-source transfer settings (from SourceSpec, plus the backoff factor)."""

    timeout: float = 30.0  # seconds, for connect and for each read
    deadline: float = 900.0  # seconds for one file: connect, headers, whole body, retries included
    retries: int = 3
    backoff: float = 0.5  # seconds; the n-th retry waits backoff * 2**(n-1)
    verify_tls: bool = True
    max_bytes: int = 2048 << 20
    pool: int = 4


class FetchFailed(Exception):
    """One URL did not yield a good file. ``missing`` is True when the server says it has none."""

    def __init__(self, url: str, message: str, missing: bool = False):
        self.url = redact(url)
        self.missing = missing
        super().__init__(f"{self.url}: {message}")
        self.message = message


@dataclass(frozen=True)
class Downloaded:
    path: Path
    sha256: str
    size: int
    kind: str  # gzip | xz | zip | xml
    etag: str | None
    last_modified: str | None


def redact(url: str) -> str:
    """The URL without any user:password@ part, safe for logs and reports."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def make_session(opts: HttpOptions, auth: tuple[str, str] | None = None) -> requests.Session:
    """A session with a connection pool of ``opts.pool`` and retries on transient failures."""
    kwargs = dict(
        total=opts.retries,
        connect=opts.retries,
        read=opts.retries,
        status=opts.retries,
        other=0,
        backoff_factor=opts.backoff,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=frozenset({"GET", "HEAD"}),
        respect_retry_after_header=True,
        raise_on_status=False,  # give back the last response so the report can name its status
    )
    if "retry_after_max" in inspect.signature(Retry.__init__).parameters:
        kwargs["retry_after_max"] = RETRY_AFTER_MAX_S
    adapter = HTTPAdapter(max_retries=Retry(**kwargs), pool_connections=opts.pool, pool_maxsize=opts.pool)
    adapter.poolmanager.pool_classes_by_scheme = {"http": _WatchedPool, "https": _WatchedHttpsPool}
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.verify = opts.verify_tls
    session.max_redirects = opts.retries  # a redirect loop costs retries + 1 requests, not 31
    session.headers["User-Agent"] = "pal-download"
    session.headers["Accept-Encoding"] = "gzip, deflate"  # the encodings _Decoder handles
    if auth is not None:
        session.auth = auth
    return session


def get_text(session: requests.Session, url: str, opts: HttpOptions, limit: int = 64 << 20) -> str:
    """GET a small document (JSON, a build number); raise FetchFailed on any failure."""
    watch = Deadline(opts.deadline)
    try:
        with watch, session.get(url, timeout=watch.timeouts(opts.timeout), stream=True) as resp:
            if resp.status_code != 200:
                raise FetchFailed(url, f"HTTP {resp.status_code}", missing=resp.status_code == 404)
            body = b""
            for chunk in _body(resp):
                body += chunk
                if len(body) > limit:
                    raise FetchFailed(url, f"response larger than {limit} bytes")
            return body.decode(resp.encoding or "utf-8", errors="replace")
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError, _BadEncoding) as exc:
        raise FetchFailed(url, watch.describe(exc)) from None


def download(session: requests.Session, url: str, dest_dir: Path, opts: HttpOptions) -> Downloaded:
    """Fetch ``url`` into ``dest_dir`` (name from the URL, suffix from the magic bytes).

    Transient body failures are retried ``opts.retries`` times; a 404 or a damaged container
    is final; all attempts together end at ``opts.deadline``. Raises FetchFailed.
    """
    attempt = 0
    end = time.monotonic() + opts.deadline
    while True:
        try:
            return _download_once(session, url, dest_dir, opts, Deadline(end - time.monotonic(), total=opts.deadline))
        except _Transient as exc:
            attempt += 1
            if attempt > opts.retries:
                raise FetchFailed(url, f"{exc} (after {opts.retries} retries)") from None
            delay = opts.backoff * (2 ** (attempt - 1))
            if time.monotonic() + delay >= end:
                raise FetchFailed(url, f"{exc}; no time left for a retry within the deadline of "
                                       f"{opts.deadline:g} s") from None
            log.debug("download %s: %s; retry %d in %.2f s", redact(url), exc, attempt, delay)
            time.sleep(delay)


class _Transient(Exception):
    pass


def _download_once(session: requests.Session, url: str, dest_dir: Path, opts: HttpOptions,
                   watch: "Deadline") -> Downloaded:
    dest_dir.mkdir(parents=True, exist_ok=True)
    if watch.left() <= 0:
        raise FetchFailed(url, f"deadline of {opts.deadline:g} s exceeded")
    with watch:
        try:
            resp = session.get(url, timeout=watch.timeouts(opts.timeout), stream=True)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:  # retried by urllib3
            raise FetchFailed(url, watch.describe(exc)) from None
        return _receive(resp, url, dest_dir, opts, watch)


def _receive(resp: requests.Response, url: str, dest_dir: Path, opts: HttpOptions, watch: "Deadline") -> Downloaded:
    with resp:
        if resp.status_code != 200:
            raise FetchFailed(url, f"HTTP {resp.status_code}", missing=resp.status_code in (404, 410))
        length = resp.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > opts.max_bytes and "Content-Encoding" not in resp.headers:
            raise FetchFailed(url, f"file of {int(length)} bytes exceeds max-size-mb ({opts.max_bytes >> 20} MB)")
        fd, tmp_name = tempfile.mkstemp(prefix=".part-", dir=dest_dir)
        tmp = Path(tmp_name)
        try:
            check = ContainerCheck()
            with os.fdopen(fd, "wb") as out:
                try:
                    for chunk in _body(resp):
                        check.feed(chunk)
                        if check.size > opts.max_bytes:
                            raise FetchFailed(url, f"download exceeds max-size-mb ({opts.max_bytes >> 20} MB); aborted")
                        out.write(chunk)
                    out.flush()
                    kind = check.finish(tmp)
                except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                    if watch.expired:
                        raise FetchFailed(url, watch.describe(exc)) from None
                    raise _Transient(_describe(exc)) from None
                except _BadEncoding as exc:
                    raise FetchFailed(url, str(exc)) from None
                except IntegrityError as exc:
                    raise FetchFailed(url, f"damaged file: {exc}") from None
            final = dest_dir / _file_name(url, kind)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return Downloaded(final, check.sha256.hexdigest(), check.size, kind,
                      resp.headers.get("ETag"), resp.headers.get("Last-Modified"))


class _BadEncoding(Exception):
    """A Content-Encoding pal does not decode, or an encoded body that does not decode."""


def _body(resp: requests.Response) -> "Iterator[bytes]":
    """The response body decoded in steps of at most OUT_CHUNK bytes (urllib3 would decode each
    network chunk whole, and chained encodings multiply: gzip of gzip of zeros is a bomb)."""
    coding = [c.strip().lower() for c in resp.headers.get("Content-Encoding", "").split(",") if c.strip()]
    coding = [c for c in coding if c != "identity"]
    if len(coding) > 1 or (coding and coding[0] not in ("gzip", "x-gzip", "deflate")):
        raise _BadEncoding(f"unsupported Content-Encoding {resp.headers.get('Content-Encoding')!r}")
    raw = resp.raw.stream(CHUNK, decode_content=False)
    if not coding:
        yield from raw
        return
    dec = zlib.decompressobj(47)  # gzip or zlib header, detected
    raw_deflate = coding[0] == "deflate"
    first = True
    for chunk in raw:
        if first and raw_deflate and chunk[:1] and (chunk[0] & 0x0F) != 8:
            dec = zlib.decompressobj(-zlib.MAX_WBITS)  # "deflate" sent as raw deflate (no zlib header)
        first = False
        try:
            out = dec.decompress(chunk, OUT_CHUNK)
            while True:
                if out:
                    yield out
                if not dec.unconsumed_tail:
                    break
                out = dec.decompress(dec.unconsumed_tail, OUT_CHUNK)
        except zlib.error as exc:
            raise _BadEncoding(f"body does not decode as {coding[0]} ({exc})") from None
    tail = dec.flush()
    if tail:
        yield tail


class Deadline:
    """The time left for one download, and a watchdog that ends it when none is left.

    While entered (``with``), every connection this thread sends a request on is registered;
    when the time is up they are shut down, so a blocked or dripping read ends at once (a
    per-read timeout never trips on a server that sends one byte at a time).
    """

    def __init__(self, seconds: float, total: float | None = None):
        """``seconds`` left; ``total``: the deadline the message names when they are the rest of
        a longer one (a retry's attempt), not a remainder like 2.99999 s."""
        self.end = time.monotonic() + max(seconds, 0.0)
        self.seconds = seconds if total is None else total
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        return self.end - time.monotonic()

    def timeouts(self, timeout: float) -> tuple[float, float]:
        t = max(min(timeout, self.left()), 0.001)
        return t, t

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._socks.append(sock)
            if self.expired:
                _shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._socks:
                _shutdown(sock)

    def describe(self, exc: BaseException) -> str:
        if self.expired:
            return f"deadline of {self.seconds:g} s exceeded (a slow or stalled server)"
        if isinstance(exc, requests.RequestException):
            return _describe(exc)
        return f"{type(exc).__name__}: {str(exc)[:200]}"

    def __enter__(self) -> "Deadline":
        self._timer = threading.Timer(max(self.left(), 0.0), self._expire)
        self._timer.daemon = True
        self._timer.start()
        _WATCH.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        _WATCH.current = None
        if self._timer is not None:
            self._timer.cancel()


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


#: The Deadline of the download this thread is doing (each download thread does one at a time).
_WATCH = threading.local()


def _register(conn: HTTPConnection) -> None:
    watch = getattr(_WATCH, "current", None)
    if watch is not None:
        watch.watch(getattr(conn, "sock", None))


class _WatchedConnection(HTTPConnection):
    def getresponse(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        _register(self)  # before the status line and headers are read: those can drip too
        return super().getresponse(*args, **kwargs)


class _WatchedHttpsConnection(HTTPSConnection):
    def getresponse(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        _register(self)
        return super().getresponse(*args, **kwargs)


class _WatchedPool(HTTPConnectionPool):
    ConnectionCls = _WatchedConnection


class _WatchedHttpsPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHttpsConnection


def _file_name(url: str, kind: str) -> str:
    """``output.xml.gz`` for gzip'd output, whatever the URL's name said; zip keeps its stem."""
    base = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or "output.xml"
    stem = base
    for ext in (".gz", ".xz", ".zip", ".xml"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem) or "output"
    if kind == "zip":
        return stem + ".zip"
    return stem + ".xml" + SUFFIXES[kind]


def _describe(exc: requests.RequestException) -> str:
    """A short, secret-free description of a transfer failure."""
    name = type(exc).__name__
    if isinstance(exc, requests.exceptions.SSLError):
        return f"TLS error ({name}); set verify-tls: false only for a trusted test server"
    if isinstance(exc, (requests.exceptions.ReadTimeout, requests.exceptions.ConnectTimeout)):
        return f"timed out ({name})"
    text = str(exc)
    if "Read timed out" in text:
        return "timed out (read)"
    if "IncompleteRead" in text or "incomplete" in text.lower():
        return "connection closed before the whole body arrived (truncated)"
    if "reset" in text.lower() or "aborted" in text.lower():
        return "connection reset by the server"
    return f"{name}: {text[:200]}"
