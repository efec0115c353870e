"""``pal validate``: every mistake a new user makes that can be seen before a download, at once.

Before pal.validate, each spec below passed ``pal validate`` ("ok") and then failed late (a
KeyError after the whole download, exit 1 after every build was parsed) or silently (a green
run with an empty dashboard, 240 series gone).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pal import cli
from pal.alerts import build_alerts
from pal.validate import PLACEHOLDER_REASON, check_spec_file
from tests.alerts.factory import builds_for, flat, make_result, samples_for
from tests.alerts.factory import make_spec as alert_spec

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"

# One spec holding the usual mistakes; each line is found by its text in the test.
BAD = f"""\
name: t
jobs:
  - {{name: {JOB}, max-builds: ten}}
sources:
  - {{name: d, type: local, path: no-such-dir}}
rename-file: renames-typo.yaml
test-sets:
  - name: mrr
    jobs: ["csit-vpp-perf-mrr-weekly-.*"]
    select: {{tags: "MRR AND (", id-regex: "64b-(2t1c"}}
outputs:
  build-url: "https://jenkins.example.org/job/{{jobb}}/{{build}}"
"""


def line_of(text: str, needle: str) -> int:
    [n] = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return n


def validate(tmp_path: Path, capsys, text: str) -> tuple[int, str, list[str]]:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    rc = cli.main(["validate", str(path)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.replace(f"{path}: ", "").splitlines()


def test_every_mistake_is_reported_at_once_with_key_line_value_expectation(tmp_path, capsys):
    rc, out, err = validate(tmp_path, capsys, BAD)
    assert rc == 1 and out == ""
    n = lambda needle: line_of(BAD, needle)  # noqa: E731
    assert err[:-1] == [
        f"error: jobs[0].max-builds (line {n('max-builds')}): got 'ten', expected an integer",
        f"error: test-sets[0].select.tags (line {n('tags')}): got 'MRR AND (', expected a tag expression "
        "(expression ends where a tag was expected)",
        f"error: test-sets[0].select.id-regex (line {n('id-regex')}): got '64b-(2t1c', expected a valid regular "
        "expression (missing ), unterminated subpattern at position 4)",
        f"error: outputs.build-url (line {n('build-url')}): got 'https://jenkins.example.org/job/{{jobb}}/{{build}}', "
        "expected a template using only {jenkins}, {job}, {build} ('jobb')",
        f"error: sources[0].path (line {n('no-such-dir')}): got 'no-such-dir', expected an existing directory "
        f"({tmp_path / 'no-such-dir'} does not exist)",
        f"error: rename-file (line {n('rename-file')}): got 'renames-typo.yaml', expected an existing file "
        f"({tmp_path / 'renames-typo.yaml'} does not exist)",
        f"error: test-sets[0].jobs[0] (line {n('weekly')}): got 'csit-vpp-perf-mrr-weekly-.*', expected a regex "
        f"matching (in full) at least one of the spec's jobs: {JOB}",
    ]
    assert err[-1] == "7 errors"


def test_the_corrected_spec_is_ok(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "renames.yaml").write_text("old-id: new-id\n")
    good = (BAD.replace("max-builds: ten", "max-builds: 10").replace("no-such-dir", "data")
            .replace("renames-typo", "renames").replace("weekly", "daily").replace("MRR AND (", "MRR")
            .replace("(2t1c", "2t1c").replace("{jobb}", "{job}"))
    rc, out, err = validate(tmp_path, capsys, good)
    assert (rc, err) == (0, []) and ": ok: 1 jobs" in out


def test_errors_in_several_list_items_are_all_reported(tmp_path, capsys):
    text = ("name: t\njobs:\n  - {name: a, start: x}\n  - {name: b, dut: [vpp]}\n  - {name: c, end: later}\n"
            "sources: [{name: d, type: local, path: .}]\ntest-sets: [{name: s, metrics: [jitter]}]\n")
    rc, _, err = validate(tmp_path, capsys, text)
    assert rc == 1
    assert err == [
        "error: jobs[0].start (line 3): got 'x', expected an integer",
        "error: jobs[1].dut (line 4): got ['vpp'], expected a string",
        "error: jobs[2].end (line 5): got 'later', expected a build number or one of lastCompletedBuild, "
        "lastSuccessfulBuild",
        "error: test-sets[0].metrics[0] (line 7): got 'jitter', expected one of mrr, ndr, pdr, soak, cps, "
        "latency_pdr50_d1, latency_pdr50_d2",
        "4 errors",
    ]


def test_missing_required_keys_stop_only_the_checks_that_need_the_whole_spec(tmp_path, capsys):
    """Without a job's name there is no spec to cross-check, but every type error is still listed."""
    text = ("name: t\njobs:\n  - {name: a, start: x}\n  - {start: 2}\n"
            "sources: [{name: d, type: local, path: no-such-dir}]\ntest-sets: [{name: s, windows: {long-term-runs: y}}]\n")
    rc, _, err = validate(tmp_path, capsys, text)
    assert (rc, err) == (1, [
        "error: jobs[0].start (line 3): got 'x', expected an integer",
        "error: jobs[1].name (line 4): got None, expected a value (this key is required)",
        "error: test-sets[0].windows.long-term-runs (line 6): got 'y', expected an integer",
        "3 errors",
    ])


