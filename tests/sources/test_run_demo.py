"""The demo-over-Jenkins entry: a copy of specs/demo-jenkins.yaml against a tiny history."""

from __future__ import annotations

import gzip
import shutil

from tests.fakejenkins import run_demo
from tests.sources.conftest import output_gz, output_xml

JOBS = ["csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-3n-alt",
        "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"]


def test_run_demo_download_with_faults(tmp_path, repo_root, capsys):
    (tmp_path / "specs").mkdir()
    spec = tmp_path / "specs" / "demo-jenkins.yaml"
    shutil.copy(repo_root / "specs" / "demo-jenkins.yaml", spec)
    for job in JOBS:
        for n in range(1, 7):
            d = tmp_path / "demo-data" / job / str(n)
            d.mkdir(parents=True)
            (d / "output.xml.gz").write_bytes(output_gz(job, n))
    (tmp_path / "demo-data" / "renames.yaml").write_text("{}\n")  # the spec's rename-file must exist
    rc = run_demo.main(["--data", str(tmp_path / "demo-data"), "--spec", str(spec), "--command", "download",
                        "--faults"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    rows = [line.split("\t") for line in out]
    # per job: builds 1..6; #3 (c) is nowhere, #4 (b) had one 500, #5 (a) comes from the log server
    assert sorted((r[0], int(r[1]), r[2]) for r in rows) == sorted(
        [(job, n, "logs" if n == 5 else "jenkins") for job in JOBS for n in (1, 2, 4, 5, 6)])
    for job, build, _, _, path in rows:
        assert gzip.decompress(open(path, "rb").read()) == output_xml(job, int(build))
        assert path.startswith(str(tmp_path / "out" / "demo-jenkins" / "cache"))
