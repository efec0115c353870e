"""The window read (pal.history): chosen through the manifest, strings as sorted categoricals, the
same frame whether the store is compacted or not, and equal to the stored strings."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from pal.history import UNREAD_COLUMNS, load_history
from pal.report import RunReport
from pal.spec import parse_spec
from pal.store import Store
from tests.store.data import make_meta, make_samples

A = "csit-vpp-perf-mrr-daily-master-2n-icx"
B = "csit-vpp-perf-mrr-daily-master-3n-alt"
NOW = datetime(2023, 1, 1, tzinfo=timezone.utc)
SPEC = f"""\
name: h
jobs:
  - {{name: {A}, max-builds: 3}}
  - {{name: {B}, builds: [2, 4]}}
sources:
  - {{name: dir, type: local, path: data}}
test-sets:
  - {{name: mrr, metrics: [mrr], detector: {{name: mdl}}}}
rename:
  tests.vpp.perf.ip4.b-mrr: tests.vpp.perf.ip4.a-mrr
"""


def store_of(path, auto_compact=None) -> Store:
    store = Store(path, auto_compact=auto_compact)
    for job in (A, B):
        for b in range(1, 7):
            store.insert(make_samples(job, b, scale=float(b)), make_meta(job, b), f"{b:064d}")
    return store


def test_window_rows_strings_and_renames(tmp_path):
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    store = store_of(tmp_path / "s")
    h = load_history(spec, store, NOW, RunReport())
    assert list(zip(h.builds["job"], h.builds["build"])) == [(A, 4), (A, 5), (A, 6), (B, 2), (B, 4)]
    s = h.samples
    assert list(zip(s["job"], s["build"])) == [(j, b) for j, b in
                                               [(A, 4), (A, 5), (A, 6), (B, 2), (B, 4)] for _ in range(3)]
    assert "trials" not in s.columns and "source_file" not in s.columns
    # strings: categoricals of the values present, sorted; the rename merged b into a
    assert isinstance(s["test_id"].dtype, pd.CategoricalDtype)
    assert list(s["test_id"].cat.categories) == ["tests.vpp.perf.ip4.a-mrr", "tests.vpp.perf.ip4.c-ndrpdr"]
    assert s["test_id"].tolist()[:3] == ["tests.vpp.perf.ip4.a-mrr", "tests.vpp.perf.ip4.a-mrr",
                                         "tests.vpp.perf.ip4.c-ndrpdr"]
    assert s["driver"].isna().tolist()[:3] == [False, False, True]
    assert s.loc[s["metric"] == "ndr", "value"].tolist() == [18123456.5 * b for b in (4, 5, 6, 2, 4)]
    # the same values as the stored strings, row for row
    stored = store.samples()
    stored = stored[[(j, b) in {(A, 4), (A, 5), (A, 6), (B, 2), (B, 4)} for j, b in zip(stored.job, stored.build)]]
    for col in ("suite", "nic", "status", "message", "dut_version"):
        assert s[col].astype("string").tolist() == stored[col].tolist(), col
    assert s["tags"].tolist() == stored["tags"].tolist()


def test_same_frame_from_a_compacted_store(tmp_path):
    spec = parse_spec(SPEC, base_dir=str(tmp_path))
    plain = load_history(spec, store_of(tmp_path / "p"), NOW, RunReport()).samples
    store = store_of(tmp_path / "c")
    assert store.vacuum(target_rows=9)["compacted"] == 12  # three builds a file: windows cross files
    compacted = load_history(spec, Store(store.path), NOW, RunReport()).samples
    pd.testing.assert_frame_equal(compacted, plain)
    assert set(UNREAD_COLUMNS).isdisjoint(compacted.columns)


def test_growing_jobs_are_those_whose_window_takes_every_build_and_the_next(tmp_path):
    from pal.history import growing_jobs, window_builds

    store = store_of(tmp_path / "s")  # A and B: builds 1..6
    C, D, E = "job-c", "job-d", "job-e"
    for job in (C, D, E):
        for b in (1, 2):
            store.insert(make_samples(job, b), make_meta(job, b), f"{b:064d}")

    def grows(jobs: str, now=NOW) -> set[str]:
        spec = parse_spec(SPEC.replace(f"""  - {{name: {A}, max-builds: 3}}
  - {{name: {B}, builds: [2, 4]}}
""", jobs), base_dir=str(tmp_path))
        return growing_jobs(spec, store, window_builds(spec, store, now))

    # A: 3 of its 6 builds (the window slides); B: a list; C: no limit; D: 2 builds, room for more;
    # E: as many builds as max-builds (the next one slides it)
    assert grows(f"""  - {{name: {A}, max-builds: 3}}
  - {{name: {B}, builds: [2, 4]}}
  - {{name: {C}}}
  - {{name: {D}, max-builds: 3}}
  - {{name: {E}, max-builds: 2}}
""") == {C, D}
    assert grows(f"  - {{name: {A}}}\n  - {{name: {B}, end: 6}}\n") == {A}  # a fixed last build: no growth
    assert grows(f"  - {{name: {A}, period-days: 100000}}\n") == set()  # the clock drops builds
    assert grows(f"  - {{name: {A}, start: 2}}\n") == set()  # build 1 is stored but not in the window
