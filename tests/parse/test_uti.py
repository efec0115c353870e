"""Today's CSIT output, written both ways by one Robot Framework run: output.xml with MLRsearch v7
messages and the UTI JSON tree. Exact values, identical rows, and the reader's guarantees."""

from __future__ import annotations

import io
import json
import math
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from pal.errors import ParseError
from pal.parse import parse_build
from pal.parse.inputs import input_kind
from pal.parse.uti import load_json, nonfinite, test_name_of, validator
from tests.parse import csit_today as today

JOB = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"
SUITE = "tests.vpp.perf.ip4."
MRR_ID = SUITE + today.SUITE_NAME_MRR + ".64b-2t1c-ethip4-ip4base-mrr"
CPS_MRR_ID = SUITE + today.SUITE_NAME_MRR + ".64b-2t1c-ethip4tcp-nat44ed-h262144-p63-s16515072-cps-mrr"
FAIL_ID = SUITE + today.SUITE_NAME_MRR + ".64b-4t2c-ethip4-ip4base-mrr"
NDR_SUITE = "tests.vpp.perf.ip4 tunnels."  # as Robot names the suite of directory ip4_tunnels
NDR_ID = NDR_SUITE + today.SUITE_NAME_NDR + ".64b-2t1c-ethip4-ip4base-ndrpdr"
CPS_NDR_ID = NDR_SUITE + today.SUITE_NAME_NDR + ".64b-2t1c-ethip4tcp-nat44ed-h262144-p63-s16515072-cps-ndrpdr"
SOAK_ID = NDR_SUITE + today.SUITE_NAME_NDR + ".64b-2t1c-ethip4-ip4base-soak"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path]:
    return today.run_csit_today(tmp_path_factory.mktemp("today"))


def _values(result) -> dict[tuple[str, str], tuple]:
    df = result.samples
    return {(r.test_id, r.metric): (r.value, r.unit, r.status, r.message) for r in df.itertuples()}


def _tar(src: Path, dest: Path, prefix: str = "") -> Path:
    with tarfile.open(dest, "w:gz") as tf:
        for p in sorted(src.rglob("*.info.json")):
            tf.add(p, arcname=prefix + p.relative_to(src).as_posix())
    return dest


def test_output_xml_carries_todays_messages(run):
    text = run[0].read_text(encoding="utf-8")
    assert "\nNDR: 19876543.5 pps, 13.357 Gbps (initial) \nPDR: 20123456.25 pps, 13.523 Gbps (initial) \n" \
           "Latency at 90% PDR: ['9/14/29/HISTFAAAAAF', '9/15/29/HISTFAAAAAG']" in text
    assert "\nNDR: 412345.5 CPS \nPDR: 420000.25 CPS</status>" in text
    assert "Maximum Receive Rate trial results in estimated connections per second: [100000.0, 110000.0]" in text


