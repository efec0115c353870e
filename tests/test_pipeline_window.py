"""``pipeline.window_series``: the window read and cut one job at a time gives the series and the
kept rows of one read of the whole window (``load_history`` + ``split_series`` + ``alert_samples``)."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

from pal.alerts import alert_samples
from pal.analysis.series import split_series
from pal.history import concat_samples, load_history, window_builds
from pal.pipeline import window_series
from pal.report import RunReport
from pal.spec import parse_spec
from pal.store import Store
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture
from tests.store.data import make_meta, make_samples

A = "csit-vpp-perf-mrr-daily-master-2n-icx"
B = "csit-vpp-perf-mrr-daily-master-3n-alt"
C = "csit-vpp-perf-ndrpdr-weekly-master-2n-spr"
NOW = datetime(2023, 1, 1, tzinfo=timezone.utc)
SPEC = f"""\
name: w
jobs:
  - {{name: {C}}}
  - {{name: {A}, max-builds: 3}}
  - {{name: {B}, builds: [2, 4, 5]}}
sources:
  - {{name: dir, type: local, path: data}}
test-sets:
  - {{name: mrr, metrics: [mrr], detector: {{name: mdl}}}}
  - {{name: ndr, metrics: [ndr], detector: {{name: mdl}}}}
rename:
  tests.vpp.perf.ip4.b-mrr: tests.vpp.perf.ip4.a-mrr
ignore: ["ignored"]
testbeds: {{tb-2: testbed-two}}
"""


def job_samples(job: str, build: int) -> pd.DataFrame:
    """The store fixture's rows, with texts only some jobs have (categories differ per job)."""
    df = make_samples(job, build, scale=1.0 + build / 10 + (job == B))
    if job == B:
        df["dut_version"] = f"23.{build:02d}"
        df["testbed"] = "tb-2"
        df["test_id"] = df["test_id"].str.replace("c-ndrpdr", "d-ndrpdr")
        df.loc[1, "status"] = "PASS"
        df.loc[1, "value"] = 1e6 * build
    if job == C:
        df["nic"] = "100ge2p1e810cq"
        df.loc[0, "test_id"] = "tests.vpp.perf.ip4.ignored-mrr"
    return df


