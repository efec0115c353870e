"""The local directory source: nested and flat layouts, used in place, hashes cached."""

from __future__ import annotations

import gzip
import hashlib
import lzma

import pal.sources.local as local_mod
from pal.report import RunReport
from pal.sources import fetch_builds
from tests.fakejenkins import FakeJenkins
from tests.sources.conftest import JOB, add_builds, jenkins_source, make_spec, output_gz, output_xml


def local_spec(tmp_path, jobs=None, extra=None):
    return make_spec(tmp_path, [{"name": "dir", "type": "local", "path": "data"}] + (extra or []), jobs)


def test_nested_layout_used_in_place_with_content_hash(tmp_path):
    data = tmp_path / "data" / JOB
    for n in (1, 2, 3):
        (data / str(n)).mkdir(parents=True)
    (data / "1" / "output.xml.gz").write_bytes(output_gz(JOB, 1))
    (data / "2" / "output.xml").write_bytes(output_xml(JOB, 2))
    (data / "3" / "archives").mkdir()
    (data / "3" / "archives" / "output_info.xml.xz").write_bytes(lzma.compress(output_xml(JOB, 3)))
    (data / "notabuild").mkdir()
    report = RunReport()
    files = fetch_builds(local_spec(tmp_path), tmp_path / "cache", report)
    assert [(f.build, f.path, f.source) for f in files] == [
        (1, data / "1" / "output.xml.gz", "dir"),
        (2, data / "2" / "output.xml", "dir"),
        (3, data / "3" / "archives" / "output_info.xml.xz", "dir"),
    ]
    assert files[1].sha256 == hashlib.sha256(output_xml(JOB, 2)).hexdigest()
    assert report.counts == {"download.skipped": 0, "download.source.dir": 3}
    assert not (tmp_path / "cache" / JOB).exists()  # nothing copied


def test_flat_layout_and_preference_order(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / f"{JOB}__7__output.xml.gz").write_bytes(output_gz(JOB, 7))
    (data / f"{JOB}__8__output_info.xml.gz").write_bytes(output_gz(JOB, 8))
    (data / f"{JOB}__8__output.xml.gz").write_bytes(output_gz(JOB, 80))  # full output preferred over info
    (data / "other-job__9__output.xml.gz").write_bytes(output_gz("other-job", 9))
    (data / f"{JOB}__10__notes.txt").write_text("not an output")
    files = fetch_builds(local_spec(tmp_path), tmp_path / "cache", RunReport())
    assert [(f.build, f.path.name) for f in files] == [(7, f"{JOB}__7__output.xml.gz"), (8, f"{JOB}__8__output.xml.gz")]


def test_range_and_max_builds_on_local_and_aliases_resolve_to_newest(tmp_path):
    data = tmp_path / "data" / JOB
    for n in range(1, 13):
        (data / str(n)).mkdir(parents=True)
        (data / str(n) / "output.xml.gz").write_bytes(output_gz(JOB, n))
    files = fetch_builds(local_spec(tmp_path, [{"name": JOB, "start": 3, "max-builds": 4}]), tmp_path / "c", RunReport())
    assert [f.build for f in files] == [9, 10, 11, 12]
    files = fetch_builds(local_spec(tmp_path, [{"name": JOB, "start": 3, "end": 5}]), tmp_path / "c", RunReport())
    assert [f.build for f in files] == [3, 4, 5]
    # period-days is not applied to builds only a directory knows (no build time; see pal.sources.local)
    files = fetch_builds(local_spec(tmp_path, [{"name": JOB, "period-days": 1}]), tmp_path / "c", RunReport())
    assert len(files) == 12


def test_damaged_local_file_falls_back_to_jenkins_with_a_warning(tmp_path):
    data = tmp_path / "data" / JOB
    (data / "1").mkdir(parents=True)
    (data / "2").mkdir(parents=True)
    (data / "1" / "output.xml.gz").write_bytes(output_gz(JOB, 1))
    (data / "2" / "output.xml.gz").write_bytes(output_gz(JOB, 2)[:-10])  # truncated copy
    with FakeJenkins() as fj:
        add_builds(fj, JOB, [1, 2, 3])
        report = RunReport()
        spec = local_spec(tmp_path, extra=[jenkins_source(fj.url)])
        files = fetch_builds(spec, tmp_path / "cache", report, backoff=0.001)
        assert [(f.build, f.source) for f in files] == [(1, "dir"), (2, "jenkins"), (3, "jenkins")]
        assert sorted(fj.paths("/artifact/")) == [f"/job/{JOB}/{n}/artifact/output.xml.gz" for n in (2, 3)]
    [p] = report.problems
    assert (p.item, p.severity) == (f"{JOB}/2", "warning")
    assert "truncated gzip data" in p.details["errors"][0] and p.details["urls"][0] == str(data / "2" / "output.xml.gz")


def test_damaged_local_file_with_no_other_source_is_an_error(tmp_path):
    data = tmp_path / "data" / JOB / "1"
    data.mkdir(parents=True)
    (data / "output.xml.gz").write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate")
    report = RunReport()
    assert fetch_builds(local_spec(tmp_path), tmp_path / "cache", report) == []
    [p] = report.errors("download")
    assert p.item == f"{JOB}/1" and "damaged" in p.message and "corrupt gzip data" in p.details["errors"][0]


def test_hashes_are_cached_by_path_size_and_mtime(tmp_path, monkeypatch):
    data = tmp_path / "data" / JOB
    for n in (1, 2):
        (data / str(n)).mkdir(parents=True)
        (data / str(n) / "output.xml.gz").write_bytes(output_gz(JOB, n))
    calls: list[str] = []
    real = local_mod.check_file
    monkeypatch.setattr(local_mod, "check_file", lambda p: calls.append(p.parent.name) or real(p))
    first = fetch_builds(local_spec(tmp_path), tmp_path / "cache", RunReport())
    assert sorted(calls) == ["1", "2"]
    calls.clear()
    second = fetch_builds(local_spec(tmp_path), tmp_path / "cache", RunReport())
    assert calls == [] and [f.sha256 for f in second] == [f.sha256 for f in first]
    (data / "2" / "output.xml.gz").write_bytes(output_gz(JOB, 22))  # changed content: rehashed
    third = fetch_builds(local_spec(tmp_path), tmp_path / "cache", RunReport())
    assert calls == ["2"]
    assert third[1].sha256 == hashlib.sha256(output_gz(JOB, 22)).hexdigest()
    assert gzip.decompress(third[1].path.read_bytes()) == output_xml(JOB, 22)


def test_build_directory_without_a_known_output_file_is_reported_missing(tmp_path):
    """A build directory holding only an unsupported archive is a missing build in the report, not a silent skip."""
    data = tmp_path / "data" / JOB
    (data / "1").mkdir(parents=True)
    (data / "1" / "output.xml.gz").write_bytes(output_gz(JOB, 1))
    (data / "2").mkdir()
    (data / "2" / "output.xml.bz2").write_bytes(b"BZh9")
    (data / "2" / "log.html").write_text("<html/>")
    report = RunReport()
    files = fetch_builds(local_spec(tmp_path), tmp_path / "cache", report)
    assert [f.build for f in files] == [1]
    [p] = report.errors("download")
    assert p.item == f"{JOB}/2"
    assert p.message == "no source has this build; skipped"
    [why] = p.details["errors"]
    assert why.startswith("dir: no output.xml.gz / output.xml.xz / output.xml.zip / output.xml in ")
    assert why.endswith(f"{JOB}/2 (it holds: log.html, output.xml.bz2)")
