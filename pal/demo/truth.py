"""Ground truth of a demo history: what was written and which patterns were planted where.

Detector, parser and dashboard tests compare their findings with this record instead of
with hard-coded numbers; it is written as ``DIR/truth.json`` next to the builds.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: The kinds of planted events, as recorded in ``PlantedEvent.kind``.
EVENT_KINDS = ("regression", "progression", "small", "reverted", "all-testbeds", "failed", "renamed")


@dataclass(frozen=True)
class PlantedEvent:
    """One planted pattern in one series ``(job, test_id, metric)``.

    ``build`` is the first build (number) that shows the new level (first failing build,
    first build under the new name); ``index`` is its position among the job's readable
    builds, i.e. in the series. ``change`` is relative, ``(new - old) / old``: -0.2 is a
    20 % drop; for latency metrics a rise is a regression. 0.0 for failed and renamed.
    """

    job: str
    test_id: str  # normalised id (after renames)
    metric: str
    kind: str  # one of EVENT_KINDS
    build: int
    index: int
    change: float
    builds: list[int] = field(default_factory=list)  # failed/reverted: every affected build
    old_test_id: str | None = None  # renamed: the id before the rename
    note: str = ""


@dataclass(frozen=True)
class JobTruth:
    """What exists on disk for one job."""

    name: str
    test_type: str  # MRR | NDRPDR
    metrics: list[str]  # the series metrics each test of this job yields
    testbeds: list[str]  # TG IPs the builds rotate among
    builds: list[int]  # every build number of the job's range
    present: list[int]  # numbers with a DIR/<job>/<build>/ directory (corrupt ones included)
    missing: list[int]  # numbers without a directory
    corrupt: list[int]  # present but the archive is truncated
    readable: list[int]  # present and not corrupt: the builds a parser yields samples for
    tests: int  # tests in every readable build
    test_ids: list[str]  # normalised ids after renames, sorted
    first_time: str  # build time (top suite end, ISO-8601 UTC) of the first readable build
    last_time: str  # ... and of the last one


@dataclass(frozen=True)
class Truth:
    """The whole record; ``Truth.load(DIR)`` reads it back."""

    seed: int
    dialect: str
    small: bool
    jobs: list[JobTruth]
    events: list[PlantedEvent]
    renames: dict[str, str]  # old normalised id -> new normalised id (also in renames.yaml)
    expected_series: int  # distinct (job, test_id, metric) after renames

    def job(self, name: str) -> JobTruth:
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(name)

    def events_of(self, kind: str | None = None, job: str | None = None) -> list[PlantedEvent]:
        return [e for e in self.events if (kind is None or e.kind == kind) and (job is None or e.job == job)]

    def summary(self) -> str:
        """One line for the log: jobs, builds, tests, series and planted events by kind."""
        n_builds = sum(len(j.builds) for j in self.jobs)
        missing = sum(len(j.missing) for j in self.jobs)
        corrupt = sum(len(j.corrupt) for j in self.jobs)
        tests = sum(j.tests for j in self.jobs)
        kinds = Counter(e.kind for e in self.events)
        by_kind = ", ".join(f"{k} {kinds[k]}" for k in EVENT_KINDS if kinds[k])
        return (
            f"{len(self.jobs)} jobs, {n_builds} builds ({missing} missing, {corrupt} corrupt), "
            f"{tests} tests, {self.expected_series} series, {len(self.events)} planted events ({by_kind}), "
            f"dialect {self.dialect}, seed {self.seed}"
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Truth":
        return cls(
            seed=int(data["seed"]),
            dialect=str(data["dialect"]),
            small=bool(data["small"]),
            jobs=[JobTruth(**j) for j in data["jobs"]],
            events=[PlantedEvent(**e) for e in data["events"]],
            renames=dict(data["renames"]),
            expected_series=int(data["expected_series"]),
        )

    @classmethod
    def load(cls, path: str | Path) -> "Truth":
        """Read ``truth.json`` (give the file or the history directory)."""
        path = Path(path)
        if path.is_dir():
            path = path / "truth.json"
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