def test_job_by_job_equals_one_read_of_the_window(tmp_path):
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = Store(tmp_path / "s")
    for job in (A, B, C):
        for b in range(1, 7):
            store.insert(job_samples(job, b), make_meta(job, b), f"{b:064d}")
    whole_report, report = RunReport(), RunReport()
    whole = load_history(spec, store, NOW, whole_report)
    history, inputs = window_series(spec, store, window_builds(spec, store, NOW), report)

    expected = split_series(whole.samples, spec)
    assert [i.key for i in inputs] == [i.key for i in expected] and len(inputs) == 6
    for got, want in zip(inputs, expected):
        assert (got.test_set, got.attrs) == (want.test_set, want.attrs)
        for name in ("builds", "times", "values", "stdevs"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    pd.testing.assert_frame_equal(history.samples, alert_samples(whole.samples))
    pd.testing.assert_frame_equal(history.builds, whole.builds)
    assert report.counts == whole_report.counts == {"history.builds": 12, "history.samples": 30}
    # what the jobs differ in is there, and the strings stay sorted categoricals
    assert set(history.samples["testbed"]) == {"tb-1", "testbed-two"}
    assert list(history.samples["dut_version"].cat.categories) == ["22.02", "23.02", "23.04", "23.05"]
    assert "tests.vpp.perf.ip4.ignored-mrr" not in set(history.samples["test_id"])


def test_concat_keeps_categoricals_with_the_sorted_union():
    a = pd.DataFrame({"s": pd.Categorical(["b", "a"]), "x": [1.0, 2.0]})
    b = pd.DataFrame({"s": pd.Categorical(["c", None, "a"]), "x": [3.0, 4.0, 5.0]})
    out = concat_samples([a, b])
    assert list(out["s"].cat.categories) == ["a", "b", "c"]
    assert out["s"].tolist()[:3] == ["b", "a", "c"] and pd.isna(out["s"][3])
    assert out["x"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and list(out.index) == [0, 1, 2, 3, 4]


def test_an_incremental_run_with_the_analysis_ahead_equals_an_inline_full_run(tmp_path, monkeypatch,
                                                                              demo_small):  # noqa: F811
    """``pal run`` with the render's worker analysing ahead (the daily run of a large site; the
    threshold lowered to the demo's 90 series) gives the results of a from-scratch run here."""
    import shutil

    import pal.render.site as site
    from pal.pipeline import RunOptions, run
    from pal.spec import load_spec
    from tests.test_pipeline_incremental import SPEC as INCREMENTAL_SPEC, canon, newest

    roots = {}
    for name in ("ahead", "inline"):
        root = roots[name] = tmp_path / name
        shutil.copytree(demo_small.root, root / "data")
        (root / "spec.yaml").write_text(INCREMENTAL_SPEC)
        (root / "acks.yaml").write_text("{}\n")
    held = tmp_path / "held"
    for j in demo_small.truth.jobs:
        for b in newest(demo_small, j.name, 2):
            (held / j.name).mkdir(parents=True, exist_ok=True)
            shutil.move(roots["ahead"] / "data" / j.name / str(b), held / j.name / str(b))
    now = datetime(2027, 1, 1, tzinfo=timezone.utc)
    spec = load_spec(roots["ahead"] / "spec.yaml")
    run(spec, RunOptions(workers=1, now=now))
    for job in held.iterdir():
        for b in job.iterdir():
            shutil.move(b, roots["ahead"] / "data" / job.name / b.name)
    monkeypatch.setattr(site, "POOL_MIN_SERIES", 1)
    ahead = run(spec, RunOptions(workers=2, now=now))
    monkeypatch.setattr(site, "POOL_MIN_SERIES", 10 ** 9)
    inline = run(load_spec(roots["inline"] / "spec.yaml"), RunOptions(workers=1, now=now, full=True))
    assert ahead.report.counts["series.analysed_by_render_worker"] > 0
    assert "series.analysed_by_render_worker" not in inline.report.counts
    assert len(ahead.results) == len(inline.results) == 90
    assert [canon(r) for r in ahead.results] == [canon(r) for r in inline.results]


def test_a_first_run_analyses_ahead_on_the_renders_worker(tmp_path, demo_small, monkeypatch):  # noqa: F811
    """A run with no page digests before it sizes its site by the jobs' widest stored builds and
    starts the render's pool after the parse: its worker analyses ahead, with the results of a
    run that analyses every series in its own process."""
    import shutil

    import pal.render.site as site
    from pal.pipeline import RunOptions, run
    from pal.spec import load_spec
    from pal.store import Store
    from tests.test_pipeline_incremental import SPEC as INCREMENTAL_SPEC, canon

    now = datetime(2027, 1, 1, tzinfo=timezone.utc)
    outcomes = {}
    for name, least in (("ahead", None), ("inline", 10 ** 9)):
        root = tmp_path / name
        shutil.copytree(demo_small.root, root / "data")
        (root / "spec.yaml").write_text(INCREMENTAL_SPEC)
        (root / "acks.yaml").write_text("{}\n")
        spec = load_spec(root / "spec.yaml")
        if least is None:  # the jobs' widest builds, summed: the site's size as the run guesses it
            monkeypatch.setattr(site, "POOL_MIN_SERIES", 1)
        else:
            monkeypatch.setattr(site, "POOL_MIN_SERIES", least)
        outcomes[name] = run(spec, RunOptions(workers=2, now=now))
        if least is None:
            widest = Store(spec.store_dir).widest_builds()
            assert set(widest) == {j.name for j in spec.jobs} and min(widest.values()) > 0
    assert outcomes["ahead"].report.counts["series.analysed_by_render_worker"] > 0
    assert "series.analysed_by_render_worker" not in outcomes["inline"].report.counts
    assert [canon(r) for r in outcomes["ahead"].results] == [canon(r) for r in outcomes["inline"].results]
    # the exports' build files, some of which the render's worker may have written: the same bytes
    exported = {name: {str(p.relative_to(tmp_path / name)): p.read_bytes()
                       for p in sorted((tmp_path / name / "out" / "exports").rglob("*")) if p.is_file()}
                for name in outcomes}
    assert len(exported["ahead"]) > 10 and exported["ahead"] == exported["inline"]
