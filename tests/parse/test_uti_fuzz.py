"""Property-based fuzzing of the UTI JSON reader: mutated documents and raw bytes never crash it, the
two schema engines agree on every document, and numbers that reach the table are finite or NaN."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pal.errors import ParseError
from pal.parse.uti import load_json, parse_uti_build, validator
from tests.reliability.record import fuzz_examples

pytestmark = pytest.mark.fuzz
SETTINGS = settings(max_examples=fuzz_examples(120), deadline=4000,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

LAT = {"min": 5, "avg": 10, "max": 20, "hdrh": "HISTFAAAA", "unit": "us"}
BASE = {
    "version": "1.5.1", "test_id": "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr.64b-1c-x-ndrpdr",
    "test_name_long": "25ge2p1xxv710-64b-2t1c-x", "test_name_short": "x-ndrpdr", "test_type": "ndrpdr",
    "test_documentation": "", "tags": ["1C", "2T1C", "64B", "NDRPDR"], "passed": True, "message": "",
    "dut_type": "vpp", "dut_version": "24.10", "tg_type": "trex", "tg_version": "3.03", "hosts": ["10.0.0.1"],
    "telemetry": [], "start_time": "2024-01-01T00:00:00.000000Z", "end_time": "2024-01-01T00:01:00.000000Z",
    "duration": 60.0,
    "result": {"type": "ndrpdr", "ndr": {"lower": {"rate": {"value": 1e7, "unit": "pps"}}},
               "pdr": {"lower": {"rate": {"value": 1.1e7, "unit": "pps"}}},
               "latency_forward": {k: dict(LAT) for k in ("pdr_0", "pdr_10", "pdr_50", "pdr_90")}},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
    | st.sampled_from(["pps", "cps", "us", "mrr", "ndrpdr", "soak", "unknown", "2.0.0", "1.9.9", ""]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


@SETTINGS
@given(data=st.data())
def test_mutated_documents(tmp_path, data):
    doc = copy.deepcopy(BASE)
    paths = [p for p in _paths(doc) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        node = doc
        try:
            for k in path[:-1]:
                node = node[k]
            if data.draw(st.booleans()) and isinstance(node, dict):
                node.pop(path[-1], None)
            else:
                node[path[-1]] = data.draw(json_values)
        except (KeyError, IndexError, TypeError):
            pass
    rs = validator("uti_test_case.schema.json", "rs").problem(doc)
    py = validator("uti_test_case.schema.json", "python").problem(doc)
    assert (rs is None) == (py is None), (rs, py, doc)
    f = tmp_path / "t.info.json"
    f.write_text(json.dumps(doc))
    try:
        result = parse_uti_build(f, "j-2n-icx", 1)
    except ParseError as exc:
        assert "UTI model version" in str(exc)
        return
    assert (rs is None) == (not result.problems or all("schema" not in p.message for p in result.problems))
    for v in result.samples["value"]:
        assert math.isnan(v) or (math.isfinite(v) and v >= 0)


@SETTINGS
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_raw_bytes(tmp_path, raw):
    f = tmp_path / "r.info.json"
    f.write_bytes(b"{" + raw)
    try:
        result = parse_uti_build(f, "j-2n-icx", 1)
    except ParseError as exc:
        assert "UTI model version" in str(exc) or "not UTI results" in str(exc)
        return
    assert result.samples.empty or result.problems == []
    try:
        load_json(b"{" + raw)
    except ValueError:
        assert len(result.problems) == 1
