"""Crash safety: a writer killed between any two write steps leaves the previous state readable,
and a clean rerun succeeds. The writer runs in a subprocess with PAL_STORE_CRASH_AT=<step>, which
ends it with os._exit(137) at that step (pal.atomic.crash_point)."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from pal.store import Store
from pal.atomic import CRASH_ENV
from tests.store.data import make_meta, make_samples

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
SHA_A, SHA_B = "a" * 64, "b" * 64


def run_writer(*args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(CRASH_ENV, None)
    if crash_at:
        env[CRASH_ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "tests.store.data", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def leftovers(store: Store) -> list[str]:
    return sorted(p.name for p in store.path.rglob("*") if p.is_file() and ".tmp-" in p.name)


@pytest.mark.parametrize("step", ["fragment-temp", "fragments-placed", "manifest-temp"])
def test_insert_killed_before_manifest_keeps_previous_state(tmp_path, step):
    store = Store(tmp_path / "s")
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    before = store.samples()
    # a changed archive for build 1 (values doubled) and the writer killed at `step`
    proc = run_writer("insert", str(store.path), JOB, "1", SHA_B, "2.0", crash_at=step)
    assert proc.returncode == 137, proc.stderr
    reopened = Store(store.path)
    pd.testing.assert_frame_equal(reopened.samples(), before)
    assert reopened.builds()["sha256"].tolist() == [SHA_A]
    # a clean rerun replaces the build; vacuum then removes what the killed run left
    proc = run_writer("insert", str(store.path), JOB, "1", SHA_B, "2.0")
    assert (proc.returncode, proc.stdout.strip()) == (0, "replaced"), proc.stderr
    reopened.vacuum()
    after = Store(store.path).samples()
    assert after.loc[after.metric == "ndr", "value"].tolist() == [2 * 18123456.5]
    assert leftovers(reopened) == [] and len(list((store.path / "samples").rglob("*.parquet"))) == 1


def test_insert_killed_after_manifest_has_new_state(tmp_path):
    store = Store(tmp_path / "s")
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    proc = run_writer("insert", str(store.path), JOB, "1", SHA_B, "2.0", crash_at="manifest-replaced")
    assert proc.returncode == 137, proc.stderr
    reopened = Store(store.path)
    assert reopened.builds()["sha256"].tolist() == [SHA_B]
    assert reopened.samples().loc[lambda d: d.metric == "ndr", "value"].tolist() == [2 * 18123456.5]
    assert len(list((store.path / "samples").rglob("*.parquet"))) == 2  # the old one, unlisted
    assert run_writer("insert", str(store.path), JOB, "1", SHA_B, "2.0").stdout.strip() == "unchanged"
    assert len(reopened.vacuum()["removed"]) == 1
    assert len(list((store.path / "samples").rglob("*.parquet"))) == 1


def test_commit_fragments_killed_before_manifest(tmp_path):
    store = Store(tmp_path / "s")
    store.insert(make_samples(JOB, 1), make_meta(JOB, 1), SHA_A)
    before = store.samples()
    files = []
    for build, scale in ((2, "1.0"), (3, "3.0")):
        f = tmp_path / f"{JOB}--{build}.txt"
        f.write_text(scale)
        files.append(str(f))
    proc = run_writer("commit", str(store.path), *files, crash_at="fragments-placed")
    assert proc.returncode == 137, proc.stderr
    reopened = Store(store.path)
    pd.testing.assert_frame_equal(reopened.samples(), before)  # both new fragments invisible
    assert reopened.builds()["build"].tolist() == [1]
    proc = run_writer("commit", str(store.path), *files)
    assert proc.returncode == 0 and "added=['csit-vpp-perf-mrr-daily-master-2n-icx/2'" in proc.stdout, proc.stderr
    # the killed run's two placed fragments, and the two files it had staged (deleted only once
    # a manifest lists what was made of them)
    removed = reopened.vacuum()["removed"]
    assert sorted(r.split("/")[0] for r in removed) == ["samples", "samples", "staging", "staging"], removed
    final = Store(store.path)
    assert final.builds()["build"].tolist() == [1, 2, 3]
    assert final.samples().query("build == 3 and metric == 'ndr'")["value"].tolist() == [3 * 18123456.5]
