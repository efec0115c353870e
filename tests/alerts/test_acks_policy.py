"""acks.yaml reading (errors name file and line) and the exit-code policies."""

from __future__ import annotations

import pytest

from pal.alerts import alert_id, build_alerts, exit_code_for, load_acks, parse_acks
from pal.alerts.policy import failing
from pal.errors import SpecError
from tests.alerts.factory import builds_for, make_spec, samples_for
from tests.alerts.scenario import run_results
from tests.alerts.test_build import ACKED_KEY


def test_load_acks(tmp_path):
    p = tmp_path / "acks.yaml"
    p.write_text("# acknowledged\n3f2a9c1b7d4e: \"VPP-2051, fixed by gerrit 35123\"\n"
                 "00000000000a: known infra issue\n", encoding="utf-8")
    assert load_acks(p) == {"3f2a9c1b7d4e": "VPP-2051, fixed by gerrit 35123", "00000000000a": "known infra issue"}
    p.write_text("", encoding="utf-8")
    assert load_acks(p) == {}


@pytest.mark.parametrize("text,where,expected", [
    ("3f2a9c1b7d4e: ok\nnot-an-id: why\n", "line 2", "12 hex digits"),
    ("3f2a9c1b7d4e: ok\n3f2a9c1b7d4e: again\n", "3f2a9c1b7d4e (line 2)", "not listed before"),
    ("3f2a9c1b7d4e: ''\n", "3f2a9c1b7d4e (line 1)", "non-empty reason"),
    ("3f2a9c1b7d4e: [a, b]\n", "3f2a9c1b7d4e (line 1)", "non-empty reason"),
    ("- 3f2a9c1b7d4e\n", "line 1", "a mapping"),
    ("a: [\n", "line 2", "valid YAML"),
])
def test_bad_acks_name_file_and_line(tmp_path, text, where, expected):
    p = tmp_path / "acks.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        load_acks(p)
    assert exc.value.source == str(p) and exc.value.path == where and expected in exc.value.expected
    assert str(p) in str(exc.value)


def test_missing_acks_file(tmp_path):
    with pytest.raises(SpecError, match="readable acks file"):
        load_acks(tmp_path / "nope.yaml")


def test_snippet_pastes_into_acks(tmp_path):
    results = run_results()
    alerts = build_alerts(results, builds_for(results), samples_for(results), make_spec())
    text = "".join(a.ack_snippet for a in alerts)
    assert parse_acks(text) == {a.id: "reason, e.g. a ticket or change number" for a in alerts}


def _alerts(extra=False, previous=None, acks=None):
    results = run_results(extra)
    return build_alerts(results, builds_for(results), samples_for(results), make_spec(), previous, acks)


def test_exit_codes_per_policy():
    run1 = _alerts()
    # Run 1: two new unacked regressions (2n-icx, 3n-alt) and one more on 2n-icx.
    assert exit_code_for(run1, "new-regression") == 2
    assert exit_code_for(run1, "any-regression") == 2
    assert exit_code_for(run1, "never") == 0
    assert len(failing(run1, "new-regression")) == 3
    # Acking every failing one turns the job green, whatever the policy.
    acks = {a.id: "seen" for a in failing(run1, "any-regression")}
    assert exit_code_for(_alerts(acks=acks), "any-regression") == 0
    # Run 2: the 2n-icx regression is ongoing: fails only with any-regression.
    run2 = _alerts(extra=True, previous=[a.to_dict() for a in run1])
    assert exit_code_for(run2, "new-regression") == 0
    assert exit_code_for(run2, "any-regression") == 2
    assert {a.test_name for a in failing(run2, "any-regression")} == {"2t1c-ethip4-ip4base-mrr", "4t2c-avf-eth-l2bdbasemaclrn-mrr"}


def test_acked_never_fails():
    ack = alert_id(ACKED_KEY, 120, "regression")
    alerts = [a for a in _alerts(acks={ack: "known"}) if a.id == ack]
    assert len(alerts) == 1
    assert all(exit_code_for(alerts, p) == 0 for p in ("new-regression", "any-regression", "never"))


def test_progressions_never_fail():
    prog = [a for a in _alerts() if a.kind == "progression"]
    assert prog and exit_code_for(prog, "any-regression") == 0


def test_unknown_policy():
    with pytest.raises(ValueError, match="fail-on"):
        exit_code_for([], "sometimes")
