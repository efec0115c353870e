"""UTI JSON results through the sources: a local build directory (tree, log-server .gz files, tar.gz,
zip) and a Jenkins artifact zip over real HTTP, then parsed to the same rows."""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from pal.parse import parse_build
from pal.report import RunReport
from pal.sources import fetch_builds
from tests.parse import csit_today as today
from tests.sources.conftest import JOB, add_builds, jenkins_source, make_spec, output_gz


@pytest.fixture(scope="module")
def uti(tmp_path_factory) -> Path:
    return today.run_csit_today(tmp_path_factory.mktemp("today"))[1]


def _zip_bytes(tree: Path, prefix: str = "archives/") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(tree.rglob("*.info.json")):
            zf.write(p, prefix + p.relative_to(tree).as_posix())
    return buf.getvalue()


def _ndr(path: Path, build: int) -> float:
    result = parse_build(path, JOB, build, testbeds=today.TESTBEDS)
    assert result.problems == []
    df = result.samples
    return df[(df.metric == "ndr") & (df.unit == "pps")]["value"].item()


def test_local_build_directories_with_uti_results(tmp_path, uti):
    data = tmp_path / "data" / JOB
    shutil.copytree(uti, data / "1" / "archives")  # robot's output tree as Jenkins archives it
    for p in (data / "1" / "archives").rglob("*.info.json"):  # the log server keeps each file gzipped
        p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes()))
        p.unlink()
    (data / "2" / "archives").mkdir(parents=True)
    with tarfile.open(data / "2" / "archives" / "results.tar.gz", "w:gz") as tf:
        tf.add(uti, arcname="archives")
    (data / "3").mkdir()
    (data / "3" / "archives.zip").write_bytes(_zip_bytes(uti))
    (data / "4" / "archives").mkdir(parents=True)
    (data / "4" / "archives" / "output.xml.gz").write_bytes(output_gz(JOB, 4))  # output.xml stays preferred
    shutil.copytree(uti, data / "4" / "archives" / "tests", dirs_exist_ok=True)
    (data / "5").mkdir()
    (data / "5" / "notes.txt").write_text("nothing here")
    report = RunReport()
    spec = make_spec(tmp_path, [{"name": "dir", "type": "local", "path": "data"}])
    files = {f.build: f for f in fetch_builds(spec, tmp_path / "cache", report)}
    assert {b: f.path for b, f in files.items()} == {
        1: data / "1", 2: data / "2" / "archives" / "results.tar.gz", 3: data / "3" / "archives.zip",
        4: data / "4" / "archives" / "output.xml.gz"}
    assert [p.item for p in report.problems] == [f"{JOB}/5"]  # reported missing, never skipped silently
    for b in (1, 2, 3):
        assert _ndr(files[b].path, b) == today.NDR_PPS
    again = {f.build: f.sha256 for f in fetch_builds(spec, tmp_path / "cache", RunReport())}
    assert again[1] == files[1].sha256 and len(again[1]) == 64  # the tree's hash is stable
    (data / "1" / "archives" / "tests" / "setup.info.json.gz").write_bytes(gzip.compress(b'{"version": "1.5.1"}'))
    assert fetch_builds(spec, tmp_path / "cache", RunReport())[0].sha256 != files[1].sha256


def test_jenkins_artifact_directory_zip(tmp_path, uti, fake):
    template = "{jenkins}/job/{job}/{build}/artifact/archives/*zip*/archives.zip"
    add_builds(fake, JOB, [7], files=lambda n: {"archives/*zip*/archives.zip": _zip_bytes(uti)})
    spec = make_spec(tmp_path, [jenkins_source(fake.url, [template])])
    report = RunReport()
    [got] = fetch_builds(spec, tmp_path / "cache", report)
    assert report.problems == []
    assert got.build == 7 and got.path.is_file()
    assert _ndr(got.path, 7) == today.NDR_PPS
