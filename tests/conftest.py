"""Shared pytest fixtures, and the Hypothesis profile of the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# `make test` (and CI) draws the same examples every run, so a red run is reproducible and a
# green one is not luck; `make fuzz` (PAL_FUZZ_EXAMPLES set) explores new random examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("fuzz", derandomize=False, print_blob=True)
settings.load_profile("fuzz" if os.environ.get("PAL_FUZZ_EXAMPLES") else "ci")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO
