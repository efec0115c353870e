"""``pal.window``: a job's window slid from the last run's (its kept series and history rows, the
builds that left dropped, the new builds read alone) equals a read of the whole window: series,
history rows (categories included), row counts and analysis results; where it would not
(a build filling a gap, a series whose runs changed test set, another build under the same
number), the job is read whole."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pal.analysis.result_cache import ResultCache, window_inputs
from pal.analysis.series import single_testbed_jobs
from pal.pipeline import analyse_series, window_series
from pal.report import RunReport
from pal.spec import Spec, parse_spec
from pal.store import Store
from pal.window import Plan, plan
from tests.analysis.test_result_cache import same
from tests.store.data import make_meta
from tests.test_pipeline_window import SPEC as WINDOW_SPEC
from tests.test_pipeline_window import A, B, C, job_samples

NOW = datetime(2023, 1, 1, tzinfo=timezone.utc)
#: the window test's spec (a sliding window, a growing one, a listed one; renames, ignore list,
#: testbed names) with a test set before the others that takes the MRR runs tagged NIC_X
SPEC = WINDOW_SPEC.replace("test-sets:\n", 'test-sets:\n  - {name: mrr-nic, metrics: [mrr], select: {tags: "NIC_X"}, '
                                           "detector: {name: mdl}}\n", 1)


def rows(job: str, build: int, tagged: int | None = None) -> pd.DataFrame:
    """``job_samples`` with what makes a slide non-trivial: a test only the first build has (its
    series leaves a sliding window) with a DUT version no other build has (its category too); a
    test only builds from 6 have; the NDR test missing from build 7 (its series gains no run);
    the MRR test renamed in build 7 (its series' attributes are the last run's); ``tagged``: the
    build whose MRR runs are tagged NIC_X (another test set than its other runs)."""
    df = job_samples(job, build)
    extra = []
    if build == 1:
        extra.append(df.iloc[[0]].assign(test_id="tests.vpp.perf.ip4.old-mrr", dut_version="21.10"))
    if build >= 6:
        extra.append(df.iloc[[0]].assign(test_id="tests.vpp.perf.ip4.new-mrr", value=5e6 + build))
    if build == 7:
        df = df[df["metric"] != "ndr"]
        df.loc[df.index[0], "test_name"] = "64b-2t1c-b-mrr-renamed"
    if build == 4 and job == A:  # a DUT version only A's build 4 has: gone with it (its category too)
        df["dut_version"] = "22.04"
    if build == tagged:
        for i in df.index[:2]:  # (both MRR tests: the renamed one is a duplicate of the other)
            df.at[i, "tags"] = ("MRR", "NIC_X")
    return pd.concat([df, *extra], ignore_index=True)


def fill(store: Store, builds: range | list[int], tagged: int | None = None) -> None:
    for job in (A, B, C):
        for b in builds:
            store.insert(rows(job, b, tagged), make_meta(job, b), f"{b:064d}")


def cached_run(spec: Spec, store: Store, where: Path) -> tuple[list, list, object, RunReport]:
    """What ``pal run`` does up to the analysis, with the result cache; its files saved."""
    from pal.history import window_builds

    report = RunReport()
    builds = window_builds(spec, store, NOW)
    windows, slides = window_inputs(spec, store, builds)
    cache = ResultCache.open(where, spec, single_testbed_jobs(builds, spec), windows=windows, slides=slides)
    history, inputs = window_series(spec, store, builds, report, cache=cache)
    results = analyse_series(spec, inputs, history.builds, report, cache=cache)
    cache.save(results)
    return inputs, results, history, report


def assert_as_read(spec: Spec, store: Store, inputs: list, results: list, history, report: RunReport) -> None:
    """The run's series, results, history rows and counts are those of a read of the whole window."""
    from pal.history import window_builds

    builds = window_builds(spec, store, NOW)
    want_report = RunReport()
    want_history, want_inputs = window_series(spec, store, builds, want_report)
    want = analyse_series(spec, want_inputs, want_history.builds, RunReport())
    read = {i.key.job for i in inputs}  # (the jobs not read at all have no inputs: ``ResultCache.unread``)
    want_inputs = [i for i in want_inputs if i.key.job in read]
    assert [i.key for i in inputs] == [i.key for i in want_inputs]
    for got, exp in zip(inputs, want_inputs):
        assert (got.test_set, got.attrs) == (exp.test_set, exp.attrs)
        for name in ("builds", "times", "values", "stdevs"):
            assert same(getattr(got, name), getattr(exp, name)), (got.key, name)
    assert len(results) == len(want) and all(same(a, b) for a, b in zip(results, want))
    pd.testing.assert_frame_equal(history.samples, want_history.samples, check_exact=True, check_categorical=True)
    for col in history.samples.columns:
        if isinstance(history.samples[col].dtype, pd.CategoricalDtype):
            assert list(history.samples[col].cat.categories) == list(want_history.samples[col].cat.categories)
    assert report.counts["history.samples"] == want_report.counts["history.samples"]
    assert report.counts["history.builds"] == want_report.counts["history.builds"]