@pytest.mark.parametrize("form", ["xml", "uti"])
def test_exact_values(run, form):
    path = run[0] if form == "xml" else run[1]
    result = parse_build(path, JOB, 7, testbeds=today.TESTBEDS)
    assert result.problems == []
    v = _values(result)
    assert v[(NDR_ID, "ndr")] == (19876543.5, "pps", "PASS", "")
    assert v[(NDR_ID, "pdr")] == (20123456.25, "pps", "PASS", "")
    assert v[(NDR_ID, "latency_pdr50_d1")][:2] == (11.0, "us")  # 'Latency at 50% PDR', forward 7/11/18
    assert v[(NDR_ID, "latency_pdr50_d2")][:2] == (12.0, "us")  # reverse 8/12/19
    assert v[(CPS_NDR_ID, "ndr")] == (412345.5, "cps", "PASS", "")
    assert v[(CPS_NDR_ID, "pdr")] == (420000.25, "cps", "PASS", "")
    assert (CPS_NDR_ID, "latency_pdr50_d1") not in v  # ASTF: no latency
    assert v[(SOAK_ID, "soak")] == (9000001.0, "pps", "PASS", "")
    assert v[(CPS_MRR_ID, "cps")] == (105000.0, "cps", "PASS", "")
    value, unit, status, message = v[(FAIL_ID, "mrr")]
    assert math.isnan(value) and (unit, status, message) == ("pps", "FAIL", today.FAIL_MESSAGE)
    df = result.samples.set_index(["test_id", "metric"])
    mrr = df.loc[(MRR_ID, "mrr")]
    assert mrr["value"] == 22500000.0
    assert list(mrr["trials"]) == today.MRR_TRIALS
    assert mrr["stdev"] == pytest.approx(math.sqrt(1.25e12), rel=1e-15)
    assert df.loc[(CPS_MRR_ID, "cps")]["stdev"] == 5000.0
    assert set(result.samples["dut_version"]) == {today.DUT_VERSION}
    assert set(result.samples["testbed"]) == {"2n-icx-tb1"}
    assert set(result.samples["topo_arch"]) == {"2n-icx"}
    assert (result.meta.passed, result.meta.failed) == (5, 1)
    assert result.meta.dut_version == today.DUT_VERSION
    assert result.meta.testbed == "2n-icx-tb1"


def _rows(result):
    df = result.samples.drop(columns=["source_file"])
    df = df.sort_values(["test_id", "metric"]).reset_index(drop=True)
    df["trials"] = [None if t is None else list(t) for t in df["trials"]]
    return df


@pytest.mark.parametrize("container", ["dir", "tar.gz", "zip"])
def test_one_run_written_both_ways_gives_identical_rows(run, tmp_path, container):
    xml_out, uti = run
    if container == "tar.gz":
        uti = _tar(uti, tmp_path / "results.tar.gz")
    elif container == "zip":
        with zipfile.ZipFile(tmp_path / "results.zip", "w") as zf:
            for p in sorted(uti.rglob("*.info.json")):
                zf.write(p, "archives/" + p.relative_to(uti).as_posix())
        uti = tmp_path / "results.zip"
    from_xml = parse_build(xml_out, JOB, 7, testbeds=today.TESTBEDS)
    from_uti = parse_build(uti, JOB, 7, testbeds=today.TESTBEDS)
    assert input_kind(uti) == "uti" and input_kind(xml_out) == "xml"
    a, b = _rows(from_xml), _rows(from_uti)
    assert len(a) == 10
    assert a.equals(b)
    for field in ("build_time", "start_time", "dut_version", "testbed", "passed", "failed", "duration_s"):
        assert getattr(from_xml.meta, field) == getattr(from_uti.meta, field), field


def test_every_file_the_suite_writes_matches_the_schema_under_both_engines(run):
    files = sorted(run[1].rglob("*.info.json"))
    assert len(files) == 6 + 6  # 6 tests; setup and teardown of the 3 suites that import the exporter
    assert any("/ip4_tunnels/" in p.as_posix() for p in files)
    for engine in ("rs", "python"):
        tests = validator("uti_test_case.schema.json", engine)
        suites = validator("uti_suite.schema.json", engine)
        for p in files:
            v = suites if p.name in ("setup.info.json", "teardown.info.json") else tests
            assert v.problem(json.loads(p.read_text())) is None, (engine, p)


BAD_DOCS = [
    ("version", "2.0.0"), ("passed", "yes"), ("message", "oops"),  # PASS with a message
    ("hosts", []), ("test_type", "latency"), ("extra", 1), ("start_time", "yesterday"),
]


@pytest.mark.parametrize("key,value", BAD_DOCS)
def test_engines_agree_on_invalid_documents(run, key, value):
    doc = json.loads(next(run[1].rglob("64b-1c-ethip4-ip4base-ndrpdr.info.json")).read_text())
    doc[key] = value
    rs = validator("uti_test_case.schema.json", "rs").problem(doc)
    py = validator("uti_test_case.schema.json", "python").problem(doc)
    assert rs is not None and py is not None


