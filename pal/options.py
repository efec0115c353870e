"""A run's options: the command line's overrides of the spec, and the run's context.

Kept apart from the pipeline, which imports every stage: ``pal run`` reads these and the spec
first, to start its workers' forkserver before those imports (``pal.executor.start_early``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pal.spec import Spec


@dataclass(frozen=True)
class RunOptions:
    """Command-line overrides of the spec and the run's context."""

    out_dir: Path | None = None
    executor: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    full: bool = False  # ignore stored states and parse every build again
    trigger: str = "manual"
    upstream: tuple[str, int] | None = None  # the PT (job, build) whose completion triggered the run
    now: datetime | None = None  # reference time for period-days (default: now, UTC)
    download: bool = True  # False: analyse what the store holds (pal analyse / render)

    def executor_of(self, spec: Spec) -> tuple[str, int, str | None]:
        """The run's executor: (kind, workers, scheduler), each from these options or else the spec."""
        return (self.executor or spec.store.executor, self.workers or spec.store.workers,
                self.scheduler or spec.store.scheduler)
