"""Session fixtures with small demo histories, for any stage's tests.

Use them by importing into a test module (pytest finds imported fixtures)::

    from tests.demo.fixtures import demo_small  # noqa: F401

    def test_x(demo_small):
        demo_small.root    # Path: <root>/<job>/<build>/output.xml.gz, renames.yaml, truth.json
        demo_small.truth   # pal.demo.Truth: jobs, readable/missing/corrupt builds, planted events

Each is generated once per session (per xdist worker) in a temporary directory and must be
treated as read-only.
"""

from __future__ import annotations

import pytest

from pal.demo import DemoHistory, small_history


@pytest.fixture(scope="session")
def demo_small(tmp_path_factory: pytest.TempPathFactory) -> DemoHistory:
    """3 jobs (2 daily MRR, 1 weekly NDRPDR), RF 7 output.xml, every planted pattern."""
    return small_history(tmp_path_factory.mktemp("demo_small"), seed=1, dialect="rf7")


@pytest.fixture(scope="session")
def demo_small_rf4(tmp_path_factory: pytest.TempPathFactory) -> DemoHistory:
    """The same history written as RF 4-6 output.xml."""
    return small_history(tmp_path_factory.mktemp("demo_small_rf4"), seed=1, dialect="rf4")


@pytest.fixture(scope="session")
def demo_small_rf3(tmp_path_factory: pytest.TempPathFactory) -> DemoHistory:
    """The same history written as RF 3.x output.xml."""
    return small_history(tmp_path_factory.mktemp("demo_small_rf3"), seed=1, dialect="rf3")
