"""Fixtures of the parse tests: hand-written RF 3.x / RF 4-6 files and genuine RF 7 output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parse.robot_suite import run_robot

DATA = Path(__file__).resolve().parent.parent / "data" / "parse"
MRR_JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def rf7_history(tmp_path_factory) -> dict[int, Path]:
    """Builds 1..3 of a CSIT-like job, each produced by Robot Framework 7 at TRACE level."""
    root = tmp_path_factory.mktemp("rf7")
    return {b: run_robot(root / f"src{b}", b, root / MRR_JOB / str(b) / "output.xml") for b in (1, 2, 3)}
