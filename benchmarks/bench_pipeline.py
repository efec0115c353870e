"""The whole PA job at CSIT scale: cold run, incremental run, peak RSS, and the cold run on Dask.

    python -m benchmarks.bench_pipeline [--data /tmp/pal-bench-history] [--builds 180] [--tests 1500]
                                        [--window 170] [--workers 2] [--no-dask] [--keep]

History: ``pal.demo.generate(jobs=PIPELINE_BENCH_JOBS, builds=N+1, tests=T)`` (4 daily MRR jobs,
~1M samples at the defaults; ~75 s to generate), cached under ``--data`` so reruns skip it. The
newest build of every job is hidden for the cold run and revealed for the incremental one.
The spec keeps the newest ``--window`` builds per job (``max-builds``, default builds - 10): the
cold run fills the window, so the new build pushes the oldest out, as every daily run does in
production (the MDL search cannot drop a first run: every series is classified again).

Every run is ``pal run`` in a subprocess (wall time; peak RSS from ``getrusage(RUSAGE_CHILDREN)``
of a wrapper process, i.e. the largest single process of the run). The reference, measured in
the same run, is reading and gunzipping every archive once: the floor of any parse.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pal.demo import PIPELINE_BENCH_JOBS, generate

SEED = 1

SPEC = """\
name: bench-pipeline
jobs:
{jobs}
sources:
  - {{name: bench-dir, type: local, path: history}}
rename-file: history/renames.yaml
test-sets:
  - name: mrr
    jobs: [".*-mrr-.*"]
    select: {{tags: "MRR AND NOT SOAK"}}
    metrics: [mrr]
    detector: {{name: mdl}}
outputs:
  dir: ${{PAL_BENCH_OUT}}
  title: "pal pipeline benchmark"
  exports: [csv, parquet]
  build-url: "https://jenkins.example.org/job/{{job}}/{{build}}"
alerts:
  fail-on: never
store:
  path: ${{PAL_BENCH_OUT}}/store