@pytest.mark.parametrize("path,value", [
    (("result", "ndr", "lower", "rate", "value"), -1.0),
    (("result", "ndr", "lower", "rate", "unit"), "Mpps"),
    (("result", "latency_forward", "pdr_50", "max"), 0),
    (("result", "type"), "mrr"),
])
def test_engines_agree_on_invalid_results(run, path, value):
    doc = json.loads(next(run[1].rglob("64b-1c-ethip4-ip4base-ndrpdr.info.json")).read_text())
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    assert validator("uti_test_case.schema.json", "rs").problem(doc) is not None
    assert validator("uti_test_case.schema.json", "python").problem(doc) is not None


HOSTILE = {
    "duplicate key": b'{"version": "1.5.1", "version": "1.5.1"}',
    "nested too deeply": b"[" * 100000 + b"]" * 100000,
    "beyond the float range": b'{"version": "1.5.1", "duration": 1e999}',
    "unusable number": b'{"duration": ' + b"9" * 20000 + b"}",
    "not valid UTF-8": b'{"message": "\xff\xfe"}',
    "NaN is not JSON": b'{"duration": NaN}',
    "not valid JSON": b'{"duration": 1,}',
}


@pytest.mark.parametrize("why", sorted(HOSTILE))
def test_hostile_json_is_a_per_file_problem(run, tmp_path, why):
    tree = tmp_path / "uti"
    for p in run[1].rglob("*.info.json"):
        dest = tree / p.relative_to(run[1])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.read_bytes())
    bad = tree / "tests" / "vpp" / "perf" / "ip4" / "hostile.info.json"
    bad.write_bytes(HOSTILE[why])
    if why == "beyond the float range":  # decodes to inf; every number of the schemas is bounded
        assert nonfinite(load_json(HOSTILE[why])) == "duration"
    else:
        with pytest.raises(ValueError, match=why):
            load_json(HOSTILE[why])
    result = parse_build(tree, JOB, 7)
    assert len(result.problems) == 1
    p = result.problems[0]
    assert p.stage == "parse" and p.details["member"] == "tests/vpp/perf/ip4/hostile.info.json"
    assert why in p.message and "build 7" in p.message
    assert len(result.samples) == 10  # the other tests are still read


def test_newer_major_version_is_a_build_problem(run, tmp_path):
    doc = json.loads(next(run[1].rglob("64b-1c-ethip4-ip4base-mrr.info.json")).read_text())
    doc["version"] = "2.0.0"
    (tmp_path / "t.info.json").write_text(json.dumps(doc))
    with pytest.raises(ParseError, match=r"\(build 4\): t.info.json: UTI model version 2.0.0; pal reads major version 1"):
        parse_build(tmp_path / "t.info.json", JOB, 4)


def test_single_file_and_schema_mismatch(run, tmp_path):
    src = next(run[1].rglob("64b-1c-ethip4-ip4base-mrr.info.json"))
    one = parse_build(src, JOB, 3)
    assert one.samples["value"].tolist() == [22500000.0]
    doc = json.loads(src.read_text())
    doc["result"]["receive_rate"]["rate"]["values"] = [-5.0]
    (tmp_path / "bad.info.json").write_text(json.dumps(doc))
    (tmp_path / "good.info.json").write_text(src.read_text())
    result = parse_build(tmp_path, JOB, 3)
    assert len(result.samples) == 1
    [problem] = result.problems
    assert "bad.info.json: does not match the UTI test schema: result" in problem.message


