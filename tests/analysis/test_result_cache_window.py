"""``ResultCache.unread``: a job whose window did not move is not read. Its file gives back the
series inputs, the results and the history rows the run read and analysed before, exactly; a
job whose window moved, a file without them or a damaged one means a read, never a wrong row."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pal.analysis.result_cache import MAGIC, KeptJob, ResultCache, _samples, _samples_bytes, job_file
from pal.analysis.series import SeriesInput, analyse_all
from pal.history import shared_tags
from pal.model import SeriesResult
from pal.spec import Spec
from pal.store.schema import TAG_SEP, dictionary_to_categorical
from tests.analysis.test_result_cache import inputs, same, spec

ROWS = 1234  # a job's window rows, as the run counted them


def history_rows(job: str, n: int = 12) -> pd.DataFrame:
    """History rows as the store's read makes them (``_read_window``: text columns from Arrow
    dictionaries, tags as shared tuples), then filtered as ``alert_samples`` filters them, so that
    some categories are used by no row."""
    tags = [TAG_SEP.join(("MRR", "NIC_X")), "", None, TAG_SEP.join(("NDRPDR",)), "MRR"] * n
    table = pa.table({
        "job": pa.array([job] * (2 * n)).dictionary_encode(),
        "test_id": pa.array([f"t.{i % 8:03d}" for i in range(2 * n)]).dictionary_encode(),
        "status": pa.array(["PASS", None, "FAIL"] * (2 * n // 3) + ["PASS"] * (2 * n % 3)).dictionary_encode(),
        "tags": pa.array((tags * 2)[:2 * n]).dictionary_encode(),
    })
    frame = pd.DataFrame({
        "job": dictionary_to_categorical(table["job"]),
        "build": np.arange(2 * n, dtype=np.int64) + 100,
        "build_time": pd.Series(pd.date_range("2026-01-01", periods=2 * n, freq="D", tz="UTC")).astype(
            "datetime64[ns, UTC]"),
        "test_id": dictionary_to_categorical(table["test_id"]),
        "value": np.where(np.arange(2 * n) % 5 == 0, np.nan, np.linspace(1e6, 2e6, 2 * n)),
        "status": dictionary_to_categorical(table["status"]),
        "tags": shared_tags(table["tags"]),
    })
    frame.loc[4, "build_time"] = pd.NaT  # (an even row: kept by the filter below)
    return frame[np.arange(2 * n) % 2 == 0].reset_index(drop=True)


def without_trials(series: list[SeriesInput]) -> list[SeriesInput]:
    """The pipeline's series when no detector reads trials (``needs_trials``): None."""
    return [replace(s, trials=None) for s in series]


def run_once(cache: ResultCache, series: list[SeriesInput], sp: Spec, single: set[str],
             history: dict[str, pd.DataFrame]) -> tuple[list[SeriesResult], dict[str, KeptJob]]:
    """What ``pipeline.window_series`` and ``analyse_series`` do with a cache: per job, ``unread``
    or (a read) ``read_job`` and ``sort``; then the pending analysed, merged and saved."""
    kept, read = {}, []
    for job in dict.fromkeys(s.key.job for s in series):
        got = cache.unread(job)
        if got is not None:
            kept[job] = got
            continue
        mine = [s for s in series if s.key.job == job]
        cache.read_job(job, history[job], ROWS)
        cache.sort(mine)
        read += mine
    cache.analysed = list(cache.pending)  # type: ignore[attr-defined]
    results = cache.merge(read, analyse_all(cache.pending, sp, set(single)))
    cache.save(results)
    return results, kept


@pytest.fixture()
def setup() -> tuple[Spec, list[SeriesInput], set[str], dict[str, pd.DataFrame], dict[str, str]]:
    series = without_trials(inputs())
    jobs = list(dict.fromkeys(s.key.job for s in series))
    return spec(), series, {jobs[1]}, {j: history_rows(j) for j in jobs}, {j: f"window of {j}" for j in jobs}


def test_history_rows_come_back_exactly() -> None:
    frame = history_rows("csit-vpp-perf-mrr-daily-master-2n-icx")
    assert len(frame["test_id"].cat.categories) > frame["test_id"].nunique()  # unused categories kept too
    data = _samples_bytes(frame)
    assert data is not None
    back = _samples(np.frombuffer(data, dtype=np.uint8))
    pd.testing.assert_frame_equal(back, frame, check_exact=True, check_categorical=True)
    assert list(back.dtypes) == list(frame.dtypes)
    for col in ("job", "test_id", "status"):
        assert list(back[col].cat.categories) == list(frame[col].cat.categories)
        assert back[col].cat.categories.dtype == frame[col].cat.categories.dtype
    assert [type(t) for t in back["tags"]] == [type(t) for t in frame["tags"]]
    assert list(back["tags"]) == list(frame["tags"]) and () in list(back["tags"]) and None in list(back["tags"])
    assert back["build_time"].isna().sum() == 1 and back["value"].isna().sum() > 0  # NaT and NaN came back