"""

#: runs ``pal run`` as a child and prints its exit code and peak RSS (KiB) as JSON on the last line
RUNNER = """
import json, resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
print(json.dumps({"rc": rc, "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

STAGES = ("download", "parse", "analyse", "alerts", "render", "save")


def prepare(data: Path, builds: int, tests: int) -> tuple[Path, Path]:
    """The cached history (generated when missing or made with other parameters) and its hidden dir."""
    history, hidden = data / "history", data / "hidden"
    params = {"jobs": list(PIPELINE_BENCH_JOBS), "builds": builds + 1, "tests": tests, "seed": SEED}
    marker = data / "params.json"
    if marker.exists() and json.loads(marker.read_text()) == params and (history / "truth.json").exists():
        reveal(history, hidden)
        return history, hidden
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    t0 = time.perf_counter()
    print(f"generating {len(PIPELINE_BENCH_JOBS)} jobs x {builds + 1} builds x {tests} tests in {history} ...", flush=True)
    generate(history, seed=SEED, jobs=list(PIPELINE_BENCH_JOBS), builds=builds + 1, tests=tests)
    marker.write_text(json.dumps(params))
    print(f"generated in {time.perf_counter() - t0:.0f} s", flush=True)
    return history, hidden


def newest(history: Path) -> list[Path]:
    out = []
    for job in PIPELINE_BENCH_JOBS:
        dirs = [p for p in (history / job).iterdir() if p.name.isdigit()]
        out.append(max(dirs, key=lambda p: int(p.name)))
    return out


def hide(history: Path, hidden: Path) -> None:
    for d in newest(history):
        target = hidden / d.parent.name / d.name
        target.parent.mkdir(parents=True, exist_ok=True)
        d.rename(target)


def reveal(history: Path, hidden: Path) -> None:
    if not hidden.exists():
        return
    for d in sorted(hidden.glob("*/*")):
        d.rename(history / d.parent.name / d.name)


def gunzip_all(history: Path) -> tuple[float, int]:
    """The reference: read and decompress every archive once (seconds, bytes of XML)."""
    t0 = time.perf_counter()
    total = 0
    for path in sorted(history.glob("*/*/output.xml.gz")):
        try:
            with gzip.open(path, "rb") as fh:
                while chunk := fh.read(1 << 22):
                    total += len(chunk)
        except (OSError, EOFError):
            pass  # the demo's one truncated archive
    return time.perf_counter() - t0, total


def pal_run(spec: Path, out: Path, extra: list[str], log: Path) -> dict:
    """``pal run`` in a subprocess: wall time, exit code, peak RSS and per-stage seconds."""
    env = dict(os.environ, PAL_BENCH_OUT=str(out))
    cmd = [sys.executable, "-c", RUNNER, sys.executable, "-m", "pal", "run", "--spec", str(spec), *extra]
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True, check=False)
    wall = time.perf_counter() - t0
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    text = log.read_text()
    if info["rc"] not in (0, 2, 3):  # 0 ok; alert codes are not failures of the run
        print(text[-3000:], file=sys.stderr)
        raise SystemExit(f"pal run failed with exit code {info['rc']} (log: {log})")
    return {"wall": wall, "rss_mb": info["maxrss_kb"] / 1024, "stages": stage_times(text), "log": str(log),
            "summary": next((ln.strip() for ln in text.splitlines()[::-1] if ln.strip().startswith("pal:")), "")}


def stage_times(text: str) -> dict[str, float]:
    """Seconds per stage from the ``[i/6] stage`` ... ``(x s)`` progress lines."""
    out: dict[str, float] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\[(\d+)/\d+\] (\w+)", line.strip())
        if m:
            current = m.group(2)
            continue
        d = re.search(r"\((\d+(?:\.\d+)?) s\)\s*$", line)
        if d and current:
            out[current] = float(d.group(1))
            current = None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/tmp/pal-bench-history"), help="history cache directory")
    ap.add_argument("--builds", type=int, default=180, help="builds per job in the cold run")
    ap.add_argument("--tests", type=int, default=1500)
    ap.add_argument("--window", type=int, default=None,
                    help="max-builds per job (default: builds - 10, so the incremental run slides the window)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-dask", action="store_true", help="skip the cold run on a Dask LocalCluster")
    ap.add_argument("--keep", action="store_true", help="keep the output directories")
    a = ap.parse_args(argv)

    data = a.data.resolve()
    history, hidden = prepare(data, a.builds, a.tests)
    window = a.window if a.window is not None else a.builds - 10
    jobs = "\n".join(f"  - {{name: {j}, max-builds: {window}}}" for j in PIPELINE_BENCH_JOBS)
    spec = data / "spec.yaml"
    spec.write_text(SPEC.format(jobs=jobs))
    runs_dir = data / "runs"
    if runs_dir.exists():
        shutil.rmtree(runs_dir)
    runs_dir.mkdir()

    ref, xml_bytes = gunzip_all(history)
    print(f"reference: gunzip every archive once: {ref:.1f} s ({xml_bytes / 1e9:.2f} GB of XML)", flush=True)
    workers = ["--workers", str(a.workers)]
    results: dict[str, dict] = {}
    hide(history, hidden)
    try:
        print("cold run (local executor) ...", flush=True)
        results["cold"] = pal_run(spec, runs_dir / "local", ["--executor", "local", *workers], runs_dir / "cold.log")
        reveal(history, hidden)
        print("incremental run (one new build per job) ...", flush=True)
        results["incremental"] = pal_run(spec, runs_dir / "local", ["--executor", "local", *workers],
                                         runs_dir / "incremental.log")
        print("incremental run, nothing new ...", flush=True)
        results["no change"] = pal_run(spec, runs_dir / "local", ["--executor", "local", *workers],
                                       runs_dir / "nochange.log")
        if not a.no_dask:
            hide(history, hidden)
            print("cold run (Dask LocalCluster) ...", flush=True)
            results["cold, dask"] = pal_run(spec, runs_dir / "dask", ["--executor", "dask", *workers],
                                            runs_dir / "cold-dask.log")
    finally:
        reveal(history, hidden)

    print()
    print(f"{len(PIPELINE_BENCH_JOBS)} jobs x {a.builds} builds x {a.tests} tests, window {window} builds, {a.workers} workers, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    head = "| run | wall [s] | x gunzip | peak RSS [MB] | " + " | ".join(STAGES) + " |"
    print(head)
    print("|" + "---|" * (4 + len(STAGES)))
    for name, r in results.items():
        stages = " | ".join(f"{r['stages'].get(s, float('nan')):.1f}" for s in STAGES)
        print(f"| {name} | {r['wall']:.1f} | {r['wall'] / ref:.2f} | {r['rss_mb']:.0f} | {stages} |")
    for name, r in results.items():
        print(f"{name}: {r['summary']}")
    goals = [("incremental under 30 s", results["incremental"]["wall"] < 30),
             ("cold under 15 min", results["cold"]["wall"] < 900),
             ("peak RSS under 4 GB", max(r["rss_mb"] for r in results.values()) < 4096)]
    print("goals: " + ", ".join(f"{g}: {'met' if ok else 'MISSED'}" for g, ok in goals))
    if not a.keep:
        shutil.rmtree(runs_dir / "local", ignore_errors=True)
        shutil.rmtree(runs_dir / "dask", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
