"""A year of CSIT history on one machine and on a Dask cluster of separate processes, same outputs.

    python -m benchmarks.bench_year [--jobs 12] [--builds 365] [--tests 3000] [--workers 2]
                                    [--worker-memory 1GB] [--data /tmp/pal-bench-year] [--keep]
                                    [--no-cluster-cold] [--repeats 3] [--reference c6149c1 | none]

History: ``pal.demo.generate`` with ``--jobs`` daily MRR jobs on distinct topo-archs, ``--builds``
builds each and ``--tests`` tests per job (the defaults are the issue's year: 12 x 365 x 3,000,
about 13 M samples; ``make bench`` runs a tenth of it, docs/scaling.md has the full year's
figures with the command that made them). Cached under --data.

Runs, each ``pal run`` in a fresh process, in their own working directories holding the same
relative spec (``outputs.dir: out``, ``store.path: store``), so their outputs can be compared
byte for byte:

* single machine: ``--executor local --workers W`` (a process pool), cold, then two
  incremental runs (the two newest builds of every job hidden for the cold run, revealed one
  per run); the second is the daily run measured: it follows a daily run, as in CI, and writes
  its site over the site before the previous one (``.site-spare``), which the first has not.
  It is made ``--repeats`` times, as ``bench_pipeline``'s: on copies of the state (``cp -a``)
  and then in place; the goal's figure is the median;
* cluster: a ``dask scheduler`` and W ``dask worker`` processes (``--nworkers 1 --nthreads 1
  --memory-limit <--worker-memory>``) started here as separate OS processes, then
  ``pal run --executor dask --scheduler tcp://...`` for the same runs (with
  ``--no-cluster-cold``, the two incremental ones from a copy of the single machine's state
  after its cold run: the year's cold parse is most of the benchmark's time. Both run on the
  cluster, so that the measured one follows a run of its own as the single machine's does; the
  copy's kept windows and analyses are taken, as they depend on the spec's jobs, test sets and
  names, not on its paths, ``pal.window.window_spec``);
* the reference (``--reference``, the previous code as ``bench_pipeline`` takes it: ``git
  archive`` of this repository, run from that tree): the single machine's cold and incremental
  runs, once each, on the same history in a directory of its own, so that each goal's figure
  has the previous code's for the same work at the same load beside it.

Printed: each run's wall time, CPU (user + system of ``pal run`` and the workers it reaped) and
peak memory (PSS summed over the ``pal run`` process tree; for the cluster also each worker's
peak RSS), then the goals' table: figure, goal, the reference's figure and the ratio, met or
not; and whether every output file of the single machine and the cluster (site, alerts,
exports; not the run records, store or cache) is identical. Exit 1 when the outputs differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from benchmarks.bench_pipeline import (REFERENCE, RUN_RECORDS, TreeRss, cached_history, hide, machine, measured,
                                       pal_cmd, reference_tree, reveal, warm_kernels)

ARCHS = ("2n-icx", "3n-icx", "2n-spr", "3n-spr", "2n-zn2", "2n-clx", "3n-alt", "3na-spr", "3nb-spr", "2n-grc",
         "3n-snr", "2n-emr", "3n-tsh", "2n-tx2")

SPEC = """\
name: bench-year
jobs:
{jobs}
sources:
  - {{name: year-dir, type: local, path: "{history}"}}
rename-file: "{history}/renames.yaml"
test-sets:
  - name: mrr
    select: {{tags: "MRR"}}
    metrics: [mrr]
