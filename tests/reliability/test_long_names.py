"""A huge test name is cut in the pages and kept whole in the data.

A 9.9 MB name once turned 10 KB of input into a 111 MB site (the name was printed on every
page listing the test, in every graph and its SVG). Now pages show 300-500 characters and say
how long the name is; the exports and the series data keep it exactly.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from tests.reliability.record import record
from tests.reliability.runs import build_files, run_pal, spec_dict, tiny_history, write_spec

LONG = 200_000


def _site_bytes(site: Path) -> int:
    return sum(p.stat().st_size for p in site.rglob("*") if p.is_file())


def _run(root: Path, name_len: int) -> Path:
    data = tiny_history(root / "data")
    name = "64b-2t1c-" + "x" * name_len + "-mrr"
    for i, path in enumerate(build_files(data)):
        xml = gzip.decompress(path.read_bytes()).decode()
        test = (f'<test id="s1-s1-s1-s1-s1-t77" name="{name}" line="1">\n<tag>MRR</tag>\n<tag>64B</tag>\n'
                '<status status="PASS" start="2026-11-11T02:13:48.400000" elapsed="1.0">Maximum Receive Rate '
                f"trial results in packets per second: [{5e6 + i}, {5e6 + i}]</status>\n</test>\n")
        end = xml.index("</test>\n") + len("</test>\n")
        path.write_bytes(gzip.compress((xml[:end] + test + xml[end:]).encode()))
    spec = write_spec(root / "spec.yaml", spec_dict(data, root / "out"))
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr[-2000:]
    return root / "out"


def test_a_huge_name_is_cut_in_pages_and_whole_in_the_data(tmp_path):
    short = _run(tmp_path / "short", 10)
    long_ = _run(tmp_path / "long", LONG)
    growth = _site_bytes(long_ / "site") - _site_bytes(short / "site")
    assert growth < 3 * LONG, f"the site grew by {growth} bytes for a name of {LONG}"  # was ~11x
    page = next((long_ / "site" / "s").glob("64b-2t1c-xxx*.html")).read_text("utf-8")
    assert re.search(r"\u2026 \(2\d{5} characters\)", page), "the page says the name was cut, and its length"
    assert "x" * 600 not in page
    exported = (long_ / "exports").rglob("*.csv")  # the groups and every build file
    assert any("x" * LONG in p.read_text("utf-8") for p in exported), "the exports keep the full name"
    record("HTML injection", f"a test name of {LONG // 1000} KB", f"pages show it cut with its length; exports keep "
           f"it whole; the site grew {growth / LONG:.1f}x the name (was ~11x)", faults=1)
