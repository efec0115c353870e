"""The spec loader: good specs become dataclasses, bad ones name the key, the line and the value."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pal.errors import SpecError
from pal.spec import Spec, load_spec, parse_spec

MINIMAL = """\
name: t
jobs:
  - name: csit-vpp-perf-mrr-daily-master-2n-icx
sources:
  - {name: d, type: local, path: data}
test-sets:
  - name: mrr
"""


def spec_with(extra: str, base: str = MINIMAL) -> str:
    return base + textwrap.dedent(extra)


def test_minimal_spec_gets_defaults():
    spec = parse_spec(MINIMAL, base_dir="/srv/pa")
    assert isinstance(spec, Spec)
    job = spec.jobs[0]
    assert (job.start, job.end, job.max_builds, job.dut) == (1, "lastCompletedBuild", None, "vpp")
    ts = spec.test_sets[0]
    assert ts.metrics == ["mrr"] and ts.detector.name == "mdl"
    assert (ts.windows.short_term_runs, ts.windows.short_term_runs_single_testbed) == (10, 5)
    assert (ts.windows.long_term_runs, ts.windows.long_term_days) == (180, 180)
    assert (ts.alert_filters.min_change_pct, ts.alert_filters.confirm_runs) == (1.0, 2)  # docs/accuracy.md
    assert spec.alerts.fail_on == "new-regression"
    assert spec.resolve("data") == Path("/srv/pa/data")
    assert spec.out_dir == Path("/srv/pa/out")


def test_shipped_specs_validate(repo_root):
    for name in ("demo.yaml", "csit-trending.yaml"):
        spec = load_spec(repo_root / "specs" / name)
        assert spec.jobs and spec.test_sets


def test_kebab_case_keys_and_nested_types():
    spec = parse_spec(spec_with("""\
    testbeds: {10.30.51.45: 2n-icx-tb1}
    alerts: {fail-on: never, regression-result: UNSTABLE}
    """))
    assert spec.testbeds == {"10.30.51.45": "2n-icx-tb1"}
    assert spec.alerts.fail_on == "never" and spec.alerts.regression_result == "UNSTABLE"


def test_direction_auto_follows_metric():
    spec = parse_spec(MINIMAL)
    ts = spec.test_sets[0]
    assert ts.direction_of("mrr") == 1
    assert ts.direction_of("latency_pdr50_d1") == -1


def test_env_vars_expand_in_paths(monkeypatch):
    monkeypatch.setenv("PAL_TEST_ROOT", "/data/x")
    spec = parse_spec(MINIMAL, base_dir="/srv")
    assert spec.resolve("${PAL_TEST_ROOT}/hist") == Path("/data/x/hist")


@pytest.mark.parametrize(
    "yaml_text, path, value, expected",
    [
        (spec_with("", MINIMAL.replace("  - name: mrr", "  - name: mrr\n    metrics: [mrr, jitter]")),
         "test-sets[0].metrics[1] (line 8)", "jitter", "one of mrr"),
        (MINIMAL.replace("type: local", "type: s3"), "sources[0].type (line 5)", "s3", "one of 'local', 'jenkins'"),
        (MINIMAL.replace("csit-vpp-perf-mrr-daily-master-2n-icx", "j\n    max-builds: many"),
         "jobs[0].max-builds (line 4)", "many", "an integer"),
        (MINIMAL.replace("csit-vpp-perf-mrr-daily-master-2n-icx", "j\n    end: latestBuild"),
         "jobs[0].end (line 4)", "latestBuild", "a build number or one of lastCompletedBuild"),
        (MINIMAL + "bogus: 1\n", "bogus (line 8)", "bogus", "one of the keys"),
        (MINIMAL.replace("  - name: mrr", "  - name: mrr\n    select: {id-regex: 'ip4(base'}"),
         "test-sets[0].select.id-regex (line 8)", "ip4(base", "a valid regular expression"),
        (MINIMAL.replace("  - name: mrr", "  - name: mrr\n    select: {tags: 'MRR AND'}"),
         "test-sets[0].select.tags (line 8)", "MRR AND", "a tag expression"),
        (MINIMAL.replace("  - name: mrr", "  - name: mrr\n    windows: {short-term-runs: 20, long-term-runs: 10}"),
         "test-sets[0].windows.long-term-runs (line 8)", 10, "more runs than short-term-runs (20)"),
        (MINIMAL.replace("type: local, path: data", "type: jenkins, url: 'ftp://x', artifacts: ['{job}']"),
         "sources[0].url (line 5)", "ftp://x", "an http(s):// URL"),
        (MINIMAL.replace("type: local, path: data", "type: jenkins, url: 'https://j', artifacts: ['{jenkins}/{jobname}']"),
         "sources[0].artifacts[0] (line 5)", "{jenkins}/{jobname}", "a template using only"),
        (MINIMAL.replace("  - name: mrr\n", ""), "test-sets (line 6)", None, "a list"),
        (MINIMAL.replace("  - name: mrr\n", "  []\n"), "test-sets (line 7)", [], "at least one test set"),
        ("name: t\n", "jobs", None, "a value (this key is required)"),
        ("name: [unclosed\n", "line 2", None, "valid YAML"),
    ],
)
def test_bad_spec_names_key_line_value(yaml_text, path, value, expected):
    with pytest.raises(SpecError) as err:
        parse_spec(yaml_text, source="bad.yaml")
    exc = err.value
    assert exc.path == path
    if value is not None:
        assert exc.value == value
    assert expected in exc.expected
    assert str(exc).startswith(f"bad.yaml: {path}: got ")


def test_sources_url_template_error_is_reported_with_its_value():
    text = MINIMAL.replace("type: local, path: data", "type: jenkins, url: 'https://j', artifacts: []")
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert err.value.path.startswith("sources[0].artifacts")
    assert "non-empty list" in err.value.expected


def test_missing_file_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError) as err:
        load_spec(tmp_path / "nope.yaml")
    assert "readable spec file" in err.value.expected


def test_rename_file_merges_under_inline_renames(tmp_path):
    (tmp_path / "renames.yaml").write_text("Old.A: new.a\nold.b: new.b\n")
    spec = parse_spec(MINIMAL + "rename-file: renames.yaml\nrename: {old.b: newer.b}\n", base_dir=str(tmp_path))
    assert spec.renames() == {"old.a": "new.a", "old.b": "newer.b"}


@pytest.mark.parametrize("text", ["name: [unclosed", "a: *x", "a: {b: [1, 2}", 'x: "abc', "a:\n  - b\n c: d\n"])
def test_yaml_errors_read_the_same_with_and_without_libyaml(monkeypatch, text):
    """The spec is read with libyaml where PyYAML has it; its errors are worded (and placed) as
    PyYAML's own parser words them, so a user's message does not depend on the build."""
    import yaml

    import pal.spec as spec_mod

    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml")
    messages = []
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        monkeypatch.setattr(spec_mod, "_YAML_LOADER", loader)
        with pytest.raises(SpecError) as err:
            parse_spec(text)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "expected valid YAML" in messages[0]
