"""``pal bisect request`` (dry run, and --post to a local fake Gerrit over HTTP) and ``pal bisect classify``."""

from __future__ import annotations

import base64
import json

import jsonschema
import pytest

from pal.alerts.json_out import SCHEMA
from pal.cli import main
from pal.culprit.request import request_for_alert
from tests.culprit import bisect_archive as ba
from tests.culprit.fake_gerrit import FakeGerrit

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
TEST_ID = "tests.vpp.perf.ip4." + ba.TEST_ID
GOOD, BAD = "22.02-rc0~500-g1111111aa~b850", "22.02-rc0~508-g88a9c0e02~b851"
FULL_REV = "88a9c0e02" + "7" * 31
TRIGGER = "bisecttest-2n-icx 1111111aa mrrANDnic_intel-xxv710ANDdrv_vfio_pciAND1cAND64bANDethip4-ip4base"
USER, PASSWORD = "bisect-bot", "s3cret-Http-Pa55"


def _alert(aid: str, before: str | None, after: str | None, tb_before="tb-1", tb_after="tb-1") -> dict:
    alert = {
        "id": aid, "group": "0" * 12, "job": JOB, "test_id": TEST_ID, "metric": "mrr", "kind": "regression",
        "state": "active", "status": "new", "acked": False, "ack_reason": None, "fresh": True,
        "fails_job": {"new-regression": True, "any-regression": True, "never": False},
        "previous_id": None, "previous_state": None, "test_set": "mrr", "topo_arch": "2n-icx",
        "test_name": "64b-2t1c-ethip4-ip4base-mrr", "nic": "25ge2p1xxv710", "frame_size": "64B", "unit": "pps",
        "testbeds": [tb_after], "ack_snippet": "",
        "evidence": {"before_avg": 2.0e7, "before_stdev": 1e5, "after_avg": 1.6e7, "after_stdev": 1e5,
                     "change_pct": -20.0, "runs": 3, "last_good_build": 41, "first_bad_build": 42,
                     "first_bad_time": "2026-11-20T03:00:00+00:00", "last_good_url": None, "first_bad_url": None,
                     "dut_version_before": before, "dut_version_after": after, "testbed_before": tb_before,
                     "testbed_after": tb_after, "trend": 1.6e7, "long_term_change_pct": -20.0,
                     "short_term_change_pct": -20.0, "restores_build": None, "reported_at_build": 43},
    }
    req = request_for_alert(alert)  # what the alerts stage embeds (pal.alerts.build)
    alert["suspect"] = req.suspect.to_dict()
    alert["bisect"] = req.request.to_dict() if req.request else None
    return alert


@pytest.fixture
def out_dir(tmp_path):
    alerts = [_alert("a1b2c3d4e5f6", GOOD, BAD), _alert("0f0f0f0f0f0f", BAD, BAD, "tb-1", "tb-2"),
              _alert("a1ffffffffff", None, BAD)]
    doc = {"format": "pal-alerts", "version": 2, "generated_at": None, "fail_on": "new-regression", "exit_code": 2,
           "counts": {"alerts": 3, "new": 3, "ongoing": 0, "acked": 0, "active": 3, "recovered": 0, "failing": 3},
           "alerts": alerts, "groups": [], "range_groups": []}
    jsonschema.validate(doc, SCHEMA)  # today's alerts.json, as the alerts stage writes it
    (tmp_path / "alerts.json").write_text(json.dumps(doc))
    return tmp_path


@pytest.fixture
def gerrit():
    fake = FakeGerrit(changes={"88a9c0e02": ("vpp", 34567, FULL_REV)})
    url = fake.start()
    yield fake, url
    fake.stop()


@pytest.fixture
def creds(monkeypatch):
    monkeypatch.setenv("PAL_GERRIT_USER", USER)
    monkeypatch.setenv("PAL_GERRIT_PASSWORD", PASSWORD)


def _secret_free(text: str) -> None:
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert PASSWORD not in text and token not in text


