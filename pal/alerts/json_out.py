"""``alerts.json``: the machine-readable alerts, and the JSON Schema it follows.

The document is also the memory between runs: the pipeline keeps it and passes its
``alerts`` list back as ``previous`` (new vs ongoing). ``SCHEMA`` is the source of truth;
``docs/alerts.schema.json`` is the same text (a test keeps them equal). Keys are sorted and
there is no "now" unless ``generated_at`` is passed, so a rerun gives the same bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pal.culprit.schema import BISECT_REQUEST, RANGE_GROUP, SUSPECT_RANGE
from pal.alerts.model import ACTIVE, FAIL_ON, NEW, ONGOING, RECOVERED, Alert, AlertGroup
from pal.alerts.policy import exit_code_for

FORMAT = "pal-alerts"
VERSION = 2  # 2: suspect range, bisect request and range groups (issue "from alert to culprit")

_num_or_null = {"type": ["number", "null"]}
_int_or_null = {"type": ["integer", "null"]}
_str_or_null = {"type": ["string", "null"]}
_id = {"type": "string", "pattern": "^[0-9a-f]{12}$"}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://pal.invalid/alerts.schema.json",
    "title": "pal alerts.json",
    "description": "Alerts of one pal run (see docs/alerts.md).",
    "type": "object",
    "required": ["format", "version", "generated_at", "fail_on", "exit_code", "counts", "alerts", "groups",
                 "range_groups"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "generated_at": _str_or_null,
        "fail_on": {"enum": list(FAIL_ON)},
        "exit_code": {"enum": [0, 2]},
        "counts": {
            "type": "object",
            "required": ["alerts", "new", "ongoing", "acked", "active", "recovered", "failing"],
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
        "alerts": {"type": "array", "items": {"$ref": "#/$defs/alert"}},
        "groups": {"type": "array", "items": {"$ref": "#/$defs/group"}},
        "range_groups": {"type": "array", "items": RANGE_GROUP},
    },
    "$defs": {
        "alert": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "group", "job", "test_id", "metric", "kind", "state", "status", "acked",
                         "ack_reason", "fresh", "fails_job", "previous_id", "previous_state", "test_set", "topo_arch",
                         "test_name", "nic", "frame_size", "unit", "evidence", "testbeds", "ack_snippet",
                         "suspect", "bisect"],
            "properties": {
                "id": _id,
                "group": _id,
                "job": {"type": "string", "minLength": 1},
                "test_id": {"type": "string", "minLength": 1},
                "metric": {"type": "string", "minLength": 1},
                "kind": {"enum": ["regression", "progression"]},
                "state": {"enum": ["active", "recovered", "superseded"]},
                "status": {"enum": [NEW, ONGOING]},
                "acked": {"type": "boolean"},
                "ack_reason": _str_or_null,
                "fresh": {"type": "boolean"},
                "fails_job": {
                    "type": "object", "additionalProperties": False, "required": list(FAIL_ON),
                    "properties": {p: {"type": "boolean"} for p in FAIL_ON},
                },
                "previous_id": {"oneOf": [_id, {"type": "null"}]},
                "previous_state": {"enum": ["active", "recovered", "superseded", None]},
                "test_set": {"type": "string"},
                "topo_arch": {"type": "string"},
                "test_name": {"type": "string"},
                "nic": {"type": "string"},
                "frame_size": {"type": "string"},
                "unit": {"type": "string"},
                "testbeds": {"type": "array", "items": {"type": "string"}},
                "ack_snippet": {"type": "string"},
                "suspect": SUSPECT_RANGE,
                "bisect": {"oneOf": [BISECT_REQUEST, {"type": "null"}]},
                "evidence": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["before_avg", "before_stdev", "after_avg", "after_stdev", "change_pct", "runs",
                                 "last_good_build", "first_bad_build", "first_bad_time", "last_good_url",
                                 "first_bad_url", "dut_version_before", "dut_version_after", "testbed_before",
                                 "testbed_after", "trend", "long_term_change_pct", "short_term_change_pct",
                                 "restores_build", "reported_at_build"],
                    "properties": {
                        "before_avg": _num_or_null, "before_stdev": _num_or_null,
                        "after_avg": _num_or_null, "after_stdev": _num_or_null,
                        "change_pct": _num_or_null, "runs": {"type": "integer", "minimum": 0},
                        "last_good_build": _int_or_null, "first_bad_build": {"type": "integer"},
                        "first_bad_time": {"type": "string"},
                        "last_good_url": _str_or_null, "first_bad_url": _str_or_null,
                        "dut_version_before": _str_or_null, "dut_version_after": _str_or_null,
                        "testbed_before": _str_or_null, "testbed_after": _str_or_null,
                        "trend": _num_or_null, "long_term_change_pct": _num_or_null,
                        "short_term_change_pct": _num_or_null,
                        "restores_build": _int_or_null, "reported_at_build": _int_or_null,
                    },
                },
            },
        },
        "group": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "job", "topo_arch", "kind", "first_bad_build", "last_good_build", "first_bad_url",
                         "last_good_url", "dut_version_before", "dut_version_after", "alerts", "tests",
                         "testbeds", "seen_on", "scope"],
            "properties": {
                "id": _id,
                "job": {"type": "string"},
                "topo_arch": {"type": "string"},
                "kind": {"enum": ["regression", "progression"]},
                "first_bad_build": {"type": "integer"},
                "last_good_build": _int_or_null,
                "first_bad_url": _str_or_null, "last_good_url": _str_or_null,
                "dut_version_before": _str_or_null, "dut_version_after": _str_or_null,
                "alerts": {"type": "array", "items": _id, "minItems": 1},
                "tests": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "testbeds": {"type": "array", "items": {"type": "string"}},
                "seen_on": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "scope": {"enum": ["all-testbeds", "some-testbeds", "one-testbed"]},
            },
        },
    },
}


def _finite(v: Any) -> Any:
    """NaN/inf have no JSON form: null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def alerts_document(alerts: list[Alert], groups: list[AlertGroup], fail_on: str,
                    generated_at: str | None = None) -> dict[str, Any]:
    """The alerts.json content as plain data."""
    counts = {
        "alerts": len(alerts),
        "new": sum(a.status == NEW for a in alerts),
        "ongoing": sum(a.status == ONGOING for a in alerts),
        "acked": sum(a.acked for a in alerts),
        "active": sum(a.state == ACTIVE for a in alerts),
        "recovered": sum(a.state == RECOVERED for a in alerts),
        "failing": sum(a.fails(fail_on) for a in alerts),
    }
    return _finite({
        "format": FORMAT, "version": VERSION, "generated_at": generated_at, "fail_on": fail_on,
        "exit_code": exit_code_for(alerts, fail_on), "counts": counts,
        "alerts": [a.to_dict() for a in alerts], "groups": [g.to_dict() for g in groups],
        "range_groups": [g.to_dict() for g in range_groups(alerts)],
    })


def range_groups(alerts: list[Alert]) -> list:
    """Active, unacknowledged alerts that share one bisectable range: one bisect serves them all."""
    from pal.culprit.hints import group_by_range

    return [g for g in group_by_range([(a.id, a.topo_arch, a.suspect) for a in alerts
                                       if a.alerting and a.suspect.bisectable]) if len(g.members) > 1]


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def schema_text() -> str:
    """The schema as written to docs/alerts.schema.json."""
    return json.dumps(SCHEMA, indent=2, sort_keys=True) + "\n"
