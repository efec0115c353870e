"""Golden end-to-end: `pal run` on a generated history finds what the generator planted.

The demo generator writes ``truth.json`` beside the history (pal.demo.Truth); this test runs
the CLI on it and checks counts of builds, tests and series and every planted anomaly against
that ground truth.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pal.cli import main
from pal.pipeline import RunOptions, run
from pal.spec import load_spec
from tests.demo.fixtures import demo_small  # noqa: F401

SPEC = """\
name: golden
jobs:
  - name: csit-vpp-perf-mrr-daily-master-2n-icx
  - name: csit-vpp-perf-mrr-daily-master-3n-alt
    testbeds: 1
  - name: csit-vpp-perf-ndrpdr-weekly-master-2n-icx
sources:
  - {{name: dir, type: local, path: "{root}"}}
testbeds: {{10.30.51.45: 2n-icx-tb1, 10.30.51.46: 2n-icx-tb2, 10.30.51.47: 2n-icx-tb3, 10.30.51.90: 3n-alt-tb1}}
rename-file: "{root}/renames.yaml"
test-sets:
  - name: mrr
    jobs: [".*-mrr-.*"]
    select: {{tags: "MRR"}}
    metrics: [mrr]
    alert-filters: {{min-change-pct: 1.0, confirm-runs: 1}}  # as specs/demo.yaml: last-run changes alert
  - name: ndrpdr
    jobs: [".*-ndrpdr-.*"]
    select: {{tags: NDRPDR}}
    metrics: [ndr, pdr]
    windows: {{short-term-runs: 4, short-term-runs-single-testbed: 2, long-term-runs: 26}}
  - name: latency
    jobs: [".*-ndrpdr-.*"]
    select: {{tags: NDRPDR}}
    metrics: [latency_pdr50_d1, latency_pdr50_d2]
    detector: {{name: mdl, params: {{unit: 1.0}}}}
    windows: {{short-term-runs: 4, short-term-runs-single-testbed: 2, long-term-runs: 26}}
