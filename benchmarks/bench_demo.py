"""Demo history generator speed: pal.demo against writing the same bytes by other means.

Measured in the same run, on the same build (one output.xml of ``--tests`` tests):

- pal: ``JobWriter.write`` into a gzip stream (text templates, the generator's hot path);
- gzip floor: compressing the already generated XML bytes at the same level (I/O floor);
- etree: serialising the same document with ``xml.etree.ElementTree`` plus gzip (what a
  tree-building writer would pay at least, not counting building the tree).

Also times the default history (``pal demo-data``) and reports its size; ``--full`` adds the
pipeline-benchmark history (4 jobs × 180 builds × 1,500 tests), ``--big-mb N`` one build of
at least N MB through ``keyword_depth``. Run: ``python -m benchmarks.bench_demo``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from pal.demo import generate
from pal.demo.build import JobWriter
from pal.demo.catalog import PIPELINE_BENCH_JOBS, build_catalog, profile_for
from pal.demo.generate import GZIP_LEVEL
from pal.demo.history import END_DAY, history_span, job_values, plan_job, rng_for, run_days, version_timeline
from pal.demo.rfxml import dialect


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _writer(tests: int, builds: int, keyword_depth: int = 0) -> JobWriter:
    profile = profile_for("csit-vpp-perf-mrr-daily-master-2n-icx")
    catalog = build_catalog(profile, tests, rng_for(1, "catalog", profile.name))
    versions = version_timeline(1, run_days(profile, builds)[0], END_DAY, {history_span(builds)[0]})
    plan = plan_job(1, profile, catalog, builds, builds, with_corrupt=False, versions=versions)
    return JobWriter(1, plan, job_values(1, plan), dialect("rf7"), keyword_depth)


def per_build(tests: int) -> None:
    writer = _writer(tests, 12)
    raw = io.BytesIO()
    writer.write(5, raw)
    xml = raw.getvalue()

    def pal() -> None:
        with gzip.GzipFile(fileobj=io.BytesIO(), mode="wb", mtime=0, compresslevel=GZIP_LEVEL) as gz:
            writer.write(5, gz)

    def floor() -> None:
        gzip.compress(xml, compresslevel=GZIP_LEVEL, mtime=0)

    root = ET.fromstring(xml)

    def etree() -> None:
        gzip.compress(ET.tostring(root, encoding="utf-8"), compresslevel=GZIP_LEVEL, mtime=0)

    t_pal, t_floor, t_etree = _best(pal), _best(floor), _best(etree)
    print(f"one build, {tests} tests, {len(xml) / 1e6:.1f} MB XML: pal {t_pal * 1e3:.0f} ms "
          f"({t_pal / tests * 1e6:.0f} µs/test)")
    print(f"  pal / gzip floor      = {t_pal / t_floor:.2f}")
    print(f"  pal / etree serialise = {t_pal / t_etree:.2f}  (below 1: text templates beat tree serialisation)")


def history(label: str, **kwargs) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        truth = generate(Path(tmp) / "h", **kwargs)
        secs = time.perf_counter() - t0
        size = _du(Path(tmp) / "h")
        n_builds = sum(len(j.present) for j in truth.jobs)
        n_tests = sum(len(j.readable) * j.tests for j in truth.jobs)
        print(f"{label}: {secs:.1f} s, {size / 1e6:.1f} MB on disk, {n_builds} files, {n_tests} test results "
              f"({secs / n_tests * 1e6:.0f} µs/test)")


def big_file(target_mb: float) -> None:
    tests = 120
    depth = 1
    while tests * (2 ** depth - 1) * 420 < target_mb * 1e6:  # ~420 B per nested keyword
        depth += 1
    writer = _writer(tests, 12, keyword_depth=depth)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "output.xml.gz"
        t0 = time.perf_counter()
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=GZIP_LEVEL) as gz:
            writer.write(5, gz)
        secs = time.perf_counter() - t0
        with gzip.open(path) as fh:
            size = sum(len(chunk) for chunk in iter(lambda: fh.read(1 << 22), b""))
        print(f"big build (keyword_depth={depth}, {tests} tests): {size / 1e6:.0f} MB XML, "
              f"{path.stat().st_size / 1e6:.1f} MB gzip, {secs:.1f} s ({size / 1e6 / secs:.0f} MB/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=int, default=1500, help="tests in the per-build comparison")
    ap.add_argument("--full", action="store_true", help="also 4 jobs x 180 builds x 1500 tests")
    ap.add_argument("--big-mb", type=float, default=0, help="also one build of at least this many MB")
    args = ap.parse_args()
    per_build(args.tests)
    history("default history (3 jobs, 100/100/26 builds, 120 tests)")
    if args.big_mb:
        big_file(args.big_mb)
    if args.full:
        history("pipeline history (4 daily jobs, 180 builds, 1500 tests)", jobs=list(PIPELINE_BENCH_JOBS),
                builds=180, tests=1500)


if __name__ == "__main__":
    main()
