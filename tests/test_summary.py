"""``pal analyse`` output: an aligned table with units for people, JSON/CSV for machines."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np

from pal import summary
from pal.cli import main
from pal.store import Store
from tests.alerts.factory import flat, make_result
from tests.store.data import make_meta, make_samples

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
SPEC = f"""
name: t
jobs: [{{name: {JOB}}}]
sources: [{{name: d, type: local, path: data}}]
test-sets: [{{name: mrr, metrics: [mrr, ndr]}}]
store: {{path: history}}
"""
# tests.store.data: the MRR trials of every build, and the NDR value
MRR = (21752588.29 + 21712091.77 + 21836008.33) / 3  # 21766896.13 pps
NDR = 18123456.5


def _store(tmp_path, builds=12):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store = Store(tmp_path / "history")
    for b in range(1, builds + 1):
        store.insert(make_samples(JOB, b), make_meta(JOB, b), f"{b:064x}")
    return spec


def test_default_table_is_aligned_with_units_and_no_float_dump(tmp_path, capsys):
    spec = _store(tmp_path)
    assert main(["analyse", "--spec", str(spec)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"{JOB}: 3 series, 0 with a regression at the last run"
    header = lines[1]
    rows = {line.split()[1]: line for line in lines[2:5]}
    assert re.fullmatch(r"25ge2p1xxv710 64b-2t1c-b-mrr +mrr +mrr +21\.77 Mpps +12 +\+0\.00 % +\+0\.00 % +0 +0 +normal",
                        rows["64b-2t1c-b-mrr"])
    assert re.fullmatch(r"25ge2p1xxv710 64b-2t1c-c-ndrpdr +mrr +ndr +18\.12 Mpps +12 +\+0\.00 % +\+0\.00 % +0 +0 "
                        r"+normal", rows["64b-2t1c-c-ndrpdr"])
    # the failing test has no value in any run: shown as such, never as 0
    assert re.fullmatch(r"25ge2p1xxv710 64b-2t1c-a-mrr +mrr +mrr +- +0 +- +- +0 +0 +missing", rows["64b-2t1c-a-mrr"])
    # aligned: numbers end under the end of their header, text starts under its start
    for name in ("trend", "short-term", "regr"):
        end = header.index(name) + len(name)
        assert {line[:end].endswith(("Mpps", "%", "-", "0")) for line in rows.values()} == {True}, name
        assert {line[end:end + 1] for line in rows.values()} == {" "}, name
    start = header.index("last run")
    assert {line[start:] for line in rows.values()} == {"normal", "missing"}
    assert "e+" not in out and "NaN" not in out and max(map(len, lines)) < 140
    assert lines[-len(summary.LEGEND):] == list(summary.LEGEND)


def test_json_and_csv_keep_base_units_and_full_precision(tmp_path, capsys):
    spec = _store(tmp_path)
    assert main(["analyse", "--spec", str(spec), "--format", "json"]) == 0
    rows = {r["test_id"].rsplit(".", 1)[1]: r for r in json.loads(capsys.readouterr().out)}
    assert math.isclose(rows["b-mrr"]["trend"], MRR, rel_tol=1e-12) and rows["b-mrr"]["unit"] == "pps"
    assert rows["c-ndrpdr"]["trend"] == NDR and rows["c-ndrpdr"]["metric"] == "ndr"
    assert rows["a-mrr"]["trend"] is None and rows["a-mrr"]["verdict"] == "missing"  # JSON null, not NaN
    assert list(rows["b-mrr"]) == list(summary.COLUMNS)
    assert main(["analyse", "--spec", str(spec), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by = {r["test_id"].rsplit(".", 1)[1]: r for r in table}
    assert float(by["b-mrr"]["trend"]) == rows["b-mrr"]["trend"] and by["a-mrr"]["trend"] == ""


def test_units_per_metric():
    assert summary.format_value(11_290_000.0, "pps") == "11.29 Mpps"
    assert summary.format_value(3_112_633.0, "pps") == "3.11 Mpps"
    assert summary.format_value(305_216.0, "cps") == "305.2 kcps"
    assert summary.format_value(15.0, "us") == "15.0 µs"
    assert summary.format_value(None, "pps") == "-"
    assert summary.format_pct(-12.3456) == "-12.35 %" and summary.format_pct(0.0) == "+0.00 %"


def test_latency_series_shows_microseconds():
    r = make_result(flat(15.0, 12) + [19.0] * 3, (12,), metric="latency_pdr50_d1", name="64b-2t1c-ethip4-ndrpdr")
    [row] = summary.series_rows([r])
    assert row["unit"] == "us" and row["trend"] == 19.0 and row["verdict"] in ("regression", "normal")
    table = summary.to_table([row])
    assert re.search(r"latency_pdr50_d1 +19\.0 µs +3 ", table), table
    assert summary.to_table([]) == "no series\n"
    assert np.isfinite(row["long_term_change"]) and f"{row['long_term_change']:+.2f} %" in table