def test_a_slid_window_is_the_window_read(tmp_path: Path) -> None:
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = Store(tmp_path / "s")
    fill(store, range(1, 6))
    first = cached_run(spec, store, tmp_path / "c")
    assert "history.jobs_slid" not in first[3].counts
    assert_as_read(spec, store, *first)

    fill(store, [6])  # A slides (4..6: build 3 and the old test leave), C grows, B's builds are listed
    inputs, results, history, report = cached_run(spec, store, tmp_path / "c")
    assert report.counts["history.jobs_slid"] == 2 and report.counts["history.jobs_unread"] == 1
    assert_as_read(spec, store, inputs, results, history, report)
    a_ids = {i.key.test_id for i in inputs if i.key.job == A}
    c_ids = {i.key.test_id for i in inputs if i.key.job == C}
    assert "tests.vpp.perf.ip4.old-mrr" in c_ids - a_ids and "tests.vpp.perf.ip4.new-mrr" in a_ids & c_ids
    assert "21.10" in set(history.samples["dut_version"].cat.categories)  # C's first build is still in

    fill(store, [7])  # slid from a slid window: a series gains no run, another's attributes change
    inputs, results, history, report = cached_run(spec, store, tmp_path / "c")
    assert report.counts["history.jobs_slid"] == 2
    assert_as_read(spec, store, inputs, results, history, report)
    ndr = [i for i in inputs if i.key.job == A and i.key.metric == "ndr"]
    assert [list(i.builds) for i in ndr] == [[5, 6]]
    assert "22.04" not in set(history.samples["dut_version"].cat.categories)  # A's build 4 left
    renamed = [i for i in inputs if i.key.job == A and i.attrs["test_name"] == "64b-2t1c-b-mrr-renamed"]
    assert len(renamed) == 1 and list(renamed[0].builds) == [5, 6, 7]


def test_a_compacted_store_is_slid_without_a_read(tmp_path: Path) -> None:
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = Store(tmp_path / "s")
    fill(store, range(1, 7))
    cached_run(spec, store, tmp_path / "c")
    store.vacuum(target_rows=1000)  # the builds' rows move into compacted fragments: new window keys
    inputs, results, history, report = cached_run(spec, store, tmp_path / "c")
    assert report.counts["history.jobs_slid"] == 3 and report.counts["series.reused"] == len(inputs)
    assert_as_read(spec, store, inputs, results, history, report)


@pytest.mark.parametrize("case", ["gap filled", "test set changed", "build replaced"])
def test_what_a_slide_cannot_give_is_read(tmp_path: Path, case: str) -> None:
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = Store(tmp_path / "s")
    if case == "gap filled":
        fill(store, [1, 2, 4, 5])
        cached_run(spec, store, tmp_path / "c")
        fill(store, [3])  # a build between kept ones: C's window is 1..5, A's 3..5 (2 left, 3 came)
    elif case == "test set changed":
        fill(store, range(1, 6), tagged=5)  # a series' newest run is in another test set than its others
        cached_run(spec, store, tmp_path / "c")
        fill(store, [6])
    else:
        fill(store, range(1, 6))
        cached_run(spec, store, tmp_path / "c")
        for job in (A, C):
            store.insert(rows(job, 5).assign(value=1.0), make_meta(job, 5), f"{55:064d}", replace=True)
    inputs, results, history, report = cached_run(spec, store, tmp_path / "c")
    assert "history.jobs_slid" not in report.counts
    assert_as_read(spec, store, inputs, results, history, report)


def test_plan() -> None:
    kept = {3: ("c", 10), 4: ("d", 10), 5: ("e", 10)}
    assert plan(kept, {4: "d", 5: "e", 6: "f"}) == Plan([3], [6])
    assert plan(kept, {3: "c", 4: "d", 5: "e"}) == Plan([], [])  # placement only (the keys differed)
    assert plan(kept, {5: "e", 6: "f", 7: "g"}) == Plan([3, 4], [6, 7])
    assert plan(kept, {3: "c", 5: "e", 6: "f"}) is None  # 4 left from between kept builds
    assert plan(kept, {2: "b", 3: "c", 4: "d"}) is None  # a build older than the kept ones came
    assert plan(kept, {4: "d", 5: "E", 6: "f"}) is None  # build 5 is another build now
    assert plan(kept, {6: "f", 7: "g"}) is None  # nothing kept: a read costs the same
    assert np.array_equal(sorted(kept), [3, 4, 5])


def test_a_state_moved_to_another_directory_still_slides(tmp_path: Path) -> None:
    """The windows depend on the spec's jobs, test sets, renames, ignore list and testbed names
    only: a state copied elsewhere (another output dir and store path in its spec) or a spec with
    another title is slid, and what it gives is a read; a changed ignore list means a read."""
    import dataclasses
    import shutil

    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = Store(tmp_path / "s")
    fill(store, range(1, 6))
    cached_run(spec, store, tmp_path / "c")
    shutil.copytree(tmp_path / "s", tmp_path / "moved" / "s")
    shutil.copytree(tmp_path / "c", tmp_path / "moved" / "c")
    moved = dataclasses.replace(spec, base_dir=str(tmp_path / "moved"),
                                outputs=dataclasses.replace(spec.outputs, dir="elsewhere", title="Another title"),
                                store=dataclasses.replace(spec.store, path="elsewhere/store"))
    store = Store(tmp_path / "moved" / "s")
    fill(store, [6])
    inputs, results, history, report = cached_run(moved, store, tmp_path / "moved" / "c")
    assert report.counts["history.jobs_slid"] == 2 and report.counts["history.jobs_unread"] == 1
    assert_as_read(moved, store, inputs, results, history, report)

    fill(store, [7])
    ignoring = dataclasses.replace(moved, ignore=[*moved.ignore, "new-mrr"])
    inputs, results, history, report = cached_run(ignoring, store, tmp_path / "moved" / "c")
    assert "history.jobs_slid" not in report.counts and "history.jobs_unread" not in report.counts
    assert "tests.vpp.perf.ip4.new-mrr" not in {i.key.test_id for i in inputs}
    assert_as_read(ignoring, store, inputs, results, history, report)
