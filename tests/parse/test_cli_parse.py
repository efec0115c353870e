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
    a = tmp_path / job / "40" / "archives" / "output.xml.gz"
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
    assert out == ""  # a partial table on stdout would pass for the whole
    csv = tmp_path / "s.csv"
    assert main(["-q", "parse", str(a), str(b), str(bad), "-o", str(csv)]) == 1
    df = pd.read_csv(csv)
    assert list(df.columns[:3]) == ["job", "build", "build_time"]
    assert sorted(set(df.build)) == [40, 41] and set(df.job) == {job}
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


def test_readme_example_without_job_or_build(tmp_path, data_dir, capsys, monkeypatch):
    (tmp_path / "out.xml.gz").write_bytes(gzip.compress((data_dir / "rf6_output.xml").read_bytes()))
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "parse", "out.xml.gz", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    df = pd.read_csv(__import__("io").StringIO(out), keep_default_na=False)
    assert len(df) > 0
    assert set(df.job) == {""} and set(df.build) == {""} and set(df.topo_arch) == {""}  # left empty
    assert 22500000.0 in pd.to_numeric(df.value, errors="coerce").tolist()


def test_missing_file_says_so_and_prints_nothing(tmp_path, capsys):
    assert main(["-q", "parse", str(tmp_path / "nope.xml.gz"), "--format", "csv"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"error: {tmp_path / 'nope.xml.gz'}: no such file"


def test_uti_directory_and_archive(tmp_path, capsys):
    import tarfile

    from tests.parse.csit_today import run_csit_today

    _, uti = run_csit_today(tmp_path / "run")
    job = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"
    build_dir = tmp_path / job / "77"
    shutil.copytree(uti, build_dir)
    assert main(["-q", "parse", str(build_dir), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["job"], r["build"]) for r in rows} == {(job, 77)}
    cps = [r for r in rows if r["metric"] == "ndr" and r["unit"] == "cps"]
    assert [r["value"] for r in cps] == [412345.5]
    tgz = tmp_path / "results.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(uti, arcname=".")
    assert main(["-q", "parse", str(tgz), "--job", job, "--build", "78", "--format", "json"]) == 0
    rows2 = json.loads(capsys.readouterr().out)
    assert len(rows2) == len(rows) and {r["build"] for r in rows2} == {78}
