"""The demo's new formats: a job written as UTI JSON (archives.tar.gz per build) and NDRPDR builds
with MLRsearch v7 messages read exactly as the same builds written the old way."""

from __future__ import annotations

import gzip
import json
import tarfile

from pal.demo import generate
from pal.demo.generate import DEMO_UTI_JOBS
from pal.parse import parse_build
from pal.parse.uti import validator

ALT = "csit-vpp-perf-mrr-daily-master-3n-alt"
NDRPDR = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"
TESTBEDS = {"10.30.51.90": "3n-alt-tb1", "10.30.51.45": "2n-icx-tb1"}


def _rows(path, job, build):
    r = parse_build(path, job, build, testbeds=TESTBEDS)
    assert r.problems == []
    return r, r.samples.drop(columns="source_file").sort_values(["test_id", "metric"]).reset_index(drop=True)


def test_uti_job_reads_exactly_as_its_output_xml_twin(tmp_path):
    xml_dir, uti_dir = tmp_path / "xml", tmp_path / "uti"
    truth_xml = generate(xml_dir, small=True)
    truth_uti = generate(uti_dir, small=True, uti_jobs=list(DEMO_UTI_JOBS))
    assert DEMO_UTI_JOBS == (ALT,) and truth_xml == truth_uti
    job = truth_uti.job(ALT)
    assert not list((uti_dir / ALT).glob("*/output.xml.gz"))
    for n in job.readable:
        archive = uti_dir / ALT / str(n) / "archives.tar.gz"
        x, a = _rows(xml_dir / ALT / str(n) / "output.xml.gz", ALT, n)
        u, b = _rows(archive, ALT, n)
        assert a.equals(b), n
        assert (x.meta.build_time, x.meta.passed, x.meta.failed, x.meta.dut_version, x.meta.testbed) == \
               (u.meta.build_time, u.meta.passed, u.meta.failed, u.meta.dut_version, u.meta.testbed)
    with tarfile.open(uti_dir / ALT / str(job.readable[-1]) / "archives.tar.gz") as tf:
        names = tf.getnames()
        tests = validator("uti_test_case.schema.json", "python")
        for name in names:
            if not name.endswith(("setup.info.json", "teardown.info.json")):

                assert tests.problem(json.loads(tf.extractfile(name).read())) is None, name
    assert names[-1] == "archives/tests/teardown.info.json"  # the top suite ends last
    again = tmp_path / "again"
    generate(again, small=True, uti_jobs=[ALT])
    last = f"{ALT}/{job.readable[-1]}/archives.tar.gz"
    assert (again / last).read_bytes() == (uti_dir / last).read_bytes()  # byte-identical for the seed


def test_ndrpdr_history_switches_to_mlrsearch_v7_messages(tmp_path):
    truth = generate(tmp_path, small=True)
    job = truth.job(NDRPDR)
    first, last = job.readable[0], job.readable[-1]
    assert b"\nNDR_LOWER: " in gzip.decompress((tmp_path / NDRPDR / str(first) / "output.xml.gz").read_bytes())
    text = gzip.decompress((tmp_path / NDRPDR / str(last) / "output.xml.gz").read_bytes())
    assert b"\nNDR: " in text and b"NDR_LOWER" not in text
    r = parse_build(tmp_path / NDRPDR / str(last) / "output.xml.gz", NDRPDR, last)
    assert r.problems == []
    passed = r.samples[r.samples.status == "PASS"]
    assert set(passed.metric) == {"ndr", "pdr", "latency_pdr50_d1", "latency_pdr50_d2"}
    assert passed.value.notna().all()
