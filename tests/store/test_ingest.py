"""Worker-side ingest with the real parser: the stored samples equal what parse_build returns."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pandas as pd
import pytest

from pal.model import SAMPLE_COLUMNS, BuildFile
from pal.store import Store
from pal.store.ingest import parse_to_fragment

parse = pytest.importorskip("pal.parse")
DATA = Path(__file__).resolve().parent.parent / "data" / "parse"
JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def test_real_parse_round_trips_through_the_store(tmp_path):
    src = DATA / "rf6_output.xml"
    store = Store(tmp_path / "s")
    frag = parse_to_fragment(BuildFile(JOB, 12, src, "local"), str(store.staging_dir()), {"testbeds": {}})
    direct = parse.parse_build(src, JOB, 12, testbeds={})
    assert frag.error is None and frag.sha256 == hashlib.sha256(src.read_bytes()).hexdigest()
    assert frag.rows == len(direct.samples) and frag.meta == direct.meta and frag.problems == direct.problems
    assert store.commit_fragments([frag]).added == [f"{JOB}/12"]
    got = store.samples()
    exp = direct.samples.sort_values(["test_id", "metric"]).reset_index(drop=True)
    assert len(got) == len(exp) > 0
    for col in SAMPLE_COLUMNS:
        for a, b in zip(got[col].tolist(), exp[col].tolist()):
            if col == "build_time":
                assert pd.Timestamp(a) == pd.Timestamp(b)
            elif col == "trials":
                assert a == (None if b is None else list(b))
            elif col == "tags":
                assert a == tuple(b)
            elif isinstance(b, float) and math.isnan(b):
                assert math.isnan(a), col  # a failed test's value stays NaN
            else:
                assert (pd.isna(a) and pd.isna(b)) or a == b, col
    b = store.builds().iloc[0]
    assert (b["passed"], b["failed"], b["dut_version"]) == (direct.meta.passed, direct.meta.failed, "21.01-release")


def test_unreadable_file_gives_error_fragment(tmp_path):
    bad = parse_to_fragment(BuildFile(JOB, 3, DATA / "not_robot.xml", "local"), str(tmp_path), {})
    assert bad.path is None and bad.rows == 0 and "not_robot.xml" in bad.error
    missing = parse_to_fragment(BuildFile(JOB, 4, tmp_path / "gone.xml", "local"), str(tmp_path), {})
    assert missing.sha256 == "" and missing.error.endswith("No such file or directory")
    assert list(tmp_path.iterdir()) == []


def test_insert_accepts_a_parse_result(tmp_path):
    direct = parse.parse_build(DATA / "rf3_output.xml", JOB, 5, testbeds={})
    store = Store(tmp_path / "s")
    assert store.insert(direct, "e" * 64) == "added"
    assert store.insert(direct.samples, direct.meta, "e" * 64) == "unchanged"
    assert len(store.samples()) == len(direct.samples) > 0
    with pytest.raises(TypeError, match="insert"):
        store.insert(direct.samples, "e" * 64)
