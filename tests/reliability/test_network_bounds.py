"""Every download ends: a total deadline, redirects within ``retries``, bounded decoding and bombs.

Against a real local server that misbehaves on purpose (tests/reliability/hostile_server.py).
Before these bounds a server dripping one byte every 2 s held a download for as long as it
liked (the per-read timeout never trips), a 301 loop cost 31 requests whatever ``retries``
said, and the container check decompressed a 2 MB gzip into 2 GB of memory in one call.
Memory is measured per case in a subprocess of its own (tests/reliability/memory.py).
"""

from __future__ import annotations

import gzip
import lzma
import os
import threading
import time
from pathlib import Path

import pytest

from pal.sources.http import FetchFailed, HttpOptions, download, make_session
from tests.reliability.hostile_server import HostileServer
from tests.reliability.memory import measure
from tests.reliability.record import record

#: Decompressed size of the bombs of ``make test`` (``make fuzz``: past the 4 GiB cap).
BOMB_MB = 256 if not os.environ.get("PAL_FUZZ_EXAMPLES") else 4608
#: Peak RSS a bomb case may reach above the same case on a small good file (the imports alone
#: take 130-220 MB depending on the environment), and in all.
RSS_OVER_MB = 64
RSS_LIMIT_MB = 1024


def _xml_gz() -> bytes:
    return gzip.compress(b'<?xml version="1.0"?>\n<robot>' + b"<suite/>" * 20000 + b"</robot>\n")


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, bytes]:
    """A gzip and an xz of BOMB_MB of zeros, each one member/stream whose first chunk expands whole."""
    zeros = b"\0" * (1 << 24)
    gz = __import__("zlib").compressobj(9, 8, 31)
    gzb = b"".join(gz.compress(zeros) for _ in range(BOMB_MB // 16)) + gz.flush()
    xz = lzma.LZMACompressor(preset=0)
    xzb = b"".join(xz.compress(zeros) for _ in range(BOMB_MB // 16)) + xz.flush()
    return {"bomb.gz": gzb, "bomb.xz": xzb, "good.gz": _xml_gz()}


def _opts(**over) -> HttpOptions:
    base = dict(timeout=5.0, deadline=60.0, retries=2, backoff=0.01)
    base.update(over)
    return HttpOptions(**base)


def _timed_download(url: str, dest: Path, opts: HttpOptions, limit: float) -> tuple[BaseException | None, float]:
    """download() in a thread (so a hang fails the test instead of hanging it); (error, seconds)."""
    box: list = []

    def go():
        t0 = time.monotonic()
        try:
            download(make_session(opts), url, dest, opts)
            box.append((None, time.monotonic() - t0))
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box.append((exc, time.monotonic() - t0))

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(limit)
    assert box, f"download of {url} still running after {limit} s (a hang)"
    return box[0]


@pytest.mark.parametrize("path", ["/drip/1000", "/drip-headers"])
def test_a_dripping_server_fails_within_the_deadline(tmp_path, path):
    with HostileServer(drip_s=1.0) as srv:
        err, took = _timed_download(srv.url + path, tmp_path, _opts(timeout=5.0, deadline=3.0), limit=20)
    assert isinstance(err, FetchFailed) and "deadline of 3 s exceeded" in str(err), err
    assert took < 3.0 + 1.0, took
    record("network faults", f"server dripping 1 byte/s ({'status line' if 'headers' in path else 'body'}), "
           "timeout 5 s, deadline 3 s", f"failed in {took:.1f} s naming the deadline", faults=1)


def test_a_stall_fails_after_the_timeout_and_retries(tmp_path):
    with HostileServer() as srv:
        err, took = _timed_download(srv.url + "/stall", tmp_path, _opts(timeout=0.5, retries=2), limit=30)
        hits = srv.hits["stall"]
    assert isinstance(err, FetchFailed) and "after 2 retries" in str(err), err
    assert hits == 3 and took < 10, (hits, took)
    record("network faults", "server stalling after the headers, timeout 0.5 s, retries 2",
           f"3 requests, failed in {took:.1f} s", faults=3)


def test_a_redirect_loop_costs_retries_plus_one_requests(tmp_path):
    with HostileServer() as srv:
        err, _ = _timed_download(srv.url + "/loop", tmp_path, _opts(retries=2), limit=30)
        hits = srv.hits["loop"]
    assert isinstance(err, FetchFailed) and "redirect" in str(err).lower(), err
    assert hits == 3, hits  # was 31 whatever retries said
    record("network faults", "301 redirect loop, retries 2", "3 requests (was 31), reported", faults=hits)


def test_resets_and_wrong_lengths(tmp_path, bombs):
    with HostileServer(bombs) as srv:
        reset, _ = _timed_download(srv.url + "/reset/good.gz", tmp_path / "a", _opts(), limit=30)
        short, _ = _timed_download(srv.url + "/short/good.gz", tmp_path / "b", _opts(), limit=30)
        long_, _ = _timed_download(srv.url + "/long/good.gz", tmp_path / "c", _opts(), limit=30)
        twice, _ = _timed_download(srv.url + "/enc2/good.gz", tmp_path / "d", _opts(), limit=30)
        enc, _ = _timed_download(srv.url + "/enc/good.gz", tmp_path / "e", _opts(), limit=30)
        hits = dict(srv.hits)
    assert isinstance(reset, FetchFailed) and "after 2 retries" in str(reset) and hits["reset"] == 3, (reset, hits)
    assert isinstance(short, FetchFailed) and "truncated" in str(short) and hits["short"] == 3, (short, hits)
    assert isinstance(long_, FetchFailed) and "damaged file: truncated gzip" in str(long_), long_
    assert isinstance(twice, FetchFailed) and "unsupported Content-Encoding" in str(twice), twice
    assert enc is None and (tmp_path / "e" / "good.xml.gz").read_bytes() == bombs["good.gz"]
    for p in tmp_path.rglob(".part-*"):
        raise AssertionError(f"a partial file was left: {p}")
    record("network faults", "TCP reset mid-body; Content-Length twice / half the body; "
           "Content-Encoding 'gzip, gzip'; gzip encoding of a .gz", "retried then reported / reported as damaged "
           "/ refused / decoded to the exact file; no partial file left", inputs=5, faults=5 + 2 * 2)


_DOWNLOAD = """
import sys
from pathlib import Path
from pal.sources.http import FetchFailed, HttpOptions, download, make_session
opts = HttpOptions(timeout=10, deadline=120, retries=0, backoff=0.01)
try:
    got = download(make_session(opts), sys.argv[1], Path(sys.argv[2]), opts)
    print("OK", got.kind, got.size)
except FetchFailed as exc:
    print("FAILED", exc)
"""

_CHECK_FILE = """
import sys
from pathlib import Path
from pal.sources.integrity import IntegrityError, check_file
try:
    print("OK", check_file(Path(sys.argv[1]))[1])
except IntegrityError as exc:
    print("FAILED", exc)
"""


@pytest.mark.parametrize("name", ["bomb.gz", "bomb.xz"])
@pytest.mark.parametrize("how", ["http", "enc", "local"])
def test_decompression_bombs_stay_in_bounded_memory(tmp_path, bombs, name, how):
    def run(file: str) -> object:
        if how == "local":
            f = tmp_path / f"output.xml.{file.split('.')[-1]}"
            f.write_bytes(bombs[file])
            return measure(_CHECK_FILE, str(f), timeout=300)
        with HostileServer(bombs) as srv:
            return measure(_DOWNLOAD, f"{srv.url}/{'file' if how == 'http' else 'enc'}/{file}",
                           str(tmp_path / file), timeout=300)

    base = run("good.gz")  # the same code on a small good file: the interpreter and its imports
    m = run(name)
    assert m.returncode == 0 and base.returncode == 0, (m.stderr[-2000:], base.stderr[-2000:])
    if BOMB_MB * (1 << 20) > 4 * 1024**3:
        assert "decompressed size exceeds the cap" in m.stdout, m.stdout
    else:
        assert m.stdout.startswith("OK"), m.stdout  # under the cap: a valid (if useless) container
    over = m.peak_mb - base.peak_mb
    assert over < RSS_OVER_MB and m.peak_mb < RSS_LIMIT_MB, (m.peak_mb, base.peak_mb)
    via = {"http": "HTTP download", "enc": "HTTP download with Content-Encoding: gzip", "local": "local source check"}
    record("XML and archive attacks", f"{name} of {BOMB_MB} MiB zeros ({len(bombs[name]) >> 10} KB) via {via[how]}",
           f"{m.stdout.split()[0].lower()}, peak RSS {m.peak_mb:.0f} MB ({over:.0f} MB above a small good file), "
           f"{m.seconds:.1f} s", faults=1, peak_mb=m.peak_mb)


def test_the_store_lock_is_taken_before_any_download(tmp_path):
    from pal.store.lock import StoreLock
    from tests.reliability.runs import run_pal, spec_dict, write_spec

    with HostileServer() as srv:
        src = {"name": "jenkins", "type": "jenkins", "url": srv.url, "timeout": 2.0, "retries": 0,
               "artifacts": ["{jenkins}/file/{job}-{build}.xml.gz"]}
        spec = write_spec(tmp_path / "spec.yaml", spec_dict(None, tmp_path / "out", sources=[src]))
        held = StoreLock(tmp_path / "out" / "store")
        held.acquire()
        try:
            r = run_pal("run", "--spec", str(spec), timeout=120)
        finally:
            held.release()
        hits = sum(srv.hits.values())
    assert r.returncode == 1 and f"store locked by pid {os.getpid()}" in r.stderr, r.stderr[-2000:]
    assert hits == 0, f"{hits} requests made by a run that could not take the store lock"
    record("crash safety", "a second run while the store is locked", "fails at once naming the holder; "
           "no request made (the lock used to be taken after the whole download stage)", faults=1)
