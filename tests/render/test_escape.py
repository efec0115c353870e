import json
from xml.etree import ElementTree

import pytest
from hypothesis import given, strategies as st

from pal.render.escape import csv_cell, floats_or_none, js_assign, js_assign_all, js_json, xml_text


def test_js_json_cannot_close_a_script_element():
    text = js_json({"name": "</script><script>alert(1)</script>&x"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert text == '{"name":"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u0026x"}'


def test_js_json_escapes_line_separators_that_end_js_strings():
    text = js_json(["a\u2028b\u2029c"])
    assert "\u2028" not in text and "\u2029" not in text
    assert text == '["a\\u2028b\\u2029c"]'


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4), max_leaves=20))
def test_js_json_round_trips_any_value(value):
    text = js_json(value)
    assert json.loads(text) == value
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}


@pytest.mark.parametrize("value", [True, False, None, [], 0, -3, 2**70, "", "x", [True, None], {"b": False, "a": []}])
def test_js_json_writes_what_json_writes(value):
    """The scalars and the empty list (a drill-down's flag and anomalies) are written without the
    encoder: the text must be the encoder's (``json.loads`` alone would take 1 for true)."""
    assert js_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_js_assign_sets_a_key_of_a_global_namespace():
    body = js_assign("series", "a<b", {"y": [1.5, None]})
    assert body.endswith('PAL.series["a\\u003cb"]={"y":[1.5,null]};\n')
    assert body.startswith("var PAL=window.PAL=window.PAL||{series:{},jobs:{}};")


def test_js_assign_all_writes_a_line_per_key_with_its_ready_text():
    body = js_assign_all("series", [("a<b", '{"y":[1.5,null]}'), ("c", "[]")])
    assert body == ('var PAL=window.PAL=window.PAL||{series:{},jobs:{}};'
                    'PAL.series["a\\u003cb"]={"y":[1.5,null]};\nPAL.series["c"]=[];\n')
    assert js_assign_all("jobs", []) == "var PAL=window.PAL=window.PAL||{series:{},jobs:{}};"


def test_csv_cell_neutralises_formulas_only_at_the_start():
    assert csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert csv_cell("+1") == "'+1"
    assert csv_cell("-2+3") == "'-2+3"
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert csv_cell("22.02-rc0~508=x") == "22.02-rc0~508=x"
    assert csv_cell(None) == ""


def test_xml_text_escapes_markup_and_quotes():
    assert xml_text('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"


def test_xml_text_is_ascii_and_an_xml_parser_reads_the_text_back():
    text = "TMA ± 3·TMSD <µs> \U0001d6d4"  # the last beyond the BMP
    out = xml_text(text)
    assert out == "TMA &#177; 3&#183;TMSD &lt;&#181;s&gt; &#120532;"
    assert out.isascii()
    assert ElementTree.fromstring(f"<t a='{out}'>{out}</t>").text == text
    assert ElementTree.fromstring(f"<t a='{out}'>{out}</t>").get("a") == text


def test_floats_or_none_keeps_missing_as_null_never_zero():
    assert floats_or_none([1.23456, float("nan"), float("inf"), 0.0], 2) == [1.23, None, None, 0.0]


def test_ready_json_is_written_as_it_is_beside_floats():
    from pal.render.escape import Floats, Json, js_encode

    obj = {"x": Json('["2022-01-01 03:00",null]'), "y": Floats([1.5, float("nan")], 2), "n": "a<b"}
    assert js_encode(obj) == '{"n":"a\\u003cb","x":["2022-01-01 03:00",null],"y":[1.50,null]}'


def test_a_pages_graph_data_is_the_series_data_with_the_axis_encoded_once():
    """``Pages`` encodes a time axis and its builds once for the series sharing them; the text is
    that of ``series_data`` encoded whole, on the first series of an axis and on the next."""
    from pal.render.escape import js_encode
    from pal.render.graphs import series_data
    from pal.render.pages import Pages, SiteInfo
    from tests.render.conftest import long_inputs, site_inputs

    pages = Pages(SiteInfo("t", "now"))
    results = site_inputs()[0] + long_inputs()[0][:5]
    for r in results + results:
        assert pages.group_json(r) == js_encode(series_data(r, with_bands=False))
    assert 2 <= len(pages._axes) < len(results)  # axes shared: fewer texts than series
