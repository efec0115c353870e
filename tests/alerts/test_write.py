"""write_alert_outputs: the exports are the series table build by build and the groups; a failed export is reported."""

from __future__ import annotations

import pandas as pd

from pal.alerts import build_alerts, write_alert_outputs
from pal.alerts.export import SAMPLE_EXPORT_COLUMNS, csv_bytes, groups_frame, job_dir_name, series_frame
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
    frame = series_frame(results, builds)[SAMPLE_EXPORT_COLUMNS]
    assert report.problems == []
    for (job, build), rows in frame.groupby(["job", "build"], sort=True):
        rows = rows.reset_index(drop=True)
        name = f"{job_dir_name(job)}/{build}"
        assert (paths["samples-csv"] / f"{name}.csv").read_bytes() == csv_bytes(rows)
        pd.testing.assert_frame_equal(pd.read_parquet(paths["samples-parquet"] / f"{name}.parquet"), rows)
    assert len(pd.read_parquet(paths["samples-parquet"])) == len(frame) == 8 * 21
    assert paths["groups.csv"].read_bytes() == csv_bytes(groups_frame(results))
    assert len(pd.read_json(paths["groups.json"])) == len(groups_frame(results))
    assert report.counts["exports.builds_formatted"] == 21 * 2  # two jobs of 21 builds
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


def test_an_export_that_cannot_be_written_is_reported_and_the_rest_written(tmp_path):
    (tmp_path / "exports" / "groups.csv").mkdir(parents=True)  # a directory where the file should go
    (tmp_path / "exports" / "groups.csv" / "x").write_text("")
    report = RunReport()
    _, _, paths = _run(tmp_path, report)
    assert "groups.csv" not in paths and {"groups.parquet", "groups.json", "samples-csv", "junit.xml"} <= set(paths)
    (problem,) = report.errors("alerts")
    assert problem.item == str(tmp_path / "exports" / "groups.csv") and "groups.csv" in problem.message
    assert not [p for p in (tmp_path / "exports").iterdir() if ".tmp-" in p.name]  # the temp file is gone