def _tar_with(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def test_members_outside_the_build_tree_are_refused(run, tmp_path):
    good = next(run[1].rglob("64b-1c-ethip4-ip4base-mrr.info.json")).read_bytes()
    link = tarfile.TarInfo("tests/link.info.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    archive = _tar_with(tmp_path / "b.tgz", [
        (tarfile.TarInfo("../escape.info.json"), good),
        (tarfile.TarInfo("/abs/x.info.json"), good),
        (link, None),
        (tarfile.TarInfo("tests/ok.info.json"), good),
    ])
    result = parse_build(archive, JOB, 5)
    assert result.samples["value"].tolist() == [22500000.0]
    reasons = sorted(p.message.split(": ", 3)[-1] for p in result.problems)
    assert len(reasons) == 3
    assert sum("outside the build tree" in r for r in reasons) == 2
    assert any("not a regular file" in r for r in reasons)
    assert not (tmp_path.parent / "escape.info.json").exists()


def test_directory_symlinks_are_not_followed(run, tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    src = next(run[1].rglob("64b-1c-ethip4-ip4base-mrr.info.json"))
    (tree / "a.info.json").write_bytes(src.read_bytes())
    os.symlink(src, tree / "b.info.json")
    result = parse_build(tree, JOB, 5)
    assert len(result.samples) == 1
    assert "b.info.json: refused: not a regular file" in result.problems[0].message


def test_size_caps(run, tmp_path):
    archive = _tar(run[1], tmp_path / "r.tar.gz")
    with pytest.raises(ParseError, match="exceed the cap of 1000 bytes"):
        parse_build(archive, JOB, 5, max_bytes=1000)
    result = parse_build(archive, JOB, 5, max_member=600)  # suite files are small, test files are not
    assert result.samples.empty
    assert result.problems and all("over the cap of 600 per file" in p.message for p in result.problems)


def test_damaged_and_empty_archives(run, tmp_path):
    archive = _tar(run[1], tmp_path / "r.tar.gz")
    data = archive.read_bytes()
    for n in range(1, 40):  # every cut, whether it falls inside a member or after the last one
        cut = tmp_path / f"cut{n}.tar.gz"
        cut.write_bytes(data[: len(data) * n // 40])
        with pytest.raises(ParseError, match="damaged"):
            parse_build(cut, JOB, 5)
    empty = tmp_path / "empty"
    (empty / "x").mkdir(parents=True)
    (empty / "x" / "notes.txt").write_text("hi")
    with pytest.raises(ParseError, match=r"no \*\.info\.json files found"):
        parse_build(empty, JOB, 5)


@pytest.mark.parametrize("uti_id,name", [
    ("a.b.64b-1c-ethip4-ip4base-mrr", "64B-1c-ethip4-ip4base-mrr"),
    ("a.b.imix-2c-ethip4-ip4base-ndrpdr", "IMIX-2c-ethip4-ip4base-ndrpdr"),
    ("a.b.tc01-9000b-1c-x-mrr", "tc01-9000B-1c-x-mrr"),
    ("a.b.eth-l2bdbasemaclrn-mrr", "eth-l2bdbasemaclrn-mrr"),
])
def test_test_name_gets_csits_frame_case(uti_id, name):
    assert test_name_of(uti_id) == name


def test_a_build_directory_with_an_output_xml_reads_that_file(run, tmp_path):
    build = tmp_path / "b"
    (build / "archives").mkdir(parents=True)
    (build / "archives" / "output.xml").write_bytes(run[0].read_bytes())
    result = parse_build(build, JOB, 9)
    assert result.meta.source_file == str(build / "archives" / "output.xml")
    assert len(result.samples) == 10


def test_a_single_gzipped_file_as_the_log_server_keeps_it(run, tmp_path):
    import gzip

    src = next(run[1].rglob("64b-1c-ethip4-ip4base-mrr.info.json"))
    one = tmp_path / "64b-1c-ethip4-ip4base-mrr.info.json.gz"
    one.write_bytes(gzip.compress(src.read_bytes()))
    assert parse_build(one, JOB, 3).samples["value"].tolist() == [22500000.0]
