"""HTTP plumbing for remote sources: a pooled, retrying session and a safe streaming download.

Why this shape: a Jenkins or log server drops connections and answers 5xx or 429 under load,
so connection errors, read timeouts and those statuses are retried with exponential backoff
(urllib3 ``Retry``, which honours ``Retry-After``, capped). A body that breaks mid-way is
retried here, since urllib3 retries only up to the response headers. Bytes are streamed to a
temporary file in the destination directory, hashed and container-checked in the same pass,
and only a complete, checked file is renamed into place (``os.replace`` is atomic), so a
crash or a damaged transfer never leaves a file that looks good.
"""

from __future__ import annotations

import inspect
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pal.sources.integrity import SUFFIXES, ContainerCheck, IntegrityError

log = logging.getLogger("pal")

RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRY_AFTER_MAX_S = 120.0  # a server asking for more than this is treated as asking for this
CHUNK = 1 << 16


@dataclass(frozen=True)
class HttpOptions:
    """Per-source transfer settings (from SourceSpec, plus the backoff factor)."""

    timeout: float = 30.0  # seconds, for connect and for each read
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
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.verify = opts.verify_tls
    session.headers["User-Agent"] = "pal-download"
    if auth is not None:
        session.auth = auth
    return session


def get_text(session: requests.Session, url: str, opts: HttpOptions, limit: int = 64 << 20) -> str:
    """GET a small document (JSON, a build number); raise FetchFailed on any failure."""
    try:
        with session.get(url, timeout=(opts.timeout, opts.timeout), stream=True) as resp:
            if resp.status_code != 200:
                raise FetchFailed(url, f"HTTP {resp.status_code}", missing=resp.status_code == 404)
            body = b""
            for chunk in resp.iter_content(CHUNK):
                body += chunk
                if len(body) > limit:
                    raise FetchFailed(url, f"response larger than {limit} bytes")
            return body.decode(resp.encoding or "utf-8", errors="replace")
    except requests.RequestException as exc:
        raise FetchFailed(url, _describe(exc)) from None


def download(session: requests.Session, url: str, dest_dir: Path, opts: HttpOptions) -> Downloaded:
    """Fetch ``url`` into ``dest_dir`` (name from the URL, suffix from the magic bytes).

    Transient body failures are retried ``opts.retries`` times; a 404 or a damaged container
    is final. Raises FetchFailed.
    """
    attempt = 0
    while True:
        try:
            return _download_once(session, url, dest_dir, opts)
        except _Transient as exc:
            attempt += 1
            if attempt > opts.retries:
                raise FetchFailed(url, f"{exc} (after {opts.retries} retries)") from None
            delay = opts.backoff * (2 ** (attempt - 1))
            log.debug("download %s: %s; retry %d in %.2f s", redact(url), exc, attempt, delay)
            time.sleep(delay)


class _Transient(Exception):
    pass


def _download_once(session: requests.Session, url: str, dest_dir: Path, opts: HttpOptions) -> Downloaded:
    dest_dir.mkdir(parents=True, exist_ok=True)
    try:
        resp = session.get(url, timeout=(opts.timeout, opts.timeout), stream=True)
    except requests.RequestException as exc:  # already retried by urllib3
        raise FetchFailed(url, _describe(exc)) from None
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
                    for chunk in resp.iter_content(CHUNK):
                        check.feed(chunk)
                        if check.size > opts.max_bytes:
                            raise FetchFailed(url, f"download exceeds max-size-mb ({opts.max_bytes >> 20} MB); aborted")
                        out.write(chunk)
                    out.flush()
                    kind = check.finish(tmp)
                except requests.RequestException as exc:
                    raise _Transient(_describe(exc)) from None
                except IntegrityError as exc:
                    raise FetchFailed(url, f"damaged file: {exc}") from None
            final = dest_dir / _file_name(url, kind)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return Downloaded(final, check.sha256.hexdigest(), check.size, kind,
                      resp.headers.get("ETag"), resp.headers.get("Last-Modified"))


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
