"""``pal demo-data DIR``: write a seeded history the way CSIT PT jobs leave it, with its truth.

``DIR/<job>/<build>/output.xml.gz`` per readable build (``DIR/<job>/<build>/archives.tar.gz`` of
UTI JSON files for the jobs in ``uti_jobs``), a truncated archive for the corrupt one, no
directory for missing builds, ``DIR/renames.yaml`` and ``DIR/truth.json``. NDRPDR jobs switch to
the MLRsearch v7 message half-way through their history (CSIT did so in 2023-10), with the same
numbers, so one series spans both generations. The same seed and arguments give byte-identical
files (fixed dates, fixed gzip mtimes, seeded streams).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


from pal.demo.build import JobWriter, test_long_names
from pal.demo.catalog import DEFAULT_JOBS, EXTRA_JOBS, build_catalog, normalise_test_id, profile_for
from pal.demo.history import (
    END_DAY, JobPlan, history_span, job_values, plan_job, rng_for, run_days, version_timeline,
)
from pal.demo.rfxml import dialect as get_dialect, iso
from pal.demo.truth import JobTruth, PlantedEvent, Truth
from pal.demo.uti import UtiBuild
from pal.errors import PalError
from pal.progress import Progress

log = logging.getLogger("pal")

GZIP_LEVEL = 6
#: The job ``pal demo-data`` writes as UTI JSON by default (the library's ``generate`` writes none).
DEMO_UTI_JOBS = ("csit-vpp-perf-mrr-daily-master-3n-alt",)


@dataclass(frozen=True)
class DemoHistory:
    """A generated history on disk and its truth (what the ``demo_small`` fixture gives)."""

    root: Path
    truth: Truth


def _job_names(jobs: int | Sequence[str] | None) -> list[str]:
    if jobs is None:
        return list(DEFAULT_JOBS)
    if isinstance(jobs, int):
        known = DEFAULT_JOBS + EXTRA_JOBS
        if not 1 <= jobs <= len(known):
            raise ValueError(f"jobs={jobs}: between 1 and {len(known)} jobs, or a list of job names")
        return list(known[:jobs])
    return list(jobs)


def _prepare(out: Path, names: list[str]) -> None:
    """Make ``out``; replace job directories only when they hold an earlier demo history."""
    out.mkdir(parents=True, exist_ok=True)
    old_truth = out / "truth.json"
    old_jobs: list[str] = []
    if old_truth.exists():
        try:
            old_jobs = [j.name for j in Truth.load(old_truth).jobs]
        except (ValueError, KeyError, TypeError):
            old_jobs = []
    for name in sorted(set(names) | set(old_jobs)):
        job_dir = out / name
        if job_dir.exists():
            if not old_truth.exists():
                raise PalError(f"{job_dir}: exists and {out} holds no demo history (truth.json); not overwriting")
            shutil.rmtree(job_dir)


def generate(out_dir: str | os.PathLike, *, seed: int = 1, small: bool = False, builds: int | None = None,
             tests: int | None = None, jobs: int | Sequence[str] | None = None, dialect: str = "rf7",
             keyword_depth: int = 0, uti_jobs: Sequence[str] = ()) -> Truth:
    """Write the demo history under ``out_dir`` and return its truth.

    Args:
        out_dir: the history directory (``DIR/<job>/<build>/output.xml.gz``).
        seed: every random choice derives from it.
        small: 30 daily / 10 weekly builds and 15 tests per job, every pattern still present.
        builds: builds per daily job (default 100); weekly jobs get about a quarter.
        tests: tests per job (default 120).
        jobs: a number of jobs (defaults first, then more) or a list of CSIT job names.
        dialect: "rf7", "rf4" (RF 4-6) or "rf3" (RF 3.x) output.xml.
        keyword_depth: 0, or the depth of a binary keyword tree with messages in every test
            (2**depth - 1 keywords per test, ~0.4 KB each) to make large files.
        uti_jobs: jobs whose builds are written as CSIT's UTI JSON (``archives.tar.gz``) instead.
    """
    out = Path(out_dir)
    d = get_dialect(dialect)
    names = _job_names(jobs)
    n_daily = builds if builds is not None else (30 if small else 100)
    n_weekly = max(6, round(n_daily * (1 / 3 if small else 0.26)))
    n_tests = tests if tests is not None else (15 if small else 120)
    if n_daily < 10 or n_tests < 1 or keyword_depth < 0:
        raise ValueError("builds >= 10, tests >= 1 and keyword_depth >= 0 are needed")
    unknown = sorted(set(uti_jobs) - set(names))
    if unknown:
        raise ValueError(f"uti_jobs {unknown} are not among the jobs {names}")
    per_suite = 3 if small or n_tests < 60 else 9
    _prepare(out, names)

    profiles = [profile_for(n) for n in names]
    sizes = [n_weekly if p.period_days == 7 else n_daily for p in profiles]
    first_day = min(run_days(p, n)[0] for p, n in zip(profiles, sizes))
    step_day, _ = history_span(n_daily)
    versions = version_timeline(seed, first_day, END_DAY, {step_day})

    jobs_truth: list[JobTruth] = []
    events: list[PlantedEvent] = []
    renames: dict[str, str] = {}
    for j, (profile, n_runs) in enumerate(zip(profiles, sizes)):
        catalog = build_catalog(profile, n_tests, rng_for(seed, "catalog", profile.name), per_suite=per_suite)
        plan = plan_job(seed, profile, catalog, n_runs, n_daily, with_corrupt=(j == 0), versions=versions)
        v7_from = n_runs // 2 if profile.test_type == "NDRPDR" else None
        writer = JobWriter(seed, plan, job_values(seed, plan), d, keyword_depth, mlrsearch_v7_from=v7_from)
        as_uti = profile.name in uti_jobs
        progress = Progress(f"demo {profile.name}", n_runs, every=max(10, n_runs // 4))
        times: dict[int, int] = {}
        for run, number in enumerate(plan.builds):
            progress.advance()
            if run in plan.missing:
                continue
            build_dir = out / profile.name / str(number)
            build_dir.mkdir(parents=True)
            mtime = int(plan.starts[run].timestamp())
            if as_uti:
                sink = UtiBuild(writer, run)
                facts = writer.write(run, _Discard(), sink)
                path = sink.save(build_dir, mtime)
            else:
                path = build_dir / "output.xml.gz"
                with open(path, "wb") as raw, gzip.GzipFile(filename="output.xml", mode="wb", fileobj=raw,
                                                             mtime=mtime, compresslevel=GZIP_LEVEL) as gz:
                    facts = writer.write(run, gz)
            if run in plan.corrupt:
                os.truncate(path, path.stat().st_size // 2)  # an interrupted upload
            else:  # RF before 7 wrote milliseconds: the truth says what the file says
                times[run] = facts.end_us if d.name == "rf7" else facts.end_us // 1000 * 1000
        job_truth, job_events, job_renames = _record(plan, writer, times)
        jobs_truth.append(job_truth)
        events += job_events
        renames.update(job_renames)

    truth = Truth(
        seed=seed, dialect=d.name, small=small, jobs=jobs_truth, events=events,
        renames=dict(sorted(renames.items())),
        expected_series=sum(j.tests * len(j.metrics) for j in jobs_truth),
    )
    # JSON strings are YAML double-quoted scalars: one readable "old": "new" line per rename
    # (PyYAML's dumper would switch to "? key" blocks for ids longer than 128 characters).
    lines = [f"{json.dumps(old)}: {json.dumps(new)}\n" for old, new in truth.renames.items()]
    (out / "renames.yaml").write_text(
        "# old normalised test id -> new normalised test id (written by pal demo-data)\n"
        + ("".join(lines) if lines else "{}\n"),
        encoding="utf-8",
    )
    truth.save(out / "truth.json")
    return truth


class _Discard:
    """A byte sink: the output.xml of a build written as UTI JSON only."""

    def write(self, data: bytes) -> int:
        return len(data)


def _record(plan: JobPlan, writer: JobWriter, times: dict[int, int]) -> tuple[JobTruth, list[PlantedEvent], dict[str, str]]:
    """The job's truth, its planted events with readable build numbers, and its renames."""
    readable = plan.readable
    position = {run: k for k, run in enumerate(readable)}
    new_ids = {slot: normalise_test_id(ln, tags) for slot, (ln, tags) in test_long_names(writer, True).items()}
    old_ids = {slot: normalise_test_id(ln, tags) for slot, (ln, tags) in test_long_names(writer, False).items()}
    renames: dict[str, str] = {}
    events: list[PlantedEvent] = []
    for p in plan.planted:
        first = next(r for r in readable if r >= p.start)
        runs = [plan.builds[r] for r in p.runs if r in position]
        old = None
        if p.kind == "renamed":
            old = old_ids[p.slot]
            renames[old] = new_ids[p.slot]
        for metric in p.metrics:
            events.append(PlantedEvent(
                job=plan.profile.name, test_id=new_ids[p.slot], metric=metric, kind=p.kind,
                build=plan.builds[first], index=position[first], change=round(p.change, 6),
                builds=runs, old_test_id=old, note=p.note,
            ))
    job = JobTruth(
        name=plan.profile.name, test_type=plan.profile.test_type, metrics=plan.profile.metrics,
        testbeds=list(plan.profile.tg_ips), builds=list(plan.builds),
        present=[b for i, b in enumerate(plan.builds) if i not in plan.missing],
        missing=sorted(plan.builds[i] for i in plan.missing),
        corrupt=sorted(plan.builds[i] for i in plan.corrupt),
        readable=[plan.builds[i] for i in readable], tests=len(plan.tests),
        test_ids=sorted(new_ids.values()),
        first_time=iso(times[readable[0]]) + "Z", last_time=iso(times[readable[-1]]) + "Z",
    )
    return job, events, renames


def small_history(out_dir: str | os.PathLike, *, seed: int = 1, dialect: str = "rf7") -> DemoHistory:
    """A small history with every pattern (for tests): 3 jobs, 30/10 builds, 15 tests each."""
    truth = generate(out_dir, seed=seed, small=True, dialect=dialect)
    return DemoHistory(Path(out_dir), truth)
