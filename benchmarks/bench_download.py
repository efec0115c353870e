"""Download speed: fetch_builds over 200 builds from the local fake Jenkins, 1 vs 4 workers.

    python -m benchmarks.bench_download [--builds 200] [--kib 256] [--latency-ms 20]

Reference measured in the same run: a bare loop of ``requests.Session.get`` over the same 200
artifact URLs, one at a time, writing each body to a file (the least any sequential HTTP
download costs). Two server settings: loopback with no delay (CPU-bound on this machine) and
``--latency-ms`` per answer (like a Jenkins across a WAN, where parallel transfers pay off).
Ratios printed: pal 1 worker / reference (overhead of retries, checks, hashing, cache index),
and pal 1 worker / pal 4 workers (the parallel speed-up).
"""

from __future__ import annotations

import argparse
import gzip
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import requests
import yaml

from pal.report import RunReport
from pal.sources import fetch_builds
from pal.spec import parse_spec
from tests.fakejenkins import FakeJenkins

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def payload(n: int, kib: int, rng: random.Random) -> bytes:
    """An output.xml-like gzip of about ``kib`` KiB on the wire (numbers compress like real results)."""
    lines = [b'<?xml version="1.0"?>\n<robot generated="2024-01-01T00:00:00">']
    size = 0
    while size < kib * 1024 * 4:  # ~4:1 compression of such text
        line = (f'<test name="t{len(lines)}"><status status="PASS">Maximum Receive Rate trial results in packets '
                f'per second: [{", ".join(f"{rng.uniform(1e7, 2e7):.2f}" for _ in range(10))}]</status></test>\n')
        lines.append(line.encode())
        size += len(line)
    lines.append(f"<!-- build {n} --></robot>\n".encode())
    return gzip.compress(b"".join(lines), compresslevel=6, mtime=0)


def spec_for(url: str, workers: int, base: Path):
    data = {
        "name": "bench", "jobs": [{"name": JOB, "start": 1, "max-builds": 10_000}],
        "sources": [{"name": "jenkins", "type": "jenkins", "url": url, "workers": workers,
                     "artifacts": ["{jenkins}/job/{job}/{build}/artifact/output.xml.gz"]}],
        "test-sets": [{"name": "mrr", "metrics": ["mrr"]}],
    }
    return parse_spec(yaml.safe_dump(data), base_dir=str(base))


def run_pal(url: str, workers: int, base: Path) -> float:
    with tempfile.TemporaryDirectory(dir=base) as cache:
        report = RunReport()
        t0 = time.perf_counter()
        files = fetch_builds(spec_for(url, workers, base), Path(cache), report)
        dt = time.perf_counter() - t0
    assert report.errors() == [], report.to_json()
    return dt, len(files)


def run_reference(url: str, builds: int, base: Path) -> float:
    with tempfile.TemporaryDirectory(dir=base) as out, requests.Session() as s:
        t0 = time.perf_counter()
        for n in range(1, builds + 1):
            r = s.get(f"{url}/job/{JOB}/{n}/artifact/output.xml.gz", timeout=30)
            r.raise_for_status()
            Path(out, f"{n}.gz").write_bytes(r.content)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", type=int, default=200)
    ap.add_argument("--kib", type=int, default=256, help="size of each gzip'd output on the wire")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    a = ap.parse_args()
    rng = random.Random(1)
    blobs = {n: payload(n, a.kib, rng) for n in range(1, a.builds + 1)}
    mib = sum(len(b) for b in blobs.values()) / 2**20
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    print(f"bench_download: {a.builds} builds, {mib:.1f} MiB gzip'd in all")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for latency in (0.0, a.latency_ms / 1000):
            with FakeJenkins(latency=latency) as fj:
                for n, blob in blobs.items():
                    fj.add_build(JOB, n, timestamp=t0 + timedelta(hours=n), files={"output.xml.gz": blob})
                ref = run_reference(fj.url, a.builds, base)
                one, got1 = run_pal(fj.url, 1, base)
                four, got4 = run_pal(fj.url, 4, base)
            assert got1 == got4 == a.builds
            print(f"  server latency {latency * 1000:4.0f} ms: reference (bare requests loop) {ref:6.2f} s | "
                  f"pal 1 worker {one:6.2f} s | pal 4 workers {four:6.2f} s | "
                  f"pal-1w/reference {one / ref:4.2f} | speed-up 1w/4w {one / four:4.2f}")


if __name__ == "__main__":
    main()
