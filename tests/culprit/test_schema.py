"""The schema fragments accept what to_dict() writes, and refuse what it never writes."""

from __future__ import annotations

import jsonschema
import pytest

from pal.culprit.hints import group_by_range
from pal.culprit.schema import BISECT_REQUEST, RANGE_GROUP, SUSPECT_RANGE
from pal.culprit.suspect import suspect_range
from pal.culprit.trigger import bisect_request

A, B = "22.02-rc0~500-g1111111aa~b850", "22.02-rc0~508-g88a9c0e02~b851"


@pytest.mark.parametrize("sr", [
    suspect_range(A, B, url_templates={"vpp": "https://g/{good}..{bad}"}),
    suspect_range(B, B, testbed_before="t1", testbed_after="t2"),
    suspect_range(None, B),
    suspect_range("x", "y"),
])
def test_suspect_range(sr):
    jsonschema.validate(sr.to_dict(), SUSPECT_RANGE)


def test_request_and_group():
    tid = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"
    jsonschema.validate(bisect_request("2n-icx", "1111111aa", tid, latest="88a9c0e02").to_dict(), BISECT_REQUEST)
    group = group_by_range([("a", "2n-icx", suspect_range(A, B)), ("b", "3n-icx", suspect_range(A, B))])[0]
    jsonschema.validate(group.to_dict(), RANGE_GROUP)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(suspect_range(A, B).to_dict(), verdict="maybe"), SUSPECT_RANGE)
