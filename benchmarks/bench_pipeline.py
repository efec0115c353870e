"""The whole PA job at CSIT scale against the previous code, both measured in the same invocation.

    python -m benchmarks.bench_pipeline [--data /tmp/pal-bench-history] [--builds 360] [--window 170]
                                        [--tests 1500] [--workers 2] [--reference c6149c1 | none]
                                        [--dask] [--repeats 3] [--keep]

History: ``pal.demo.generate(jobs=PIPELINE_BENCH_JOBS, builds=N+1, tests=T)`` (4 daily MRR jobs),
cached under ``--data`` so reruns skip it. The spec's window keeps the newest ``--window``
builds per job (``max-builds``); after the cold run the store is aged: every older build (a
year at the defaults) is parsed into it with the same job without a window (download and
ingest only, the same calls in both codes), as a store fills over a year of daily runs. The
daily cost is so measured on a store much older than the window: it must not grow with age.
The two newest builds of every job are hidden for the cold run. The older of them is revealed
for a first incremental run, and the newest for the measured one: each slides the window by one
build, as every daily run does. The measured run so follows a daily run, as it does in CI, and
a day after it: before each measured run (incremental, nothing new) the site that the run before
replaced (``.site-spare``) is dated a day back (``a_day_later``). The render writes over that
spare when its files are in memory, as the kernel says (``pal.render.site._fresh_spare``; here
they are, as on a machine that ran little else for a day); where the kernel cannot tell, the
spare's age decides, and a day-old one is not written over. Until stop 39 the age alone
decided and the benchmark's back-to-back runs always wrote over the spare, which no daily run
did. Both incremental runs are reported. This machine's speed swings by a third between
minutes, so this code's measured run is made ``--repeats`` times (3): on copies of the state
(``cp -a``: each slides its windows and writes over its spare as the state in place does), then
in place; the goal's figure is their median, each one printed beside it and in the table.

Runs, each ``pal run`` in a fresh process, for this code and for the reference (the previous
code, ``git archive <reference>`` of this repository, run from that tree):
cold (an empty store: parse the window), incremental (one new build per job), incremental of one
job (on a copy of the state the first incremental run left, only the first job's newest build
revealed: what one PT job's completion triggers; the other jobs' analyses are kept from the run
before), nothing new (the first such run settles the alerts' new -> ongoing status, which is a
real change of the outputs), nothing new again (what the goal is about), and a recompute (this
code only: the same inputs without the saved run record and the kept analyses, i.e. every stage
runs; its outputs must equal the kept run's byte for byte).
After the store is aged, this code's store is compacted (``pal store vacuum``), as a periodic
maintenance job would; its time is reported.

Peak RSS is that of the whole process tree of a run (pool workers included): the largest sum
over ``pal run`` and all its descendants of each process's proportional set size (PSS: pages
that forked workers share with their parent counted once, not once per process), taken every
2 s and whenever the RSS sum may be setting a new peak (``TreeRss``: the sampler takes about
5 % of one core, not the third of one it took reading every PSS every 50 ms), and never less
than the largest single process's own peak RSS (VmHWM, sampled; not ``wait4``'s
``ru_maxrss``, which on Linux keeps the peak of this benchmark's process that forked it). No
yardstick: the figures are seconds and MB, beside the goals of the issue and the reference's
figures for the same work. The CPU
column is ``wait4``'s user + system time of the run and of the workers it reaped: a wall time
that grew while the CPU did not says other load shared the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from pal.analysis.result_cache import results_dir
from pal.demo import PIPELINE_BENCH_JOBS, generate

SEED = 1
REFERENCE = "c6149c1"  # the last commit before the fingerprint / store v2 / per-job exports
REPO = Path(__file__).resolve().parent.parent

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

STAGES = ("download", "parse", "analyse", "alerts", "render", "save")
#: files that record the run, not its results (left out of the byte-for-byte comparison)
RUN_RECORDS = ("report.json", ".pal-run.json")
GOALS = {"nothing new": ("wall", 2.0), "incremental": ("wall", 8.0), "cold": ("wall", 60.0)}
RSS_GOAL_MB = 600.0

#: ages the store: parses every build a spec selects into it, nothing else (same calls in both codes)
AGE = """
import sys
from pal.executor import make_executor
from pal.pipeline import download, ingest
from pal.report import RunReport
from pal.spec import load_spec
from pal.store import Store
spec = load_spec(sys.argv[1])
report = RunReport()
files = download(spec, spec.out_dir / "cache", report)
store = Store(spec.store_dir)
with store.lock(), make_executor("local", workers=int(sys.argv[2])) as ex:
    print(ingest(spec, store, files, report, ex))
