"""A test id given twice in one build is reported (it used to keep the last value silently)."""

from __future__ import annotations

import gzip

from pal.parse.build import parse_build
from tests.reliability.runs import JOB, build_files, tiny_history


def test_duplicate_test_id_in_one_build_is_a_warning(tmp_path):
    tiny_history(tmp_path / "data", builds=10, tests=3)
    path = build_files(tmp_path / "data")[0]
    xml = gzip.decompress(path.read_bytes()).decode()
    start = xml.index("<test ")
    end = xml.index("</test>\n", start) + len("</test>\n")
    first = xml[start:end]
    path.write_bytes(gzip.compress((xml[:end] + first.replace("id=\"", "id=\"x", 1) + xml[end:]).encode()))
    clean = parse_build(path, JOB, 1)
    dups = [p for p in clean.problems if "results in this build" in p.message]
    assert len(dups) == 1, [p.message for p in clean.problems]
    p = dups[0]
    assert p.severity == "warning" and p.details["count"] == 2 and p.details["metric"] == "mrr"
    assert p.details["test"] in set(clean.samples["test_id"]) and str(path) in p.message
