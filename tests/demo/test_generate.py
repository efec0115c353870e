"""The demo history on disk agrees with its truth, and the planted patterns are really there."""

from __future__ import annotations

import gzip
import re
import statistics
from pathlib import Path

import pytest
import yaml

from pal.demo import Truth, generate
from tests.demo.fixtures import demo_small  # noqa: F401
from tests.demo.xmlread import mrr_trials, read_build

MRR_2N = "csit-vpp-perf-mrr-daily-master-2n-icx"
MRR_3N = "csit-vpp-perf-mrr-daily-master-3n-alt"
NDRPDR = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"
IPV4 = re.compile(r"\b10\.30\.51\.\d{1,3}\b")


@pytest.fixture(scope="module")
def builds(demo_small):
    """(job, build) -> BuildRead for every readable build of the small history."""
    out = {}
    for job in demo_small.truth.jobs:
        for b in job.readable:
            out[(job.name, b)] = read_build(demo_small.root / job.name / str(b) / "output.xml.gz")
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_byte_identical_files(tmp_path):
    a = generate(tmp_path / "a", seed=7, small=True)
    b = generate(tmp_path / "b", seed=7, small=True)
    fa, fb = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b
    assert len(fa) == sum(len(j.present) for j in a.jobs) + 2  # + truth.json, renames.yaml
    assert fa == fb
    generate(tmp_path / "c", seed=8, small=True)
    fc = _files(tmp_path / "c")
    assert fc[f"{MRR_2N}/{a.job(MRR_2N).readable[0]}/output.xml.gz"] != fa[f"{MRR_2N}/{a.job(MRR_2N).readable[0]}/output.xml.gz"]


def test_regenerating_into_the_same_directory_replaces_the_history(tmp_path):
    generate(tmp_path, seed=1, small=True)
    truth = generate(tmp_path, seed=2, small=True, jobs=[MRR_3N])
    assert sorted(p.name for p in tmp_path.iterdir()) == [MRR_3N, "renames.yaml", "truth.json"]
    assert sorted(int(p.name) for p in (tmp_path / MRR_3N).iterdir()) == truth.job(MRR_3N).present


def test_truth_counts_match_the_disk(demo_small, builds):
    truth = Truth.load(demo_small.root / "truth.json")
    assert truth == demo_small.truth
    assert [j.name for j in truth.jobs] == [MRR_2N, MRR_3N, NDRPDR]
    assert [len(j.builds) for j in truth.jobs] == [30, 30, 10]
    series = set()
    for job in truth.jobs:
        on_disk = sorted(int(p.name) for p in (demo_small.root / job.name).iterdir())
        assert on_disk == job.present
        assert job.builds == list(range(job.builds[0], job.builds[0] + len(job.builds)))
        assert sorted(set(job.builds) - set(on_disk)) == job.missing
        assert sorted(set(job.present) - set(job.corrupt)) == job.readable
        for b in job.readable:
            rows = builds[(job.name, b)].rows
            assert len(rows) == job.tests == 15
            series.update((job.name, truth.renames.get(tid, tid), m) for tid in rows for m in job.metrics)
        assert {tid for (j, tid, _) in series if j == job.name} == set(job.test_ids)
    assert len(series) == truth.expected_series == 2 * 15 * 1 + 15 * 4
    assert sum(len(j.missing) for j in truth.jobs) >= 2
    assert sum(len(j.corrupt) for j in truth.jobs) == 1


def test_corrupt_archive_is_a_truncated_gzip(demo_small):
    job = demo_small.truth.job(MRR_2N)
    path = demo_small.root / MRR_2N / str(job.corrupt[0]) / "output.xml.gz"
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    with pytest.raises(EOFError), gzip.open(path) as fh:
        fh.read()


def test_every_pattern_is_planted(demo_small):
    kinds = {e.kind for e in demo_small.truth.events}
    assert kinds == {"regression", "progression", "small", "reverted", "all-testbeds", "failed", "renamed"}
    for e in demo_small.truth.events:
        job = demo_small.truth.job(e.job)
        assert job.readable[e.index] == e.build
        assert e.metric in job.metrics
        assert e.test_id in job.test_ids


def _series_means(builds, job, test_id, readable):
    """Run averages (mean of trials) of one MRR test, in build order, NaN when failed."""
    out = []
    for b in readable:
        row = builds[(job, b)].rows[test_id]
        out.append(statistics.fmean(mrr_trials(row.message)) if row.status == "PASS" else float("nan"))
    return out


