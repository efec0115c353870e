"""UTI problems reach report.json through a whole ``pal run``: a hostile file is one warning naming
the build and the member, a newer major version one error for its build; the run goes on."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from pal.cli import main
from tests.parse import csit_today as today

JOB = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"


@pytest.mark.slow
def test_problems_of_uti_builds_are_in_report_json(tmp_path, capsys):
    _, uti = today.run_csit_today(tmp_path / "run")
    data = tmp_path / "data" / JOB
    for n in (1, 2, 3):
        shutil.copytree(uti, data / str(n) / "archives")
    hostile = data / "2" / "archives" / "tests" / "dup.info.json"
    hostile.write_bytes(b'{"version": "1.5.1", "version": "1.5.1"}')
    newer = next((data / "3").rglob("64b-1c-ethip4-ip4base-mrr.info.json"))
    doc = json.loads(newer.read_text())
    doc["version"] = "2.0.0"
    newer.write_text(json.dumps(doc))
    spec = {
        "name": "uti", "jobs": [{"name": JOB}],
        "sources": [{"name": "dir", "type": "local", "path": "data"}],
        "testbeds": today.TESTBEDS,
        "test-sets": [{"name": "ndrpdr", "select": {"tags": "NDRPDR"}, "metrics": ["ndr", "pdr"]}],
        "outputs": {"dir": "out"}, "store": {"path": "store"},
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    rc = main(["-q", "run", "--spec", str(tmp_path / "spec.yaml")])
    assert rc in (0, 2)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    parse = [p for p in report["problems"] if p["stage"] == "parse"]
    dup = [p for p in parse if p["item"] == f"{JOB}/2"]
    assert len(dup) == 1 and dup[0]["severity"] == "warning"
    assert "tests/dup.info.json: duplicate key 'version'" in dup[0]["message"]
    assert dup[0]["details"]["member"] == "archives/tests/dup.info.json"  # the build directory is the tree
    newer_p = [p for p in parse if p["item"] == f"{JOB}/3"]
    assert len(newer_p) == 1 and newer_p[0]["severity"] == "error"
    assert "UTI model version 2.0.0; pal reads major version 1" in newer_p[0]["message"]
