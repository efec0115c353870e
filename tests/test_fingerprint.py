"""The run fingerprint: what it covers, and a run with nothing new giving what a recompute gives.

History: the small demo history (3 jobs, every planted pattern), the spec of the incremental
test. A run kept by its fingerprint must leave every output file byte for byte as a run of every
stage (same paths, same store state, no saved record) writes it.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from pal.demo import DemoHistory
from pal.fingerprint import RECORD_NAME, run_fingerprint
from pal.pipeline import RunOptions, run
from pal.report import RunReport
from pal.spec import load_spec, parse_spec
from pal.store import Store
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture
from tests.store.data import make_meta, make_samples
from tests.test_pipeline_incremental import NOW, SPEC

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the run wrote, but its own records (report, fingerprint), the download cache and the store."""
    skip = ("cache/", "store/", RECORD_NAME, "report.json", ".site-")
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith(skip)}


@pytest.fixture(scope="module")
def root(demo_small: DemoHistory, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """A run directory after two runs: the first reports its alerts as new, the second (nothing
    new, but other previous alerts) computes again and turns them ongoing; a third run reads
    alerts that differ from the second's input only in their run-specific fields: it is kept."""
    root = tmp_path_factory.mktemp("fp") / "run"
    shutil.copytree(demo_small.root, root / "data")
    (root / "spec.yaml").write_text(SPEC)
    (root / "acks.yaml").write_text("{}\n")
    spec = load_spec(root / "spec.yaml")
    first = run(spec, RunOptions(workers=1, now=NOW))
    second = run(spec, RunOptions(workers=1, now=NOW))
    settled(root / "out")
    assert not any("run.unchanged" in r.report.counts for r in (first, second))
    assert {a.status for a in first.alerts} == {"new"} and {a.status for a in second.alerts} == {"ongoing"}
    return root


def settled(out: Path) -> None:
    """Wait until the render's background removal of the previous site (``.site-old-*``) is done."""
    import time

    deadline = time.monotonic() + 30
    while any(out.glob(".site-old-*")) and time.monotonic() < deadline:
        time.sleep(0.05)


def kept_and_recomputed(root: Path, tmp_path: Path, change=None) -> tuple[Any, dict, Any, dict]:
    """Run on ``root`` (after ``change(root)``), then a run of every stage (no saved record) on the
    same state at the same path."""
    work = tmp_path / "run"
    # the render removes the previous site (``.site-old-*``) in a detached process: not copied
    leftovers = shutil.ignore_patterns(".site-old-*", ".site-new-*")
    shutil.copytree(root, work, symlinks=True, ignore=leftovers)
    # the spec resolves paths against its directory: run the copy at the original path
    backup = tmp_path / "backup"
    shutil.move(root, backup)
    try:
        shutil.move(work, root)
        if change:
            change(root)
        state = tmp_path / "state"
        shutil.copytree(root, state, ignore=leftovers)
        spec = load_spec(root / "spec.yaml")
        a = run(spec, RunOptions(workers=1, now=NOW))
        settled(root / "out")
        out_a = outputs(root / "out")
        alerts_a = (root / "out" / "store" / "alerts.json").read_bytes()
        shutil.rmtree(root)
        shutil.move(state, root)
        (root / "out" / RECORD_NAME).unlink()  # no record: every stage runs
        b = run(spec, RunOptions(workers=1, now=NOW))
        settled(root / "out")
        out_b = outputs(root / "out")
        assert alerts_a == (root / "out" / "store" / "alerts.json").read_bytes()
        shutil.rmtree(root)
    finally:
        shutil.move(backup, root)
    return a, out_a, b, out_b


def test_nothing_new_is_kept_and_equals_a_full_recompute(root: Path, tmp_path: Path) -> None:
    kept, out_kept, full, out_full = kept_and_recomputed(root, tmp_path)
    assert kept.report.counts["run.unchanged"] == 1 and kept.results == []
    assert (kept.exit_code, kept.summary) == (full.exit_code, full.summary)
    assert len(out_full) > 200 and out_kept == out_full  # site, alerts, junit, exports: byte for byte
    # the report repeats what the skipped stages found
    assert "run.unchanged" not in full.report.counts and full.results
    assert {k: v for k, v in kept.report.counts.items() if not k.startswith(("render.", "run."))} == \
        {k: v for k, v in full.report.counts.items() if not k.startswith("render.")}
    assert kept.report.to_dict()["problems"] == full.report.to_dict()["problems"]


def test_an_ack_is_a_change(root: Path, tmp_path: Path) -> None:
    doc = json.loads((root / "out" / "alerts.json").read_text())
    first = next(a["id"] for a in doc["alerts"] if a["kind"] == "regression")
    ack = lambda r: (r / "acks.yaml").write_text(f'{first}: "CSIT-1234 known"\n')  # noqa: E731
    ran, out_ran, full, out_full = kept_and_recomputed(root, tmp_path, ack)
    assert "run.unchanged" not in ran.report.counts and ran.results
    assert out_ran == out_full and b"CSIT-1234 known" in out_ran["alerts.json"]


def test_an_edited_output_is_a_change(root: Path, tmp_path: Path) -> None:
    page = next(p for p in (root / "out" / "site" / "s").iterdir())
    name = page.relative_to(root / "out").as_posix()
    ran, out_ran, full, out_full = kept_and_recomputed(root, tmp_path, lambda r: (r / "out" / name).unlink())
    assert "run.unchanged" not in ran.report.counts
    assert out_ran == out_full and name in out_ran


# ---------------------------------------------------------------------------- the parts


SMALL = """\
name: fp
jobs:
  - {name: %s, %s}
sources:
  - {name: dir, type: local, path: data}
test-sets:
  - {name: mrr, metrics: [mrr], detector: {name: mdl}}
alerts: {acks: acks.yaml}
store: {path: store}
"""


def stored(tmp_path: Path, builds: int = 4) -> Store:
    store = Store(tmp_path / "store")
    for b in range(1, builds + 1):
        store.insert(make_samples(JOB, b), make_meta(JOB, b), f"{b:064d}")
    return store


def fp(spec_text: str, store: Store, now: datetime) -> str:
    spec = parse_spec(spec_text, base_dir=str(store.path.parent))
    return run_fingerprint(spec, store, now, RunReport())


def test_fingerprint_follows_builds_acks_and_spec_but_not_compaction(tmp_path: Path) -> None:
    store = stored(tmp_path)
    text = SMALL % (JOB, "max-builds: 3")
    now = datetime(2022, 3, 1, tzinfo=timezone.utc)
    base = fp(text, store, now)
    assert fp(text, store, now + timedelta(days=400)) == base  # no period-days: the clock does not count
    store.vacuum()
    assert fp(text, store, now) == base  # same builds, other files
    (tmp_path / "acks.yaml").write_text("x: y\n")
    acked = fp(text, store, now)
    assert acked != base
    assert fp(SMALL % (JOB, "max-builds: 2"), store, now) != acked
    store.insert(make_samples(JOB, 5), make_meta(JOB, 5), "5" * 64)
    assert fp(text, store, now) != acked  # build 5 enters the window
    store.insert(make_samples(JOB, 1, scale=2.0), make_meta(JOB, 1), "f" * 64)
    newer = fp(text, store, now)
    assert newer == fp(text, Store(store.path), now)  # build 1 is outside the window of 3: no change...
    store.insert(make_samples(JOB, 4, scale=2.0), make_meta(JOB, 4), "e" * 64)
    assert fp(text, store, now) != newer  # ...build 4 is inside


def test_the_clock_counts_where_period_days_applies(tmp_path: Path) -> None:
    store = stored(tmp_path)  # build b at 2022-01-24 03:00 + b days
    text = SMALL % (JOB, "period-days: 3")
    t = datetime(2022, 1, 30, 4, tzinfo=timezone.utc)  # window: builds after 01-27 04:00 -> 3, 4
    base = fp(text, store, t)
    assert fp(text, store, t + timedelta(hours=20)) == base  # still builds 3 and 4
    assert fp(text, store, t + timedelta(days=1)) != base  # build 3 (01-27 03:00... 01-28) left


def test_alerts_depend_on_the_previous_ones_only_through_the_fingerprinted_fields() -> None:
    """``PREVIOUS_ALERT_FIELDS``: build_alerts gives the same alerts when every other field of the
    previous run's alerts is changed, so the fingerprint may leave those fields out."""
    import dataclasses

    from pal.alerts import build_alerts
    from pal.fingerprint import PREVIOUS_ALERT_FIELDS, PREVIOUS_EVIDENCE_FIELDS
    from tests.alerts.factory import builds_for, make_spec, samples_for
    from tests.alerts.scenario import run_results

    def alerts(results, previous):
        return build_alerts(results, builds_for(results), samples_for(results), make_spec(), previous, {})

    first = [dataclasses.asdict(a) for a in alerts(run_results(), None)]
    assert len(first) >= 5
    scrambled = []
    for d in json.loads(json.dumps(first, default=str)):
        out = {k: (v if k in PREVIOUS_ALERT_FIELDS else "changed") for k, v in d.items()}
        out["evidence"] = {k: (v if k in PREVIOUS_EVIDENCE_FIELDS else -1) for k, v in d["evidence"].items()}
        scrambled.append(out)
    second = run_results(extra=True)
    assert alerts(second, scrambled) == alerts(second, json.loads(json.dumps(first, default=str)))
    assert "ongoing" in {a.status for a in alerts(second, scrambled)}
    assert alerts(second, None) != alerts(second, scrambled)  # the previous alerts do count


def test_a_report_problem_is_a_change(tmp_path: Path) -> None:
    store = stored(tmp_path)
    spec = parse_spec(SMALL % (JOB, "max-builds: 3"), base_dir=str(tmp_path))
    now = datetime(2022, 3, 1, tzinfo=timezone.utc)
    report = RunReport()
    base = run_fingerprint(spec, store, now, report)
    report.add("download", f"{JOB}/9", "damaged")
    assert run_fingerprint(spec, store, now, report) != base
