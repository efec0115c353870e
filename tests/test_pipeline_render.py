"""`pal render` (and `pal analyse`) after `pal run`: no alert state changes, the last download's
problems stay on the pages, and the exit code follows the spec's alerts.fail-on policy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from pal.cli import main
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def _spec(tmp: Path, data: Path, fail_on: str = "new-regression") -> Path:
    doc = {
        "name": "render-after-run",
        "jobs": [{"name": JOB}],
        "sources": [{"name": "dir", "type": "local", "path": str(data)}],
        "test-sets": [{"name": "mrr", "metrics": ["mrr"], "select": {"tags": "MRR"},
                       "alert-filters": {"min-change-pct": 1.0, "confirm-runs": 1}}],
        "outputs": {"dir": str(tmp / "out"), "exports": []},
        "store": {"path": str(tmp / "store"), "workers": 1},
        "alerts": {"fail-on": fail_on},
    }
    path = tmp / f"spec-{fail_on}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _no_analysis(items: list) -> list:
    """``analyse_many`` for a run that must analyse nothing."""
    if items:
        raise AssertionError("a series was analysed")
    return []


def test_render_keeps_alert_state_and_download_problems(demo_small, tmp_path, capsys, monkeypatch):  # noqa: F811
    data = tmp_path / "data"
    shutil.copytree(demo_small.root / JOB, data / JOB)
    spec = _spec(tmp_path, data)
    assert main(["-q", "run", "--spec", str(spec)]) == 2  # a new last-run regression
    out = tmp_path / "out"
    first = json.loads((out / "alerts.json").read_text())
    problems = [p for p in json.loads((out / "report.json").read_text())["problems"] if p["stage"] == "download"]
    assert problems, "the demo's corrupt build is a download problem"
    index = (out / "site" / "index.html").read_text()
    assert problems[0]["item"] in index

    # a re-render: nothing downloaded, the alerts stay new (it turned them "ongoing" before), the
    # missing build is still on the index and in report.json (marked as the last download's)
    assert main(["-q", "render", "--spec", str(spec)]) == 2
    again = json.loads((out / "alerts.json").read_text())
    assert [a["status"] for a in again["alerts"]] == [a["status"] for a in first["alerts"]]
    assert "new" in {a["status"] for a in again["alerts"]}
    report = json.loads((out / "report.json").read_text())
    kept = [p for p in report["problems"] if p["stage"] == "download"]
    assert [p["item"] for p in kept] == [p["item"] for p in problems]
    assert all(p["details"]["from_last_download"] for p in kept)
    assert problems[0]["item"] in (out / "site" / "index.html").read_text()

    # pal analyse decides its exit code with the same policy: 2 (new, unacked); never -> 0.
    # It takes the run's results (nothing is analysed), the same as an analysis gives.
    capsys.readouterr()
    with monkeypatch.context() as m:
        m.setattr("pal.analysis.series.analyse_many", _no_analysis)
        assert main(["-q", "analyse", "--spec", str(spec), "--format", "json"]) == 2
    kept = capsys.readouterr().out
    shutil.rmtree(out / "cache" / ".analysis")
    assert main(["-q", "analyse", "--spec", str(spec), "--format", "json"]) == 2
    assert capsys.readouterr().out == kept and json.loads(kept)
    assert not (out / "cache" / ".analysis").exists()  # nothing saved
    assert main(["-q", "analyse", "--spec", str(_spec(tmp_path, data, "never")), "--format", "json"]) == 0
    # and a real second run makes them ongoing: exit 0 under new-regression
    assert main(["-q", "run", "--spec", str(spec)]) == 0
    assert main(["-q", "analyse", "--spec", str(spec), "--format", "json"]) == 0


def test_a_run_collects_cyclic_garbage_sparsely_and_gives_the_process_its_thresholds_back(
        demo_small, tmp_path, monkeypatch):  # noqa: F811
    """``pipeline.run`` works under ``pal.memory.sparse_gc`` (a drill-down or an analysis no
    longer pays young collections every 700 allocations) and leaves its caller's thresholds."""
    import gc

    import pal.pipeline as pipeline
    from pal.memory import RUN_GC_THRESHOLDS
    from pal.spec import load_spec

    data = tmp_path / "data"
    shutil.copytree(demo_small.root / JOB, data / JOB)
    seen = []
    decide = pipeline.decide_alerts

    def deciding(*args, **kwargs):
        seen.append(gc.get_threshold())
        return decide(*args, **kwargs)

    monkeypatch.setattr(pipeline, "decide_alerts", deciding)
    before = gc.get_threshold()
    assert pipeline.run(load_spec(_spec(tmp_path, data))).exit_code == 2
    assert seen == [RUN_GC_THRESHOLDS] and gc.get_threshold() == before != RUN_GC_THRESHOLDS
