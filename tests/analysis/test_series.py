"""pal.analysis.series.analyse_one: every detector through one interface, its own verdict,
trend and bands kept, trials passed to detectors that read them, alertable changes measured
between the filtered levels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pal.analysis.registry import DETECTORS, detector_class, get_detector, names
from pal.analysis.series import SeriesInput, analyse_one, split_series
from pal.model import SeriesKey, coerce_samples
from pal.spec import AlertFilters, DetectorSpec, JobSpec, SourceSpec, Spec, TestSet

T0 = np.datetime64("2024-01-01T00:00:00", "ns")
DAY = np.timedelta64(86_400_000_000_000, "ns")


def series(values, trials=None) -> SeriesInput:
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    return SeriesInput(SeriesKey("csit-vpp-perf-mrr-daily-master-2n-icx", "t.x", "mrr"), "s",
                       np.arange(500, 500 + n), T0 + np.arange(n) * DAY, values, np.full(n, np.nan), {}, trials)


def test_registry_is_the_one_list():
    assert names() == tuple(DETECTORS) == ("mdl", "tma", "fisher", "wda")
    for name in names():
        cls = detector_class(name)
        assert cls.name == name and isinstance(cls.uses_trials, bool)


@pytest.mark.parametrize("name", ["tma", "wda"])
def test_a_drop_in_the_last_runs_is_the_detectors_verdict(name):
    """60 runs, the last 4 down 15 %: TMA and WDA call a regression at the last run, and the
    series result says so (it said normal when only MDL's verdict was kept)."""
    rng = np.random.default_rng(3)
    values = 1e7 * (1 + rng.normal(0, 0.005, 60))
    values[-4:] *= 0.85
    det = get_detector(name)
    own = det.detect(values, +1)
    r = analyse_one(series(values), TestSet("s", detector=DetectorSpec(name)), False)
    assert own.verdict == "regression" and r.verdict == own.verdict
    assert r.detector == name
    np.testing.assert_array_equal(r.trend[np.isfinite(own.trend)], own.trend[np.isfinite(own.trend)])
    for band, arr in own.bands.items():
        np.testing.assert_array_equal(r.bands[band], arr)
    assert [c.index for c in r.changes] == [c.index for c in own.changes]
    assert all(c.first_bad_build == 500 + c.index for c in r.changes)


def test_a_dip_before_a_step_does_not_inflate_the_change():
    """A -44 % one-run outlier, then normal runs: no alert at all (it once gave a +86 % progression
    measured against the dip's group). A real -10 % step later is measured level to level."""
    wobble = np.where(np.arange(50) % 2 == 0, 0.3, -0.3)
    values = 100.0 + wobble
    values[20] = 56.0
    r = analyse_one(series(values), TestSet("s", alert_filters=AlertFilters(1.0, 2)), False)
    assert r.alertable == []
    values[35:] -= 10.0
    r = analyse_one(series(values), TestSet("s", alert_filters=AlertFilters(1.0, 2)), False)
    (c,) = r.alertable
    assert (c.index, c.kind, c.first_bad_build) == (35, "regression", 535)
    assert c.change == pytest.approx((89.7 + 90.3) / 2 / 100.0 - 1.0, abs=0.004)


def test_trials_reach_a_detector_that_reads_them():
    """WDA with data_type median: the per-run trial lists decide, not their means. Each run's
    trials are [x, x, x, 10x]: the mean is 3.25x, the median x."""
    checks = [{"recent_window_size": 3, "historic_window_size": 20, "data_filter": {"data_type": "median"},
               "median_tolerance": [{"median_coeff": 0.05}]}]
    base = [1e6] * 25 + [0.8e6] * 3
    trials = [[x, x, x, 10 * x] for x in base]
    means = [float(np.mean(t)) for t in trials]
    rows = [{"job": "csit-vpp-perf-mrr-daily-master-2n-icx", "build": 500 + i, "build_time": pd.Timestamp(T0 + i * DAY, tz="UTC"),
             "test_id": "t.x", "metric": "mrr", "value": means[i], "trials": trials[i], "status": "PASS",
             "tags": ("MRR",)} for i in range(len(base))]
    spec = Spec(name="t", jobs=[JobSpec("csit-vpp-perf-mrr-daily-master-2n-icx")], sources=[SourceSpec("l", "local", path=".")],
                test_sets=[TestSet("s", detector=DetectorSpec("wda", {"checks": checks}))])
    (inp,) = split_series(coerce_samples(pd.DataFrame(rows)), spec)
    assert inp.trials[0] == [1e6, 1e6, 1e6, 1e7]
    r = analyse_one(inp, spec.test_sets[0], False)
    assert r.verdict == "regression"
    assert r.bands["wda_centre"][-1] == pytest.approx(1e6)  # the median of the trial medians, not 3.25e6


@pytest.mark.parametrize("categorical", [False, True])
def test_test_sets_are_assigned_first_match_by_job_metric_id_and_tags(categorical):
    """The first test set whose jobs, metrics and selection all hold takes a row; plain string
    columns and the history's categoricals give the same answer."""
    from pal.analysis.series import assign_test_sets
    from pal.select import Selection

    mrr, ndr = "csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-ndrpdr-weekly-master-3n-icx"
    rows = [  # (job, test id, metric, tags) -> expected test set
        ((mrr, "ip4.a", "mrr", ("MRR", "2C")), "two-cores"),
        ((mrr, "ip4.b", "mrr", ("MRR", "1C")), "mrr"),
        ((mrr, "ip6.a", "mrr", ("MRR", "2C")), "two-cores"),
        ((mrr, "ip4.a", "latency", ("MRR", "2C")), ""),  # no test set takes this metric
        ((ndr, "ip4.a", "ndr", ("NDRPDR", "2C")), "ndr"),
        ((ndr, "ip4.a", "mrr", ("NDRPDR", "2C")), ""),  # mrr sets take only the mrr job
        ((mrr, "ip4.c", "mrr", ()), "mrr"),
        ((mrr, "ip4.d", None, ("MRR",)), ""),  # no metric
    ]
    df = pd.DataFrame([{"job": j, "test_id": t, "metric": m, "tags": g} for (j, t, m, g), _ in rows])
    if categorical:
        for c in ("job", "test_id", "metric"):
            df[c] = df[c].astype("category")
    spec = Spec(name="t", jobs=[JobSpec(mrr), JobSpec(ndr)], sources=[SourceSpec("l", "local", path=".")],
                test_sets=[TestSet("two-cores", jobs=[".*-mrr-.*"], select=Selection(tags="2C")),
                           TestSet("mrr", jobs=[".*-mrr-.*"], select=Selection(id_regex=r"^ip4\.")),
                           TestSet("ndr", jobs=[".*-ndrpdr-.*"], metrics=["ndr", "pdr"])])
    assert assign_test_sets(df, spec).tolist() == [want for _, want in rows]



@pytest.mark.parametrize("categories", ["sorted", "sorted with unused", "unsorted"])
def test_split_series_is_the_same_from_categoricals(categories):
    """The store's text columns are categoricals with sorted categories (their codes are used as the
    sort order); any other categorical is factorised as plain text is. Same series either way: in
    the order of (job, test id, metric), last row of a duplicate (series, build) kept."""
    mrr = "csit-vpp-perf-mrr-daily-master-2n-icx"
    rng = np.random.default_rng(4)
    ids = ["ip4.b", "ip4.a", "ip6.c", "ip4.a0", "IP4.z"]
    rows = [{"job": mrr if i % 3 else mrr + "x", "test_id": ids[i % 5], "metric": "mrr", "build": 100 + i % 7,
             "build_time": pd.Timestamp("2024-01-01", tz="UTC") + pd.Timedelta(days=i % 7),
             "value": float(rng.integers(1, 9)), "stdev": 0.0, "tags": ("MRR",), "nic": ["x", None][i % 2]}
            for i in range(60)]
    plain = coerce_samples(pd.DataFrame(rows))
    coded = plain.copy()
    for c in ("job", "test_id", "metric", "nic"):
        values = sorted(set(coded[c].dropna()))
        cats = {"sorted": values, "sorted with unused": sorted(values + ["a-unused", "zz-unused"]),
                "unsorted": values[::-1]}[categories]
        coded[c] = pd.Categorical(coded[c], categories=cats)
    spec = Spec(name="t", jobs=[JobSpec(mrr)], sources=[SourceSpec("l", "local", path=".")],
                test_sets=[TestSet("mrr")])
    want, got = split_series(plain, spec), split_series(coded, spec)
    assert [s.key for s in got] == [s.key for s in want] == sorted((s.key for s in want), key=lambda k: (k.job, k.test_id, k.metric))
    assert len(want) == 10
    for a, b in zip(got, want):
        assert a.attrs == b.attrs and a.test_set == b.test_set
        assert np.array_equal(a.builds, b.builds) and np.array_equal(a.values, b.values)


def test_series_of_a_job_that_ran_in_the_same_builds_share_their_axes_read_only():
    """One builds array and one times array per distinct axis: a pickle of many series holds
    them once (measured: 1,500 results in chunks of 100, 11.1 -> 7.0 MB, loads 154 -> 44 ms)."""
    import pickle

    mrr = "csit-vpp-perf-mrr-daily-master-2n-icx"
    rows = [{"job": mrr, "test_id": f"ip4.{test}", "metric": "mrr", "build": b, "value": float(b), "stdev": 0.0,
             "build_time": pd.Timestamp("2024-01-01", tz="UTC") + pd.Timedelta(days=b), "tags": ("MRR",)}
            for test, builds in (("a", (1, 2, 3)), ("b", (1, 2, 3)), ("c", (1, 3))) for b in builds]
    spec = Spec(name="t", jobs=[JobSpec(mrr)], sources=[SourceSpec("l", "local", path=".")],
                test_sets=[TestSet("mrr")])
    a, b, c = split_series(coerce_samples(pd.DataFrame(rows)), spec)
    assert [s.key.test_id for s in (a, b, c)] == ["ip4.a", "ip4.b", "ip4.c"]
    assert a.builds is b.builds and a.times is b.times and c.builds is not a.builds
    assert c.builds.tolist() == [1, 3] and a.builds.tolist() == [1, 2, 3]
    assert np.array_equal(c.times, a.times[[0, 2]])
    assert a.values is not b.values
    assert not a.builds.flags.writeable and not a.times.flags.writeable
    back = pickle.loads(pickle.dumps([a, b, c]))
    assert back[0].builds is back[1].builds and back[2].builds.tolist() == [1, 3]


def test_a_growing_series_goes_on_from_both_searches_states():
    """``keep``: the result carries the detector's and the masked search's states (``SearchStates``);
    the next day's series (one run more) analysed from them is the series analysed from scratch."""
    import dataclasses

    from pal.analysis.mdl import MdlSaved
    from pal.model import SearchStates
    from tests.test_pipeline_incremental import canon

    rng = np.random.default_rng(11)
    values = 1e7 * (1 + rng.normal(0, 0.005, 201))
    values[90:] *= 1.05
    values[40::50] *= 0.93  # one-run dips: the alert filters mask them and search again
    ts = TestSet("s", alert_filters=AlertFilters(1.0, 3))
    day1 = analyse_one(dataclasses.replace(series(values[:200]), keep=True), ts, False)
    assert isinstance(day1.resume, SearchStates)
    assert isinstance(day1.resume.detector, MdlSaved) and isinstance(day1.resume.masked, MdlSaved)
    assert analyse_one(series(values[:200]), ts, False).resume is None  # not asked for
    day2 = analyse_one(dataclasses.replace(series(values), resume=day1.resume, keep=True), ts, False)
    assert day2.resume.detector.resumed == 200 and day2.resume.masked.resumed > 0
    fresh = analyse_one(series(values), ts, False)
    day2.resume = None
    assert canon(day2) == canon(fresh) and fresh.alertable


def test_a_batch_analysed_step_by_step_is_each_series_analysed_alone(monkeypatch):
    """``analyse_many`` takes each step for a batch of series before the next: every detector's
    results (kept search states included) are those of ``analyse_one`` series by series, across
    batch boundaries."""
    import dataclasses
    import pickle

    from pal.analysis import series as series_mod

    rng = np.random.default_rng(5)
    items = []
    for i in range(11):
        values = 1e7 * (1 + rng.normal(0, 0.01, 40 + i))
        values[25:] *= 0.9 if i % 2 else 1.08
        if i % 3 == 0:
            values[7] = np.nan
        name = names()[i % len(names())]
        test_set = TestSet(f"s{i % 4}", detector=DetectorSpec(name), alert_filters=AlertFilters(1.0, 2))
        s = dataclasses.replace(series(values), test_set=test_set.name, keep=i % 2 == 0)
        items.append(series_mod.Analysis(s, test_set, get_detector(name), i % 5 == 0))
    alone = [analyse_one(a.series, a.test_set, a.single_testbed) for a in items]
    monkeypatch.setattr(series_mod, "ANALYSE_BATCH", 4)
    together = series_mod.analyse_many(items)
    assert pickle.dumps(together) == pickle.dumps(alone)
    assert sum(len(r.alertable) for r in alone) >= 5 and {r.detector for r in alone} == set(names())
