"""``pal store info|vacuum|export`` over a store named by a spec."""

from __future__ import annotations

import json

import pandas as pd

from pal.cli import main
from pal.store import SCHEMA_VERSION, Store
from tests.store.data import make_meta, make_samples

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
SPEC = f"""
name: t
jobs: [{{name: {JOB}}}]
sources: [{{name: d, type: local, path: data}}]
test-sets: [{{name: mrr, metrics: [mrr]}}]
store: {{path: history}}
"""


def test_store_commands(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store = Store(tmp_path / "history")
    store.insert(make_samples(JOB, 4), make_meta(JOB, 4), "d" * 64)
    (store.path / ".manifest.json.tmp-9-x").write_text("{")

    assert main(["store", "info", "--spec", str(spec)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["jobs"], info["builds"], info["rows"], info["schema_version"]) == (1, 1, 3, SCHEMA_VERSION)

    assert main(["store", "vacuum", "--spec", str(spec)]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == [".manifest.json.tmp-9-x"]

    out = tmp_path / "all.csv"
    assert main(["store", "export", "--spec", str(spec), "--output", str(out)]) == 0
    assert pd.read_csv(out)["build"].tolist() == [4, 4, 4]
    assert main(["store", "export", "--spec", str(spec)]) == 1
