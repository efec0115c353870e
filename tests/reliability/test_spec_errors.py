"""Bad specs and the exact message a user gets from ``pal validate`` (stderr, exit 1).

Each case edits one key of a valid spec; the message must name the file, the key path with
its line, the value found and what was expected, and nothing may be printed on stdout.
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from pal import cli
from tests.reliability.record import record

BASE = {
    "name": "t",
    "jobs": [{"name": "csit-vpp-perf-mrr-daily-master-2n-icx"}],
    "sources": [{"name": "d", "type": "local", "path": "data"}],
    "test-sets": [{"name": "mrr", "select": {"tags": "MRR"}, "metrics": ["mrr"]}],
}


def _set(spec: dict, path: str, value) -> dict:
    node = spec
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
    last = keys[-1]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return spec


_DELETE = object()

# (what, key path to set, value, message after "error: <file>: ")
CASES = [
    ("wrong type", "jobs.0.max-builds", "ten", "jobs[0].max-builds (line {max-builds: ten}): got 'ten', expected an integer"),
    ("unknown key", "jobs.0.maxbuilds", 5, "jobs[0].maxbuilds (line {maxbuilds: 5}): got 'maxbuilds', expected one of the "
     "keys: builds, dut, end, max-builds, name, period-days, start, testbeds"),
    ("missing required key", "name", _DELETE, "name: got None, expected a value (this key is required)"),
    ("bad regex in ignore", "ignore", ["tc01-(unclosed"], "ignore[0] (line {- tc01-(unclosed}): got 'tc01-(unclosed', expected a "
     "valid regular expression (missing ), unterminated subpattern at position 5)"),
    ("bad tag expression", "test-sets.0.select.tags", "MRR AND (", None),
    ("impossible window", "test-sets.0.windows", {"short-term-runs": 10, "long-term-runs": 5},
     "test-sets[0].windows.long-term-runs (line {long-term-runs: 5}): got 5, expected more runs than short-term-runs (10)"),
    ("end before start", "jobs.0.end", 0, "jobs[0].end (line {end: 0}): got 0, expected a build number >= start (1)"),
    ("unknown metric", "test-sets.0.metrics", ["mrr", "throughput"], "test-sets[0].metrics[1] (line {- throughput}): got "
     "'throughput', expected one of mrr, ndr, pdr, soak, cps, latency_pdr50_d1, latency_pdr50_d2"),
    ("bad URL template", "sources.0", {"name": "j", "type": "jenkins", "url": "https://jenkins.example.org",
                                       "artifacts": ["{jenkins}/job/{job}/{bulid}/output.xml.gz"]},
     "sources[0].artifacts[0] (line {- '{jenkins}/job}): got '{jenkins}/job/{job}/{bulid}/output.xml.gz', expected a template "
     "using only {jenkins}, {job}, {build} ('bulid')"),
    ("non-http URL", "sources.0", {"name": "j", "type": "jenkins", "url": "ftp://jenkins.example.org",
                                   "artifacts": ["{jenkins}/x"]},
     "sources[0].url (line {url: ftp}): got 'ftp://jenkins.example.org', expected an http(s):// URL (required for a "
     "jenkins source)"),
    ("bad detector name", "test-sets.0.detector", {"name": "magic"}, None),
    ("unknown detector parameter", "test-sets.0.detector", {"name": "mdl", "params": {"bogus": 1}},
     "test-sets[0].detector.params.bogus (line {bogus: 1}): got 1, expected a parameter of detector 'mdl': sbps, unit"),
    ("negative detector parameter", "test-sets.0.detector", {"name": "mdl", "params": {"sbps": -2}}, None),
    ("zero timeout", "sources.0", {"name": "j", "type": "jenkins", "url": "https://j.example.org",
                                   "artifacts": ["{jenkins}/x"], "timeout": 0},
     "sources[0].timeout (line {timeout: 0}): got 0.0, expected a number of seconds > 0"),
]


def _validate(tmp_path, capsys, spec) -> tuple[int, str, str]:
    (tmp_path / "data").mkdir(exist_ok=True)  # BASE's local source directory (pal validate checks it exists)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False) if isinstance(spec, dict) else spec, encoding="utf-8")
    rc = cli.main(["validate", str(path)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.replace(f"{path}: ", "<spec>: ")


def _with_line(message: str, path) -> str:
    """Replace ``{text}`` in ``message`` by the 1-based number of the YAML line that holds ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()

    def line_of(m: re.Match) -> str:
        hits = [i + 1 for i, line in enumerate(lines) if m.group(1) in line]
        assert len(hits) == 1, (m.group(1), hits)
        return str(hits[0])

    return re.sub(r"(?<=\(line )\{(.+?)\}(?=\))", line_of, message)


def test_base_spec_is_valid(tmp_path, capsys):
    rc, out, _ = _validate(tmp_path, capsys, BASE)
    assert rc == 0 and "ok: 1 jobs, 1 sources (d), test sets: mrr (mdl: mrr)" in out


@pytest.mark.parametrize("what, key, value, message", CASES, ids=[c[0] for c in CASES])
def test_bad_spec_message(tmp_path, capsys, what, key, value, message):
    spec = _set(copy.deepcopy(BASE), key, value)
    rc, out, err = _validate(tmp_path, capsys, spec)
    assert rc == 1 and out == ""
    assert err.startswith("error: <spec>: ") and err.count("\n") == 1, err
    if message is not None:
        assert err == f"error: <spec>: {_with_line(message, tmp_path / 'spec.yaml')}\n"
    else:  # the message depends on a library's wording: its shape is asserted
        assert key.split(".")[-1] in err and "got" in err and "expected" in err, err
    record("spec errors", what, err.strip().replace("error: <spec>: ", "")[:140], faults=1)


@pytest.mark.parametrize("text, message", [
    ("name: [unclosed", "line 1: got \"expected ',' or ']', but got '<stream end>'\", expected valid YAML"),
    ("", "(document): got None, expected a mapping with name, jobs, sources, test-sets"),
    ("- a\n- b\n", "(document): got ['a', 'b'], expected a mapping at the top level"),
])
def test_unreadable_spec_documents(tmp_path, capsys, text, message):
    rc, out, err = _validate(tmp_path, capsys, text)
    assert (rc, out, err) == (1, "", f"error: <spec>: {message}\n")
    record("spec errors", f"not a spec: {text[:20]!r}", message, faults=1)


def test_missing_spec_file(tmp_path, capsys):
    rc = cli.main(["validate", str(tmp_path / "nope.yaml")])
    cap = capsys.readouterr()
    assert rc == 1 and cap.out == ""
    assert cap.err == f"error: (file): got '{tmp_path / 'nope.yaml'}', expected a readable spec file (No such file or directory)\n"
    record("spec errors", "missing spec file", "(file): expected a readable spec file (No such file or directory)",
           faults=1)
