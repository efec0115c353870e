"""Hostile test names, messages, versions and title through a whole ``pal run``: every output checked.

The history has two tests whose names carry ``<script>``, quote break-outs, ``</script>``,
``javascript:`` URLs, a spreadsheet formula, an RTL override and a zero-width space, a FAIL
message with all of them, a hostile VPP version and a hostile spec title. The run must
publish them as inert text everywhere.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from lxml import etree, html

from tests.reliability.record import record
from tests.reliability.runs import (
    BREAKOUT,
    HOSTILE_MESSAGE,
    HOSTILE_TITLE,
    SCRIPT,
    plant_hostile,
    run_pal,
    spec_dict,
    tiny_history,
    write_spec,
)

URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "{http://www.w3.org/1999/xlink}href", "data")
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    data = tiny_history(root / "data")
    plant_hostile(data)
    spec = write_spec(root / "spec.yaml", spec_dict(data, root / "out", title=HOSTILE_TITLE))
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr
    return root / "out"


def _files(out: Path, pattern: str) -> list[Path]:
    files = sorted(out.rglob(pattern))
    assert files, f"no {pattern} under {out}"
    return files


def _bad_url(value: str) -> bool:
    v = re.sub(r"[\x00-\x20]", "", value).lower()
    return v.startswith(("javascript:", "vbscript:", "data:text/html"))


def test_html_pages_have_no_injected_script_handler_or_url(hostile_run):
    site = hostile_run / "site"
    pages = _files(site, "*.html")
    seen_title = seen_name = 0
    for page in pages:
        doc = html.fromstring(page.read_bytes())
        for el in doc.iter():
            if not isinstance(el.tag, str):
                continue
            for name, value in el.attrib.items():
                assert not name.lower().startswith("on"), (page, el.tag, name, value)
                if name.lower() in URL_ATTRS:
                    assert not _bad_url(value), (page, el.tag, name, value)
            assert el.tag not in ("img", "iframe", "object", "embed", "svg") or "onerror" not in el.attrib
        for script in doc.iter("script"):
            src = script.get("src")
            if src is None and script.get("type") == "application/json":  # a drill-down's graph data: never run
                body = script.text or ""
                assert "<" not in body and isinstance(json.loads(body), dict), (page, body[:200])
                continue
            assert src, (page, "inline script", (script.text or "")[:200])
            assert "://" not in src and not src.startswith("/"), (page, src)
            assert (page.parent / src).resolve().is_file(), (page, src)
        text = doc.text_content()
        seen_title += HOSTILE_TITLE.replace("\u202e", "") in text.replace("\u202e", "")
        seen_name += any(SCRIPT in t for t in (text,))
    assert seen_title == len(pages), "the hostile title is shown as text on every page"
    assert seen_name > 0, "the hostile test names are shown as text somewhere"
    record("HTML injection", f"{len(pages)} HTML pages of a run with hostile names/messages/version/title",
           "no injected script, event handler or javascript: URL; hostile text shown as text",
           inputs=len(pages))


def test_graph_data_files_cannot_break_out(hostile_run):
    files = _files(hostile_run / "site" / "data", "*.js")
    found = 0
    for f in files:
        body = f.read_text("utf-8")
        assert "</script" not in body.lower() and "<!--" not in body and "<" not in body, f
        head = "var PAL=window.PAL=window.PAL||{series:{},jobs:{}};"
        assert body.startswith(head), f
        lines = body[len(head):].split(";\n")
        assert lines[-1] == "" and len(lines) > 1, f  # one assignment per line, each ended by ";\n"
        for line in lines[:-1]:
            m = re.fullmatch(r"PAL\.(\w+)\[(\".*?\")\]=(.*)", line, re.S)
            assert m, (f, line[:200])
            payload = json.loads(m.group(3))
            dumped = json.dumps(payload, ensure_ascii=False)
            found += SCRIPT in dumped or BREAKOUT in dumped
    assert found, "the hostile names travel in the data files, escaped"
    record("HTML injection", f"{len(files)} graph data .js files (drill-downs' JSON blocks: with the pages)",
           "valid JSON, no </script> or '<' byte",
           inputs=len(files))


def test_svg_files_are_well_formed_and_inert(hostile_run):
    files = _files(hostile_run / "site" / "svg", "*.svg")
    for f in files:
        root = etree.fromstring(f.read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
        for el in root.iter():
            if not isinstance(el.tag, str):
                continue
            assert etree.QName(el).localname not in ("script", "foreignObject"), f
            for name, value in el.attrib.items():
                assert not etree.QName(name).localname.lower().startswith("on"), (f, name)
                if etree.QName(name).localname == "href":
                    assert not _bad_url(value), (f, value)
    record("HTML injection", f"{len(files)} SVG graphs", "well-formed XML, no script/foreignObject/handlers",
           inputs=len(files))


def test_junit_and_alerts_json_carry_the_names_exactly(hostile_run):
    junit = etree.parse(str(hostile_run / "junit.xml"), etree.XMLParser(resolve_entities=False, no_network=True))
    text = etree.tostring(junit, encoding="unicode")
    names = {el.get("name") for el in junit.iter("testcase")}
    assert any(SCRIPT in (n or "") for n in names) or SCRIPT in text
    alerts = json.loads((hostile_run / "alerts.json").read_text("utf-8"))
    dumped = json.dumps(alerts, ensure_ascii=False)
    assert SCRIPT in dumped  # kept as data, exactly: JSON consumers escape for their own medium
    record("HTML injection", "junit.xml and alerts.json with hostile names", "well-formed; names kept exactly",
           inputs=2)


def test_csv_cells_are_not_formulas(hostile_run):
    files = _files(hostile_run, "*.csv")
    cells = 0
    for f in files:
        with open(f, newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    cells += 1
                    if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                        try:
                            float(cell)
                        except ValueError:
                            pytest.fail(f"{f}: formula-like cell {cell!r}")
    text = "".join(f.read_text("utf-8") for f in files)
    assert "'=HYPERLINK(" in text, "the formula-like version is kept, neutralised with a leading quote"
    record("HTML injection", f"{len(files)} CSV files ({cells} cells): exports and site downloads",
           "no cell a spreadsheet would evaluate", inputs=cells)


def test_text_alerts_have_no_bidi_controls(hostile_run):
    """Alert mails are plain text: an RTL override would reorder the rest of the line a reader sees."""
    files = _files(hostile_run / "alerts", "*.txt")
    joined = ""
    for f in files:
        body = f.read_text("utf-8")
        assert not BIDI.search(body), (f, BIDI.search(body))
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", body), f  # CR and TAB included
        joined += body
    assert "\ufffdgnp-exe" in joined, "the override is shown as U+FFFD, the name otherwise kept"
    assert "cr\ufffd\ufffdfake-line" in joined, "TABs in a name are shown as U+FFFD"
    assert "64b-2t1c-<script>" in joined or "gnp-exe" in joined, "hostile tests do appear in the alerts"
    record("HTML injection", f"{len(files)} text alert files", "no bidi override or control character (TAB from names included)",
           inputs=len(files))


def test_hostile_version_and_message_reach_the_site_as_text(hostile_run):
    index = html.fromstring((hostile_run / "site" / "index.html").read_bytes()).text_content()
    pages = [html.fromstring(p.read_bytes()).text_content() for p in (hostile_run / "site").rglob("*.html")]
    data = "".join(p.read_text("utf-8") for p in (hostile_run / "site" / "data").rglob("*.js"))
    shown = index + "".join(pages) + json.dumps(data)
    assert HOSTILE_MESSAGE.split(" ")[0] in shown or "alert(1)" in shown
    assert "27.02-rc0" in shown