"""


def prepare(data: Path, builds: int, tests: int) -> tuple[Path, Path]:
    """The cached history (generated when missing or made with other parameters) and its hidden dir."""
    return cached_history(data, list(PIPELINE_BENCH_JOBS), builds + 1, tests)


def cached_history(data: Path, jobs: list[str], builds: int, tests: int) -> tuple[Path, Path]:
    """``generate(jobs, builds, tests)`` under ``data/history``, kept while the parameters match."""
    history, hidden = data / "history", data / "hidden"
    params = {"jobs": jobs, "builds": builds, "tests": tests, "seed": SEED}
    marker = data / "params.json"
    if marker.exists() and json.loads(marker.read_text()) == params and (history / "truth.json").exists():
        reveal(history, hidden)
        return history, hidden
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    t0 = time.perf_counter()
    print(f"generating {len(jobs)} jobs x {builds} builds x {tests} tests in {history} ...", flush=True)
    generate(history, seed=SEED, jobs=jobs, builds=builds, tests=tests)
    marker.write_text(json.dumps(params))
    print(f"generated in {time.perf_counter() - t0:.0f} s", flush=True)
    return history, hidden


def newest(history: Path, count: int = 1) -> list[Path]:
    """The ``count`` newest build directories of every job in ``history``."""
    out = []
    for job in sorted(p for p in history.iterdir() if p.is_dir()):
        dirs = sorted((p for p in job.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
        out.extend(dirs[-count:] if count else [])
    return out


def hide(history: Path, hidden: Path, count: int = 1) -> None:
    for d in newest(history, count):
        target = hidden / d.parent.name / d.name
        target.parent.mkdir(parents=True, exist_ok=True)
        d.rename(target)


def reveal(history: Path, hidden: Path, oldest_only: bool = False, job: str | None = None) -> None:
    """Move the hidden builds back; ``oldest_only``: the oldest hidden build of each job; ``job``:
    that job's only (a PT job's completion: one job's new build)."""
    if not hidden.exists():
        return
    for path in sorted(p for p in hidden.iterdir() if p.is_dir() and job in (None, p.name)):
        dirs = sorted((d for d in path.iterdir() if d.name.isdigit()), key=lambda d: int(d.name))
        for d in dirs[:1] if oldest_only else dirs:
            d.rename(history / path.name / d.name)


def warm_kernels(code: Path | None, data: Path, label: str) -> None:
    """One small ``pal run`` with the code tree (one job x 40 builds x 60 tests, under ``data``): the
    reference's Numba kernels are compiled into its disk cache, as after any first run of an
    install, so that no measured run compiles them (a fresh checkout compiled all of them in its
    cold run: a render 9.4 s instead of 1-2 s, and 80 MB more at the peak). This code's kernels
    are C, built at install: it has nothing to warm."""
    history, _ = cached_history(data / "warm", list(PIPELINE_BENCH_JOBS[:1]), 40, 60)
    spec = data / "warm" / "spec.yaml"
    spec.write_text(SPEC.format(jobs=f"  - {{name: {PIPELINE_BENCH_JOBS[0]}, max-builds: 40}}"))
    with tempfile.TemporaryDirectory() as out:
        cmd, env = pal_cmd(code, "run", "--spec", str(spec))
        env["PAL_BENCH_OUT"] = out
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, cwd=str(history.parent), capture_output=True, check=False)
    failed = "" if done.returncode in (0, 2) else f" (the run failed, exit {done.returncode}: the measured runs may compile them)"
    print(f"[{label}] kernels compiled or loaded: {time.perf_counter() - t0:.1f} s{failed}", flush=True)


def reference_tree(rev: str, where: Path) -> Path | None:
    """The previous code (``git archive rev``: pal/ and templates/) unpacked under ``where``, and
    byte-compiled, as an install (and ``make venv`` for this code) has it: where
    PYTHONDONTWRITEBYTECODE is set, each of its processes would compile its modules on every run."""
    target = where / f"pal-{rev}"
    if not (target / "pal" / "__init__.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        try:
            archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "pal", "templates"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"reference {rev} not available ({exc}); ratios are left out", file=sys.stderr)
            shutil.rmtree(target, ignore_errors=True)
            return None
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "pal")], check=False)
    return target


