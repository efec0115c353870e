"""``AnalysisAhead``: series handed to a spawned worker while the window is read give the results
``analyse_all`` gives here, whoever analysed each chunk, also when the worker dies."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import signal
import time
from concurrent.futures import ProcessPoolExecutor, wait

import numpy as np
import pytest

from pal.analysis.series import FOUND_FIELDS, AnalysisAhead, SeriesInput, _analyse_chunk, analyse_all, analyse_remote, \
    joined
from pal.model import SearchStates, SeriesKey, SeriesResult
from pal.spec import DetectorSpec, JobSpec, SourceSpec, Spec, TestSet

T0 = np.datetime64("2024-01-01T00:00:00", "ns")
DAY = np.timedelta64(86_400_000_000_000, "ns")
JOBS = ("csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-3n-alt")


def spec() -> Spec:
    return Spec(name="t", jobs=[JobSpec(j) for j in JOBS], sources=[SourceSpec("d", "local", path=".")],
                test_sets=[TestSet("s", detector=DetectorSpec("mdl"))])


def job_series(job: str, count: int, seed: int) -> list[SeriesInput]:
    """Series with a step, a dip and noise: each analysis finds something to decide."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(40, 120))
        values = 1e7 * (1 + rng.normal(0, 0.01, n))
        values[n // 2:] *= 1 + rng.choice([-0.1, 0.0, 0.05])
        values[int(rng.integers(0, n))] *= 0.5
        out.append(SeriesInput(SeriesKey(job, f"t.{i:03d}", "mrr"), "s", np.arange(n), T0 + np.arange(n) * DAY,
                               values, np.full(n, np.nan), {"nic": "x"}, None))
    return out


def equal(a, b) -> bool:
    return [r.key for r in a] == [r.key for r in b] and all(
        np.array_equal(x.trend, y.trend, equal_nan=True) and x.changes == y.changes and x.alertable == y.alertable
        and x.compliance == y.compliance for x, y in zip(a, b))


@pytest.fixture
def pool():
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as p:
        yield p


def test_ahead_equals_inline_whoever_analysed_each_chunk(pool):
    jobs = [job_series(JOBS[0], 25, 1), job_series(JOBS[1], 18, 2)]
    single = {JOBS[1]}
    expected = analyse_all([s for j in jobs for s in j], spec(), single)
    assert sum(len(r.changes) > 0 for r in expected) > 5  # the series are not trivial
    ahead = AnalysisAhead(pool, spec(), single, chunk=4)
    for series in jobs:
        ahead.add(series)
    results = ahead.results()
    assert equal(results, expected) and not ahead.broken
    # the worker analysed some chunks, this process the others (none started yet when asked)
    pool.submit(int).result()
    ahead = AnalysisAhead(pool, spec(), single, chunk=4)
    ahead.add(jobs[0])
    ahead.add(jobs[1])
    worker_first = ahead._futures[0]
    assert equal(ahead.results(), expected) and worker_first.done() and not worker_first.cancelled()
    assert ahead.by_worker >= 4  # at least the first chunk, which went to the worker at once


def test_a_dead_worker_loses_nothing(pool):
    series = job_series(JOBS[0], 12, 3)
    expected = analyse_all(series, spec(), set())
    worker = pool.submit(os.getpid).result()
    ahead = AnalysisAhead(pool, spec(), set(), chunk=3)
    pool.submit(time.sleep, 5)  # the worker is busy: the chunks wait in the queue
    ahead.add(series)
    os.kill(worker, signal.SIGKILL)  # the run's pool worker dies with chunks queued
    wait(ahead._futures)
    assert equal(ahead.results(), expected) and ahead.broken
    ahead = AnalysisAhead(pool, spec(), set(), chunk=3)  # a pool already broken: submit fails
    ahead.add(series)
    assert equal(ahead.results(), expected) and ahead.broken


def same_field(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, dict) and any(isinstance(v, np.ndarray) for v in a.values()):
        return list(a) == list(b) and all(same_field(a[k], b[k]) for k in a)
    if isinstance(a, SearchStates):
        return pickle.dumps(a) == pickle.dumps(b)
    return type(a) is type(b) and a == b


def test_a_workers_results_are_the_inline_ones_field_by_field():
    """What a pool's worker sends (``analyse_remote``) joined to the inputs here is, in every field
    of SeriesResult, what ``analyse_one`` returns; the arrays are the inputs' own, as inline."""
    series = job_series(JOBS[0], 20, 4)
    series = [dataclasses.replace(s, keep=True) for s in series[:10]] + series[10:]  # search states too
    item = (series, spec(), {JOBS[0]})
    inline = _analyse_chunk(item)
    sent, digests = pickle.loads(pickle.dumps(analyse_remote(item)))  # as a worker's answer comes back
    got = joined(series, sent)
    assert digests is None
    assert sum(r.resume is not None for r in inline) == 10 and sum(len(r.changes) > 0 for r in inline) > 3
    names = [f.name for f in dataclasses.fields(SeriesResult)]
    # every field is either sent or the input's: a new field of SeriesResult cannot be dropped on the way
    assert set(FOUND_FIELDS) | {"key", "builds", "times", "values", "stdevs", "test_set", "attrs"} == set(names)
    for a, b, s in zip(got, inline, series):
        assert all(same_field(getattr(a, n), getattr(b, n)) for n in names), a.key
        assert a.values is s.values and a.builds is s.builds and a.times is s.times and a.stdevs is s.stdevs
        assert a.attrs == s.attrs and a.attrs is not s.attrs  # a copy, as analyse_one makes
    with pytest.raises(ValueError, match="19 results for 20 series"):
        joined(series, sent[:-1])


def test_the_page_contents_made_where_each_chunk_was_analysed_are_the_pages_own(pool):
    """``then`` (the render's ``page_content``) runs on the worker for its chunks and here for the
    others; the page digests made from them are those made from the results afterwards."""
    from pal.render import page_content, page_digests

    series = job_series(JOBS[0], 20, 5) + job_series(JOBS[1], 9, 6)
    pool.submit(int).result()
    ahead = AnalysisAhead(pool, spec(), set(), chunk=4, then=page_content)
    ahead.add(series)
    wait(ahead._futures)
    results = ahead.results()
    assert ahead.by_worker == len(series)  # every chunk on the worker
    assert ahead.contents == {r.key: page_content(r) for r in results}
    assert len(set(ahead.contents.values())) == len(series)
    busy = pool.submit(time.sleep, 2)
    here = AnalysisAhead(pool, spec(), set(), chunk=4, then=page_content)
    here.add(series)
    assert equal(here.results(), results) and here.by_worker < len(series)  # the chunks not started: here
    assert here.contents == ahead.contents
    busy.result()
    site = ("t", "{jenkins}/job/{job}/{build}", "https://j")
    assert page_digests(results, [], site=site, contents=ahead.contents) == page_digests(results, [], site=site)
    # a content that is not the result's own is what the digest takes: it is trusted, never recomputed
    wrong = dict(ahead.contents)
    wrong[results[0].key] = b"x" * 20
    changed = page_digests(results, [], site=site, contents=wrong)
    plain = page_digests(results, [], site=site)
    assert [k for k in plain if plain[k] != changed[k]] == [f"{results[0].key.job}|{results[0].key.test_id}|mrr"]