outputs: {{dir: out, exports: [csv, parquet]}}
store: {{path: store, workers: {workers}}}
alerts: {{fail-on: never}}
"""


def job_names(n: int) -> list[str]:
    if n > len(ARCHS):
        raise SystemExit(f"--jobs at most {len(ARCHS)}")
    return [f"csit-vpp-perf-mrr-daily-master-{a}" for a in ARCHS[:n]]


class WorkerPeaks:
    """Peak RSS of each process in ``pids``, sampled every 100 ms until stopped."""

    def __init__(self, pids: list[int]):
        self.peaks = {pid: 0 for pid in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        procs = {pid: psutil.Process(pid) for pid in self.peaks}
        while not self._stop.is_set():
            for pid, p in procs.items():
                try:
                    rss = p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
                    self.peaks[pid] = max(self.peaks[pid], rss)
                except psutil.NoSuchProcess:
                    pass
            self._stop.wait(0.1)

    def stop(self) -> dict[int, int]:
        self._stop.set()
        self._thread.join()
        return self.peaks


#: the issue's goals for a year (12 jobs x 365 builds x 3,000 tests) on one machine
WALL_GOAL_S = 30.0  # the daily (incremental) run
RSS_GOAL_MB = 2000.0  # any single-machine run, its process tree
#: the reference's (c6149c1's) peak memory, about: 0.6 GB for a tenth of a year's samples, 20.6 GB
#: for a year's 13.1 M (stop 59); it holds the whole history, so it grows with it
REFERENCE_BASE_BYTES, REFERENCE_BYTES_PER_SAMPLE = 10**9, 1500


def reference_memory(samples: int) -> int:
    return REFERENCE_BASE_BYTES + samples * REFERENCE_BYTES_PER_SAMPLE


def reference_fits(samples: int, available: int) -> bool:
    """Whether the reference's runs of ``samples`` fit in ``available`` bytes of memory, with a
    tenth to spare: a year needs about 21 GB, which would end a smaller machine's runs by the
    OOM killer (this benchmark's too)."""
    return reference_memory(samples) <= 0.9 * available


def run_pal(work: Path, extra: list[str], log: Path, code: Path | None = None) -> dict:
    """``pal run`` of ``work``'s spec in a fresh process (``code``: a tree on PYTHONPATH, the
    reference): wall time, CPU (``wait4``: the run and the workers it reaped) and the process
    tree's peak PSS."""
    cmd, env = pal_cmd(code, "run", "--spec", str(work / "spec.yaml"), *extra)
    os.sync()  # the runs before it on disk, as a day later (``bench_pipeline.pal_run``)
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=err)
        sampler = TreeRss(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        tree = sampler.stop()
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    if rc not in (0, 2):
        print(log.read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"pal run failed with exit code {rc} (log: {log})")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mb": tree / 1e6}


def measured_runs(work: Path, extra: list[str], repeats: int, code: Path | None = None) -> dict[str, dict]:
    """The measured daily run, ``repeats`` times: on copies of ``work``'s state (``cp -a``, each
    removed after its run), then in place. Keys as ``bench_pipeline.measured`` takes them."""
    runs = {}
    for k in range(1, repeats):
        copy = work.with_name(f"{work.name}-copy-{k}")
        shutil.rmtree(copy, ignore_errors=True)
        subprocess.run(["cp", "-a", str(work), str(copy)], check=True)
        runs[f"incremental, copy {k}"] = run_pal(copy, extra, copy / "incremental.log", code)
        shutil.rmtree(copy, ignore_errors=True)
    runs["incremental"] = run_pal(work, extra, work / "incremental.log", code)
    return runs


def outputs(out: Path) -> dict[str, str]:
    """Every output file's SHA-256, by path: a year's outputs are ~12 GB (reading both runs'
    into memory once ended this benchmark by the OOM killer)."""
    found = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if p.is_file() and not rel.startswith(("cache/", ".site-")) and rel not in RUN_RECORDS:
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            found[rel] = h.hexdigest()
    return found


class Cluster:
    """``dask scheduler`` and ``workers`` x ``dask worker`` as separate processes."""

    def __init__(self, where: Path, workers: int, memory: str):
        self.where, self.procs = where, []
        dask = str(Path(sys.executable).with_name("dask"))
        sched_file = where / "scheduler.json"
        self.procs.append(subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
             str(sched_file)], stdout=subprocess.DEVNULL, stderr=open(where / "scheduler.log", "w")))
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        self.address = json.loads(sched_file.read_text())["address"]
        for i in range(workers):
            self.procs.append(subprocess.Popen(
                [dask, "worker", "--scheduler-file", str(sched_file), "--nworkers", "1", "--nthreads", "1",
                 "--memory-limit", memory, "--no-dashboard", "--name", f"w{i}"],
                stdout=subprocess.DEVNULL, stderr=open(where / f"worker-{i}.log", "w")))
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
        self.workers = [p.pid for p in self.procs[1:]]

    def close(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--builds", type=int, default=365)
    ap.add_argument("--tests", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="1GB", help="each Dask worker's memory limit (the goal)")
    ap.add_argument("--data", type=Path, default=Path("/tmp/pal-bench-year"))
    ap.add_argument("--keep", action="store_true", help="keep the working directories")
    ap.add_argument("--no-cluster-cold", dest="cluster_cold", action="store_false",
                    help="the cluster's incremental runs start from a copy of the single machine's state after its "
                         "cold run, instead of a cold run of its own (half the benchmark's time: the cold parse of a "
                         "year is most of it; the cluster's cold figures are then not measured)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="times this code's measured daily run is made (on copies of the state, then in place); "
                         "the goal's figure is the median")
    ap.add_argument("--reference", default=REFERENCE, help="git revision of the previous code, or 'none'")
    args = ap.parse_args(argv)

    jobs = job_names(args.jobs)
    history, hidden = cached_history(args.data, jobs, args.builds, args.tests)
    runs = args.data / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    spec = SPEC.format(jobs="\n".join(f"  - {{name: {j}}}" for j in jobs), history=history, workers=args.workers)
    samples = args.jobs * args.builds * args.tests
    ref_code = None if args.reference == "none" else reference_tree(args.reference, args.data / "reference")
    available = psutil.virtual_memory().available
    if ref_code is not None and not reference_fits(samples, available):
        print(f"reference {args.reference} not run: it would need about "
              f"{reference_memory(samples) / 1e9:.0f} GB of memory for {samples / 1e6:.1f} M samples, "
              f"{available / 1e9:.0f} GB are available; ratios are left out", flush=True)
        ref_code = None
    names = ("single", "cluster", *(("reference",) if ref_code is not None else ()))
    works = {}
    for name in names:
        works[name] = runs / name
        works[name].mkdir(parents=True)
        (works[name] / "spec.yaml").write_text(spec)
    if ref_code is not None:
        warm_kernels(ref_code, args.data, f"reference {args.reference}")

    print(f"{args.jobs} jobs x {args.builds} builds x {args.tests} tests (about {samples / 1e6:.1f} M samples), "
          f"{args.workers} workers, {machine()}", flush=True)
    results: dict[str, dict[str, dict]] = {}
    peaks: dict[int, int] = {}
    for name in names:
        work = works[name]
        code = ref_code if name == "reference" else None
        hide(history, hidden, 2)
        cluster = None
        done = results[name] = {}
        try:
            if name == "cluster":
                cluster = Cluster(work, args.workers, args.worker_memory)
                extra = ["--executor", "dask", "--scheduler", cluster.address, "--workers", str(args.workers)]
                watch = WorkerPeaks(cluster.workers)
            else:
                extra = ["--executor", "local", "--workers", str(args.workers)]
            if name == "cluster" and not args.cluster_cold:
                for d in ("out", "store"):  # the state the single machine's cold run left
                    shutil.copytree(runs / "single-after-cold" / d, work / d, symlinks=True)
            else:
                done["cold"] = run_pal(work, extra, work / "cold.log", code)
            if name == "single" and not args.cluster_cold:
                for d in ("out", "store"):
                    if (work / d).exists():
                        shutil.copytree(work / d, runs / "single-after-cold" / d, symlinks=True)
            reveal(history, hidden, oldest_only=True)
            done["incremental, first"] = run_pal(work, extra, work / "incremental1.log", code)
            reveal(history, hidden)
            done.update(measured_runs(work, extra, args.repeats if name == "single" else 1, code))
            if cluster is not None:
                peaks = watch.stop()
        finally:
            reveal(history, hidden)
            if cluster is not None:
                cluster.close()
        print(f"{name}: " + ", ".join(f"{k} {r['wall']:.1f} s" for k, r in done.items()), flush=True)
        if name == "cluster" and not args.keep:  # a year's outputs are 12 GB a directory
            shutil.rmtree(runs / "single-after-cold", ignore_errors=True)

    same = outputs(works["single"] / "out") == outputs(works["cluster"] / "out")
    print_tables(results, peaks, same, args)
    if not args.keep:
        shutil.rmtree(runs, ignore_errors=True)
    return 0 if same else 1


def print_tables(results: dict[str, dict[str, dict]], peaks: dict[int, int], same: bool,
                 args: argparse.Namespace) -> None:
    """Every run, then the goals: figure, goal, the reference's figure for the same work, ratio, met."""
    single, cluster, old = results["single"], results["cluster"], results.get("reference", {})
    print("\n| run | code | wall [s] | CPU [s] | peak RSS, process tree [MB] |")
    print("|---|---|---:|---:|---:|")
    for name, label in (("single", "this, single machine"), ("cluster", "this, Dask cluster (client tree)"),
                        ("reference", f"{args.reference}, single machine")):
        for run, r in results.get(name, {}).items():
            print(f"| {run} | {label} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['mb']:.0f} |")
    fig, each = measured(single, "incremental", "wall")
    prev = old.get("incremental", {}).get("wall")
    spread = f" (median of {len(each)}: {', '.join(f'{v:.1f}' for v in each)})" if len(each) > 1 else ""
    scale = f"{args.jobs} jobs x {args.builds} builds x {args.tests} tests"
    print(f"\n| goal ({scale}) | figure | goal | previous code | ratio to previous | met |")
    print("|---|---|---|---|---|---|")
    print(f"| incremental, single machine | {fig:.1f} s{spread} | <= {WALL_GOAL_S:.0f} s | "
          f"{f'{prev:.1f} s' if prev else '-'} | {f'{fig / prev:.2f}' if prev else '-'} | "
          f"{'yes' if fig <= WALL_GOAL_S else 'NO'} |")
    worst = max(single, key=lambda k: single[k]["mb"])
    peak = single[worst]["mb"]
    prev_peak = max((r["mb"] for r in old.values()), default=None)
    print(f"| peak RSS, any single-machine run (process tree) | {peak:.0f} MB ({worst}) | <= {RSS_GOAL_MB:.0f} MB | "
          f"{f'{prev_peak:.0f} MB' if prev_peak else '-'} | {f'{peak / prev_peak:.2f}' if prev_peak else '-'} | "
          f"{'yes' if peak <= RSS_GOAL_MB else 'NO'} |")
    goal_mb = _bytes(args.worker_memory) / 1e6
    worst_worker = max(peaks.values(), default=0) / 1e6
    print(f"| Dask cluster: per-worker peak RSS | {', '.join(f'{v / 1e6:.0f} MB' for v in peaks.values())} | "
          f"<= {goal_mb:.0f} MB | - | - | {'yes' if peaks and worst_worker <= goal_mb else 'NO'} |")
    print(f"| Dask cluster: outputs identical to the single machine's (every file under out/ but the run "
          f"records and cache) | {'yes' if same else 'NO'} | identical | - | - | {'yes' if same else 'NO'} |")
    for what in ("incremental, first", "incremental"):
        s, c = single.get(what), cluster.get(what)
        if s and c:
            print(f"| Dask cluster: {what}, against the single machine | {c['wall']:.1f} s | reported | "
                  f"{s['wall']:.1f} s (single machine) | {c['wall'] / s['wall']:.2f} | - |")


def _bytes(text: str) -> float:
    units = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "KIB": 1024, "MIB": 1024 ** 2, "GIB": 1024 ** 3}
    t = text.strip().upper()
    for u, f in sorted(units.items(), key=lambda kv: -len(kv[0])):
        if t.endswith(u):
            return float(t[: -len(u)]) * f
    return float(t)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
