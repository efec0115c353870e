"""Incremental = full: a run that adds builds to a stored history gives what a from-scratch run gives.

History: the small demo history (3 jobs, every planted pattern). Run A sees each job without
its newest builds, run B (same output dir and store) sees all of them and parses only the new
ones, extending the saved MDL states; run C is ``--full`` on all builds in a fresh output dir.
B and C must agree exactly on results, alerts (but the run-specific new/ongoing fields),
series pages and exports.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pal.alerts.build import group_alerts
from pal.demo import DemoHistory
from pal.pipeline import RunOptions, RunOutcome, run
from pal.spec import load_spec
from pal.store import Store
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture

HIDDEN = 3  # newest builds of each job kept back from the first run
NOW = datetime(2027, 1, 1, tzinfo=timezone.utc)

SPEC = """\
name: incremental
jobs:
  - name: csit-vpp-perf-mrr-daily-master-2n-icx
    max-builds: 180
  - name: csit-vpp-perf-mrr-daily-master-3n-alt
    max-builds: 180
    testbeds: 1
  - name: csit-vpp-perf-ndrpdr-weekly-master-2n-icx
    max-builds: 60
sources:
  - {name: dir, type: local, path: data}
testbeds:
  10.30.51.45: 2n-icx-tb1
  10.30.51.46: 2n-icx-tb2
  10.30.51.47: 2n-icx-tb3
  10.30.51.90: 3n-alt-tb1
rename-file: data/renames.yaml
test-sets:
  - name: mrr
    jobs: [".*-mrr-.*"]
    select: {tags: "MRR AND NOT SOAK"}
    metrics: [mrr]
    detector: {name: mdl}
    alert-filters: {min-change-pct: 0, confirm-runs: 1}
  - name: ndrpdr
    jobs: [".*-ndrpdr-.*"]
    select: {tags: NDRPDR}
    metrics: [ndr, pdr, latency_pdr50_d1, latency_pdr50_d2]
    detector: {name: mdl}
    windows: {short-term-runs: 4, short-term-runs-single-testbed: 2, long-term-runs: 26}
outputs:
  dir: out
  title: incremental
  exports: [csv, parquet]
  build-url: "https://jenkins.example.org/job/{job}/{build}"
alerts:
  fail-on: new-regression
  acks: acks.yaml
store:
  path: out/store
