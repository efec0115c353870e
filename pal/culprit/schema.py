"""JSON Schema fragments of the culprit shapes, for the documents that embed them (alerts.json).

Why: the alerts stage owns alerts.json and its schema; these fragments let it add
``range``/``bisect``/``range_groups`` without restating the fields, and a test keeps them
equal to what ``to_dict()`` writes.
"""

from __future__ import annotations

from typing import Any

from pal.culprit.suspect import VERDICTS

_str_or_null = {"type": ["string", "null"]}
_strings = {"type": "array", "items": {"type": "string"}}

SUSPECT_RANGE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "dut", "version_before", "version_after", "good", "bad", "commits", "url", "changed",
                 "summary"],
    "properties": {
        "verdict": {"enum": list(VERDICTS)},
        "dut": {"type": "string"},
        "version_before": _str_or_null, "version_after": _str_or_null,
        "good": _str_or_null, "bad": _str_or_null,
        "commits": {"type": ["integer", "null"]},
        "url": _str_or_null,
        "changed": _strings,
        "summary": {"type": "string"},
    },
}

BISECT_REQUEST: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["testbed_type", "earliest", "latest", "tag_expression", "comment", "tags_from", "warnings"],
    "properties": {
        "testbed_type": {"type": "string"}, "earliest": {"type": "string"}, "latest": _str_or_null,
        "tag_expression": {"type": "string"}, "comment": {"type": "string", "minLength": 1},
        "tags_from": {"enum": ["tags", "test id"]}, "warnings": _strings,
    },
}

RANGE_GROUP: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["dut", "good", "bad", "members", "topo_archs", "hint", "range"],
    "properties": {
        "dut": {"type": "string"}, "good": {"type": "string"}, "bad": {"type": "string"},
        "members": {**_strings, "minItems": 1}, "topo_archs": _strings, "hint": {"type": "string"},
        "range": SUSPECT_RANGE,
    },
}
