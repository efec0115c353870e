"""``pal parse`` end to end: job/build from the path, formats, a bad file among good ones."""

from __future__ import annotations

import gzip
import json
import shutil

import pandas as pd

from pal.cli import main
from pal.parse import job_build_from_path


def test_job_build_from_path(tmp_path):
    assert job_build_from_path("/c/csit-vpp-perf-mrr-daily-master-2n-icx/265/output.xml.gz") == \
        ("csit-vpp-perf-mrr-daily-master-2n-icx", 265)
    assert job_build_from_path("/c/csit-vpp-perf-mrr-daily-master-2n-icx__12__output_info.xml.gz") == \
        ("csit-vpp-perf-mrr-daily-master-2n-icx", 12)
    assert job_build_from_path("/tmp/output.xml") is None


def test_csv_from_two_builds_and_a_bad_file(tmp_path, data_dir, capsys):
    job = "csit-vpp-perf-mrr-daily-master-2n-icx"
    a = tmp_path / job / "40" / "output.xml.gz"
    a.parent.mkdir(parents=True)
    a.write_bytes(gzip.compress((data_dir / "rf6_output.xml").read_bytes()))
    b = tmp_path / f"{job}__41__output.xml"
    shutil.copy(data_dir / "rf6_output.xml", b)
    bad = tmp_path / f"{job}__42__output.xml.gz"
    bad.write_bytes(b"\x1f\x8bnot really")
    rc = main(["-q", "parse", str(a), str(b), str(bad)])
    out, err = capsys.readouterr()
    assert rc == 1
    assert f"{bad} (build 42): damaged archive" in err
    lines = out.splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["job", "build", "build_time"]
    df = pd.read_csv(__import__("io").StringIO(out))
    assert sorted(set(df.build)) == [40, 41]
    mrr = df[(df.build == 40) & (df.metric == "mrr") & (df.status == "PASS")].dropna(subset=["value"])
    assert mrr.value.tolist() == [22500000.0]
    assert json.loads(mrr.trials.item()) == [21e6, 22e6, 23e6, 24e6]


def test_json_and_parquet(tmp_path, data_dir, capsys):
    src = data_dir / "rf3_output.xml"
    assert main(["-q", "parse", str(src), "--job", "csit-vpp-perf-ndrpdr-weekly-master-3n-hsw", "--build", "12",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    soak = [r for r in rows if r["metric"] == "soak"]
    assert [r["value"] for r in soak] == [10500000.25] and soak[0]["tags"][-1] == "SOAK"
    pq = tmp_path / "s.parquet"
    assert main(["-q", "parse", str(src), "--job", "j-3n-hsw", "--build", "12", "--format", "parquet",
                 "-o", str(pq)]) == 0
    df = pd.read_parquet(pq)
    assert len(df) == len(rows) and list(df[df.metric == "mrr"].trials.item()) == [12000000.5]


def test_missing_job_build(data_dir, capsys):
    assert main(["-q", "parse", str(data_dir / "rf3_output.xml")]) == 1
    assert "give --job and --build" in capsys.readouterr().err
