"""The parse stage (``pipeline.ingest``): each job's builds go into the store as soon as the last
of them is parsed, while the next job's are parsed, and the store is the one a single commit makes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pal import pipeline
from pal.executor import make_executor
from pal.model import BuildFile
from pal.report import RunReport
from pal.store import Store
from pal.store.ingest import parse_to_fragment
from tests.store.data import fake_parse

JOBS = ("csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-3n-alt")


def _files(root: Path) -> list[BuildFile]:
    files = []
    for job, builds in ((JOBS[0], {1: "1.0", 2: "bad", 3: "3.0"}), (JOBS[1], {1: "2.0", 2: "4.0"})):
        for build, text in builds.items():
            p = root / f"{job}--{build}.txt"
            p.write_text(text)
            files.append(BuildFile(job, build, p, "test"))
    return files


def _ingest_events(tmp_path: Path, monkeypatch, auto_compact: int | None) -> tuple[list[tuple], Store, RunReport, int]:
    """``pipeline.ingest`` of ``_files`` on the inline executor into a store compacting runs of
    ``auto_compact`` builds: what it parsed and committed, in order."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    events: list[tuple] = []

    def parse(item: tuple) -> object:
        build_file, staging, _ = item
        events.append(("parsed", build_file.job, build_file.build))
        return parse_to_fragment(build_file, staging, {}, parse_fn=fake_parse)

    monkeypatch.setattr(pipeline, "_ingest", parse)  # (the inline executor calls it in this process)
    store = Store(tmp_path / "store", auto_compact=auto_compact)
    commit = store.commit_fragments
    monkeypatch.setattr(store, "commit_fragments", lambda frags, **kw: events.append(
        ("commit", [(f.job, f.build) for f in frags])) or commit(frags, **kw))
    report = RunReport()
    spec = SimpleNamespace(job=lambda name: None)
    with make_executor("local", workers=1) as ex:
        parsed = pipeline.ingest(spec, store, _files(tmp_path), report, ex)  # type: ignore[arg-type]
    return events, store, report, parsed


def test_each_large_jobs_builds_are_committed_once_its_last_is_parsed(tmp_path, monkeypatch):
    events, store, report, parsed = _ingest_events(tmp_path, monkeypatch, 2)  # (a job of 2 builds is large)
    assert parsed == 4
    assert events == [
        ("parsed", JOBS[0], 1), ("parsed", JOBS[0], 2), ("parsed", JOBS[0], 3), ("commit", [(JOBS[0], 1), (JOBS[0], 3)]),
        ("parsed", JOBS[1], 1), ("parsed", JOBS[1], 2), ("commit", [(JOBS[1], 1), (JOBS[1], 2)]),
    ]
    assert report.counts["builds.stored"] == 4 and report.counts["builds.parsed"] == 5
    assert [p.item for p in report.errors("parse")] == [f"{JOBS[0]}/2"]

    # the same fragments in one commit make the same store
    one = Store(tmp_path / "one", auto_compact=2)
    staging = str(one.staging_dir())
    one.commit_fragments([parse_to_fragment(f, staging, {}, parse_fn=fake_parse) for f in _files(tmp_path)
                          if f.build != 2 or f.job != JOBS[0]])
    assert one.samples().drop(columns="source_file").equals(store.samples().drop(columns="source_file"))
    assert one.builds().drop(columns=["stored_at"], errors="ignore").equals(
        store.builds().drop(columns=["stored_at"], errors="ignore"))


def test_small_jobs_are_committed_together_once_the_parse_ends(tmp_path, monkeypatch):
    """A daily run's build a job: one commit (one manifest written), not one a job."""
    events, store, report, parsed = _ingest_events(tmp_path, monkeypatch, 3)  # the first job is large, the second not
    assert events[3] == ("commit", [(JOBS[0], 1), (JOBS[0], 3)]) and events[-1] == ("commit", [(JOBS[1], 1), (JOBS[1], 2)])
    for where, auto_compact in (("default", 64), ("none", None)):  # pal run's store; one that never compacts
        events, store, report, parsed = _ingest_events(tmp_path / where, monkeypatch, auto_compact)
        assert [e for e in events if e[0] == "commit"] == [
            ("commit", [(JOBS[0], 1), (JOBS[0], 3), (JOBS[1], 1), (JOBS[1], 2)])]
        assert events[-1][0] == "commit" and parsed == 4 and report.counts["builds.stored"] == 4