def _pss(pid: int) -> int:
    """PSS where the kernel tells it (pages shared by forked workers counted once), else RSS.
    The kernel walks the process's page tables for it: about 9 ms of CPU for a pal worker."""
    p = psutil.Process(pid)
    try:
        return p.memory_full_info().pss
    except (psutil.AccessDenied, AttributeError):
        return p.memory_info().rss


def _status(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of the process in bytes, from one read of /proc/<pid>/status (0 if unknown).

    VmHWM is the process's own peak RSS since exec. Not ``wait4``'s ``ru_maxrss``: on Linux that
    keeps the peak of the process it was forked from, and this benchmark's own process holds
    every output file of a run when it starts the recompute (1 GB reported for a run whose tree
    never passed 740 MB)."""
    found = {"VmRSS:": 0, "VmHWM:": 0}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            head = line[:6]
            if head in found:
                found[head] = int(line.split()[1]) * 1024
    return found["VmRSS:"], found["VmHWM:"]


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from each thread's /proc children list: a few small reads,
    where ``psutil.Process.children`` reads every process of the machine (4 ms a call)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except OSError:
                pass
    return found


class TreeRss:
    """Samples the summed memory (PSS) of a process and all its descendants until stopped; keeps
    the peak of that sum, and never less than the largest peak (VmHWM) of any one of them.

    Cheap samples every ``every`` seconds: the tree, and each process's RSS and VmHWM. The PSS
    sum costs the kernel a page-table walk per process (about 9 ms for a pal worker): taken
    every 50 ms it took a third of one of this machine's two cores from the run it measured,
    whose times came out 10-20 % slower than the run's own. So the PSS sum is taken every
    ``idle`` seconds, and sooner (at most every ``rising`` seconds) when the RSS sum has grown
    by ``slack`` bytes more than the PSS sum's margin below the peak since the last PSS sum:
    that is when it may be setting a new peak. The sampler then takes about 5 % of a core. A
    rise shorter than ``idle``, or within ``slack`` of the peak, can be missed; one process's
    cannot (VmHWM). ``pss_samples`` counts the PSS sums taken.
    """

    def __init__(self, pid: int, every: float = 0.1, rising: float = 0.25, idle: float = 2.0,
                 slack: int = 8 << 20):
        self.pid, self.every, self.rising, self.idle, self.peak = pid, every, rising, idle, 0
        self.slack = slack
        self.pss_samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if not os.path.isdir(f"/proc/{self.pid}/task"):  # gone already, or no /proc
            return
        last_at, last_rss, last_pss = -self.idle, 0, 0
        while not self._stop.is_set():
            procs = _tree(self.pid)
            rss = 0
            for pid in procs:
                try:
                    now, hwm = _status(pid)
                except (OSError, ValueError):
                    continue  # ended between the listing and the read
                rss += now
                self.peak = max(self.peak, hwm)
            since = time.monotonic() - last_at
            if since >= self.idle or (since >= self.rising and last_pss + rss - last_rss > self.peak + self.slack):
                total = 0
                for pid in procs:
                    try:
                        total += _pss(pid)
                    except (psutil.NoSuchProcess, psutil.AccessDenied):
                        pass
                last_at, last_rss, last_pss = time.monotonic(), rss, total
                self.peak = max(self.peak, total)
                self.pss_samples += 1
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def machine() -> str:
    """The CPUs the figures were taken on: how many and which (``/proc/cpuinfo``'s model name).
    The same code's figures moved twofold between two VMs of 2 cores (docs/scaling.md, thirty-third
    round): a figure means little without it."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs" + (f" ({model})" if model else "")


def pal_cmd(code: Path | None, *args: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)  # the reference tree first on the path
    return [sys.executable, "-m", "pal", *args], env


def pal_run(code: Path | None, spec: Path, out: Path, extra: list[str], log: Path) -> dict:
    """``pal run`` in a fresh process: wall time, exit code, peak RSS of its process tree, stage seconds."""
    cmd, env = pal_cmd(code, "run", "--spec", str(spec), *extra)
    env["PAL_BENCH_OUT"] = str(out)
    # what the runs before (and a copy of their state) wrote is on disk first, as a day later: the
    # kernel writes back dirty pages within 30 s, and a run's fsyncs would otherwise wait behind them
    os.sync()
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=tempfile.gettempdir())
        sampler = TreeRss(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        tree = sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = log.read_text()
    if proc.returncode not in (0, 2, 3):  # 0 ok; alert codes are not failures of the run
        print(text[-3000:], file=sys.stderr)
        raise SystemExit(f"pal run failed with exit code {proc.returncode} (log: {log})")
    rss = tree / 1e6
    # CPU of the run and the workers it waited for: unlike the wall, not inflated by other load
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss, "stages": stage_times(text),
            "log": str(log),
            "kept": "nothing changed since the last run" in text,
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


def outputs(out: Path) -> dict[str, bytes]:
    """Every file of a run but its records, the store and the download cache. The earlier sites
    the run's background removal may still be deleting (``.site-*``) are not entered: a directory
    of theirs can vanish while it is listed."""
    found = {}
    for top in sorted(out.iterdir()):
        if top.name in ("store", "cache") or top.name.startswith(".site-"):
            continue
        for p in sorted([top, *top.rglob("*")] if top.is_dir() else [top]):
            rel = p.relative_to(out).as_posix()
            if p.is_file() and rel not in RUN_RECORDS:
                found[rel] = p.read_bytes()
    return found


def sequence(code: Path | None, spec: Path, aged: Path, out: Path, history: Path, hidden: Path, logs: Path,
             label: str, workers: list[str], vacuum: bool, repeats: int = 1) -> dict[str, dict]:
    """cold, store aged, incremental (twice; the second ``repeats`` times), nothing new (twice) with
    one code tree, in one output dir."""
    runs: dict[str, dict] = {}
    hide(history, hidden, 2)
    try:
        print(f"[{label}] cold run ...", flush=True)
        runs["cold"] = pal_run(code, spec, out, workers, logs / f"{label}-cold.log")
        cmd, env = pal_cmd(code)
        env["PAL_BENCH_OUT"] = str(out)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", AGE, str(aged), workers[-1]], env=env, capture_output=True,
                              text=True, check=True, cwd=tempfile.gettempdir())
        runs["age"] = {"wall": time.perf_counter() - t0, "parsed": int(done.stdout.strip().splitlines()[-1])}
        print(f"[{label}] store aged: {runs['age']['parsed']} older builds parsed into it in "
              f"{runs['age']['wall']:.0f} s", flush=True)
        reveal(history, hidden, oldest_only=True)
    except BaseException:
        reveal(history, hidden)
        raise
    if vacuum:
        cmd, env = pal_cmd(code, "store", "vacuum", "--spec", str(spec))
        env["PAL_BENCH_OUT"] = str(out)
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        runs["vacuum"] = {"wall": time.perf_counter() - t0, "compacted": json.loads(done.stdout).get("compacted")}
        print(f"[{label}] store vacuum: {runs['vacuum']['compacted']} builds compacted in "
              f"{runs['vacuum']['wall']:.1f} s", flush=True)
    print(f"[{label}] incremental run after the cold one (one new build per job) ...", flush=True)
    try:
        runs["incremental, first"] = pal_run(code, spec, out, workers, logs / f"{label}-incremental1.log")
        # one PT job's completion: its new build only, on a copy of this state (hard links kept)
        one = out.with_name(out.name + "-one-job")
        subprocess.run(["cp", "-a", str(out), str(one)], check=True)
        reveal(history, hidden, job=PIPELINE_BENCH_JOBS[0])
        print(f"[{label}] incremental run of one job (one new build of {PIPELINE_BENCH_JOBS[0]}) ...", flush=True)
        a_day_later(one)
        runs["incremental, one job"] = pal_run(code, spec, one, workers, logs / f"{label}-incremental-one-job.log")
    finally:
        reveal(history, hidden)
    # the measured run, on copies of the state first (``repeats`` - 1 of them, each the same
    # work: a copy slides as the state in place does), then in place: its figure is the median
    for k in range(1, repeats):
        copy = out.with_name(f"{out.name}-copy-{k}")
        subprocess.run(["cp", "-a", str(out), str(copy)], check=True)
        print(f"[{label}] incremental run (one new build per job), on copy {k} of the state ...", flush=True)
        a_day_later(copy)
        runs[f"incremental, copy {k}"] = pal_run(code, spec, copy, workers, logs / f"{label}-incremental-copy-{k}.log")
    print(f"[{label}] incremental run (one new build per job) ...", flush=True)
    a_day_later(out)
    runs["incremental"] = pal_run(code, spec, out, workers, logs / f"{label}-incremental.log")
    print(f"[{label}] nothing new (settles new -> ongoing) ...", flush=True)
    a_day_later(out)
    runs["nothing new, first"] = pal_run(code, spec, out, workers, logs / f"{label}-nothing1.log")
    print(f"[{label}] nothing new ...", flush=True)
    a_day_later(out)
    runs["nothing new"] = pal_run(code, spec, out, workers, logs / f"{label}-nothing2.log")
    return runs


