"""XML and archive attacks: the corpus in tests/data/hostile, bombs made at test time, memory
measured in a subprocess, a listening socket proving no network access, and a whole run whose
history holds such archives (reported, the run completes, nothing written outside the out dir)."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from pal.errors import ParseError
from pal.parse import parse_build
from tests.reliability.record import record
from tests.reliability.runs import JOB, REPO, build_files, run_pal, spec_dict, tiny_history, write_spec

HOSTILE = REPO / "tests" / "data" / "hostile"
CLEAN = REPO / "tests" / "data" / "parse" / "rf6_output.xml"
RSS_LIMIT_MB = 400

#: corpus file -> the start of the ParseError text after "<file> (build 5): ", or "same" (= clean samples)
EXPECTED = {
    "billion_laughs_nodecl.xml": "XML with a DOCTYPE",
    "bom_comment_pi_doctype.xml": "XML with a DOCTYPE",
    "xxe_parameter_entity.xml": "XML with a DOCTYPE",
    "wrong_declared_encoding.xml": "malformed XML",
    "gzip_then_garbage.xml.gz": "damaged archive",
    "gzip_concatenated_members.xml.gz": "same",
    "zip_slip.zip": "same",  # read in memory: the member path is never a file system path
    "zip_absolute.zip": "same",
    "zip_symlink.zip": "not an XML document",
    "zip_two_outputs.zip": "zip archive holds no robot-plugin/output.xml nor a single",
    "zip_declares_4gb.zip": "no top-level suite",
}


def _samples(path: Path) -> list:
    return parse_build(path, JOB, 5).samples.drop(columns="source_file").to_dict("records").__repr__()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file(name):
    path = HOSTILE / name
    want = EXPECTED[name]
    if want == "same":
        assert _samples(path) == _samples(CLEAN)
    else:
        with pytest.raises(ParseError) as ei:
            parse_build(path, JOB, 5)
        assert re.match(rf"{re.escape(str(path))}(:\d+)? \(build 5\): ", str(ei.value)) and ei.value.build == 5
        assert want in str(ei.value), str(ei.value)
    record("XML and archive attacks", f"corpus: {name}", "same samples as the clean file (read in memory)"
           if want == "same" else f"ParseError: {want}", faults=1)


def test_corpus_is_all_covered():
    names = {p.name for p in HOSTILE.iterdir() if p.name != "README.md"}
    assert names == set(EXPECTED) | {"xinclude.xml"}


def test_xinclude_is_not_expanded():
    r = parse_build(HOSTILE / "xinclude.xml", JOB, 5)
    assert "root:" not in r.samples["message"].astype(str).str.cat()
    assert r.samples["value"].isna().all() and len(r.problems) == 1
    record("XML and archive attacks", "XInclude of /etc/passwd", "not expanded; NaN + warning", faults=1)


def test_no_network_access_for_external_entities(tmp_path):
    """Through the walker itself (no prolog check), an external DTD and entity point at a listening socket."""
    from pal.parse.walker import Walk

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(1.0)
    port = srv.getsockname()[1]
    hits = []

    def accept():
        try:
            while True:
                hits.append(srv.accept())
        except OSError:
            pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    doc = (f'<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "http://127.0.0.1:{port}/a.dtd" [\n'
           f'<!ENTITY x SYSTEM "http://127.0.0.1:{port}/x">\n<!ENTITY % p SYSTEM "http://127.0.0.1:{port}/p">\n]>\n'
           '<robot><suite name="T"><test name="t"><status status="PASS">&x;</status></test>'
           '<status status="PASS"/></suite></robot>').encode()
    try:
        list(Walk("x.xml", 1).tests([doc]))
    except ParseError:
        pass
    p = tmp_path / "output.xml"
    p.write_bytes(doc)
    with pytest.raises(ParseError, match="DOCTYPE"):
        parse_build(p, JOB, 1)
    t.join(1.5)
    srv.close()
    assert hits == []
    record("XML and archive attacks", "external DTD, external entity and parameter entity to a listening socket",
           "refused (DOCTYPE); even the bare walker makes no connection", faults=3)


BOMB_SCRIPT = r"""
import sys, time
from pal.errors import ParseError
from pal.parse import parse_build
t = time.monotonic()
try:
    parse_build(sys.argv[1], "csit-vpp-perf-mrr-daily-master-2n-icx", 1)
    outcome = "parsed"
except ParseError as exc:
    outcome = "ParseError: " + str(exc)[len(sys.argv[1]):][:160]
