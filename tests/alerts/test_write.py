"""write_alert_outputs: the streamed CSV export is the export's bytes; a failed export is reported."""

from __future__ import annotations

import pandas as pd

from pal.alerts import build_alerts, write_alert_outputs
from pal.alerts.export import csv_bytes, series_frame
from pal.report import RunReport
from tests.alerts.factory import builds_for, make_spec, samples_for
from tests.alerts.scenario import MESSAGES, run_results


def _run(out, report):
    results = run_results()
    builds, samples = builds_for(results), samples_for(results, MESSAGES)
    spec = make_spec(exports=("csv", "parquet", "json"))
    alerts = build_alerts(results, builds, samples, spec)
    return results, builds, write_alert_outputs(out, alerts, results, builds, samples, spec, report)


def test_exports_are_the_frame_in_each_format(tmp_path):
    report = RunReport()
    results, builds, paths = _run(tmp_path, report)
    frame = series_frame(results, builds)
    assert report.problems == []
    assert paths["series.csv"].read_bytes() == csv_bytes(frame)
    pd.testing.assert_frame_equal(pd.read_parquet(paths["series.parquet"]), frame)
    assert len(pd.read_json(paths["series.json"])) == len(frame) == 8 * 21
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


def test_csv_export_that_cannot_be_written_is_reported_and_the_rest_written(tmp_path):
    (tmp_path / "exports" / "series.csv").mkdir(parents=True)  # a directory where the file should go
    (tmp_path / "exports" / "series.csv" / "x").write_text("")
    report = RunReport()
    _, _, paths = _run(tmp_path, report)
    assert "series.csv" not in paths and {"series.parquet", "series.json", "junit.xml"} <= set(paths)
    (problem,) = report.errors("alerts")
    assert problem.item == str(tmp_path / "exports" / "series.csv") and "series.csv" in problem.message
    assert not [p for p in (tmp_path / "exports").iterdir() if ".tmp-" in p.name]  # the temp file is gone