def test_unset_environment_variables_are_named(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PAL_TEST_WS", raising=False)
    text = ("name: t\njobs: [{name: a}]\nsources:\n  - {name: d, type: local, path: '${PAL_TEST_WS}/cache'}\n"
            "  - {name: j, type: jenkins, url: 'http://${PAL_TEST_HOST}', artifacts: ['{jenkins}/{job}/{build}']}\n"
            "test-sets: [{name: s}]\noutputs: {dir: '$PAL_TEST_WS/out'}\n")
    monkeypatch.delenv("PAL_TEST_HOST", raising=False)
    rc, _, err = validate(tmp_path, capsys, text)
    assert rc == 1
    assert err[:3] == [
        "error: sources[0].path (line 4): got '${PAL_TEST_WS}/cache', expected environment variable PAL_TEST_WS to be set",
        "error: sources[1].url (line 5): got 'http://${PAL_TEST_HOST}', expected environment variable PAL_TEST_HOST "
        "to be set",
        "error: outputs.dir (line 7): got '$PAL_TEST_WS/out', expected environment variable PAL_TEST_WS to be set",
    ]
    monkeypatch.setenv("PAL_TEST_WS", str(tmp_path))
    monkeypatch.setenv("PAL_TEST_HOST", "127.0.0.1:9")
    (tmp_path / "cache").mkdir()
    assert validate(tmp_path, capsys, text)[0] == 0


def test_build_url_with_jenkins_placeholder_needs_a_jenkins_source(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    text = ("name: t\njobs: [{name: a}]\nsources: [{name: d, type: local, path: data}]\ntest-sets: [{name: s}]\n"
            "outputs: {build-url: '{jenkins}/job/{job}/{build}'}\n")
    rc, _, err = validate(tmp_path, capsys, text)
    assert rc == 1 and err == ["error: outputs.build-url (line 5): got '{jenkins}/job/{job}/{build}', expected no "
                               "{jenkins} placeholder: the spec has no jenkins source to fill it in (write the "
                               "Jenkins URL itself)"]


@pytest.mark.parametrize("template, problem", [
    ("{jenkins}/job/{job}/{build}", None),
    ("https://logs.fd.io/x/{job}/{build:d}/archives/output_info.xml.gz", None),
    ("{jenkins}/{}", "('')"),
    ("{jenkins}/{job}/{build}/{testbed}/{jobb}", "('testbed', 'jobb')"),
    ("{jenkins}/{job", "(expected '}' before end of string)"),
    ("{job.upper}/{build[0]}", "('job.upper', 'build[0]')"),
    ("{jenkins!r}/{job:>5}/{build:x}", None),
    ("{build:s}", "(ValueError: Unknown format code 's' for object of type 'int')"),
])
def test_url_template_placeholders(template, problem):
    from pal.spec import template_problem

    got = template_problem(template)
    assert (got if got is None else got.split("{build} ", 1)[1]) == problem


def _real_ack_snippet() -> tuple[str, str]:
    """An alert's id and the acks.yaml lines pal prints for it (a real regression, built by pal)."""
    result = make_result(flat(30e6, 20, 0.1e6) + [26e6], (20,))
    [alert] = build_alerts([result], builds_for([result]), samples_for([result]), alert_spec(), [], {})
    return alert.id, alert.ack_snippet


def test_ack_with_the_snippet_placeholder_reason_is_refused(tmp_path, capsys):
    ack_id, snippet = _real_ack_snippet()
    assert PLACEHOLDER_REASON in snippet  # pal.validate knows the text the snippet prints
    (tmp_path / "data").mkdir()
    acks = tmp_path / "acks.yaml"
    acks.write_text("# triaged\n" + snippet)  # pasted as printed, reason not filled in
    text = ("name: t\njobs: [{name: a}]\nsources: [{name: d, type: local, path: data}]\ntest-sets: [{name: s}]\n"
            "alerts: {acks: acks.yaml}\n")
    rc, _, err = validate(tmp_path, capsys, text)
    assert rc == 1
    assert err == [f"error: {acks}: {ack_id} (line 3): got {PLACEHOLDER_REASON!r}, expected a real reason (a ticket, "
                   "a change, who looked), not the placeholder of the ack snippet"]
    acks.write_text("# triaged\n" + snippet.replace(PLACEHOLDER_REASON, "VPP-2051, fixed by gerrit 35123"))
    assert validate(tmp_path, capsys, text)[:2] == (0, validate(tmp_path, capsys, text)[1])
    assert yaml.safe_load(acks.read_text()) == {ack_id: "VPP-2051, fixed by gerrit 35123"}


def test_missing_acks_file_and_bad_rename_file(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "renames.yaml").write_text("- a\n- b\n")
    text = ("name: t\njobs: [{name: a}]\nsources: [{name: d, type: local, path: data}]\ntest-sets: [{name: s}]\n"
            "rename-file: renames.yaml\nalerts: {acks: acks.yaml}\n")
    rc, _, err = validate(tmp_path, capsys, text)
    assert rc == 1 and err[:2] == [
        f"error: rename-file (line 5): got '{tmp_path / 'renames.yaml'}', expected a YAML mapping old-id: new-id",
        f"error: alerts.acks (line 6): got 'acks.yaml', expected an existing file ({tmp_path / 'acks.yaml'} does not exist)",
    ]


def test_run_and_download_validate_before_any_download(tmp_path, capsys):
    """A setup mistake stops ``pal run``/``pal download`` at once: no cache, no store, nothing fetched."""
    path = tmp_path / "spec.yaml"
    path.write_text(BAD.replace("max-builds: ten", "max-builds: 10"), encoding="utf-8")
    for command in ("run", "download"):
        assert cli.main([command, "--spec", str(path)]) == 1
        err = capsys.readouterr().err
        assert re.search(r"error: .*sources\[0\]\.path \(line 5\): got 'no-such-dir'", err), err
        assert "test-sets[0].jobs[0]" in err and "outputs.build-url" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_shipped_specs_validate(repo_root, tmp_path, monkeypatch):
    """specs/csit-trending.yaml as the Jenkins job sees it (WORKSPACE set, pa-job.sh made its cache)."""
    monkeypatch.setenv("WORKSPACE", str(tmp_path))
    (tmp_path / "archive-cache").mkdir()
    spec, errors = check_spec_file(repo_root / "specs" / "csit-trending.yaml")
    assert errors == [] and spec is not None
    monkeypatch.delenv("WORKSPACE")
    _, errors = check_spec_file(repo_root / "specs" / "csit-trending.yaml")
    assert {e.path.split(" ")[0] for e in errors} == {"sources[0].path", "outputs.dir", "store.path"}
