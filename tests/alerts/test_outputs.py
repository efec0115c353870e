"""alerts.json against its schema, junit.xml parsed back, series exports, atomic reproducible writes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from junitparser import Failure, JUnitXml, Skipped

from pal.alerts import alert_samples, build_alerts, write_alert_outputs
from pal.alerts.export import csv_bytes, neutralise, series_frame
from pal.alerts.json_out import SCHEMA, schema_text
from pal.report import RunReport
from tests.alerts.factory import ALT, ICX, builds_for, flat, make_result, make_spec, samples_for, tid
from tests.alerts.scenario import MESSAGES, run_results

DOCS_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "alerts.schema.json"


def _write(out: Path, extra=False, previous=None, spec=None, generated_at=None):
    results = run_results(extra)
    builds, samples = builds_for(results), samples_for(results, MESSAGES)
    spec = spec or make_spec()
    alerts = build_alerts(results, builds, samples, spec, previous, None)
    paths = write_alert_outputs(out, alerts, results, builds, samples, spec, RunReport(), generated_at=generated_at)
    return alerts, paths


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("out"))


def test_schema_file_is_the_code_schema():
    assert DOCS_SCHEMA.read_text(encoding="utf-8") == schema_text()
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_alerts_json_validates_and_round_trips(outputs, tmp_path):
    alerts, paths = outputs
    doc = json.loads(paths["alerts.json"].read_text())
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["exit_code"] == 2 and doc["fail_on"] == "new-regression" and doc["generated_at"] is None
    # 6: the recovered regression of ip4scale20k and its way back (a progression) both count
    assert doc["counts"] == {"alerts": 6, "new": 6, "ongoing": 0, "acked": 0, "active": 5, "recovered": 1, "failing": 3}
    assert [a["id"] for a in doc["alerts"]] == [a.id for a in alerts]
    # The alerts list is what the next run gets as ``previous``; run 2 validates too.
    alerts2, paths2 = _write(tmp_path, extra=True, previous=doc["alerts"])
    doc2 = json.loads(paths2["alerts.json"].read_text())
    jsonschema.validate(doc2, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc2["exit_code"] == 0 and doc2["counts"]["ongoing"] == 6 and doc2["counts"]["new"] == 1  # ALT's way back


def test_schema_rejects_bad_documents(outputs):
    doc = json.loads(outputs[1]["alerts.json"].read_text())
    bad = json.loads(json.dumps(doc))
    bad["alerts"][0]["kind"] = "worse"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA, cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(doc))
    del bad["alerts"][0]["evidence"]["first_bad_build"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA, cls=jsonschema.Draft202012Validator)


def test_junit_parsed_back(outputs):
    xml = JUnitXml.fromfile(str(outputs[1]["junit.xml"]))
    cases = {}
    for suite in xml:
        for case in suite:
            cases[(case.classname, case.name)] = case
    assert len(cases) == 8
    reg = cases[(f"{ICX}.mrr", tid("64b-2t1c-ethip4-ip4base-mrr"))]
    (res,) = reg.result
    assert isinstance(res, Failure) and res.message == "regression -10.0 % from build 120"
    assert f"https://jenkins.fd.io/job/{ICX}/120" in res.text
    prog = cases[(f"{ICX}.mrr", tid("1518b-2t1c-ethip4-ip4base-mrr"))]
    assert prog.is_passed and "progression +10.0 % from build 120" in prog.system_out
    failed = cases[(f"{ICX}.mrr", "tests.vpp.perf.ip6.2n1l-25ge2p1xxv710-ethip6-ip6base-mrr.64b-1c-ethip6-ip6base-mrr")]
    (skip,) = failed.result
    assert isinstance(skip, Skipped) and skip.message == "last run failed: Traffic generator on x.x.x.x timed out after 120 s"
    suites = {s.name: s for s in xml}
    assert (suites[ICX].tests, suites[ICX].failures, suites[ICX].skipped) == (7, 2, 3)
    assert (suites[ALT].tests, suites[ALT].failures) == (1, 1)


def test_junit_ongoing_and_acked_pass_with_a_note(tmp_path, outputs):
    doc = json.loads(outputs[1]["alerts.json"].read_text())
    _, paths = _write(tmp_path, extra=True, previous=doc["alerts"])
    xml = JUnitXml.fromfile(str(paths["junit.xml"]))
    cases = {(c.classname, c.name): c for s in xml for c in s}
    reg = cases[(f"{ICX}.mrr", tid("64b-2t1c-ethip4-ip4base-mrr"))]
    assert reg.is_passed and "regression -10.0 % from build 120" in reg.system_out and "ongoing" in reg.system_out


def test_rerun_is_byte_identical(tmp_path):
    _, a = _write(tmp_path / "a")
    _, b = _write(tmp_path / "b")
    assert sorted(a) == sorted(b)
    files = lambda root: {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}  # noqa: E731
    assert files(tmp_path / "a") == files(tmp_path / "b") and len(files(tmp_path / "a")) > 20
    # No temp files are left behind.
    assert not [p for p in (tmp_path / "a").rglob("*") if ".tmp-" in p.name]


def test_series_export_values_groups_labels(outputs):
    df = pd.concat([pd.read_csv(p) for p in sorted(outputs[1]["samples-csv"].rglob("*.csv"))], ignore_index=True)
    reg = df[(df.job == ICX) & (df.test_id == tid("64b-2t1c-ethip4-ip4base-mrr"))].sort_values("build")
    assert len(reg) == 21 and reg["value"].dtype.kind == "f"
    last, first = reg.iloc[-1], reg.iloc[0]
    assert (last.build, last.value) == (120, 27e6)
    assert (first.build, first.value, first.testbed) == (100, 29.9e6, "2n-icx-tb1")
    assert first.build_time == "2022-01-01T03:00:00Z"
    failed = df[df.test_id.str.endswith("64b-1c-ethip6-ip6base-mrr")].sort_values("build").iloc[-1]
    assert pd.isna(failed.value)
    groups = pd.read_csv(outputs[1]["groups.csv"])
    g = groups[(groups.job == ICX) & (groups.test_id == tid("64b-2t1c-ethip4-ip4base-mrr"))]
    assert g[["group", "first_build", "last_build", "label"]].values.tolist() == [
        [0, 100, 119, "normal"], [1, 120, 120, "regression"]]
    assert g.iloc[0].trend == pytest.approx(30e6) and g.iloc[1].trend == 27e6
    assert (g.iloc[1].anomaly, g.iloc[1].anomaly_build) == ("regression", 120)
    pq = pd.read_parquet(outputs[1]["samples-parquet"])
    assert len(pq) == len(df) == 8 * 21
    assert pq["value"].isna().sum() == 3 and str(pd.read_parquet(outputs[1]["groups.parquet"])["group"].dtype) == "Int64"


def test_csv_formula_injection_is_neutralised():
    assert neutralise("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    for lead in ("+", "-", "@", "\t", "\r"):
        assert neutralise(lead + "cmd") == "'" + lead + "cmd"
    assert neutralise("64b-mrr") == "64b-mrr" and neutralise(-3.5) == -3.5
    r = make_result(flat(-5.0, 4, 1.0), (), job="=cmd|' /C calc'!A0", name="@sum-mrr", nic="+nic", frame_size="-1B")
    text = csv_bytes(series_frame([r])).decode()
    rows = list(pd.read_csv(io.StringIO(text)).itertuples())
    assert rows[0].job == "'=cmd|' /C calc'!A0" and rows[0].nic == "'+nic" and rows[0].frame_size == "'-1B"
    assert rows[0].test_id.endswith(".@sum-mrr")  # not at the start of the cell: harmless
    # Numbers stay numbers, negative ones included.
    assert [x.value for x in rows] == [-6.0, -4.0, -6.0, -4.0]
    assert text.splitlines()[1].split(",")[12] == "-6.0"


def test_exports_follow_spec(tmp_path):
    _, paths = _write(tmp_path, spec=make_spec(exports=("json",)))
    assert "groups.csv" not in paths and "samples-parquet" not in paths
    recs = [r for p in sorted(paths["samples-json"].rglob("*.json")) for r in json.loads(p.read_text())]
    assert len(recs) == 8 * 21 and {r["job"] for r in recs} >= {ICX}
    assert json.loads(paths["groups.json"].read_text())[0]["group"] == 0


def test_unwritable_target_is_reported(tmp_path):
    (tmp_path / "junit.xml").mkdir()  # a directory where the file should go
    (tmp_path / "junit.xml" / "x").write_text("")
    results = run_results()
    builds, samples = builds_for(results), samples_for(results)
    spec = make_spec()
    report = RunReport()
    alerts = build_alerts(results, builds, samples, spec)
    paths = write_alert_outputs(tmp_path, alerts, results, builds, samples, spec, report)
    assert "junit.xml" not in paths and "alerts.json" in paths
    (p,) = report.errors("alerts")
    assert p.item == str(tmp_path / "junit.xml") and "junit.xml" in p.message


def test_empty_run_and_missing_builds_table(tmp_path):
    spec = make_spec()
    report = RunReport()
    paths = write_alert_outputs(tmp_path / "empty", [], [], pd.DataFrame(), None, spec, report)
    assert report.problems == []
    assert paths["trending-regressions"].read_text().splitlines()[2] == "No regressions"
    assert paths["trending-failed-tests"].read_text() == "No failed tests\n"
    assert json.loads(paths["alerts.json"].read_text())["exit_code"] == 0
    # Without a builds table the header still names the build; the version is unknown.
    rs = [make_result(flat(30e6, 20, 0.1e6) + [27e6], (20,))]
    alerts = build_alerts(rs, None, None, spec)
    paths = write_alert_outputs(tmp_path / "nobuilds", alerts, rs, None, None, spec, RunReport())
    lines = paths["trending-regressions"].read_text().splitlines()
    assert lines[2] == f"mrr-daily, CSIT build: https://jenkins.fd.io/job/{ICX}/120, DUT version: unknown"
    assert lines[3].split() == ["2t1c-ethip4-ip4base-mrr", "25ge2p1xxv710", "64B", "27.00", "1", "-10.0"]


def test_alerts_and_every_output_are_the_same_from_the_samples_the_run_keeps(tmp_path):
    """``pal run`` keeps only ``alert_samples`` once the series are cut: the alerts, the texts
    (the failed-tests header counts every test of the newest build), JUnit and the exports
    must be those of the whole table, with the build facts from the samples when the builds
    table lacks them."""
    results = run_results()
    samples = samples_for(results, MESSAGES)
    last = ~samples.duplicated(["job", "build"], keep="last")  # the row whose facts a build shows
    version = samples["dut_version"].astype(str)
    samples["dut_version"] = version.where(~last, version + "-last")
    kept = alert_samples(samples)
    newest = samples[samples["build"] == samples.groupby("job", observed=True)["build"].transform("max")]
    assert len(kept) < len(samples) / 2 and len(newest) > 5
    assert len(kept.merge(newest[["job", "build", "test_id"]], on=["job", "build", "test_id"])) == len(newest)
    spec = make_spec()
    for builds, tag in ((builds_for(results), "builds"), (None, "no-builds")):
        written = {}
        for name, table in (("all", samples), ("kept", kept)):
            alerts = build_alerts(results, builds, table, spec, None, None)
            paths = write_alert_outputs(tmp_path / tag / name, alerts, results, builds, table, spec, RunReport(),
                                        generated_at="2026-11-24T00:00:00Z")
            root = tmp_path / tag / name  # every file, the exports' build files too
            written[name] = {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()}
            assert str(paths["trending-regressions"].relative_to(root)) == "alerts/trending-regressions.txt"
        assert written["all"].keys() == written["kept"].keys()
        assert all(written["all"][k] == written["kept"][k] for k in written["all"]), tag
        assert (b"-last" in written["all"]["alerts/trending-regressions.txt"]) == (builds is None)  # facts from samples
