"""``ResultCache``: a job whose series did not change gets, from the file, exactly the results its
analysis would give (every detector of the registry); a changed, stale or damaged file costs an
analysis, never a wrong result."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pal.analysis import registry
from pal.analysis.result_cache import MAGIC, ResultCache, _encode, job_file
from pal.analysis.series import SeriesInput, analyse_all
from pal.model import SeriesKey, SeriesResult
from pal.spec import DetectorSpec, JobSpec, SourceSpec, Spec, TestSet

T0 = np.datetime64("2024-01-01T00:00:00", "ns")
DAY = np.timedelta64(86_400_000_000_000, "ns")
JOBS = ("csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-3n-alt",
        "csit-vpp-perf-ndrpdr-weekly-master-2n-icx")
PER_JOB = 4  # series of each job


def spec(**mdl_params: object) -> Spec:
    """One test set per registered detector, each over its own job."""
    names = registry.names()
    sets = [TestSet(name, jobs=[f".*-{name}"], detector=DetectorSpec(name, dict(mdl_params) if name == "mdl" else {}))
            for name in names]
    return Spec(name="t", jobs=[JobSpec(f"{j}-{n}") for j in JOBS for n in names],
                sources=[SourceSpec("d", "local", path=".")], test_sets=sets)


def job_series(job: str, test_set: str, count: int, seed: int) -> list[SeriesInput]:
    """Series with a step, a dip, gaps and trials: each detector finds something to decide."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(40, 90))
        values = 1e7 * (1 + rng.normal(0, 0.01, n))
        values[n // 2:] *= 1 + rng.choice([-0.1, 0.05, -0.2])
        values[int(rng.integers(0, n))] *= 0.5
        values[int(rng.integers(0, n))] = np.nan
        trials = [None if np.isnan(v) else [float(v * (1 + d)) for d in rng.normal(0, 0.005, 3)] for v in values]
        out.append(SeriesInput(SeriesKey(job, f"t.{i:03d}", "mrr"), test_set, np.arange(100, 100 + n),
                               T0 + np.arange(n) * DAY, values, np.full(n, np.nan), {"nic": "x"}, trials))
    return out


def inputs() -> list[SeriesInput]:
    out = []
    for k, name in enumerate(registry.names()):
        for j, job in enumerate(JOBS):
            out += job_series(f"{job}-{name}", name, PER_JOB, 10 * k + j)
    return out


def same(a: object, b: object) -> bool:
    """Equal to the bit and of the same types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or repr(a) == repr(b)
    return a == b


def analysed(cache: ResultCache, series: list[SeriesInput], sp: Spec, single: set[str]) -> list[SeriesResult]:
    """What the pipeline does with a cache: sort job by job, analyse the pending, merge, save.
    The series analysed are left in ``cache.analysed`` (for the tests)."""
    for job in dict.fromkeys(s.key.job for s in series):
        cache.sort([s for s in series if s.key.job == job])
    cache.analysed = list(cache.pending)  # type: ignore[attr-defined]
    results = cache.merge(series, analyse_all(cache.pending, sp, single))
    cache.save(results)
    return results


def test_kept_results_are_the_analysis_results_for_every_detector(tmp_path: Path) -> None:
    sp, series, single = spec(), inputs(), {JOBS[1] + "-mdl"}
    expected = analyse_all(series, sp, single)
    assert any(r.changes for r in expected) and any(r.alertable for r in expected) and any(r.bands for r in expected)
    first = ResultCache.open(tmp_path, sp, single)
    assert all(same(a, b) for a, b in zip(analysed(first, series, sp, single), expected))
    assert first.reused == 0 and len(list(tmp_path.iterdir())) == len(JOBS) * len(registry.names())

    again = ResultCache.open(tmp_path, sp, single)
    assert again.sort(series) == [] and again.reused == len(series)
    kept = again.merge(series, [])
    assert len(kept) == len(expected) and all(same(a, b) for a, b in zip(kept, expected))
    assert again.save(kept) == 0  # nothing analysed: no file rewritten


def test_only_the_changed_job_is_analysed(tmp_path: Path) -> None:
    sp, series, single = spec(), inputs(), set()
    analysed(ResultCache.open(tmp_path, sp, single), series, sp, single)
    job = series[0].key.job
    changed = [replace(s, values=np.append(s.values[1:], 1e7), builds=s.builds + 1) if s.key.job == job else s
               for s in series]
    cache = ResultCache.open(tmp_path, sp, single)
    results = analysed(cache, changed, sp, single)
    assert [s.key for s in cache.analysed] == [s.key for s in changed if s.key.job == job]
    assert cache.reused == len(series) - PER_JOB
    assert all(same(a, b) for a, b in zip(results, analyse_all(changed, sp, single)))
    # the job's file now holds the new inputs' results
    after = ResultCache.open(tmp_path, sp, single)
    assert after.sort(changed) == [] and after.reused == len(series)


@pytest.mark.parametrize("change", ["value", "time", "single-testbed", "test-set", "other-series"])
def test_any_input_of_the_analysis_misses(tmp_path: Path, change: str) -> None:
    sp, series, single = spec(), inputs(), set()
    analysed(ResultCache.open(tmp_path, sp, single), series, sp, single)
    job = series[0].key.job
    mine = [s for s in series if s.key.job == job]
    if change == "value":
        mine[3] = replace(mine[3], values=np.where(np.arange(len(mine[3].values)) == 5, 1.0, mine[3].values))
    elif change == "time":
        mine[0] = replace(mine[0], times=mine[0].times + np.timedelta64(1, "ns"))
    elif change == "single-testbed":
        single = {job}
    elif change == "test-set":
        sp = spec(unit=0.5)
    elif change == "other-series":
        mine = mine[:-1]
    cache = ResultCache.open(tmp_path, sp, single)
    assert cache.sort(mine) == mine and cache.reused == 0


def recounted(data: bytes) -> bytes:
    """A job's file whose JSON is sound but says its first series has more groups than it holds."""
    at = len(MAGIC)
    docs = []
    for _ in range(2):
        (length,) = struct.unpack_from("<Q", data, at)
        docs.append(data[at + 8:at + 8 + length])
        at += 8 + length
    floats = data[at + (-at % 8):]
    records = json.loads(docs[1])
    records["groups"][0] += 3
    docs[1] = json.dumps(records).encode()
    out = MAGIC + b"".join(struct.pack("<Q", len(d)) + d for d in docs)
    return out + b"\0" * (-len(out) % 8) + floats


def test_a_damaged_file_is_analysed_again_and_rewritten(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sp, series, single = spec(), inputs(), set()
    expected = analysed(ResultCache.open(tmp_path, sp, single), series, sp, single)
    jobs = list(dict.fromkeys(s.key.job for s in series))
    path = job_file(tmp_path, jobs[0])
    data = path.read_bytes()
    path.write_bytes(MAGIC + b"\xff" * 40)  # garbage after the magic line
    own = job_file(tmp_path, jobs[1]).read_bytes()
    job_file(tmp_path, jobs[1]).write_bytes(own[: len(own) // 2])  # cut short (a power loss)
    job_file(tmp_path, jobs[2]).write_bytes(b"")
    deep = b"[" * 100_000  # nested past the parser's recursion limit
    job_file(tmp_path, jobs[3]).write_bytes(MAGIC + len(deep).to_bytes(8, "little") + deep)
    job_file(tmp_path, jobs[4]).write_bytes(data)  # another job's file: not this job's results
    job_file(tmp_path, jobs[5]).write_bytes(recounted(job_file(tmp_path, jobs[5]).read_bytes()))
    cache = ResultCache.open(tmp_path, sp, single)
    with caplog.at_level(logging.WARNING, logger="pal"):
        results = analysed(cache, series, sp, single)
    assert all(same(a, b) for a, b in zip(results, expected))
    assert cache.reused == len(series) - 6 * PER_JOB
    assert {s.key.job for s in cache.analysed} == set(jobs[:6])
    # five damaged files said so; another job's file is a plain miss
    assert sum("analysis cache" in r.getMessage() and "unreadable" in r.getMessage() for r in caplog.records) == 5
    assert ResultCache.open(tmp_path, sp, single).sort(series) == []  # rewritten whole


def test_full_run_analyses_everything_and_writes_files(tmp_path: Path) -> None:
    sp, series, single = spec(), inputs(), set()
    analysed(ResultCache.open(tmp_path, sp, single), series, sp, single)
    full = ResultCache.open(tmp_path, sp, single, reuse=False)
    assert full.sort(series) == series and full.reused == 0


def test_files_of_jobs_gone_from_the_window_are_removed(tmp_path: Path) -> None:
    sp, series, single = spec(), inputs(), set()
    analysed(ResultCache.open(tmp_path, sp, single), series, sp, single)
    first_job = series[0].key.job
    (tmp_path / ".pal-x.results.tmp-1").write_bytes(b"")  # a killed writer's temp file is not touched
    rest = [s for s in series if s.key.job != first_job]
    analysed(ResultCache.open(tmp_path, sp, single), rest, sp, single)
    assert not job_file(tmp_path, first_job).exists()
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".results"]) == len(JOBS) * len(registry.names()) - 1


def test_a_result_json_cannot_hold_exactly_is_not_kept(tmp_path: Path) -> None:
    sp, single = spec(), set()
    series = job_series(f"{JOBS[0]}-mdl", "mdl", 4, 3)
    results = analyse_all(series, sp, single)
    assert _encode(results, {}) is not None
    with_change = next(r for r in results if r.changes)
    numpy_scalar = replace(with_change, compliance=replace(with_change.compliance, runs=np.int64(3)))
    a_tuple = replace(with_change, changes=[replace(with_change.changes[0], evidence={"where": (1, 2)})])
    float32 = replace(with_change, trend=with_change.trend.astype(np.float32))
    numpy_float = replace(with_change, groups=[replace(with_change.groups[0], avg=np.float64(1.5))])
    int_key = replace(with_change, alertable=[replace(with_change.changes[0], evidence={3: 1.0})])
    for bad in (numpy_scalar, a_tuple, float32, numpy_float, int_key):
        assert _encode([bad if r is with_change else r for r in results], {}) is None
    cache = ResultCache.open(tmp_path, sp, single)
    cache.sort(series)
    cache.merge(series, results)
    cache.save([numpy_scalar if r is with_change else r for r in results])
    assert not job_file(tmp_path, series[0].key.job).exists()  # the job is analysed again next time


def test_merge_refuses_results_that_are_not_the_pending_ones(tmp_path: Path) -> None:
    sp, single = spec(), set()
    series = job_series(f"{JOBS[0]}-mdl", "mdl", 3, 5)
    results = analyse_all(series, sp, single)
    for given in (results[:-1], results + results[:1]):
        cache = ResultCache.open(tmp_path, sp, single)
        assert cache.sort(series) == series
        with pytest.raises(ValueError, match="do not match"):
            cache.merge(series, given)
