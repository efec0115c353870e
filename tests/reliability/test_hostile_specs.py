"""Hostile spec files: every one gets a one-line error from ``pal validate``, never a traceback.

Before the bounds a YAML alias bomb ran ``pal validate`` to 2.5 GB in 60 s, invalid UTF-8,
10,000-deep nesting and a 5,000-deep tag expression ended in tracebacks, and a key given twice
silently kept its last value. The alias bomb is measured in a subprocess of its own.
"""

from __future__ import annotations

import pytest
import yaml

from pal import cli
from tests.reliability.memory import measure
from tests.reliability.record import record
from tests.reliability.test_spec_errors import BASE

BOMB = "".join(f"{c}: &{c} [" + ",".join([f"*{p}"] * 10 if p else ["lol"] * 10) + "]\n"
               for p, c in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh"))


def _valid() -> str:
    return yaml.safe_dump(BASE, sort_keys=False)


CASES = {
    "YAML alias bomb (10^8 values from 8 lines)": (_valid() + BOMB.replace("a:", "x-a:", 1),
                                                   "more than 200000 values"),
    "invalid UTF-8": (_valid().encode() + b"# caf\xe9\n", "expected UTF-8 text"),
    "10,000-deep flow nesting": (_valid() + "x: " + "[" * 10000 + "]" * 10000 + "\n", "nesting deeper than 64"),
    "300-deep block nesting": ("".join("  " * i + f"k{i}:\n" for i in range(300)), "nesting deeper than 64"),
    "5,000-deep tag expression": (_valid().replace("tags: MRR", "tags: '" + "(" * 5000 + "MRR" + ")" * 5000 + "'"),
                                  "at most 64 parentheses deep"),
    "5,000 NOTs in a tag expression": (_valid().replace("tags: MRR", "tags: '" + "NOT " * 5000 + "MRR'"),
                                       "at most 256 operators"),
    "duplicate key": (_valid().replace("name: t\n", "name: t\nname: u\n", 1), "expected a key given once"),
    "5 MB spec": (_valid() + "#" * (5 << 20) + "\n", "expected a spec under 4 MB"),
    "python object tag": (_valid().replace("name: t\n", "name: !!python/name:os.system ''\n", 1),
                          "expected a plain YAML value"),
    "mapping as a key": (_valid() + "? [a, b]\n: 1\n", "expected a plain key"),
    "NUL byte": (_valid() + "x: \x00\n", "valid YAML"),
}


@pytest.mark.parametrize("what", list(CASES))
def test_hostile_spec_gives_one_line_error(tmp_path, capsys, what):
    text, expected = CASES[what]
    path = tmp_path / "spec.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    (tmp_path / "data").mkdir()  # the spec's local source: validate checks it exists
    rc = cli.main(["validate", str(path)])
    cap = capsys.readouterr()
    assert rc == 1 and cap.out == "", (rc, cap.out[:300])
    assert cap.err.startswith(f"error: {path}: ") and cap.err.count("\n") == 1 and len(cap.err) < 600, cap.err[:600]
    assert expected in cap.err, cap.err
    assert "Traceback" not in cap.err
    record("spec errors", f"hostile spec: {what}", cap.err.strip().replace(f"error: {path}: ", "")[:120], faults=1)


def test_alias_bomb_in_bounded_memory_and_time(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(_valid() + BOMB.replace("a:", "x-a:", 1), encoding="utf-8")
    m = measure("import sys\nfrom pal import cli\nsys.exit(cli.main(['validate', sys.argv[1]]))", str(path), timeout=60)
    assert m.returncode == 1 and "more than 200000 values" in m.stderr, m.stderr[-1000:]
    assert m.peak_mb < 300 and m.seconds < 30, (m.peak_mb, m.seconds)
    record("spec errors", "YAML alias bomb, pal validate in a subprocess", f"refused, peak RSS {m.peak_mb:.0f} MB, "
           f"{m.seconds:.1f} s", faults=1, peak_mb=m.peak_mb)


def test_rename_file_is_read_within_the_same_bounds(tmp_path):
    from pal.errors import SpecError
    from pal.spec import parse_spec

    (tmp_path / "renames.yaml").write_text("a: x\na: y\n", encoding="utf-8")
    spec = parse_spec(_valid() + "rename-file: renames.yaml\n", base_dir=str(tmp_path))
    with pytest.raises(SpecError, match="a key given once"):
        spec.renames()