@pytest.mark.parametrize("kind", ["regression", "progression", "small", "all-testbeds"])
def test_mrr_messages_step_by_the_planted_amount(demo_small, builds, kind):
    events = [e for e in demo_small.truth.events_of(kind) if e.metric == "mrr"]
    assert events
    for e in events:
        means = _series_means(builds, e.job, e.test_id, demo_small.truth.job(e.job).readable)
        before, after = means[: e.index], means[e.index:]
        observed = statistics.fmean(after) / statistics.fmean(before) - 1
        tol = 0.05 if len(after) == 1 else 0.015  # one run after: its own noise dominates
        assert observed == pytest.approx(e.change, abs=tol), (e.test_id, observed, e.change)
        if kind == "small":
            assert -0.04 <= e.change <= -0.02
        elif kind != "all-testbeds":
            assert 0.10 <= abs(e.change) <= 0.30


def test_reverted_regression_is_one_low_run(demo_small, builds):
    for e in demo_small.truth.events_of("reverted"):
        means = _series_means(builds, e.job, e.test_id, demo_small.truth.job(e.job).readable)
        others = means[: e.index] + means[e.index + 1:]
        assert e.builds == [e.build]
        assert means[e.index] / statistics.fmean(others) - 1 == pytest.approx(e.change, abs=0.05)
        assert statistics.fmean(means[e.index + 1:]) / statistics.fmean(means[: e.index]) == pytest.approx(1, abs=0.015)


def test_all_testbeds_step_comes_with_a_new_vpp_version_on_every_job(demo_small, builds):
    events = demo_small.truth.events_of("all-testbeds")
    assert {e.job for e in events} == {MRR_2N, MRR_3N, NDRPDR}
    days = set()
    for e in events:
        job = demo_small.truth.job(e.job)
        now, prev = builds[(e.job, e.build)], builds[(e.job, job.readable[e.index - 1])]
        assert now.versions[0] != prev.versions[0]
        if job.test_type == "MRR":
            days.add(now.generated[:10])
    assert len(days) == 1  # both daily jobs step on the same day
    tgs = {ip for e in events for ip in builds[(e.job, e.build)].tg_ips}
    assert len(tgs) >= 2


def test_failed_tests_have_a_message_and_no_value(demo_small, builds):
    events = demo_small.truth.events_of("failed")
    assert {e.job for e in events} == {MRR_2N, MRR_3N, NDRPDR}
    for e in events:
        for b in demo_small.truth.job(e.job).readable:
            row = builds[(e.job, b)].rows[e.test_id]
            if b in e.builds:
                assert row.status == "FAIL"
                assert IPV4.search(row.message), row.message
                assert "Maximum Receive Rate" not in row.message and "NDR_LOWER" not in row.message
            else:
                assert row.status == "PASS"
    failing_now = [e for e in events if e.note == "failing now"]
    assert all(e.builds[-1] == demo_small.truth.job(e.job).readable[-1] for e in failing_now)


def test_renamed_tests_switch_ids_at_the_planted_build(demo_small, builds):
    renames = yaml.safe_load((demo_small.root / "renames.yaml").read_text())
    assert renames == demo_small.truth.renames and renames
    events = demo_small.truth.events_of("renamed")
    assert {e.old_test_id for e in events} == set(renames)
    for e in events:
        assert renames[e.old_test_id] == e.test_id
        for k, b in enumerate(demo_small.truth.job(e.job).readable):
            rows = builds[(e.job, b)].rows
            assert (e.test_id in rows) == (k >= e.index)
            assert (e.old_test_id in rows) == (k < e.index)


def test_mrr_values_are_realistic(demo_small, builds):
    for (job, _), build in builds.items():
        for row in build.rows.values():
            if row.status == "PASS" and job != NDRPDR:
                trials = mrr_trials(row.message)
                assert len(trials) == 10
                assert 0.9e6 < statistics.fmean(trials) < 3.1e7
                rel = statistics.pstdev(trials) / statistics.fmean(trials)
                assert rel < 0.06


def test_testbeds_rotate_and_versions_change_every_few_builds(demo_small, builds):
    for job in demo_small.truth.jobs:
        tgs = [builds[(job.name, b)].tg_ips for b in job.readable]
        assert all(len(t) == 1 for t in tgs)
        assert {t[0] for t in tgs} == set(job.testbeds)
        versions = [builds[(job.name, b)].versions[0] for b in job.readable]
        assert all(re.fullmatch(r"\d\d\.\d\d-rc0~\d+-g[0-9a-f]{9}~b\d+", v) for v in versions)
        if job.test_type == "MRR":
            assert 4 <= len(set(versions)) <= 20
    assert demo_small.truth.job(MRR_2N).testbeds == ["10.30.51.45", "10.30.51.46", "10.30.51.47"]
    assert demo_small.truth.job(MRR_3N).testbeds == ["10.30.51.90"]