def test_dry_run_prints_and_sends_nothing(out_dir, gerrit, creds, capsys):
    fake, url = gerrit
    assert main(["bisect", "request", "a1b2c3d4e5f6", "--out", str(out_dir), "--gerrit", url]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == TRIGGER
    assert "range:   code: VPP 1111111aa..88a9c0e02, 8 commits" in out
    assert "dry run" in err and fake.seen == []
    _secret_free(out + err)


def test_post_sends_one_authenticated_request(out_dir, gerrit, creds, capsys):
    fake, url = gerrit
    assert main(["bisect", "request", "a1b2", "--out", str(out_dir), "--gerrit", url, "--post", "-v"]) == 0
    out, err = capsys.readouterr()
    authed = [s for s in fake.seen if "Authorization" in s.headers]
    assert len(authed) == 1
    post = authed[0]
    assert (post.method, post.path) == ("POST", f"/r/a/changes/vpp~34567/revisions/{FULL_REV}/review")
    assert post.headers["Authorization"] == "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert json.loads(post.body) == {"message": TRIGGER}
    assert post.headers["Content-Type"] == "application/json"
    # the only other request: the anonymous lookup of the change
    assert [(s.method, s.path, s.query["q"]) for s in fake.seen if s is not post] == [
        ("GET", "/r/changes/", ["commit:88a9c0e02"])]
    assert out.splitlines()[0] == TRIGGER and "posted on change vpp~34567" in err
    _secret_free(out + err)


def test_refusal_is_an_error_without_the_password(out_dir, gerrit, creds, capsys):
    fake, url = gerrit
    fake.refuse, fake.echo = 403, True
    assert main(["bisect", "request", "a1b2c3d4e5f6", "--out", str(out_dir), "--gerrit", url, "--post"]) == 1
    out, err = capsys.readouterr()
    assert "HTTP 403" in err
    _secret_free(out + err)


def test_post_without_credentials(out_dir, gerrit, monkeypatch, capsys):
    fake, url = gerrit
    monkeypatch.delenv("PAL_GERRIT_USER", raising=False)
    monkeypatch.delenv("PAL_GERRIT_PASSWORD", raising=False)
    assert main(["bisect", "request", "a1b2c3d4e5f6", "--out", str(out_dir), "--gerrit", url, "--post"]) == 1
    assert "PAL_GERRIT_USER and PAL_GERRIT_PASSWORD" in capsys.readouterr().err
    assert fake.seen == []


def test_unknown_commit_on_gerrit(out_dir, creds, capsys):
    fake = FakeGerrit()
    url = fake.start()
    try:
        assert main(["bisect", "request", "a1b2c3d4e5f6", "--out", str(out_dir), "--gerrit", url, "--post"]) == 1
    finally:
        fake.stop()
    assert "no change holds commit 88a9c0e02" in capsys.readouterr().err
    assert [s.method for s in fake.seen] == ["GET"]


def test_infrastructure_and_unknown_alerts_have_no_request(out_dir, capsys):
    assert main(["bisect", "request", "0f0f0f0f0f0f", "--out", str(out_dir)]) == 1
    out, err = capsys.readouterr()
    assert "range:   infrastructure: same VPP 22.02-rc0~508-g88a9c0e02~b851; testbed tb-1 -> tb-2" in out
    assert "nothing to bisect" in err and not out.startswith("bisecttest")
    assert main(["bisect", "request", "a1ffffffffff", "--out", str(out_dir)]) == 1
    assert "unknown: no VPP version for the last good build" in capsys.readouterr().out


def test_alert_ids(out_dir, capsys):
    assert main(["bisect", "request", "ffff00000000", "--out", str(out_dir)]) == 1
    assert "no alert with id 'ffff00000000' (3 alerts)" in capsys.readouterr().err
    assert main(["bisect", "request", "a1", "--out", str(out_dir)]) == 1
    assert "2 alerts start with 'a1'" in capsys.readouterr().err
    assert main(["bisect", "request", "a1", "--out", str(out_dir / "nope")]) == 1
    assert "no alerts.json" in capsys.readouterr().err


def test_json_format_and_spec_link(out_dir, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""name: t
jobs: [{{name: {JOB}}}]
sources: [{{name: local, type: local, path: data}}]
test-sets: [{{name: all, metrics: [mrr]}}]
outputs:
  dir: {out_dir}
  commit-range-url: {{vpp: "https://github.com/FDio/vpp/compare/{{good}}...{{bad}}"}}
""")
    assert main(["bisect", "request", "a1b2c3d4e5f6", "--spec", str(spec), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["request"]["comment"] == TRIGGER
    assert doc["range"]["url"] == "https://github.com/FDio/vpp/compare/1111111aa...88a9c0e02"
    assert (doc["range"]["commits"], doc["request"]["latest"]) == (8, "88a9c0e02")


def test_classify(tmp_path, capsys):
    root = ba.write_archive(tmp_path / "archive", "uti", prefix="csit_")
    assert main(["bisect", "classify", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == f"culprit: {ba.commit(105)} ({ba.version(105)}), the first bad commit"
    assert "-> joins early" in out and "-> joins late" in out
    assert main(["bisect", "classify", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["decision"]["becomes"] for s in doc["steps"]] == ["early", "late", "late"]
    assert doc["culprit"]["commit"] == ba.commit(105)
    assert main(["bisect", "classify", str(tmp_path / "empty")]) == 1