print(outcome)
# VmHWM is this process's own peak; ru_maxrss would carry over the forking pytest worker's peak
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024)
print(round(time.monotonic() - t, 2))
"""


def _bomb(path: Path, head: bytes, block: bytes, blocks: int, tail: bytes) -> Path:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    with open(path, "wb") as f:
        f.write(co.compress(head))
        for _ in range(blocks):
            f.write(co.compress(block))
        f.write(co.compress(tail) + co.flush())
    return path


def _measure(path: Path) -> tuple[str, int, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, str(path)], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    *outcome, rss, secs = r.stdout.strip().splitlines()
    return " ".join(outcome), int(rss), float(secs)


HEAD = b'<?xml version="1.0"?>\n<robot><suite name="Tests"><test name="t"><status status="PASS">'
TAIL = b"</status></test><status status=\"PASS\"/></suite></robot>"


@pytest.mark.parametrize("case, head, block, blocks, tail, want", [
    ("50 MB text node", HEAD, b"A" * (1 << 20), 50, TAIL, "Text node too long"),
    ("256 MiB of blanks in a 250 KB gzip", b'<?xml version="1.0"?>\n<robot><suite name="a">', b" " * (1 << 20), 256,
     b"</suite></robot>", "Text node too long"),
    ("50 MB attribute value", b'<?xml version="1.0"?>\n<robot><suite name="', b"B" * (1 << 20), 50,
     b'"></suite></robot>', "ParseError"),
    ("100k nested elements", b'<?xml version="1.0"?>\n<robot><suite name="a">', b"<kw>" * 100_000, 1,
     b"</suite></robot>", "ParseError"),
])
def test_bombs_are_refused_in_bounded_memory(tmp_path, case, head, block, blocks, tail, want):
    path = _bomb(tmp_path / "output.xml.gz", head, block, blocks, tail)
    outcome, rss, secs = _measure(path)
    assert outcome.startswith("ParseError") and want in outcome, outcome
    assert rss < RSS_LIMIT_MB, f"{case}: peak RSS {rss} MB"
    record("XML and archive attacks", f"{case} ({path.stat().st_size >> 10} KB compressed)",
           f"ParseError, peak RSS {rss} MB, {secs} s", faults=1, peak_mb=rss)


def test_element_bomb_outside_tests_stays_in_bounded_memory(tmp_path):
    """6 M suite-level <kw/> in a 100 KB gzip: the walker drops finished suite-level elements
    between chunks (it used to keep them until the next suite or test, ~30x the XML in memory)."""
    path = _bomb(tmp_path / "output.xml.gz", b'<?xml version="1.0"?>\n<robot><suite name="a">', b"<kw/>" * (1 << 18),
                 24, b"</suite></robot>")
    outcome, rss, secs = _measure(path)
    assert rss < RSS_LIMIT_MB, f"peak RSS {rss} MB for a {path.stat().st_size >> 10} KB file ({outcome})"
    record("XML and archive attacks", f"element bomb: 6 M suite-level <kw/> ({path.stat().st_size >> 10} KB "
           "compressed)", f"{outcome.split(':')[0]}, peak RSS {rss} MB, {secs} s", faults=1, peak_mb=rss)


def test_whole_run_with_hostile_archives(tmp_path):
    """Builds whose files are a zip-slip zip, a symlink zip, a bomb and a DOCTYPE: reported, the run completes,
    nothing appears outside the output directory."""
    data = tiny_history(tmp_path / "data")
    files = build_files(data)
    planted = {
        files[1]: (HOSTILE / "zip_symlink.zip").read_bytes(),
        files[2]: (HOSTILE / "bom_comment_pi_doctype.xml").read_bytes(),
        files[3]: (HOSTILE / "zip_two_outputs.zip").read_bytes(),
    }
    for f, body in planted.items():
        f.write_bytes(body)
    slip = files[4].parent / "output.xml.zip"  # zip-slip: the good content under a ../ member name
    files[4].unlink()
    import zipfile

    with zipfile.ZipFile(slip, "w") as zf:
        zf.writestr("../../../../../tmp/pal-zip-slip-probe/output.xml", gzip.decompress(files[5].read_bytes()))
    _bomb(files[6], b'<?xml version="1.0"?>\n<robot><suite name="a">', b" " * (1 << 20), 64, b"</suite></robot>")
    spec = write_spec(tmp_path / "spec.yaml", spec_dict(data, tmp_path / "out"))
    before = {p for p in tmp_path.rglob("*")}
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    bad = {int(p["item"].rsplit("/", 1)[1]) for p in report["problems"] if p["severity"] == "error"}
    assert bad == {int(f.parent.name) for f in (files[1], files[2], files[3], files[6])}, report["problems"]
    assert report["counts"]["builds.stored"] == len(files) - 4  # the zip-slip build is read, in memory
    new = {p for p in tmp_path.rglob("*")} - before
    outside = [p for p in new if not p.is_relative_to(tmp_path / "out")]
    assert outside == [], outside
    assert not Path("/tmp/pal-zip-slip-probe").exists()
    record("XML and archive attacks", "whole run: symlink zip, DOCTYPE, ambiguous zip, 64 MB blank gzip bomb, "
           "zip-slip member", "4 builds reported, zip-slip read in memory, nothing written outside the out dir, "
           "run completes", inputs=len(files), faults=5, lost=0)
