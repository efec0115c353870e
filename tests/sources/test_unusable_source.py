"""A source that cannot be used at all (missing directory, unreachable Jenkins) fails the run.

Before: the job got no build, the run analysed nothing and went green (exit 0) with an empty
dashboard. Now the download stage marks the job fatal, ``pal run`` exits 1 and says why on
stderr and in report.json.
"""

from __future__ import annotations

import json
import socket

import yaml

from pal.cli import main
from pal.pipeline import RunOptions, run
from pal.report import RunReport
from pal.sources import fetch_builds
from tests.sources.conftest import JOB, jenkins_source, make_spec, output_gz


def _closed_port() -> int:
    """A local port nobody listens on (connection refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_local_directory_is_fatal_for_jobs_without_builds(tmp_path):
    spec = make_spec(tmp_path, [{"name": "dir", "type": "local", "path": "no-such-dir"}])
    report = RunReport()
    assert fetch_builds(spec, tmp_path / "cache", report) == []
    [fatal] = report.fatal()
    assert fatal.item == JOB
    assert str(tmp_path / "no-such-dir") in fatal.message and "does not exist" in fatal.message


def test_missing_directory_is_not_fatal_when_another_source_delivers(tmp_path):
    data = tmp_path / "data" / JOB / "1"
    data.mkdir(parents=True)
    (data / "output.xml.gz").write_bytes(output_gz(JOB, 1))
    spec = make_spec(tmp_path, [{"name": "gone", "type": "local", "path": "no-such-dir"},
                                {"name": "dir", "type": "local", "path": "data"}])
    report = RunReport()
    assert [f.build for f in fetch_builds(spec, tmp_path / "cache", report)] == [1]
    assert report.fatal() == []
    assert [p.item for p in report.problems if p.severity == "warning"] == ["gone"]  # still said


def test_run_with_missing_local_directory_exits_1_and_says_why(tmp_path):
    spec = make_spec(tmp_path, [{"name": "dir", "type": "local", "path": "no-such-dir"}])
    outcome = run(spec, RunOptions(out_dir=tmp_path / "out"))
    assert outcome.exit_code == 1
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    fatal = [p for p in saved["problems"] if p["details"].get("fatal")]
    assert [(p["stage"], p["item"]) for p in fatal] == [("download", JOB)]
    assert "no-such-dir does not exist" in fatal[0]["message"]


def test_cli_run_with_unreachable_jenkins_exits_1(tmp_path, capsys):
    """Unreachable Jenkins cannot be caught by validate: the run itself must fail."""
    src = jenkins_source(f"http://127.0.0.1:{_closed_port()}", retries=0, timeout=2)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "t", "jobs": [{"name": JOB}], "sources": [src],
        "test-sets": [{"name": "mrr", "metrics": ["mrr"]}],
        "outputs": {"dir": "out"}, "store": {"path": "out/store"},
    }))
    assert main(["run", "--spec", str(spec)]) == 1
    err = capsys.readouterr().err
    assert f"error: download: {JOB}: no build of this job from any source because a source is unusable" in err
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert any(p["details"].get("fatal") for p in saved["problems"])