outputs: {{dir: out, build-url: "https://jenkins.example.org/job/{{job}}/{{build}}"}}
store: {{path: store, workers: 1}}
"""


@pytest.fixture(scope="module")
def golden(demo_small, tmp_path_factory):
    """One cold run of the CLI, then the results of a second run over the same store."""
    work = tmp_path_factory.mktemp("golden")
    spec_path = work / "spec.yaml"
    spec_path.write_text(SPEC.format(root=demo_small.root))
    first_code = main(["run", "--spec", str(spec_path), "-q"])
    outcome = run(load_spec(spec_path), RunOptions())
    return demo_small.truth, work, first_code, outcome


def by_key(outcome):
    return {(r.key.job, r.key.test_id, r.key.metric): r for r in outcome.results}


def test_counts_match_truth(golden):
    truth, work, first_code, outcome = golden
    report = json.loads((work / "out" / "report.json").read_text())
    readable = sum(len(j.readable) for j in truth.jobs)
    assert report["counts"]["history.builds"] == readable
    assert len(outcome.results) == truth.expected_series
    for job in truth.jobs:
        ids = {r.key.test_id for r in outcome.results if r.key.job == job.name}
        assert ids == set(job.test_ids), job.name


def test_corrupt_archive_is_reported_and_the_run_goes_on(golden):
    truth, work, _, _ = golden
    report = json.loads((work / "out" / "report.json").read_text())
    corrupt = [f"{j.name}/{b}" for j in truth.jobs for b in j.corrupt]
    assert corrupt, "the demo plants one corrupt archive"
    reported = {p["item"] for p in report["problems"] if p["severity"] == "error"}
    assert set(corrupt) <= reported


def test_first_run_fails_on_new_last_run_regressions_second_does_not(golden):
    truth, _, first_code, outcome = golden
    assert any(e.note.startswith("last run") for e in truth.events if e.kind == "regression")
    assert first_code == 2
    # same inputs again: the regressions are known (ongoing), not new -> exit 0
    assert outcome.exit_code == 0


@pytest.mark.parametrize("kind", ["regression", "progression"])
def test_planted_steps_are_found_at_their_build(golden, kind):
    truth, _, _, outcome = golden
    results = by_key(outcome)
    events = truth.events_of(kind)
    assert events
    for e in events:
        r = results[(e.job, e.test_id, e.metric)]
        found = {(a.kind, a.first_bad_build) for a in r.changes}
        assert (kind, e.build) in found, (e, sorted(found))


def test_reverted_regression_is_a_dip_and_a_return(golden):
    truth, _, _, outcome = golden
    results = by_key(outcome)
    for e in truth.events_of("reverted"):
        r = results[(e.job, e.test_id, e.metric)]
        i = int(np.flatnonzero(r.builds == e.build)[0])
        kinds = {a.index: a.kind for a in r.changes}
        assert kinds.get(i) == "regression", e
        nxt = next(j for j in range(i + 1, len(r.values)) if not np.isnan(r.values[j]))
        assert kinds.get(nxt) == "progression", e


def test_step_on_all_testbeds_seen_on_every_job_at_once(golden):
    truth, _, _, outcome = golden
    results = by_key(outcome)
    events = truth.events_of("all-testbeds")
    jobs = {e.job for e in events}
    assert len(jobs) == 3
    for e in events:
        r = results[(e.job, e.test_id, e.metric)]
        assert (("regression" if e.change < 0 else "progression"), e.build) in {(a.kind, a.first_bad_build) for a in r.changes}


def test_failed_tests_are_gaps_never_zero(golden):
    truth, work, _, outcome = golden
    results = by_key(outcome)
    for e in truth.events_of("failed"):
        r = results[(e.job, e.test_id, e.metric)]
        i = np.flatnonzero(r.builds == e.build)
        assert len(i) == 1 and np.isnan(r.values[i[0]]) and np.isnan(r.trend[i[0]])
        assert not np.any(r.values == 0.0)
    failing_now = [e for e in truth.events_of("failed") if e.note == "failing now"]
    text = (work / "out" / "alerts" / "trending-failed-tests.txt").read_text()
    assert failing_now
    for e in failing_now:
        # CSIT's layout: the name without its frame size, which has a column of its own
        assert e.test_id.rsplit(".", 1)[-1].split("-", 1)[1] in text


def test_renamed_tests_keep_their_history(golden):
    truth, _, _, outcome = golden
    results = by_key(outcome)
    for e in truth.events_of("renamed"):
        r = results[(e.job, e.test_id, e.metric)]
        job = truth.job(e.job)
        assert int(r.builds[0]) == min(job.readable), e  # history from before the rename
        assert (e.job, e.old_test_id, e.metric) not in results


def test_no_false_latency_changes_with_the_right_precision(golden):
    """Latency is whole µs; with unit 1.0 MDL calls only the planted latency change."""
    truth, _, _, outcome = golden
    planted = {(e.job, e.test_id, e.metric) for e in truth.events
               if e.metric.startswith("latency") and e.kind in ("regression", "progression", "all-testbeds")}
    for r in outcome.results:
        if r.key.metric.startswith("latency") and (r.key.job, r.key.test_id, r.key.metric) not in planted:
            assert r.changes == [], (r.key, [(a.kind, a.first_bad_build) for a in r.changes])


def test_site_and_outputs_exist(golden):
    _, work, _, outcome = golden
    out = work / "out"
    index = (out / "site" / "index.html").read_text()
    assert "csit-vpp-perf-mrr-daily-master-2n-icx" in index or "2n-icx" in index
    for name in ("alerts.json", "junit.xml", "report.json"):
        assert (out / name).is_file(), name
    assert (out / "alerts" / "trending-regressions.txt").is_file()


def test_upstream_build_is_checked(golden, tmp_path):
    truth, work, _, _ = golden
    job = truth.jobs[0]
    spec = load_spec(work / "spec.yaml")
    ok = run(spec, RunOptions(upstream=(job.name, max(job.readable)), out_dir=work / "out"))
    assert ok.report.counts.get("upstream.analysed") == 1
    corrupt = job.corrupt[0]
    bad = run(spec, RunOptions(upstream=(job.name, corrupt), out_dir=work / "out"))
    assert any(p.item == f"{job.name}/{corrupt}" and p.stage == "analyse" for p in bad.report.problems)
    assert main(["run", "--spec", str(work / "spec.yaml"), "--upstream", "no-build-number", "-q"]) == 1


def test_last_run_regressions_say_code_or_infrastructure(golden):
    """The demo plants two last-run regressions: on 2n-icx the same VPP build on another testbed
    (infrastructure), on 3n-alt a VPP build that landed before the job started (code: a commit
    range and CSIT's bisect trigger)."""
    truth, work, _, _ = golden
    doc = json.loads((work / "out" / "alerts.json").read_text())
    planted = {(e.job, e.test_id): e.note for e in truth.events if e.kind == "regression" and e.note.startswith("last run")}
    got = {(a["job"], a["test_id"]): a for a in doc["alerts"] if (a["job"], a["test_id"]) in planted and a["metric"] == "mrr"}
    assert set(got) == set(planted)
    for key, note in planted.items():
        a = got[key]
        if "code" in note:
            assert a["suspect"]["verdict"] == "code" and a["suspect"]["commits"] >= 3
            assert a["bisect"]["comment"].startswith(f"bisecttest-{a['topo_arch']} {a['suspect']['good']} ")
        else:
            assert a["suspect"]["verdict"] == "infrastructure" and a["bisect"] is None
            assert "testbed" in a["suspect"]["summary"]
    assert {n.split(", ")[1].split(":")[0] for n in planted.values()} == {"code", "infrastructure"}