"""

#: alert fields that record the run rather than the data: first seen now or before
RUN_FIELDS = {"status", "fresh", "previous_id", "previous_state", "fails_job"}


def canon(obj: Any) -> Any:
    """A JSON-comparable form that keeps every bit: floats by repr, NaN as a string."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "M":
            return [str(v) for v in obj]
        return [canon(v) for v in obj.tolist()]
    if isinstance(obj, dict):
        return {str(k): canon(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [canon(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return "nan" if math.isnan(obj) else repr(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def results_by_key(outcome: RunOutcome) -> dict[str, Any]:
    return {f"{r.key.job}|{r.key.test_id}|{r.key.metric}": canon(r) for r in outcome.results}


def alerts_without_run_fields(text: str) -> dict[str, Any]:
    doc = json.loads(text)
    doc["alerts"] = [{k: v for k, v in a.items() if k not in RUN_FIELDS} for a in doc["alerts"]]
    for k in ("new", "ongoing"):
        doc["counts"].pop(k)
    doc.pop("exit_code")  # follows the number of new regressions
    return doc


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def newest(history: DemoHistory, job: str, k: int) -> list[int]:
    present = next(j.present for j in history.truth.jobs if j.name == job)
    return sorted(present)[-k:]


def workspaces(history: DemoHistory, factory: pytest.TempPathFactory, *names: str) -> list[Path]:
    """A directory per name holding the demo history (``data``), ``SPEC`` and no acks."""
    roots = [factory.mktemp(name) for name in names]
    for root in roots:
        shutil.copytree(history.root, root / "data")
        (root / "spec.yaml").write_text(SPEC)
        (root / "acks.yaml").write_text("{}\n")
    return roots


@pytest.fixture(scope="module")
def runs(demo_small: DemoHistory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    """Runs A (builds hidden), B (revealed, incremental) and C (--full from scratch)."""
    inc, full = workspaces(demo_small, tmp_path_factory, "incremental", "full")
    hidden = {j.name: newest(demo_small, j.name, HIDDEN) for j in demo_small.truth.jobs}
    for job, builds in hidden.items():
        for b in builds:
            (inc / "hidden" / job).mkdir(parents=True, exist_ok=True)
            shutil.move(inc / "data" / job / str(b), inc / "hidden" / job / str(b))

    spec_inc, spec_full = load_spec(inc / "spec.yaml"), load_spec(full / "spec.yaml")
    # workers=1: analysis and parse inline, so the MDL restarts below are counted in this process
    a = run(spec_inc, RunOptions(workers=1, now=NOW))
    for job, builds in hidden.items():
        for b in builds:
            shutil.move(inc / "hidden" / job / str(b), inc / "data" / job / str(b))
    # a store written by an older pal holds MDL states: the run removes them
    Store(spec_inc.store_dir).save_state("mdl", {"old|state|mrr": {"version": 1}})
    b = run(spec_inc, RunOptions(workers=1, now=NOW))
    states_b = Store(spec_inc.store_dir).load_state("mdl")
    site_b = files_under(inc / "out" / "site")
    alerts_b = (inc / "out" / "alerts.json").read_text()
    c = run(spec_full, RunOptions(workers=1, now=NOW, full=True))
    # D: nothing new; E: nothing new but one alert acked (its page must show it)
    d = run(spec_inc, RunOptions(workers=1, now=NOW))
    site_d = files_under(inc / "out" / "site")
    acked = next(al for al in b.alerts if al.kind == "regression")
    (inc / "acks.yaml").write_text(f'{acked.id}: "CSIT-1234 known"\n')
    e = run(spec_inc, RunOptions(workers=1, now=NOW))
    # F: the spec's short-term window shortened, nothing new (the pages whose compliance moved are
    # drawn again); G: the same spec, --full from scratch
    shorter = SPEC.replace("windows: {short-term-runs: 4,", "windows: {short-term-runs: 2,")
    assert shorter != SPEC
    (full_shorter,) = workspaces(demo_small, tmp_path_factory, "full-shorter")
    for root in (inc, full_shorter):
        (root / "spec.yaml").write_text(shorter)
    f = run(load_spec(inc / "spec.yaml"), RunOptions(workers=1, now=NOW))
    site_f = files_under(inc / "out" / "site")
    g = run(load_spec(full_shorter / "spec.yaml"), RunOptions(workers=1, now=NOW, full=True))
    site_g = files_under(full_shorter / "out" / "site")
    readable = {j.name: set(j.readable) for j in demo_small.truth.jobs}
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "acked": acked, "states_b": states_b,
            "hidden": hidden, "readable": readable, "inc": inc / "out", "full": full / "out",
            "site_b": site_b, "site_d": site_d, "site_f": site_f, "site_g": site_g, "alerts_b": alerts_b}


def test_only_new_builds_are_parsed(runs: dict[str, Any]) -> None:
    readable, hidden = runs["readable"], runs["hidden"]
    n_hidden = sum(len(set(bs) & readable[j]) for j, bs in hidden.items())
    n_all = sum(len(r) for r in readable.values())
    assert n_hidden == 3 * HIDDEN  # the corrupt build is not among the newest
    assert runs["a"].report.counts["builds.parsed"] == n_all - n_hidden
    assert runs["b"].report.counts["builds.parsed"] == n_hidden
    assert runs["c"].report.counts["builds.parsed"] == n_all
    assert runs["b"].report.counts["history.builds"] == runs["c"].report.counts["history.builds"] == n_all


def test_no_mdl_state_is_kept_in_the_store(runs: dict[str, Any]) -> None:
    """The store keeps no MDL states (an older store's are removed): the analysis cache keeps them,
    for the jobs whose window grows (below)."""
    assert runs["states_b"] == {}
    assert not (runs["inc"] / "store" / "state" / "mdl.json").exists()
    assert (runs["inc"] / "store" / "state" / "digests.json").exists()


def test_growing_windows_are_searched_from_the_last_runs_states(runs: dict[str, Any]) -> None:
    """Every job's window holds every build it has (fewer than its max-builds): B's series went on
    from the MDL states A kept (``pal.analysis.mdl_states``) but those with a new maximum among the
    new runs, and gave what C, searching every series from its first run, gives
    (``test_results_equal_full_run``)."""
    from pal.analysis.mdl_detector import valid_samples

    a, b = runs["a"], runs["b"]
    assert "series.resumed" not in a.report.counts and "series.resumed" not in runs["c"].report.counts
    before = {r.key: r for r in a.results}
    expected = 0
    for r in b.results:
        old = before.get(r.key)
        if old is None or not len(old.values) or np.isnan(old.values).all():
            continue
        top = np.nanmax(valid_samples(old.values)[1]) if len(valid_samples(old.values)[1]) else 0.0
        expected += top > 0 and np.nanmax(r.values) <= top
    assert b.report.counts["series.resumed"] == expected > 0.8 * len(b.results)
    # the NDR/PDR test set confirms over 2 runs: its series with isolated runs are searched again
    # with them masked, and that search too went on from the state A kept (and gave what C gives)
    assert 0 < b.report.counts["series.resumed_masked"] < expected
    assert "series.resumed_masked" not in a.report.counts and "series.resumed_masked" not in runs["c"].report.counts
    names = sorted(p.name for p in (runs["inc"] / "cache" / ".analysis").iterdir())
    assert sum(n.endswith(".states") for n in names) == 3


def test_results_equal_full_run(runs: dict[str, Any]) -> None:
    inc, full = results_by_key(runs["b"]), results_by_key(runs["c"])
    assert list(inc) == list(full) and len(full) == 90
    for key in full:
        assert inc[key] == full[key], key
    # and the history really changed between A and B
    assert sum(len(r.builds) for r in runs["b"].results) > sum(len(r.builds) for r in runs["a"].results)


def test_alerts_equal_except_run_fields(runs: dict[str, Any]) -> None:
    """Every alert of the full run is in the incremental one with the same content; B also keeps,
    as ongoing, the alerts A reported that have left the short-term window (docs/alerts.md: an
    alert reported by the previous run stays), which a run from scratch never saw."""
    inc = alerts_without_run_fields(runs["alerts_b"])
    full = alerts_without_run_fields((runs["full"] / "alerts.json").read_text())
    assert {k: v for k, v in inc.items() if k not in ("alerts", "groups", "range_groups", "counts")} == \
        {k: v for k, v in full.items() if k not in ("alerts", "groups", "range_groups", "counts")}
    by_id = {a["id"]: a for a in inc["alerts"]}
    assert len(full["alerts"]) > 10
    for a in full["alerts"]:
        assert {k: v for k, v in by_id[a["id"]].items() if k != "group"} == \
            {k: v for k, v in a.items() if k != "group"}, a["id"]
    carried = set(by_id) - {a["id"] for a in full["alerts"]}
    seen_by_a = {a.id for a in runs["a"].alerts}
    for a in runs["b"].alerts:
        if a.id in carried:
            assert a.status == "ongoing" and (a.previous_id or a.id) in seen_by_a, a.id
    # groups are a function of the alerts: B's alerts less the carried ones group as C's do
    kept = [a for a in runs["b"].alerts if a.id not in carried]
    assert canon(group_alerts(kept, runs["b"].results)) == canon(group_alerts(runs["c"].alerts, runs["c"].results))
    assert {a.status for a in runs["c"].alerts} == {"new"}
    assert "ongoing" in {a.status for a in kept}  # B saw A's alerts


def strip_alert_table(page: bytes) -> bytes:
    """The page without its alert table (and the template's blank lines around it)."""
    page = re.sub(rb"<h2>Alerts</h2>\s*<table class=\"alerts\">.*?</table>", b"", page, flags=re.S)
    return re.sub(rb"\n+", b"\n", page)


def test_series_pages_and_exports_byte_identical(runs: dict[str, Any]) -> None:
    """Series pages, their data and SVGs, group pages and exports of B are C's, byte for byte;
    pages listing an alert B carried over differ by that alert table only. index.html lists
    the run's alerts, so it records the run and is left out."""
    site_b, full = runs["site_b"], runs["full"]
    site_c = files_under(full / "site")
    pages = lambda files: {k for k in files if k.split("/")[0] in ("s", "data", "svg", "g")}  # noqa: E731
    assert pages(site_b) == pages(site_c) and len([k for k in site_c if k.startswith("s/")]) == 90
    carried = {a.key for a in runs["b"].alerts} - {a.key for a in runs["c"].alerts} | {
        a.key for a in runs["b"].alerts if a.id not in {c.id for c in runs["c"].alerts}}
    carried_pages = {f"s/{k.slug()}.html" for k in carried}
    assert carried_pages
    for name in sorted(pages(site_c)):
        if name in carried_pages:
            assert site_b[name] != site_c[name]
            assert strip_alert_table(site_b[name]) == strip_alert_table(site_c[name]), name
        else:
            assert site_b[name] == site_c[name], name
    a, b = files_under(runs["inc"] / "exports"), files_under(full / "exports")
    assert a == b and {k.split("/")[0] for k in a} == {"groups.csv", "groups.parquet", "samples-csv", "samples-parquet",
                                                      "samples-index.json"}
    # B re-rendered every series: each job has new builds
    assert runs["b"].report.counts["render.series_pages"] == 90


def test_rerun_without_news_renders_nothing(runs: dict[str, Any]) -> None:
    d = runs["d"]
    assert d.report.counts["builds.parsed"] == 0
    assert d.report.counts["render.series_pages"] == 0 and d.report.counts["render.series_reused"] == 90
    assert {k: v for k, v in runs["site_d"].items() if k != "index.html"} == \
        {k: v for k, v in runs["site_b"].items() if k != "index.html"}


def test_an_ack_re_renders_its_page_only(runs: dict[str, Any]) -> None:
    e, acked = runs["e"], runs["acked"]
    assert e.report.counts["builds.parsed"] == 0
    assert e.report.counts["render.series_pages"] == 1
    page = (runs["inc"] / "site" / "s" / f"{acked.key.slug()}.html").read_text()
    before = runs["site_d"][f"s/{acked.key.slug()}.html"].decode()
    assert f"<td>{acked.id}</td>" in page and "CSIT-1234 known" in page
    assert f"<td>{acked.id}</td>" in before and "CSIT-1234 known" not in before


def test_a_shorter_window_in_the_spec_redraws_the_pages_whose_compliance_moved(runs: dict[str, Any]) -> None:
    """Nothing new, but the short-term window shortened: a kept page would show the old
    short-term change beside the index's new one. The drill-downs equal a --full run's."""
    f, site_f, site_g = runs["f"], runs["site_f"], runs["site_g"]
    assert f.report.counts["builds.parsed"] == 0
    assert 0 < f.report.counts["render.series_pages"] < 90  # the series whose compliance moved
    drill = sorted(k for k in site_g if k.startswith("s/"))
    assert len(drill) == 90 and drill == sorted(k for k in site_f if k.startswith("s/"))
    for name in drill:
        assert strip_alert_table(site_f[name]) == strip_alert_table(site_g[name]), name