#: how long before a measured run the run before it ended, as in CI (a daily job)
DAY_S = 86_400.0


def a_day_later(out: Path) -> None:
    """Date the last run's replaced site (``.site-spare``) a day back, as the next daily run finds it.

    Where the kernel cannot tell whether the spare's files are in memory, the render writes
    over it only when the run before ended less than ``SPARE_FRESH_S`` (30 minutes) ago: back to
    back, the benchmark's runs would take a path a daily run does not. Nothing else a run reads
    depends on the clock here (the spec has no ``period-days``)."""
    from pal.render.site import SPARE

    spare = out / SPARE
    if spare.is_dir() and not spare.is_symlink():
        then = time.time() - DAY_S
        os.utime(spare, (then, then))


def measured(runs: dict[str, dict], name: str, what: str) -> tuple[float, list[float]]:
    """A goal's figure and the runs it is of: the median of the run ``name`` and of its repeats on
    copies of the state (``<name>, copy <k>``), which do the same work."""
    each = [r[what] for k, r in runs.items() if k == name or k.startswith(f"{name}, copy ")]
    return statistics.median(each), each


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/tmp/pal-bench-history"), help="history cache directory")
    ap.add_argument("--builds", type=int, default=360, help="builds per job in the store (cold run)")
    ap.add_argument("--tests", type=int, default=1500)
    ap.add_argument("--window", type=int, default=170, help="max-builds per job (the analysed window)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reference", default=REFERENCE, help="git revision of the previous code, or 'none'")
    ap.add_argument("--dask", action="store_true", help="also a cold run on a Dask LocalCluster (processes)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="this code's measured incremental run: how many times (the state copied; the median counts)")
    ap.add_argument("--keep", action="store_true", help="keep the output directories")
    a = ap.parse_args(argv)

    data = a.data.resolve()
    history, hidden = prepare(data, a.builds, a.tests)
    window = min(a.window, a.builds)
    jobs = "\n".join(f"  - {{name: {j}, max-builds: {window}}}" for j in PIPELINE_BENCH_JOBS)
    spec = data / "spec.yaml"
    spec.write_text(SPEC.format(jobs=jobs))
    aged = data / "spec-all-builds.yaml"  # the same PA job without a window: fills the store with the year
    aged.write_text(SPEC.format(jobs="\n".join(f"  - {{name: {j}}}" for j in PIPELINE_BENCH_JOBS)))
    runs_dir = data / "runs"
    if runs_dir.exists():
        shutil.rmtree(runs_dir)
    runs_dir.mkdir()
    workers = ["--executor", "local", "--workers", str(a.workers)]

    ref_code = None if a.reference == "none" else reference_tree(a.reference, data / "reference")
    if ref_code is not None:
        warm_kernels(ref_code, data, f"reference {a.reference}")
    new = sequence(None, spec, aged, runs_dir / "new", history, hidden, runs_dir, "this code", workers, vacuum=True,
                   repeats=max(1, a.repeats))
    kept = outputs(runs_dir / "new")
    (runs_dir / "new" / ".pal-run.json").unlink()
    shutil.rmtree(results_dir(runs_dir / "new"), ignore_errors=True)  # the analysis too
    print("[this code] recompute (no run record: every stage) ...", flush=True)
    new["recompute"] = pal_run(None, spec, runs_dir / "new", workers, runs_dir / "recompute.log")
    again = outputs(runs_dir / "new")
    identical = kept == again
    differ = sorted(k for k in set(kept) | set(again) if kept.get(k) != again.get(k))
    old = {}
    if ref_code is not None:
        old = sequence(ref_code, spec, aged, runs_dir / "old", history, hidden, runs_dir, f"reference {a.reference}",
                       workers, vacuum=False)
    if a.dask:
        hide(history, hidden)
        try:
            print("[this code] cold run (Dask LocalCluster) ...", flush=True)
            new["cold, dask"] = pal_run(None, spec, runs_dir / "dask", ["--executor", "dask", "--workers", str(a.workers)],
                                        runs_dir / "cold-dask.log")
        finally:
            reveal(history, hidden)

    print()
    print(f"scale: {len(PIPELINE_BENCH_JOBS)} jobs x {a.builds} builds x {a.tests} tests in the store, window "
          f"{window} builds, {a.workers} workers, {machine()}, load {os.getloadavg()[0]:.1f}")
    head = "| run | code | wall [s] | CPU [s] | peak RSS, process tree [MB] | " + " | ".join(STAGES) + " |"
    print(head)
    print("|" + "---|" * (5 + len(STAGES)))
    for code, runs in (("this", new), (a.reference, old)):
        for name, r in runs.items():
            if "stages" not in r:
                continue
            stages = " | ".join(f"{r['stages'].get(s, float('nan')):.1f}" for s in STAGES)
            print(f"| {name}{' (kept)' if r['kept'] else ''} | {code} | {r['wall']:.1f} | {r.get('cpu', float('nan')):.1f} | "
              f"{r['rss_mb']:.0f} | {stages} |")
    print()
    print("| goal | figure | goal | previous code | ratio to previous | met |")
    print("|---|---|---|---|---|---|")
    for name, (what, goal) in GOALS.items():
        fig, each = measured(new, name, what)
        prev = old.get(name, {}).get(what)
        ratio = f"{fig / prev:.2f}" if prev else "-"
        spread = f" (median of {len(each)}: {', '.join(f'{v:.1f}' for v in each)})" if len(each) > 1 else ""
        print(f"| {name} | {fig:.1f} s{spread} | <= {goal:.0f} s | {f'{prev:.1f} s' if prev else '-'} | {ratio} | "
              f"{'yes' if fig <= goal else 'NO'} |")
    timed = [k for k in new if "rss_mb" in new[k]]
    peak = max(new[k]["rss_mb"] for k in timed)
    worst = max(timed, key=lambda k: new[k]["rss_mb"])
    prev_peak = max((r["rss_mb"] for r in old.values() if "rss_mb" in r), default=None)
    print(f"| peak RSS, any run (process tree) | {peak:.0f} MB ({worst}) | <= {RSS_GOAL_MB:.0f} MB | "
          f"{f'{prev_peak:.0f} MB' if prev_peak else '-'} | {f'{peak / prev_peak:.2f}' if prev_peak else '-'} | "
          f"{'yes' if peak <= RSS_GOAL_MB else 'NO'} |")
    print(f"| nothing new: outputs byte-identical to a recompute | {'yes' if identical else 'NO'} "
          f"({len(kept)} files) | identical | - | - | {'yes' if identical else 'NO'} |")
    if differ:
        print("differing files: " + ", ".join(differ[:10]))
    print(f"recompute of the same inputs (every stage, this code): {new['recompute']['wall']:.1f} s")
    for code, runs in (("this", new), (a.reference, old)):
        if "age" in runs:
            print(f"{code}: store aged after the cold run: {runs['age']['parsed']} older builds parsed in "
                  f"{runs['age']['wall']:.0f} s")
    if "vacuum" in new:
        print(f"store vacuum after the cold run: {new['vacuum']['wall']:.1f} s ({new['vacuum']['compacted']} builds)")
    for code, runs in (("this", new), (a.reference, old)):
        for name, r in runs.items():
            if r.get("summary"):
                print(f"{code} {name}: {r['summary']}")
    if not a.keep:  # (the one-job copies too: deleted here, never before a measured run)
        for d in ("new", "old", "dask", "new-one-job", "old-one-job", *(p.name for p in runs_dir.glob("*-copy-*"))):
            shutil.rmtree(runs_dir / d, ignore_errors=True)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