def test_build_times_are_daily_and_weekly_ending_on_the_fixed_day(demo_small, builds):
    for job, step in ((MRR_2N, 1), (NDRPDR, 7)):
        readable = demo_small.truth.job(job).readable
        days = [builds[(job, b)].generated[:10] for b in readable]
        assert days[-1] == "2026-11-20"
        from datetime import date
        gaps = {(date.fromisoformat(b) - date.fromisoformat(a)).days // (y - x)
                for (x, a), (y, b) in zip(zip(readable, days), zip(readable[1:], days[1:]))}
        assert gaps == {step}


def test_scale_parameters(tmp_path):
    truth = generate(tmp_path, seed=3, jobs=4, builds=12, tests=20)
    assert [len(j.builds) for j in truth.jobs] == [12, 12, 6, 12]
    assert all(j.tests == 20 for j in truth.jobs)
    assert truth.expected_series == 20 * (1 + 1 + 4 + 1)
    assert truth.jobs[3].name == "csit-vpp-perf-mrr-daily-master-2n-spr"
    job = truth.jobs[0]
    rows = read_build(tmp_path / job.name / str(job.readable[-1]) / "output.xml.gz").rows
    assert len(rows) == 20
    suites = {tid.rsplit(".", 1)[0] for tid in rows}
    assert len(suites) == 7  # fewer than 60 tests: 3 per suite (3 x 6 + 2), so every frame size and core count shows


def test_summary_names_the_counts(demo_small):
    s = demo_small.truth.summary()
    assert s.startswith("3 jobs, 70 builds (")
    assert "90 series" in s and "dialect rf7, seed 1" in s


def _ndrpdr(message: str) -> dict[str, float]:
    """NDR/PDR lower bounds (pps, Gbps) and avg latency at 50 % PDR per direction."""
    out = {}
    for key in ("NDR_LOWER", "PDR_LOWER"):  # "NDR:" / "PDR:" since MLRsearch v7 (the demo's later builds)
        m = re.search(rf"(?:{key}|\n{key[:3]}): ([\d.]+) pps, ([\d.]+) Gbps", message)
        out[key], out[key + "_gbps"] = float(m.group(1)), float(m.group(2))
    lat = re.search(r"Latency at 50% PDR: \['\d+/(\d+)/\d+/[^']*', '\d+/(\d+)/\d+/[^']*'\]", message)
    out["d1"], out["d2"] = float(lat.group(1)), float(lat.group(2))
    return out


def test_ndrpdr_messages_are_consistent_and_carry_the_planted_steps(demo_small, builds):
    job = demo_small.truth.job(NDRPDR)
    frames = {"64B": 64, "1518B": 1518, "IMIX": 353.83}
    for b in job.readable:
        for row in builds[(NDRPDR, b)].rows.values():
            if row.status != "PASS":
                continue
            v = _ndrpdr(row.message)
            frame = next(frames[t] for t in row.tags if t in frames)
            assert v["NDR_LOWER"] <= v["PDR_LOWER"]
            assert v["PDR_LOWER_gbps"] == pytest.approx(v["PDR_LOWER"] * (frame + 20) * 8 / 1e9, abs=0.006)
    for e in demo_small.truth.events_of(job=NDRPDR):
        if e.kind not in ("regression", "progression", "all-testbeds"):
            continue
        key = {"ndr": "NDR_LOWER", "pdr": "PDR_LOWER", "latency_pdr50_d1": "d1", "latency_pdr50_d2": "d2"}[e.metric]
        series = [_ndrpdr(builds[(NDRPDR, b)].rows[e.test_id].message)[key] for b in job.readable]
        observed = statistics.fmean(series[e.index:]) / statistics.fmean(series[: e.index]) - 1
        tol = 0.08 if key in ("d1", "d2") else 0.03  # latencies are whole microseconds
        assert observed == pytest.approx(e.change, abs=tol), (e.metric, e.test_id, observed, e.change)
    assert {e.metric for e in demo_small.truth.events_of("regression", NDRPDR)} == {
        "ndr", "pdr", "latency_pdr50_d1", "latency_pdr50_d2"}
