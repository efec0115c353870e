"""Render a CSIT-sized site: 3 testbeds x 2,000 tests x 180 runs (synthetic SeriesResults).

Prints the render time, the site and index sizes, and the ratio of the render time to a
reference measured in the same run: copying the finished site (same files, same bytes),
i.e. the pure file-system cost the render cannot go below.

    python -m benchmarks.bench_render [--tests 2000] [--runs 180] [--testbeds 3] [--workers N]

With ``--inputs FILE`` it renders what a real run handed to ``render_site`` instead (a pickle
written by ``--capture SPEC FILE``, which runs ``pal run --spec SPEC`` once), twice: a cold
render, then the daily case where every series changed and the previous site is replaced.

    python -m benchmarks.bench_render --capture /tmp/pal-bench-history/spec.yaml /tmp/render-inputs.pkl
    python -m benchmarks.bench_render --inputs /tmp/render-inputs.pkl
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from pal.model import SeriesResult
from pal.render import render_site
from pal.render.site import wait_for_cleanup
from pal.report import RunReport
from tests.render.factory import builds_for, make_result, make_spec, samples_for

TESTBEDS = ("2n-icx", "3n-alt", "2n-spr", "3n-icx", "2n-zn2")
NICS = ("25ge2p1xxv710", "100ge2p1e810cq", "10ge2p1x710", "100ge2p1cx556a")
AREAS = ("ip4", "ip6", "l2", "vxlan", "ipsec", "nat44", "srv6", "memif", "vhost", "acl", "ip4_tunnels", "lb")
SUITES = ("base", "scale20k", "scale200k", "scale2m", "feature")
SIZES = ("64b", "imix", "1518b")
CORES = ("1c", "2c", "4c")


def synthesise(testbeds: int, tests: int, runs: int, seed: int = 1) -> list[SeriesResult]:
    rng = np.random.default_rng(seed)
    out = []
    for topo in TESTBEDS[:testbeds]:
        job = f"csit-vpp-perf-mrr-daily-master-{topo}"
        combos = itertools.islice(itertools.product(AREAS, NICS, SUITES, SIZES, CORES), tests)
        for area, nic, suite, fs, cores in combos:
            suite_name = f"2n1l-{nic}-eth{area}-{area}{suite}-mrr"
            test_id = f"tests.vpp.perf.{area}.{suite_name}.{fs}-{cores[0]}t{cores}-eth{area}-{area}{suite}-mrr"
            level = rng.uniform(2e6, 40e6)
            values = rng.normal(level, level * 0.01, runs)
            grid = np.arange(20, runs - 5, 10)  # groups of >= 10 runs
            breaks = tuple(sorted(int(b) for b in rng.choice(grid, size=min(len(grid), rng.integers(0, 3)),
                                                              replace=False)))
            for b in breaks:
                values[b:] *= rng.choice([0.9, 1.1])
            lost = rng.random(runs) < 0.01  # ~1 % failed runs: gaps
            lost[[0, *breaks]] = False
            values[lost] = np.nan
            out.append(make_result(values, breaks, job=job, test_id=test_id, stdevs=values * 0.005,
                                   attrs={"topo_arch": topo, "nic": nic, "frame_size": fs.upper(),
                                          "cores": cores.upper()}))
    return out


def dir_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def capture(spec: str, dest: Path) -> int:
    """Run the PA job once and pickle the inputs of its ``render_site`` call (the report excepted)."""
    import pal.render
    from pal.cli import entry_point

    original = pal.render.render_site

    def keep(out_dir, results, samples, builds, report, spec, alerts=None, changed=None, **kw):
        with open(dest, "wb") as f:
            pickle.dump({"results": results, "samples": samples, "builds": builds, "spec": spec,
                         "alerts": alerts}, f, protocol=pickle.HIGHEST_PROTOCOL)
        return original(out_dir, results, samples, builds, report, spec, alerts, changed, **kw)

    pal.render.render_site = keep  # the pipeline imports it from pal.render when it runs
    sys.argv = ["pal", "run", "--spec", spec]
    try:
        entry_point()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def replay(path: Path, workers: int | None) -> int:
    """Cold render, then every series changed over the previous site (the daily incremental run)."""
    with open(path, "rb") as f:
        d = pickle.load(f)
    results = d["results"]
    changed = {r.key for r in results}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        with Clock() as cold:
            index = render_site(out, results, d["samples"], d["builds"], RunReport(), d["spec"], d["alerts"],
                                workers=workers)
            wait_for_cleanup(out)
        with Clock() as again:
            render_site(out, results, d["samples"], d["builds"], RunReport(), d["spec"], d["alerts"], changed,
                        workers=workers)
        with Clock() as cleanup:
            wait_for_cleanup(out)
        files, size = dir_size(index.parent)
        with Clock() as copy:
            shutil.copytree(index.parent, Path(tmp) / "copy")
        print(f"{len(results)} series; site: {files} files, {size / 1e6:.1f} MB")
        print(f"cold render: {cold}")
        print(f"all series changed over the previous site: {again}; old site deleted after it: {cleanup}")
        print(f"reference (copy of the finished site): {copy}; render/copy ratio {again.wall / copy.wall:.1f}x "
              f"(CPU {again.cpu / copy.cpu:.1f}x)")
    return 0


class Clock:
    """Wall and CPU seconds (this process and its reaped children: the pool's workers)."""

    def __enter__(self) -> "Clock":
        self._t, self._c = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self._t, _cpu() - self._c

    def __str__(self) -> str:
        return f"{self.wall:.1f} s wall, {self.cpu:.1f} s CPU"


def _cpu() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tests", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=180)
    ap.add_argument("--testbeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--inputs", type=Path, help="render a captured run instead of synthetic series")
    ap.add_argument("--capture", nargs=2, metavar=("SPEC", "FILE"), help="run SPEC once, keep render inputs")
    args = ap.parse_args(argv)
    if args.capture:
        return capture(args.capture[0], Path(args.capture[1]))
    if args.inputs:
        return replay(args.inputs, args.workers)

    t = time.perf_counter()
    results = synthesise(args.testbeds, args.tests, args.runs)
    samples, builds = samples_for(results[:50]), builds_for(results)
    print(f"synthesised {len(results)} series x {args.runs} runs in {time.perf_counter() - t:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        t = time.perf_counter()
        index = render_site(out, results, samples, builds, RunReport(), make_spec(), workers=args.workers)
        render_s = time.perf_counter() - t
        wait_for_cleanup(out)
        files, size = dir_size(index.parent)
        t = time.perf_counter()
        shutil.copytree(index.parent, Path(tmp) / "copy")
        copy_s = time.perf_counter() - t
        print(f"render: {render_s:.1f} s for {len(results)} series ({render_s / len(results) * 1e3:.2f} ms/series)")
        print(f"site: {files} files, {size / 1e6:.1f} MB; index.html {index.stat().st_size / 1e6:.2f} MB")
        print(f"reference (copy of the finished site): {copy_s:.1f} s; render/copy ratio {render_s / copy_s:.1f}x")
        ok = render_s < 60 and index.stat().st_size < 2e6
        print(f"goals (< 60 s, index < 2 MB): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
