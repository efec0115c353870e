"""A run triggered by one job's new build analyses that job only, and gives what a from-scratch
run gives.

History: the small demo history (3 jobs). Run A sees it without the MRR job's newest build; run
B (same output dir and store) sees that build too: the two other jobs' results come from A's
files (``pal.analysis.result_cache``). Run C is ``--full`` on everything in a fresh output dir.
Run D follows a damaged file: its job is analysed again, the run goes on.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from pal.analysis.result_cache import CACHE_DIR, MAGIC, job_file, states_file
from pal.demo import DemoHistory
from pal.pipeline import RunOptions, run
from pal.spec import load_spec
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture
from tests.test_pipeline_incremental import NOW, files_under, newest, results_by_key, strip_alert_table, workspaces

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"  # the job whose PT run just ended


@pytest.fixture(scope="module")
def runs(demo_small: DemoHistory, tmp_path_factory: pytest.TempPathFactory,  # noqa: F811
         ) -> dict[str, Any]:
    inc, full = workspaces(demo_small, tmp_path_factory, "one-job", "one-job-full")
    (build,) = newest(demo_small, JOB, 1)
    shutil.move(inc / "data" / JOB / str(build), inc / f"hidden-{build}")
    spec_inc = load_spec(inc / "spec.yaml")
    a = run(spec_inc, RunOptions(workers=1, now=NOW))
    shutil.move(inc / f"hidden-{build}", inc / "data" / JOB / str(build))
    b = run(spec_inc, RunOptions(workers=1, now=NOW))
    site_b = files_under(inc / "out" / "site")
    exports_b = files_under(inc / "out" / "exports")
    c = run(load_spec(full / "spec.yaml"), RunOptions(workers=1, now=NOW, full=True))
    return {"a": a, "b": b, "c": c, "inc": inc, "full": full, "site_b": site_b, "exports_b": exports_b,
            "spec": spec_inc}


def series_of(outcome: Any, job: str | None = None) -> int:
    return sum(1 for r in outcome.results if job is None or r.key.job == job)


def test_only_the_job_with_a_new_build_is_analysed(runs: dict[str, Any]) -> None:
    a, b = runs["a"], runs["b"]
    assert a.report.counts["series.reused"] == 0  # nothing kept before the first run
    assert b.report.counts["builds.parsed"] == 1
    assert b.report.counts["series.reused"] == series_of(b) - series_of(b, JOB) > 0
    # the other jobs' windows did not move: nothing of them was read from the store
    assert b.report.counts["history.jobs_unread"] == len(runs["spec"].jobs) - 1
    assert b.report.counts["history.samples"] == a.report.counts["history.samples"] + series_of(b, JOB)  # its new run
    files = sorted(p.name for p in (runs["inc"] / "out" / "cache" / CACHE_DIR).iterdir())
    # each job's results, and its MDL states: every window here holds all its job's builds (it grows)
    assert files == sorted([job_file(Path("."), j.name).name for j in runs["spec"].jobs]
                           + [states_file(Path("."), j.name).name for j in runs["spec"].jobs])


def test_results_pages_and_exports_equal_a_full_run(runs: dict[str, Any]) -> None:
    b, c = results_by_key(runs["b"]), results_by_key(runs["c"])
    assert list(b) == list(c) and len(c) == 90
    for key in c:
        assert b[key] == c[key], key
    assert runs["exports_b"] == files_under(runs["full"] / "out" / "exports")
    site_c = files_under(runs["full"] / "out" / "site")
    pages = [k for k in site_c if k.split("/")[0] in ("s", "data", "svg", "g")]
    assert len([k for k in pages if k.startswith("s/")]) == 90
    for name in pages:  # B carries A's alerts (ongoing): their tables may differ
        assert strip_alert_table(runs["site_b"][name]) == strip_alert_table(site_c[name]), name


def test_a_damaged_file_costs_its_job_an_analysis(runs: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    inc, spec = runs["inc"], runs["spec"]
    other = next(j.name for j in spec.jobs if j.name != JOB)
    job_file(inc / "out" / "cache" / CACHE_DIR, other).write_bytes(MAGIC + b"\x00\x01")
    (inc / "acks.yaml").write_text("# no acks yet\n{}\n")  # the inputs changed: not a kept run
    with caplog.at_level(logging.INFO, logger="pal"):
        d = run(spec, RunOptions(workers=1, now=NOW))
    reused = d.report.counts["series.reused"]
    assert reused == series_of(d) - series_of(d, other)
    assert any("unreadable" in r.getMessage() and other in r.getMessage() for r in caplog.records)
    assert any("90 series from" in r.getMessage() and f"{reused} of unchanged jobs as the last run left them"
               in r.getMessage() for r in caplog.records)  # the analyse step says so
    assert results_by_key(d) == results_by_key(runs["c"])