@pytest.mark.parametrize("change", ["object column", "ordered", "empty tag", "index"])
def test_rows_arrow_cannot_give_back_are_not_kept(change: str) -> None:
    frame = history_rows("j")
    if change == "object column":
        frame["message"] = ["x", 1] * (len(frame) // 2)
    elif change == "ordered":
        frame["status"] = frame["status"].cat.as_ordered()
    elif change == "empty tag":
        frame.loc[0, "tags"] = ("",)  # would come back as ()
    else:
        frame.index = frame.index + 1
    assert _samples_bytes(frame) is None


def test_a_job_whose_window_did_not_move_is_not_read(tmp_path: Path, setup) -> None:
    sp, series, single, history, windows = setup
    expected = analyse_all(series, sp, single)
    first, kept = run_once(ResultCache.open(tmp_path, sp, single, windows=windows), series, sp, single, history)
    assert kept == {} and all(same(a, b) for a, b in zip(first, expected))

    again = ResultCache.open(tmp_path, sp, single, windows=windows)
    results, kept = run_once(again, series, sp, single, history)
    assert again.analysed == [] and again.reused == len(series)
    assert list(kept) == list(windows)  # every job from its file
    assert len(results) == len(expected) and all(same(a, b) for a, b in zip(results, expected))
    for job, k in kept.items():
        assert k.rows == ROWS
        pd.testing.assert_frame_equal(k.samples, history[job], check_exact=True, check_categorical=True)
    # the series of a job share their builds and times arrays, as ``split_series`` shares them
    job = results[0].key.job
    axes = {(id(r.builds), id(r.times)) for r in results if r.key.job == job}
    assert len(axes) == len({(r.builds.tobytes(), r.times.tobytes()) for r in results if r.key.job == job})


def test_a_job_whose_window_moved_is_read(tmp_path: Path, setup) -> None:
    sp, series, single, history, windows = setup
    run_once(ResultCache.open(tmp_path, sp, single, windows=windows), series, sp, single, history)
    moved = next(iter(windows))
    cache = ResultCache.open(tmp_path, sp, single, windows={**windows, moved: "another window"})
    results, kept = run_once(cache, series, sp, single, history)
    assert moved not in kept and len(kept) == len(windows) - 1
    assert cache.analysed == []  # read, and its series were the same: its results from the file
    assert all(same(a, b) for a, b in zip(results, analyse_all(series, sp, single)))
    # its file now says the new window: the next run does not read it
    assert moved in run_once(ResultCache.open(tmp_path, sp, single, windows={**windows, moved: "another window"}),
                             series, sp, single, history)[1]


def test_without_window_keys_or_reuse_every_job_is_read(tmp_path: Path, setup) -> None:
    sp, series, single, history, windows = setup
    run_once(ResultCache.open(tmp_path, sp, single, windows=windows), series, sp, single, history)
    assert run_once(ResultCache.open(tmp_path, sp, single), series, sp, single, history)[1] == {}
    full = ResultCache.open(tmp_path, sp, single, reuse=False, windows=windows)
    assert run_once(full, series, sp, single, history)[1] == {} and len(full.analysed) == len(series)


def test_inputs_json_cannot_hold_exactly_mean_a_read(tmp_path: Path, setup) -> None:
    sp, series, single, history, windows = setup
    job = series[0].key.job
    odd = [replace(s, attrs={"nic": np.str_("x")}) if s.key.job == job else s for s in series]
    run_once(ResultCache.open(tmp_path, sp, single, windows=windows), odd, sp, single, history)
    cache = ResultCache.open(tmp_path, sp, single, windows=windows)
    results, kept = run_once(cache, odd, sp, single, history)
    assert job not in kept and len(kept) == len(windows) - 1
    assert cache.analysed == []  # its results are kept all the same (by its series' digest)
    assert all(same(a, b) for a, b in zip(results, analyse_all(odd, sp, single)))


def test_a_damaged_file_means_a_read(tmp_path: Path, setup, caplog: pytest.LogCaptureFixture) -> None:
    sp, series, single, history, windows = setup
    run_once(ResultCache.open(tmp_path, sp, single, windows=windows), series, sp, single, history)
    jobs = list(windows)
    cut = job_file(tmp_path, jobs[0]).read_bytes()
    job_file(tmp_path, jobs[0]).write_bytes(cut[:-100])  # the history rows cut short
    job_file(tmp_path, jobs[1]).write_bytes(b"pal analysis results 1\n" + cut[len(MAGIC):])  # an older pal's
    cache = ResultCache.open(tmp_path, sp, single, windows=windows)
    with caplog.at_level(logging.WARNING, logger="pal"):
        results, kept = run_once(cache, series, sp, single, history)
    assert set(jobs) - set(kept) == {jobs[0], jobs[1]}
    # the first job's results are whole: read, its series' digest finds them; the older file is a miss
    assert {s.key.job for s in cache.analysed} == {jobs[1]}
    warned = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    assert len(warned) == 1 and jobs[0] in warned[0] and "is read again" in warned[0]  # the older one: silent
    assert all(same(a, b) for a, b in zip(results, analyse_all(series, sp, single)))
    # both files were written again: the next run reads neither
    assert list(run_once(ResultCache.open(tmp_path, sp, single, windows=windows), series, sp, single, history)[1]) \
        == jobs
