"""The same run on every executor: inline, a local pool of 2 and a Dask LocalCluster of 2 processes.

Stores (the samples tables) and results must be identical, and only small items (a BuildFile,
paths, options) may go to the workers: they read archives and write fragments by path. The
analyse stage maps chunks of series (8 here, to get several chunks) over the same executor.
"""

from __future__ import annotations

import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pal.analysis.series
import pal.executor
import pal.pipeline
from pal.demo import DemoHistory
from pal.model import BuildFile
from pal.pipeline import RunOptions, run
from pal.spec import load_spec
from pal.store import Store
from tests.demo.fixtures import demo_small  # noqa: F401 - session fixture
from tests.test_pipeline_incremental import canon

NOW = datetime(2027, 1, 1, tzinfo=timezone.utc)
MAX_ITEM_BYTES = 4096  # a pickled work item: a BuildFile, a few paths, an options dict
MAX_SERIES_BYTES = 16384  # per series of an analysis chunk: 12 runs of numbers, attributes, MDL state
CHUNK = 8

SPEC = """\
name: executors
jobs:
  - {name: csit-vpp-perf-mrr-daily-master-2n-icx, max-builds: 12}
  - {name: csit-vpp-perf-mrr-daily-master-3n-alt, max-builds: 12, testbeds: 1}
sources:
  - {name: dir, type: local, path: DATA}
rename-file: DATA/renames.yaml
test-sets:
  - name: mrr
    jobs: [".*-mrr-.*"]
    select: {tags: "MRR AND NOT SOAK"}
    metrics: [mrr]
    detector: {name: mdl}
outputs: {dir: out, exports: [csv]}
alerts: {fail-on: never}
store: {path: out/store}
"""

RUNS = {"local-2": ("local", 2), "inline": ("local", 1), "dask-2": ("dask", 2)}


@pytest.fixture(scope="module")
def outcomes(demo_small: DemoHistory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    """One run per executor, each in its own output dir and store, recording what each map got."""
    out: dict[str, Any] = {}
    real = pal.executor.make_executor
    chunk = pal.analysis.series.CHUNK_SERIES
    min_workers = pal.pipeline.ANALYSE_MIN_WORKERS
    for name, (kind, workers) in RUNS.items():
        root = tmp_path_factory.mktemp(name)
        (root / "spec.yaml").write_text(SPEC.replace("DATA", str(demo_small.root)))
        calls: list[tuple[str, str, list, list]] = []

        def recording(*args: Any, **kwargs: Any) -> pal.executor.Executor:
            ex = real(*args, **kwargs)
            inner = ex.map

            def map(fn: Any, items: Any, *, label: str, **kwargs: Any) -> list:  # noqa: A001
                items = list(items)
                result = inner(fn, items, label=label, **kwargs)
                calls.append((type(ex).__name__, label, items, result))
                return result

            ex.map = map  # type: ignore[method-assign]
            return ex

        pal.executor.make_executor = recording  # type: ignore[assignment]
        pal.analysis.series.CHUNK_SERIES = CHUNK
        pal.pipeline.ANALYSE_MIN_WORKERS = 2  # 3 by default: too few cores here to pay (docs/scaling.md)
        try:
            spec = load_spec(root / "spec.yaml")
            outcome = run(spec, RunOptions(executor=kind, workers=workers, now=NOW))
        finally:
            pal.executor.make_executor = real  # type: ignore[assignment]
            pal.analysis.series.CHUNK_SERIES = chunk
            pal.pipeline.ANALYSE_MIN_WORKERS = min_workers
        out[name] = {"outcome": outcome, "calls": calls, "samples": Store(spec.store_dir).samples(),
                     "exports": {str(f.relative_to(root / "out" / "exports")): f.read_bytes()
                                 for f in sorted((root / "out" / "exports").rglob("*")) if f.is_file()}}
    return out


def expected_builds(history: DemoHistory) -> dict[str, int]:
    """The newest 12 present builds of each MRR job, less the corrupt one."""
    return {j.name: len(set(sorted(j.present)[-12:]) & set(j.readable))
            for j in history.truth.jobs if "-mrr-" in j.name}


def test_each_executor_really_ran(outcomes: dict[str, Any], demo_small: DemoHistory) -> None:  # noqa: F811
    expected = expected_builds(demo_small)
    assert sorted(expected.values()) == [11, 12]  # 2n-icx's corrupt build is among its newest
    kinds = {name: {c[0] for c in o["calls"]} for name, o in outcomes.items()}
    assert kinds == {"local-2": {"LocalExecutor"}, "inline": {"Executor"}, "dask-2": {"DaskExecutor"}}
    for o in outcomes.values():
        assert o["outcome"].report.counts["builds.parsed"] == sum(expected.values())
        assert o["outcome"].report.counts["series"] == 30
        assert not o["outcome"].report.errors("parse")


def test_stores_are_identical(outcomes: dict[str, Any], demo_small: DemoHistory) -> None:  # noqa: F811
    ref = outcomes["inline"]["samples"]
    assert len(ref) > 0 and set(ref["job"].astype(str)) == {
        "csit-vpp-perf-mrr-daily-master-2n-icx", "csit-vpp-perf-mrr-daily-master-3n-alt"}
    assert ref.groupby("job", observed=True)["build"].nunique().to_dict() == expected_builds(demo_small)
    for name in ("local-2", "dask-2"):
        pd.testing.assert_frame_equal(outcomes[name]["samples"], ref)


def test_results_and_exports_are_identical(outcomes: dict[str, Any]) -> None:
    ref = [canon(r) for r in outcomes["inline"]["outcome"].results]
    assert len(ref) == 30
    for name in ("local-2", "dask-2"):
        assert [canon(r) for r in outcomes[name]["outcome"].results] == ref
        assert outcomes[name]["exports"] == outcomes["inline"]["exports"]
        assert [canon(a) for a in outcomes[name]["outcome"].alerts] == \
            [canon(a) for a in outcomes["inline"]["outcome"].alerts]


def test_only_small_items_cross_to_workers(outcomes: dict[str, Any]) -> None:
    for name, o in outcomes.items():
        for _, label, items, results in o["calls"]:
            if label == "parsed":
                for item in items:
                    assert len(pickle.dumps(item)) < MAX_ITEM_BYTES, name
                for build_file, staging, options in items:
                    assert isinstance(build_file, BuildFile) and Path(build_file.path).is_file()
                    assert isinstance(staging, str) and staging.endswith("staging")
                    assert isinstance(options, dict)
                for frag in results:  # a staged file's path, not its rows
                    assert len(pickle.dumps(frag)) < MAX_ITEM_BYTES and frag.path and frag.rows > 0
            else:
                assert label == "series chunks analysed"
                for series, spec, single in items:
                    assert 0 < len(series) <= CHUNK and not any(isinstance(x, pd.DataFrame) for x in series)
                    assert len(pickle.dumps((series, single))) < MAX_SERIES_BYTES * len(series)
        labels = [c[1] for c in o["calls"]]
        # inline: no chunks (one worker); pools: 30 series in chunks of 8
        assert labels == (["parsed"] if name == "inline" else ["parsed", "series chunks analysed"])
        if name != "inline":
            assert [len(i[0]) for i in o["calls"][1][2]] == [8, 8, 8, 6]
