"""Seeded, realistic demo history in CSIT's output.xml format.

``generate(DIR, seed=1)`` writes ``DIR/<job>/<build>/output.xml.gz`` for three CSIT-like
jobs with planted regressions, progressions, reverted and small changes, a step on every
testbed at once, failed and renamed tests, missing builds and one corrupt archive, plus
``DIR/truth.json`` (``Truth.load``) and ``DIR/renames.yaml``.
"""

from pal.demo.catalog import PIPELINE_BENCH_JOBS
from pal.demo.generate import DemoHistory, generate, small_history
from pal.demo.truth import EVENT_KINDS, JobTruth, PlantedEvent, Truth

__all__ = ["DemoHistory", "EVENT_KINDS", "PIPELINE_BENCH_JOBS", "JobTruth", "PlantedEvent", "Truth", "generate", "small_history"]
