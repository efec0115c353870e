"""A run's fingerprint: one digest of everything its outputs depend on, so that a run whose
inputs did not change can keep the outputs of the last run instead of computing them again.

The parts: the pal code (version and a hash of the package's files and page templates), the
spec (every field, paths resolved), the contents of the rename and acks files, the stored
builds the window selects (their manifest facts; this is where the clock enters, for jobs
with ``period-days``), the alerts the previous run saved, as far as the alerts stage
reads them (``PREVIOUS_ALERT_FIELDS``: which changes were reported and in which state; the "new"
/ "ongoing" status and the exit code follow them, while their own run-specific fields turn over
from one run to the next without changing what a run computes), the upstream build a triggered run must analyse, and the problems
the run report holds at this point (download and parse problems show on the site; its counts
of work done do not enter any output).

Saved with the outputs as ``<out>/.pal-run.json``, together with the size and mtime of every
output file (an output edited or deleted since means a recompute), the exit code, the
summary figures and the report entries of the stages after ingest, so a kept run returns
what a recomputed one would: the same files, report, exit code and summary line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import pal
from pal.report import Problem, RunReport
from pal.spec import Spec
from pal.atomic import write_text_atomic

RECORD_NAME = ".pal-run.json"
#: files under the output dir that record the run itself, not its results: rewritten every run
RUN_FILES = (RECORD_NAME, "report.json")
#: what ``pal.alerts.build.build_alerts`` reads of each previous alert (``_Previous``): the
#: fingerprint covers these and the alerts' order; ``tests/test_fingerprint.py`` checks that
#: build_alerts gives the same alerts when every other field of the previous ones is changed
PREVIOUS_ALERT_FIELDS = ("id", "job", "test_id", "metric", "kind", "state")
PREVIOUS_EVIDENCE_FIELDS = ("first_bad_build",)
#: build facts of the manifest that the results depend on (not the fragment a build lives in)
_ENTRY_KEYS = ("job", "build", "sha256", "rows", "build_time", "start_time", "dut", "dut_version", "testbed",
               "passed", "failed", "duration_s", "source_file")


@functools.cache
def code_digest() -> str:
    """pal's version and a hash of its source files and page templates (an edited checkout counts).
    Once per process: a run reads it three times (its fingerprint, the kept analyses' context and
    their window keys), and its code does not change under it."""
    pkg = Path(pal.__file__).resolve().parent
    h = hashlib.sha256(pal.__version__.encode())
    for root in (pkg, pkg.parent / "templates"):
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and p.suffix not in (".pyc", ".pyo")):
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "missing"


def run_fingerprint(spec: Spec, store: Any, now: datetime, report: RunReport,
                    upstream: tuple[str, int] | None = None, again: bool = False) -> str:
    """The digest of everything a run's results depend on (see the module doc), given the store
    after ingest and the report so far. ``again`` (``pal render``): the outputs are decided as the
    last run decided them, which a run's outputs never equal: its own fingerprint."""
    from pal.history import select_window

    jobs = [j.name for j in spec.jobs]
    builds = store.builds(jobs)
    window = builds[select_window(spec, builds, now)]
    manifest = store.manifest_entries([(j, int(b)) for j, b in zip(window["job"], window["build"])])
    parts = {
        "code": code_digest(),
        "spec": repr(spec),
        "paths": [str(spec.out_dir), str(spec.store_dir)],
        "renames": file_digest(spec.resolve(spec.rename_file)),
        "acks": file_digest(spec.resolve(spec.alerts.acks)),
        "window": [{k: e.get(k) for k in _ENTRY_KEYS} for e in manifest],
        "previous_alerts": previous_alerts_view(store),
        "upstream": list(upstream) if upstream else None,
        "problems": [asdict(p) for p in report.problems],  # the site lists download/parse problems
        "again": again,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def previous_alerts_view(store: Any) -> list[Any]:
    """The previous run's alerts as far as a run's results depend on them, in their order."""
    from pal.errors import StoreError

    try:
        alerts = store.load_alerts()
    except StoreError:  # a damaged file: its bytes (the run reports it when it reads it)
        return [file_digest(store.path / "alerts.json")]
    view = []
    for d in alerts:
        if not isinstance(d, dict):
            view.append(repr(d))
            continue
        evidence = d.get("evidence") if isinstance(d.get("evidence"), dict) else {}
        view.append([d.get(f) for f in PREVIOUS_ALERT_FIELDS] + [evidence.get(f) for f in PREVIOUS_EVIDENCE_FIELDS]
                    + ["id" in d])
    return view


@dataclass
class RunRecord:
    """What a finished run leaves beside its outputs for the next run's check."""

    fingerprint: str
    exit_code: int
    figures: dict[str, int]  # builds, series, regressions, progressions: the summary line's numbers
    report_after_ingest: dict[str, Any]  # counts and problems added by the stages after ingest
    outputs: dict[str, list[int]] = field(default_factory=dict)  # relative path -> [size, mtime_ns]


def output_files(out_dir: Path, skip: tuple[Path, ...] = ()) -> dict[str, list[int]]:
    """Size and mtime of every output file, leaving out the run's own records, the download cache,
    the store (when it lives under the output dir) and dot-named leftovers of killed writers."""
    out_dir = Path(out_dir)
    skipped = {os.path.normpath(p) for p in skip}
    holding = {os.path.dirname(p) for p in skipped}  # the directories a skipped path is in
    found: dict[str, list[int]] = {}

    def walk(d: str, rel: str) -> None:
        check = os.path.normpath(d) in holding  # (not a normpath for each of 8,700 files)
        with os.scandir(d) as it:
            for e in it:
                name = f"{rel}{e.name}"
                if e.name.startswith(".") or (check and os.path.normpath(e.path) in skipped):
                    continue
                if e.is_dir(follow_symlinks=False):
                    walk(e.path, name + "/")
                elif name not in RUN_FILES:
                    st = e.stat(follow_symlinks=False)
                    found[name] = [st.st_size, st.st_mtime_ns]

    if out_dir.is_dir():
        walk(str(out_dir), "")
    return found


def report_delta(before: dict[str, Any], after: RunReport) -> dict[str, Any]:
    """The counts and problems ``after`` holds beyond the snapshot ``before`` (RunReport.to_dict)."""
    counts = {k: v - before["counts"].get(k, 0) for k, v in after.counts.items()
              if k not in before["counts"] or v != before["counts"][k]}  # a count of 0 is a key too
    return {"counts": counts, "problems": [asdict(p) for p in after.problems[len(before["problems"]):]]}


def apply_delta(report: RunReport, delta: dict[str, Any]) -> None:
    """Add a saved ``report_delta`` to ``report`` (what the skipped stages would have added)."""
    for k, v in delta["counts"].items():
        report.count(k, v)
    for p in delta["problems"]:
        report.problems.append(Problem(p["stage"], p["item"], p["message"], p.get("severity", "error"),
                                       p.get("details") or {}))


def save_record(out_dir: Path, record: RunRecord, outputs: dict[str, list[int]]) -> None:
    """Write the record, atomically, last of all outputs. Its output files are ``outputs``, the
    ``output_files`` listing the caller took after the last of them was written (``pal run``
    takes it while it saves its states)."""
    record.outputs = outputs
    # its fields as they are (``asdict`` copied each of 8,700 files' list: 0.1 s at a run's end)
    data = {f.name: getattr(record, f.name) for f in fields(record)}
    write_text_atomic(Path(out_dir) / RECORD_NAME, json.dumps(data, sort_keys=True, default=str))


def unchanged_run(out_dir: Path, fingerprint: str, skip: tuple[Path, ...] = ()) -> RunRecord | None:
    """The last run's record if its fingerprint is ``fingerprint`` and its outputs are untouched."""
    try:
        data = json.loads((Path(out_dir) / RECORD_NAME).read_text(encoding="utf-8"))
        record = RunRecord(**data)
    except (OSError, ValueError, TypeError):
        return None
    if record.fingerprint != fingerprint or not (Path(out_dir) / "report.json").exists():
        return None
    return record if output_files(out_dir, skip) == record.outputs else None
