"""Generated hostile output.xml and spec files, every attack class, each case in a child of its own.

The generator (tests/reliability/hostile.py) is seeded: ``make test`` runs a fixed sample of
each class, ``make fuzz`` (PAL_FUZZ_EXAMPLES) many more with new seeds. Every case must end in
samples or a clear refusal (ParseError / SpecError), never a crash, never a hang, and stay
under 1 GB of memory (measured per case: tests/reliability/hostile_runner.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from tests.reliability.hostile import SPEC_ATTACKS, XML_ATTACKS, cases
from tests.reliability.record import record
from tests.reliability.runs import REPO

FUZZ = os.environ.get("PAL_FUZZ_EXAMPLES")
SEED = 20261124 if not FUZZ else int.from_bytes(os.urandom(4), "big")
#: cases per attack class
PER_CLASS = 1 if not FUZZ else max(2, int(FUZZ) // 1000)
TIMEOUT_S = 60 if not FUZZ else 600
PEAK_LIMIT_MB = 1024


@pytest.mark.parametrize("kind", ["xml", "spec"])
def test_generated_hostile_inputs(tmp_path, kind):
    attacks = XML_ATTACKS if kind == "xml" else SPEC_ATTACKS
    names = {}
    for case in cases(kind, SEED, PER_CLASS * len(attacks), heavy=bool(FUZZ)):
        f = tmp_path / f"{case.index:05d}{case.suffix}"
        f.write_bytes(case.data)
        names[f.name] = case
    p = subprocess.run([sys.executable, "-m", "tests.reliability.hostile_runner", str(tmp_path),
                        "--timeout", str(TIMEOUT_S)], cwd=REPO, capture_output=True, text=True,
                       timeout=TIMEOUT_S * len(names) + 60)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(names), (len(rows), p.stderr[-2000:])
    by_class = defaultdict(list)
    for row in rows:
        by_class[names[row["file"]].attack].append(row)
    bad = [(names[r["file"]].attack, names[r["file"]].index, r["outcome"]) for r in rows
           if r["outcome"] == "hang" or r["outcome"].startswith("crash")]
    assert not bad, f"seed {SEED}: {bad}"
    heavy = [(names[r["file"]].attack, r["peak_mb"]) for r in rows if r["peak_mb"] > PEAK_LIMIT_MB]
    assert not heavy, f"seed {SEED}: {heavy}"
    for attack, got in sorted(by_class.items()):
        ok = sum(r["outcome"].startswith("ok") for r in got)
        worst = max(got, key=lambda r: r["peak_mb"])
        record(f"generated hostile {'output.xml' if kind == 'xml' else 'specs'}",
               f"{attack} (seed {SEED})", f"{ok} read, {len(got) - ok} refused with a clear error; 0 crashes, "
               f"0 hangs; worst peak RSS {worst['peak_mb']:.0f} MB, slowest {max(r['seconds'] for r in got):.1f} s",
               inputs=len(got), faults=len(got), peak_mb=worst["peak_mb"])


@pytest.mark.parametrize("where", ["among the tags", "in the body, full parse"])
def test_element_bomb_in_a_test_is_held_a_chunk_at_a_time(tmp_path, where):
    """16 MB of ``<kw/>`` (25 KB compressed) where the body filter cannot drop them: among a test's
    tags, after its body; or anywhere in a test read without the filter (its fallback). The walker
    drops a test's keywords between chunks, so the tree never holds them all (it held 0.9 GB)."""
    from tests.reliability.hostile import _valid, zlib_gzip
    import random

    head, tail = _valid(random.Random(1)).encode().split(b"<tag>MRR</tag>", 1)
    if where == "among the tags":
        head += b"<tag>MRR</tag>"
    else:  # a comment makes the filter step aside: the whole test goes to the XML parser
        head = head.replace(b"<robot ", b"<!-- full parse --><robot ", 1)
        tail = b"<tag>MRR</tag>" + tail
        assert head.count(b"<!--") == 1
    comp = zlib_gzip()
    block = b"<kw/>" * ((1 << 22) // 5)
    data = comp.compress(head) + b"".join(comp.compress(block) for _ in range(4))
    (tmp_path / "bomb.xml.gz").write_bytes(data + comp.compress(tail) + comp.flush())
    p = subprocess.run([sys.executable, "-m", "tests.reliability.hostile_runner", str(tmp_path), "--timeout", "120"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    row = json.loads(p.stdout.splitlines()[0])
    assert row["outcome"] == "ok: 3 samples, 0 warnings", row  # the bombed test's MRR sample too
    assert row["peak_mb"] < 300, row
