"""UTI JSON parse speed: pal's reader against ``json.load`` of the same files (the floor).

Writes one build of a daily MRR job and one of a weekly NDRPDR job as CSIT's UTI JSON
(``pal.demo``: ``archives.tar.gz`` with one ``*.info.json`` per test, suite setup/teardown
files, NDRPDR files with latency and hdrh strings in both directions), unpacks them to
directories, then times in this process, on the same files in the same run:

- floor: open + read + ``json.load`` of every ``*.info.json`` (directory), or of every member
  of the tar.gz (archive) - no validation, no rows;
- pal: ``pal.parse.uti.parse_uti_build`` - strict decoding (duplicate keys, NaN, nesting),
  schema validation of every file, the samples table.

Throughput is in tests per second (suite files are read but not counted); the best of
``--repeat`` runs is reported. The goal: pal within 3x of the floor (exit 1 when not).
Run: ``python -m benchmarks.bench_uti`` (``--tests 1500`` tests per job).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
import tempfile
import time
from pathlib import Path

GOAL = 3.0
MRR = "csit-vpp-perf-mrr-daily-master-3n-alt"
NDRPDR = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"


def _floor_dir(root: Path) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".info.json"):
                with open(os.path.join(dirpath, name), "rb") as fh:
                    json.load(fh)
                n += 1
    return n


def _floor_tar(path: Path) -> int:
    n = 0
    with tarfile.open(path, "r|gz") as tf:
        for info in tf:
            if info.isreg() and info.name.endswith(".info.json"):
                json.load(tf.extractfile(info))
                n += 1
    return n


def _best_pair(a, b, repeat: int) -> tuple[float, object, float, object]:
    """Best times of ``a`` and ``b`` run alternately (a shared machine's load hits both alike)."""
    best_a = best_b = float("inf")
    out_a = out_b = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out_a = a()
        t1 = time.perf_counter()
        out_b = b()
        t2 = time.perf_counter()
        best_a, best_b = min(best_a, t1 - t0), min(best_b, t2 - t1)
    return best_a, out_a, best_b, out_b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=int, default=1500, help="tests per job (default 1500)")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)

    from pal.demo import generate
    from pal.parse.uti import parse_uti_build, validator

    engine = validator("uti_test_case.schema.json").engine
    with tempfile.TemporaryDirectory(prefix="pal-bench-uti-") as tmp:
        root = Path(tmp)
        truth = generate(root / "data", builds=10, tests=args.tests, jobs=[MRR, NDRPDR], uti_jobs=[MRR, NDRPDR])
        cases = []
        for job in (MRR, NDRPDR):
            build = truth.job(job).readable[-1]
            archive = root / "data" / job / str(build) / "archives.tar.gz"
            tree = root / "tree" / job
            tree.mkdir(parents=True)
            with tarfile.open(archive) as tf:
                tf.extractall(tree, filter="data")
            cases += [(job, "directory", tree), (job, "tar.gz", archive)]

        print(f"UTI JSON parsing, tests per second (best of {args.repeat}; validator: {engine})")
        print(f"{'job':<44} {'input':<10} {'files':>6} {'json.load':>11} {'pal':>11} {'pal/floor':>10}")
        worst = 0.0
        for job, kind, path in cases:
            floor = _floor_dir if kind == "directory" else _floor_tar
            parse_uti_build(path, job, 1)  # warm: schema compiled, files in the page cache
            t_floor, files, t_pal, result = _best_pair(lambda: floor(path), lambda: parse_uti_build(path, job, 1),
                                                       args.repeat)
            tests = result.meta.passed + result.meta.failed
            assert not result.problems, result.problems[:3]
            ratio = t_pal / t_floor
            worst = max(worst, ratio)
            print(f"{job:<44} {kind:<10} {files:>6} {tests / t_floor:>11,.0f} {tests / t_pal:>11,.0f} {ratio:>9.2f}x")
        verdict = "within" if worst <= GOAL else "OVER"
        print(f"worst pal/floor: {worst:.2f}x ({verdict} the goal of {GOAL:.0f}x)")
        return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
